// SPDX-License-Identifier: Apache-2.0
/// @file
/// HLO text reader: builds an `hlo::module` from the text XLA prints (`HloModule::ToString`) and
/// from hand-written test modules. Both printing styles parse (long form with `%` names,
/// signatures and operand shapes; short form without), as do `/*index=N*/` and `//` comments,
/// strings with escapes and nested braces (`backend_config`, metadata, frontend attributes),
/// stack-frame tables, elided constants, `input_output_alias`, `buffer_donor`, `is_scheduled`,
/// `entry_computation_layout` and every element type.
///
/// Errors are `errc::parse_error` with `file:line:column: what was expected, what was found`.
/// The reader checks what later passes rely on: unique names per computation, operands and
/// called computations that exist, one root, dense parameter numbers, no cycles, tuple indices
/// in range, and operand counts of fusion/call/while/conditional matching their callees.
///
/// Cost: linear in the text (one pass, no iostreams, names and values sliced from the buffer);
/// line and column are computed only when an error is reported.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/hlo/detail/hlo_lexer.hpp"
#include "xlamem/hlo/detail/instruction_grammar.hpp"
#include "xlamem/hlo/detail/shape_grammar.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"
#include "xlamem/input_file.hpp"

namespace xlamem::hlo {

namespace detail {

/// The module grammar: header, stack-frame tables, computations, and the checks of the whole
/// module. Built on the instruction grammar (`hlo/detail/instruction_grammar.hpp`), the shape
/// grammar (`shape_grammar.hpp`) and the lexer (`hlo_lexer.hpp`).
class hlo_parser : public instruction_grammar {
 public:
  using instruction_grammar::instruction_grammar;

  result<module> parse_module() {
    m_.instructions.reserve(instruction_estimate());
    if (!module_header() || !stack_frame_tables() || !computations() || !finish_module()) {
      return *err_;
    }
    return std::move(m_);
  }

 private:
  // An instruction takes a line, and at least this many bytes in real dumps (70-300 usually):
  // the up-front estimates of instructions and names count no more lines than that allows.
  static constexpr std::size_t min_instruction_bytes = 40;

  // Room for the module's instructions up front, so that a large module's instructions are
  // not moved at every doubling (untouched room costs address space, not memory).
  [[nodiscard]] std::size_t instruction_estimate() const noexcept {
    const auto lines = static_cast<std::size_t>(std::count(s_.begin(), s_.end(), '\n'));
    return std::min(lines, s_.size() / min_instruction_bytes) + 16;
  }

  // The lines from here to the next line that starts with '}' (where XLA's text closes a
  // computation), at most one per `min_instruction_bytes` as for the module (so the table stays
  // under 2 bytes per byte of text): room for a computation's names up front. Linear
  // over a whole module: the closing found is kept while it is ahead, and the two line
  // counts only move forward.
  struct forward_line_count {
    std::size_t pos = 0, lines = 0;
    std::size_t at(std::string_view s, std::size_t x) {
      if (x > pos) {
        lines += static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(pos),
                                                     s.begin() + static_cast<std::ptrdiff_t>(x), '\n'));
        pos = x;
      }
      return lines;
    }
  };
  std::size_t next_close_ = 0;
  forward_line_count lines_to_here_, lines_to_close_;
  [[nodiscard]] std::size_t body_line_estimate() {
    if (next_close_ < p_) {
      next_close_ = s_.find("\n}", p_);
      if (next_close_ == std::string_view::npos) next_close_ = s_.size();
    }
    const std::size_t lines = lines_to_close_.at(s_, next_close_) - lines_to_here_.at(s_, p_);
    return std::min(lines, (next_close_ - p_) / min_instruction_bytes);
  }

  // ---- module header ----
  bool module_header() {
    if (!ws()) return false;
    if (!keyword("HloModule")) return fail(p_, "expected 'HloModule', found " + found(p_));
    if (!ws()) return false;
    const std::string_view nm = name();
    if (nm.empty()) return fail(p_, "expected a module name, found " + found(p_));
    m_.name = std::string(nm);
    for (;;) {
      std::string_view key;
      if (!next_attribute_key(key, "a module attribute name")) return false;
      if (key.empty()) return true;
      if (!expect('=', "after a module attribute name") || !ws()) return false;
      const std::size_t vb = p_;
      if (key == "is_scheduled") {
        if (keyword("true")) m_.is_scheduled = true;
        else if (keyword("false")) m_.is_scheduled = false;
        else return fail(vb, "expected true or false for is_scheduled, found " + found(vb));
      } else if (key == "input_output_alias") {
        if (!io_alias()) return false;
      } else if (key == "buffer_donor") {
        if (!buffer_donor()) return false;
      } else if (key == "entry_computation_layout") {
        if (!entry_layout()) return false;
      } else {
        std::string_view v;
        if (!scan_value(v, key)) return false;
        m_.attributes.push_back({std::string(key), std::string(v)});
      }
    }
  }

  bool io_alias() {
    if (!expect('{', "to open input_output_alias") || !ws()) return false;
    if (peek() == '}') return ++p_, true;
    for (;;) {
      alias_entry e;
      if (!parse_shape_index(e.output_index) || !expect(':', "after the output index") ||
          !expect('(', "before the parameter number") || !integer(e.parameter, "as parameter number") ||
          !expect(',', "after the parameter number") || !parse_shape_index(e.parameter_index) || !ws()) {
        return false;
      }
      if (e.parameter < 0) return fail(p_, "negative parameter number in input_output_alias");
      if (peek() == ',') {
        ++p_;
        if (!ws()) return false;
        const std::size_t kb = p_;
        if (keyword("may-alias")) e.must_alias = false;
        else if (keyword("must-alias")) e.must_alias = true;
        else return fail(kb, "expected may-alias or must-alias, found " + found(kb));
      }
      if (!expect(')', "to close an alias entry") || !ws()) return false;
      m_.input_output_alias.push_back(std::move(e));
      const auto more = list_next('}', "input_output_alias");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  bool buffer_donor() {
    if (!expect('{', "to open buffer_donor") || !ws()) return false;
    if (peek() == '}') return ++p_, true;
    for (;;) {
      buffer_donor_entry e;
      if (!expect('(', "before a donor") || !integer(e.parameter, "as parameter number") ||
          !expect(',', "after the parameter number") || !parse_shape_index(e.parameter_index) ||
          !expect(')', "to close a donor") || !ws()) {
        return false;
      }
      m_.buffer_donors.push_back(std::move(e));
      const auto more = list_next('}', "buffer_donor");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  bool entry_layout() {
    std::vector<shape> params;
    if (!expect('{', "to open entry_computation_layout") || !expect('(', "before the parameter layouts") || !ws()) return false;
    if (peek() != ')') {
      for (;;) {
        params.emplace_back();
        if (!parse_shape(params.back(), 1) || !ws()) return false;
        if (peek() == ',') {
          ++p_;
          continue;
        }
        break;
      }
    }
    if (!expect(')', "after the parameter layouts") || !ws()) return false;
    if (s_.substr(p_, 2) != "->") return fail(p_, "expected '->' in entry_computation_layout, found " + found(p_));
    p_ += 2;
    shape result_shape;
    if (!parse_shape(result_shape, 1) || !expect('}', "to close entry_computation_layout")) return false;
    m_.entry_parameter_layouts = std::move(params);
    m_.entry_result_layout = std::move(result_shape);
    return true;
  }

  bool stack_frame_tables() {
    for (;;) {
      if (!ws()) return false;
      const std::size_t save = p_;
      const std::string_view nm = name();
      if (nm != "FileNames" && nm != "FunctionNames" && nm != "FileLocations" && nm != "StackFrames") {
        p_ = save;
        return true;
      }
      // A computation could be called like a section; a section is followed by an entry id,
      // another section or a computation, never by '(' or '{'.
      if (!ws()) return false;
      if (peek() == '{' || peek() == '(') {
        p_ = save;
        return true;
      }
      stack_frame_section sec;
      sec.name = std::string(nm);
      for (;;) {
        if (!ws()) return false;
        if (!is_digit(peek())) break;
        std::int64_t id;
        if (!integer(id, "as a stack-frame table id") || !ws()) return false;
        const std::size_t vb = p_;
        if (peek() == '"') {
          if (!skip_string()) return false;
        } else if (peek() == '{') {
          std::string_view v;
          if (!scan_value(v, sec.name)) return false;
        } else {
          return fail(vb, "expected a string or '{' in " + sec.name + ", found " + found(vb));
        }
        sec.entries.emplace_back(id, std::string(s_.substr(vb, p_ - vb)));
      }
      m_.stack_frames.push_back(std::move(sec));
    }
  }

  // ---- computations ----
  bool computations() {
    for (;;) {
      if (!ws()) return false;
      if (at_end()) break;
      if (!parse_computation()) return false;
    }
    if (m_.computations.empty()) return fail(p_, "expected a computation, found end of input");
    return true;
  }

  // `[ENTRY] name [(signature) -> shape][, attributes] { instructions }`.
  bool parse_computation() {
    computation c;
    if (keyword("ENTRY")) {
      c.is_entry = true;
      if (!ws()) return false;
    }
    const std::size_t np = p_;
    const std::string_view nm = name();
    if (nm.empty()) return fail(np, "expected a computation name, found " + found(np));
    const auto cid = static_cast<computation_id>(m_.computations.size());
    if (const auto [first, added] = comp_by_name_.emplace(nm, cid); !added) {
      return fail(np, "duplicate computation name " + quoted(nm) + " (first defined at " +
                          location(comp_pos_[index_of(first)]) + ")");
    }
    c.name = std::string(nm);
    if (!ws() || !signature() || !computation_attributes(c)) return false;
    if (!expect('{', [&] { return "to open computation " + quoted(c.name); })) return false;
    const std::size_t open = p_ - 1;
    m_.computations.push_back(std::move(c));
    comp_pos_.push_back(np);
    names_.clear();  // reused across computations: constant time, keeps the slots
    names_.reserve(body_line_estimate());
    ops_.clear();
    ops_begin_.clear();
    std::vector<instruction_id> local;
    for (;;) {
      if (!ws()) return false;
      if (at_end()) {
        return fail(p_, "unexpected end of input: computation " + quoted(nm) + " opened at " +
                            location(open) + " is not closed (expected '}')");
      }
      if (peek() == '}') {
        ++p_;
        break;
      }
      ops_begin_.push_back(static_cast<std::uint32_t>(ops_.size()));
      if (!parse_instruction(cid, local)) return false;
    }
    ops_begin_.push_back(static_cast<std::uint32_t>(ops_.size()));
    return finish_computation(cid, local, np);
  }

  // The signature `(p: shape, ...) -> shape`, when there is one (checked, then dropped).
  bool signature() {
    if (peek() != '(') return true;
    ++p_;
    if (!ws()) return false;
    if (peek() != ')') {
      for (;;) {
        if (!ws()) return false;
        const std::size_t pp = p_;
        if (name().empty()) return fail(pp, "expected a parameter name in the signature, found " + found(pp));
        if (!expect(':', "after a parameter name") || !parse_shape(scratch(), 1) || !ws()) return false;
        if (peek() == ',') {
          ++p_;
          continue;
        }
        break;
      }
    }
    if (!expect(')', "to close the signature") || !ws()) return false;
    if (s_.substr(p_, 2) != "->") return fail(p_, "expected '->' after the signature, found " + found(p_));
    p_ += 2;
    return parse_shape(scratch(), 1);
  }

  // Computation attributes such as execution_thread="x".
  bool computation_attributes(computation& c) {
    for (;;) {
      if (!ws()) return false;
      if (peek() != ',') return true;
      ++p_;
      if (!ws()) return false;
      const std::size_t kp = p_;
      const std::string_view key = name();
      if (key.empty()) return fail(kp, "expected an attribute name, found " + found(kp));
      std::string_view v;
      if (!expect('=', "after an attribute name") || !ws() || !scan_value(v, key)) return false;
      c.attributes.push_back({std::string(key), std::string(v)});
    }
  }

  // ---- the whole module ----
  bool finish_module() {
    // Called computations.
    for (const auto& pc : pending_calls_) {
      const computation_id* callee = comp_by_name_.find(pc.name);
      if (callee == nullptr) return fail(pc.pos, "unknown computation " + quoted(pc.name));
      m_[pc.instr].calls.push_back({*callee, pc.role, pc.branch});
    }
    if (!find_entry()) return false;
    for (std::size_t k = 0; k < m_.instructions.size(); ++k) {
      if (!check_instruction(static_cast<instruction_id>(k))) return false;
    }
    return check_call_graph();
  }

  // The ENTRY computation, or the last one; a second ENTRY is an error.
  bool find_entry() {
    bool have_entry = false;
    for (std::size_t k = 0; k < m_.computations.size(); ++k) {
      if (!m_.computations[k].is_entry) continue;
      if (have_entry) return fail(comp_pos_[k], "second ENTRY computation " + quoted(m_.computations[k].name));
      have_entry = true;
      m_.entry = static_cast<computation_id>(k);
    }
    if (!have_entry) {
      m_.entry = static_cast<computation_id>(m_.computations.size() - 1);
      m_[m_.entry].is_entry = true;
    }
    return true;
  }

  // The parameters of the computation instruction `in` calls in role `r`, or nullopt.
  std::optional<std::size_t> params_of(const instruction& in, call_role r) const {
    for (const auto& ref : in.calls) {
      if (ref.role == r) return m_[ref.computation].parameters.size();
    }
    return std::nullopt;
  }

  // Structural checks the analyses rely on: tuple indices, tuple arity, callees and their
  // parameter counts, in-place pairs that exist.
  bool check_instruction(instruction_id id) {
    const instruction& in = m_[id];
    const std::size_t at = instr_pos_[index_of(id)];
    auto count = [&](call_role r) {
      std::size_t n = 0;
      for (const auto& ref : in.calls) n += ref.role == r ? 1 : 0;
      return n;
    };
    const auto op = in.opcode;
    if (op == opcodes::get_tuple_element) {
      if (in.operands.size() != 1) return fail(at, "get-tuple-element " + quoted(in.name) + " needs one operand");
      const shape& os = m_[in.operands[0]].shape;
      if (!os.is_tuple() || static_cast<std::size_t>(in.tuple_index) >= os.elements.size()) {
        return fail(at, "get-tuple-element " + quoted(in.name) + ": index " + std::to_string(in.tuple_index) +
                            " is out of range for operand shape " + to_string(os));
      }
    } else if (op == opcodes::tuple) {
      if (!in.shape.is_tuple() || in.shape.elements.size() != in.operands.size()) {
        return fail(at, "tuple " + quoted(in.name) + " has " + std::to_string(in.operands.size()) +
                            " operands but shape " + to_string(in.shape));
      }
    } else if (op == opcodes::fusion || op == opcodes::call) {
      const bool fusion = op == opcodes::fusion;
      const auto role = fusion ? call_role::calls : call_role::to_apply;
      if (count(role) != 1) {
        return fail(at, std::string(fusion ? "fusion " : "call ") + quoted(in.name) + " needs " +
                            (fusion ? "calls" : "to_apply") + "=COMPUTATION");
      }
      if (*params_of(in, role) != in.operands.size()) {
        return fail(at, std::string(fusion ? "fusion " : "call ") + quoted(in.name) + " has " +
                            std::to_string(in.operands.size()) + " operands but its " +
                            (fusion ? "fused computation" : "callee") + " has " +
                            std::to_string(*params_of(in, role)) + " parameters");
      }
    } else if (op == opcodes::while_loop) {
      if (count(call_role::body) != 1 || count(call_role::condition) != 1) {
        return fail(at, "while " + quoted(in.name) + " needs condition= and body=");
      }
      if (in.operands.size() != 1 || *params_of(in, call_role::body) != 1 || *params_of(in, call_role::condition) != 1) {
        return fail(at, "while " + quoted(in.name) + " needs one operand, and a body and condition of one parameter each");
      }
    } else if (op == opcodes::conditional) {
      const std::size_t branches = count(call_role::branch);
      if (branches == 0 || in.operands.size() != branches + 1) {
        return fail(at, "conditional " + quoted(in.name) + " needs one operand per branch plus the selector");
      }
      for (const auto& ref : in.calls) {
        if (ref.role == call_role::branch && m_[ref.computation].parameters.size() != 1) {
          return fail(at, "conditional " + quoted(in.name) + ": branch " + quoted(m_[ref.computation].name) +
                              " must have one parameter");
        }
      }
    }
    if (const auto v = in.find_attribute("output_to_operand_aliasing")) {
      for (const auto& pr : parse_output_to_operand_aliasing(*v)) {
        if (pr.operand >= in.operands.size() || in.shape.subshape(pr.output_index) == nullptr ||
            m_[in.operands[pr.operand]].shape.subshape(pr.operand_index) == nullptr) {
          return fail(at, "output_to_operand_aliasing of " + quoted(in.name) + " names an operand or index that does not exist");
        }
      }
    }
    return true;
  }

  // The call graph has no cycles (a depth-first search without recursion).
  bool check_call_graph() {
    const std::size_t nc = m_.computations.size();
    std::vector<std::uint8_t> state(nc, 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::vector<computation_id>> callees(nc);
    for (const auto& in : m_.instructions) {
      for (const auto& ref : in.calls) callees[index_of(in.parent)].push_back(ref.computation);
    }
    for (std::size_t r = 0; r < nc; ++r) {
      if (state[r] != 0) continue;
      std::vector<std::pair<std::size_t, std::size_t>> stack{{r, 0}};
      state[r] = 1;
      while (!stack.empty()) {
        auto& [c, k] = stack.back();
        if (k == callees[c].size()) {
          state[c] = 2;
          stack.pop_back();
          continue;
        }
        const std::size_t d = index_of(callees[c][k++]);
        if (state[d] == 1) {
          return fail(comp_pos_[d], "computation " + quoted(m_.computations[d].name) + " calls itself (call-graph cycle)");
        }
        if (state[d] == 0) {
          state[d] = 1;
          stack.emplace_back(d, 0);
        }
      }
    }
    return true;
  }
};

}  // namespace detail

/// Parses HLO module text. `file_name` is used in error messages only.
/// @returns the module, or `errc::parse_error` naming file:line:column and what was expected.
[[nodiscard]] inline result<module> parse_module(std::string_view text, std::string_view file_name = "<input>") {
  detail::hlo_parser p(text, file_name);
  return p.parse_module();
}

/// Parses one shape, e.g. `f32[2,3]{1,0:S(1)}` or `(s32[], bf16[8])`.
[[nodiscard]] inline result<shape> parse_shape(std::string_view text) {
  detail::shape_grammar p(text, "<shape>");
  return p.parse_single_shape();
}

/// Reads a whole file into a string (no iostreams) through `read_input_file`: regular files
/// only, at most `limits.max_bytes`. @returns `errc::not_found` if unreadable.
[[nodiscard]] inline result<std::string> read_text_file(const std::string& path, input_limits limits = {}) {
  return read_input_file(path, limits);
}

/// Reads and parses an HLO text file; errors name `path:line:column`. Running out of memory
/// is `errc::out_of_memory` naming the file.
[[nodiscard]] inline result<module> read_module_file(const std::string& path, input_limits limits = {}) {
  try {
    auto text = read_text_file(path, limits);
    if (!text) return text.error();
    return parse_module(*text, path);
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, path + ": out of memory while reading the module");
  }
}

}  // namespace xlamem::hlo
