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
#include <deque>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <new>
#include <utility>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"
#include "xlamem/input_file.hpp"

namespace xlamem::hlo {

namespace detail {

inline bool is_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_name_char(char c) noexcept { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-'; }

class hlo_parser {
 public:
  hlo_parser(std::string_view text, std::string_view file) : s_(text), file_(file) {}

  result<module> parse_module() {
    m_.instructions.reserve(s_.size() / 256 + 16);  // real dumps spend 70-300 bytes per instruction
    if (!module_header() || !stack_frame_tables() || !computations() || !finish_module()) {
      return *err_;
    }
    return std::move(m_);
  }

  result<shape> parse_single_shape() {
    shape out;
    if (!parse_shape(out, 0) || !ws()) return *err_;
    if (p_ != s_.size()) {
      fail(p_, "expected end of shape, found " + found(p_));
      return *err_;
    }
    return out;
  }

 private:
  static constexpr int max_nesting = 256;
  static constexpr int max_shape_depth = 64;

  struct pending_operand {
    std::string_view name;
    std::size_t pos;
    std::uint32_t gte_begin = 0;  // compact GTE `%t#1#0`: indices gte_path_[begin, begin + count)
    std::uint32_t gte_count = 0;
  };
  struct pending_call {
    instruction_id instr;
    std::string_view name;
    std::size_t pos;
    call_role role;
    std::size_t branch;
  };

  std::string_view s_;
  std::string_view file_;
  std::size_t p_ = 0;
  std::optional<error> err_;
  hlo::module m_;  // qualified: a line starting with `module` is a module declaration to some front ends
  std::vector<std::size_t> instr_pos_;   // source offset of each instruction's name
  std::vector<std::size_t> comp_pos_;    // source offset of each computation's name
  std::vector<pending_call> pending_calls_;
  std::unordered_map<std::string_view, computation_id> comp_by_name_;
  std::vector<pending_operand> ops_;
  std::vector<std::int64_t> gte_path_;
  std::unordered_set<std::string> names_taken_;  // names given to materialised GTEs  // indices of compact GTE operands, flat; reused
  std::unordered_map<std::string_view, instruction_id> names_;  // of the computation being read
  std::vector<std::uint32_t> ops_begin_;
  std::uint64_t total_bytes_ = 0;  // sum of every instruction's subshape sizes so far
  shape scratch_;  // operand and signature shapes are checked, then dropped: reuse the storage

  shape& scratch() {
    scratch_.type = element_type::invalid;
    scratch_.dims.clear();
    scratch_.dynamic.clear();
    scratch_.has_layout = false;
    scratch_.layout = layout{};
    scratch_.elements.clear();
    scratch_.is_buffer = false;
    return scratch_;
  }

  // ---- diagnostics ----
  static std::string quoted(std::string_view token) { return quote_token(token); }
  std::string location(std::size_t at) const {
    at = std::min(at, s_.size());
    std::size_t line = 1, line_start = 0;
    const char* b = s_.data();
    for (const char* q = b; (q = static_cast<const char*>(std::memchr(q, '\n', static_cast<std::size_t>(b + at - q)))) != nullptr; ++q) {
      ++line;
      line_start = static_cast<std::size_t>(q - b) + 1;
    }
    std::string out(file_);
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(at - line_start + 1);
    return out;
  }
  std::string found(std::size_t at) const {
    if (at >= s_.size()) return "end of input";
    std::size_t e = at;
    if (is_name_char(s_[e]) || s_[e] == '%') {
      ++e;
      while (e < s_.size() && e - at <= max_quoted_chars && is_name_char(s_[e])) ++e;
    } else {
      ++e;
    }
    return quote_token(s_.substr(at, e - at));
  }
  bool fail(std::size_t at, const std::string& msg) {
    if (!err_) err_ = make_error(errc::parse_error, location(at) + ": " + msg);
    return false;
  }

  // ---- lexing ----
  bool ws() {
    const std::size_t n = s_.size();
    for (;;) {
      while (p_ < n && is_space(s_[p_])) ++p_;
      if (p_ + 1 < n && s_[p_] == '/') {
        if (s_[p_ + 1] == '*') {
          const auto e = s_.find("*/", p_ + 2);
          if (e == std::string_view::npos) return fail(p_, "unterminated '/*' comment");
          p_ = e + 2;
          continue;
        }
        if (s_[p_ + 1] == '/') {
          const auto e = s_.find('\n', p_);
          p_ = e == std::string_view::npos ? n : e + 1;
          continue;
        }
      }
      return true;
    }
  }
  bool at_end() const noexcept { return p_ >= s_.size(); }
  char peek() const noexcept { return p_ < s_.size() ? s_[p_] : '\0'; }

  enum class list_step { more, closed, error };
  /// After an item of a comma-separated list: ',' (consumed) means another item follows,
  /// `close` (consumed) ends the list, anything else fails naming the list (`what`).
  list_step list_next(char close, std::string_view what) {
    if (peek() == ',') {
      ++p_;
      return list_step::more;
    }
    if (peek() == close) {
      ++p_;
      return list_step::closed;
    }
    fail(p_, "expected ',' or '" + std::string(1, close) + "' in " + std::string(what) + ", found " + found(p_));
    return list_step::error;
  }

  bool expect(char c, const char* context) {
    if (!ws()) return false;
    if (peek() != c) {
      return fail(p_, std::string("expected '") + c + "' " + context + ", found " + found(p_));
    }
    ++p_;
    return true;
  }
  /// Reads `[%]name`; empty when there is none (nothing consumed).
  std::string_view name() {
    std::size_t q = p_;
    if (q < s_.size() && s_[q] == '%') ++q;
    const std::size_t b = q;
    while (q < s_.size() && is_name_char(s_[q])) ++q;
    if (q == b) return {};
    p_ = q;
    return s_.substr(b, q - b);
  }
  /// Whether the keyword `kw` stands at the cursor (not followed by a name character).
  bool keyword(std::string_view kw) {
    if (p_ >= s_.size() || s_[p_] != kw[0] || s_.substr(p_, kw.size()) != kw) return false;
    const std::size_t e = p_ + kw.size();
    if (e < s_.size() && is_name_char(s_[e])) return false;
    p_ = e;
    return true;
  }
  bool integer(std::int64_t& v, const char* what) {
    if (!ws()) return false;
    const std::size_t b = p_;
    bool neg = false;
    if (peek() == '-') neg = true, ++p_;
    if (!is_digit(peek())) {
      p_ = b;
      return fail(b, std::string("expected an integer ") + what + ", found " + found(b));
    }
    std::uint64_t u = 0;
    while (is_digit(peek())) {
      const unsigned d = static_cast<unsigned>(s_[p_] - '0');
      if (u > (static_cast<std::uint64_t>(INT64_MAX) - d) / 10) return fail(b, std::string("integer out of range ") + what);
      u = u * 10 + d;
      ++p_;
    }
    v = neg ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
    return true;
  }
  /// Skips a string literal starting at the cursor (which is on the opening quote).
  bool skip_string() {
    const std::size_t b = p_;
    ++p_;
    const std::size_t n = s_.size();
    while (p_ < n) {
      const char c = s_[p_];
      if (c == '\\') {
        p_ += 2;
        continue;
      }
      ++p_;
      if (c == '"') return true;
    }
    p_ = n;
    return fail(b, "unterminated string literal");
  }
  /// Scans an attribute value: a string, or text balanced over (), [], {} (strings respected)
  /// up to a ',' or whitespace at depth 0, or an unmatched closing bracket.
  bool scan_value(std::string_view& out, std::string_view key) {
    const std::size_t b = p_;
    if (peek() == '"') {
      if (!skip_string()) return false;
      out = s_.substr(b, p_ - b);
      return true;
    }
    char stack[max_nesting];
    int depth = 0;
    const std::size_t n = s_.size();
    while (p_ < n) {
      const char c = s_[p_];
      if (c == '"') {
        if (!skip_string()) return false;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        if (depth == max_nesting) return fail(p_, "brackets nest too deeply in attribute " + quoted(key));
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        if (stack[depth - 1] != c) {
          return fail(p_, "unbalanced brackets in attribute " + quoted(key) + ": expected '" +
                              stack[depth - 1] + "', found '" + c + "'");
        }
        --depth;
      } else if (depth == 0 && (c == ',' || is_space(c))) {
        // Mesh replica groups print a space inside the value: `mesh['i'=4] {'i'}` (XLA with
        // SPMD meshes). A '{' after blanks never starts anything else, so it continues the value.
        if (c == ' ' && p_ > b && s_[p_ - 1] == ']') {
          std::size_t q = p_;
          while (q < n && (s_[q] == ' ' || s_[q] == '\t')) ++q;
          if (q < n && s_[q] == '{') {
            p_ = q;
            continue;
          }
        }
        break;
      }
      ++p_;
    }
    if (depth != 0) {
      return fail(b, "unbalanced brackets in attribute " + quoted(key) + ": missing '" + stack[depth - 1] +
                         "' before end of input");
    }
    if (p_ == b) return fail(b, "expected a value for attribute " + quoted(key) + ", found " + found(b));
    out = s_.substr(b, p_ - b);
    return true;
  }

  // ---- shapes ----
  bool parse_shape(shape& out, int depth) {
    if (!ws()) return false;
    if (depth > max_shape_depth) {
      return fail(p_, "shape nests too deeply (more than " + std::to_string(max_shape_depth) +
                          " levels of tuples and physical shapes)");
    }
    const std::size_t b = p_;
    if (peek() == 'b' && p_ + 1 < s_.size() && s_[p_ + 1] == '(') {  // buffer shape b(f32[4]{0})
      p_ += 2;
      if (!parse_shape(out, depth + 1)) return false;
      if (out.is_tuple() || out.is_buffer) return fail(b, "a buffer shape b(...) holds an array shape");
      out.is_buffer = true;
      return expect(')', "to close the buffer shape b(...)");
    }
    if (peek() == '(') {
      ++p_;
      out.type = element_type::tuple;
      if (!ws()) return false;
      if (peek() == ')') {
        ++p_;
        return true;
      }
      for (;;) {
        out.elements.emplace_back();
        if (!parse_shape(out.elements.back(), depth + 1) || !ws()) return false;
        const auto more = list_next(')', "tuple shape");
        if (more == list_step::more) continue;
        return more == list_step::closed;
      }
    }
    std::size_t q = p_;
    while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]))) ++q;
    const std::string_view tn = s_.substr(p_, q - p_);
    if (tn.empty()) return fail(b, "expected a shape, found " + found(b));
    const auto t = element_type_from_name(tn);
    if (!t) return fail(b, "unknown element type " + quoted(tn));
    out.type = *t;
    p_ = q;
    if (!expect('[', "after the element type")) return false;
    if (!ws()) return false;
    if (peek() == ']') {
      ++p_;
    } else {
      for (;;) {
        if (!ws()) return false;
        bool dyn = false;
        std::int64_t d = 0;
        if (peek() == '?') {
          ++p_;
          dyn = true;
          d = -1;
        } else {
          if (p_ + 1 < s_.size() && s_[p_] == '<' && s_[p_ + 1] == '=') {
            p_ += 2;
            dyn = true;
          }
          const std::size_t db = p_;
          if (!integer(d, "as a dimension")) return false;
          if (d < 0) return fail(db, "negative dimension");
        }
        if (dyn && out.dynamic.size() < out.dims.size() + 1) out.dynamic.resize(out.dims.size() + 1, false);
        if (dyn) out.dynamic[out.dims.size()] = true;
        out.dims.push_back(d);
        if (!ws()) return false;
        const auto more = list_next(']', "dimensions");
        if (more == list_step::more) continue;
        if (more == list_step::error) return false;
        break;
      }
    }
    if (!out.dynamic.empty()) out.dynamic.resize(out.dims.size(), false);
    if ((out.type == element_type::token || out.type == element_type::opaque) && !out.dims.empty()) {
      return fail(b, std::string(tn) + " shapes have no dimensions");
    }
    // A layout follows when '{' is followed by a digit, ':' or '}' (a computation body never is).
    const std::size_t save = p_;
    if (!ws()) return false;
    if (peek() == '{') {
      std::size_t q2 = p_ + 1;
      while (q2 < s_.size() && is_space(s_[q2])) ++q2;
      if (q2 < s_.size() && (is_digit(s_[q2]) || s_[q2] == ':' || s_[q2] == '}')) {
        ++p_;
        return parse_layout(out, b, depth);
      }
    }
    p_ = save;
    return true;
  }

  bool small_int_in_parens(std::int64_t& v, const char* what) {
    return expect('(', what) && integer(v, what) && expect(')', what);
  }

  bool parse_layout(shape& out, std::size_t shape_pos, int depth) {
    layout& l = out.layout;
    out.has_layout = true;
    if (!ws()) return false;
    while (is_digit(peek())) {
      std::int64_t d;
      const std::size_t db = p_;
      if (!integer(d, "in minor_to_major")) return false;
      if (d < 0 || static_cast<std::size_t>(d) >= out.dims.size()) {
        return fail(db, "layout dimension " + std::to_string(d) + " is out of range for a rank-" +
                            std::to_string(out.dims.size()) + " shape");
      }
      l.minor_to_major.push_back(d);
      if (!ws()) return false;
      if (peek() == ',') {
        ++p_;
        if (!ws()) return false;
        if (!is_digit(peek())) return fail(p_, "expected a dimension after ',' in layout, found " + found(p_));
      }
    }
    if (peek() == ':') {
      ++p_;
      for (;;) {
        if (!ws()) return false;
        const char c = peek();
        const std::size_t at = p_;
        if (c == '}') break;
        if (c == 'D') {  // dim level types of sparse layouts: D(D,C+,S~,H)
          ++p_;
          if (!expect('(', "after D in layout") || !ws()) return false;
          const std::size_t db = p_;
          for (;;) {
            if (!ws()) return false;
            const char t = peek();
            if (t != 'D' && t != 'C' && t != 'S' && t != 'H') {
              return fail(p_, "expected a dim level type (D, C, S or H) in layout, found " + found(p_));
            }
            ++p_;
            if (peek() == '+') ++p_;
            if (peek() == '~') ++p_;
            if (!ws()) return false;
            if (peek() == ',') {
              ++p_;
              continue;
            }
            if (peek() != ')') return fail(p_, "expected ',' or ')' in D(...), found " + found(p_));
            break;
          }
          l.dim_level_types = std::string(s_.substr(db, p_ - db));
          ++p_;
        } else if (c == 'T') {
          ++p_;
          if (!ws()) return false;
          if (peek() != '(') return fail(p_, "expected '(' after T in layout, found " + found(p_));
          while (ws() && peek() == '(') {
            ++p_;
            std::vector<std::int64_t> tile;
            for (;;) {
              if (!ws()) return false;
              if (peek() == '*') {
                ++p_;
                tile.push_back(combine_dimension);
              } else {
                std::int64_t d;
                if (!integer(d, "in a tile")) return false;
                tile.push_back(d);
              }
              if (!ws()) return false;
              const auto more = list_next(')', "tile");
              if (more == list_step::more) continue;
              if (more == list_step::error) return false;
              break;
            }
            l.tiles.push_back(std::move(tile));
          }
          if (err_) return false;
        } else if (c == 'L') {
          ++p_;
          if (!small_int_in_parens(l.tail_padding_alignment, "in L(...)")) return false;
        } else if (c == '#' || c == '*') {
          ++p_;
          if (!expect('(', "in layout") || !ws()) return false;
          std::size_t q = p_;
          while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]))) ++q;
          const auto t = element_type_from_name(s_.substr(p_, q - p_));
          if (!t) return fail(p_, "unknown element type in layout, found " + found(p_));
          (c == '#' ? l.index_type : l.pointer_type) = *t;
          p_ = q;
          if (!expect(')', "in layout")) return false;
        } else if (c == 'E') {
          ++p_;
          if (!small_int_in_parens(l.element_size_bits, "in E(...)")) return false;
        } else if (c == 'S' && p_ + 1 < s_.size() && s_[p_ + 1] == 'C') {
          p_ += 2;
          split_config sc;
          if (!expect('(', "after SC") || !integer(sc.dimension, "as split dimension") || !expect(':', "in SC(d:i)")) return false;
          for (;;) {
            std::int64_t i;
            if (!integer(i, "as split index") || !ws()) return false;
            sc.indices.push_back(i);
            const auto more = list_next(')', "SC(...)");
            if (more == list_step::more) continue;
            if (more == list_step::error) return false;
            break;
          }
          l.split_configs.push_back(std::move(sc));
        } else if (c == 'S') {
          ++p_;
          if (!small_int_in_parens(l.memory_space, "in S(...)")) return false;
        } else if (c == 'P') {
          ++p_;
          if (!expect('(', "after P")) return false;
          const std::size_t pb = p_;
          shape phys;
          // One depth budget across nested physical shapes: each P(...) counts as a level.
          if (!parse_shape(phys, depth + 1)) return false;
          const std::size_t pe = p_;
          if (!expect(')', "after the physical shape")) return false;
          std::string_view txt = s_.substr(pb, pe - pb);
          while (!txt.empty() && is_space(txt.front())) txt.remove_prefix(1);
          l.physical_shape = std::string(txt);
        } else if (c == 'M') {
          ++p_;
          if (!small_int_in_parens(l.dynamic_metadata_prefix_bytes, "in M(...)")) return false;
        } else {
          return fail(at, "expected a layout part (D, T, L, #, *, E, S, SC, P, M) or '}', found " + found(at));
        }
      }
    }
    if (!expect('}', "to close the layout")) return false;
    if (!l.minor_to_major.empty() && l.minor_to_major.size() != out.dims.size()) {
      return fail(shape_pos, "layout lists " + std::to_string(l.minor_to_major.size()) +
                                 " dimensions for a rank-" + std::to_string(out.dims.size()) + " shape");
    }
    if (l.minor_to_major.empty() && !out.dims.empty()) {
      return fail(shape_pos, "layout lists no dimensions for a rank-" + std::to_string(out.dims.size()) + " shape");
    }
    return true;
  }

  bool parse_shape_index(shape_index& out) {
    if (!expect('{', "to open a shape index") || !ws()) return false;
    if (peek() == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      std::int64_t v;
      if (!integer(v, "in a shape index") || !ws()) return false;
      out.push_back(v);
      const auto more = list_next('}', "shape index");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  /// `{{out}: (operand, {in}), ...}`, strictly: a malformed list is an error here, not an
  /// attribute the analyses would silently read as empty.
  bool output_to_operand_aliasing() {
    if (!expect('{', "to open output_to_operand_aliasing") || !ws()) return false;
    if (peek() == '}') return ++p_, true;
    for (;;) {
      shape_index out, in;
      std::int64_t operand = 0;
      if (!parse_shape_index(out) || !expect(':', "after the output index in output_to_operand_aliasing") ||
          !expect('(', "before the operand number in output_to_operand_aliasing")) {
        return false;
      }
      const std::size_t np = p_;
      if (!integer(operand, "as operand number") || !expect(',', "after the operand number in output_to_operand_aliasing") ||
          !parse_shape_index(in) || !expect(')', "to close an output_to_operand_aliasing pair") || !ws()) {
        return false;
      }
      if (operand < 0) return fail(np, "negative operand number in output_to_operand_aliasing");
      const auto more = list_next('}', "output_to_operand_aliasing");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  /// Every subshape of an instruction's shape has a byte size that fits, and the module's sizes
  /// sum to at most `max_total_bytes`: so every later sum of sizes, offsets and padding fits.
  bool check_sizes(const shape& sh, std::string_view instr, std::size_t at) {
    bool ok = true;
    for_each_subshape(sh, [&](const shape_index&, const shape& sub) {
      if (!ok) return;
      const auto bytes = sub.checked_byte_size();
      if (!bytes || *bytes > max_total_bytes) {
        ok = fail(at, "instruction " + quoted(instr) + ": shape " + quoted(to_string(sub)) +
                          " is larger than the limit of 2^60 bytes");
        return;
      }
      if (!checked_accumulate(total_bytes_, *bytes, max_total_bytes)) {
        ok = fail(at, "instruction " + quoted(instr) + ": the module's buffers sum to more than the limit of 2^60 bytes");
      }
    });
    return ok;
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
      const std::size_t save = p_;
      if (!ws()) return false;
      if (peek() != ',') {
        p_ = save;
        return true;
      }
      ++p_;
      if (!ws()) return false;
      const std::size_t kp = p_;
      const std::string_view key = name();
      if (key.empty()) return fail(kp, "expected a module attribute name, found " + found(kp));
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
    if (!comp_by_name_.emplace(nm, cid).second) {
      return fail(np, "duplicate computation name " + quoted(nm) + " (first defined at " +
                          location(comp_pos_[index_of(comp_by_name_[nm])]) + ")");
    }
    c.name = std::string(nm);
    if (!ws()) return false;
    if (peek() == '(') {  // signature: (p: shape, ...) -> shape
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
      if (!parse_shape(scratch(), 1)) return false;
    }
    for (;;) {  // computation attributes such as execution_thread="x"
      if (!ws()) return false;
      if (peek() != ',') break;
      ++p_;
      if (!ws()) return false;
      const std::size_t kp = p_;
      const std::string_view key = name();
      if (key.empty()) return fail(kp, "expected an attribute name, found " + found(kp));
      std::string_view v;
      if (!expect('=', "after an attribute name") || !ws() || !scan_value(v, key)) return false;
      c.attributes.push_back({std::string(key), std::string(v)});
    }
    if (!expect('{', ("to open computation " + quoted(c.name)).c_str())) return false;
    const std::size_t open = p_ - 1;
    m_.computations.push_back(std::move(c));
    comp_pos_.push_back(np);

    auto& by_name = names_;  // reused across computations: clear() keeps the buckets
    by_name.clear();
    // Operands of every instruction of this computation, flat: instruction k owns
    // ops_[ops_begin_[k], ops_begin_[k + 1]). Reused across computations.
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
      if (!parse_instruction(cid, by_name, ops_, local)) return false;
    }
    ops_begin_.push_back(static_cast<std::uint32_t>(ops_.size()));
    return finish_computation(cid, by_name, local, np);
  }

  bool parse_instruction(computation_id cid, std::unordered_map<std::string_view, instruction_id>& by_name,
                         std::vector<pending_operand>& ops, std::vector<instruction_id>& local) {
    instruction in;
    in.parent = cid;
    if (keyword("ROOT")) {
      in.is_root = true;
      if (!ws()) return false;
    }
    const std::size_t np = p_;
    const std::string_view nm = name();
    if (nm.empty()) return fail(np, "expected an instruction name or '}', found " + found(np));
    const auto id = static_cast<instruction_id>(m_.instructions.size());
    if (!by_name.emplace(nm, id).second) {
      return fail(np, "duplicate instruction name " + quoted(nm) + " (first defined at " +
                          location(instr_pos_[index_of(by_name[nm])]) + ")");
    }
    in.name = std::string(nm);
    if (!expect('=', ("after instruction name " + quoted(in.name)).c_str())) return false;
    if (!ws()) return false;
    const std::size_t shape_pos = p_;
    if (!parse_shape(in.shape, 0) || !check_sizes(in.shape, in.name, shape_pos) || !ws()) return false;
    const std::size_t op_pos = p_;
    std::size_t q = p_;
    while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]) || s_[q] == '-' || s_[q] == '_')) ++q;
    const std::string_view opn = s_.substr(p_, q - p_);
    if (opn.empty()) return fail(op_pos, "expected an opcode, found " + found(op_pos));
    auto op = opcode_from_name(opn);
    if (!op) {
      // Async sugar: `custom-call-start`, `fusion-done`, ... stand for async-start/-update/-done
      // wrapping that opcode (XLA prints them that way).
      for (const auto& [suffix, async] : {std::pair<std::string_view, opcode>{"-start", opcodes::async_start},
                                          {"-update", opcodes::async_update},
                                          {"-done", opcodes::async_done}}) {
        if (opn.size() > suffix.size() && opn.substr(opn.size() - suffix.size()) == suffix &&
            opcode_from_name(opn.substr(0, opn.size() - suffix.size()))) {
          op = async;
          in.opcode_spelling = std::string(opn);
        }
      }
    }
    if (!op) return fail(op_pos, "unknown opcode " + quoted(opn));
    in.opcode = *op;
    p_ = q;
    if (!expect('(', ("after opcode " + quoted(opn)).c_str())) return false;
    if (*op == opcodes::parameter) {
      if (!integer(in.parameter_number, "as parameter number") || !expect(')', "after the parameter number")) return false;
      if (in.parameter_number < 0) return fail(op_pos, "negative parameter number");
    } else if (*op == opcodes::constant) {
      const std::size_t lb = p_;
      int depth = 0;
      for (;;) {
        if (at_end()) return fail(lb, "unterminated constant literal (expected ')')");
        const char c = s_[p_];
        if (c == '"') {
          if (!skip_string()) return false;
          continue;
        }
        if (c == '(' || c == '{' || c == '[') {
          if (++depth > max_nesting) return fail(p_, "constant literal nests too deeply");
        } else if (c == ')' || c == '}' || c == ']') {
          if (depth == 0) {
            if (c != ')') return fail(p_, std::string("unbalanced '") + c + "' in constant literal");
            break;
          }
          --depth;
        }
        ++p_;
      }
      std::string_view lit = s_.substr(lb, p_ - lb);
      while (!lit.empty() && is_space(lit.front())) lit.remove_prefix(1);
      while (!lit.empty() && is_space(lit.back())) lit.remove_suffix(1);
      in.literal = std::string(lit);
      ++p_;
    } else {
      if (!ws()) return false;
      if (peek() == ')') {
        ++p_;
      } else {
        for (;;) {
          if (!ws()) return false;
          // Long form: an operand shape comes first (a tuple, or a type followed by '[').
          bool has_shape = peek() == '(' || (peek() == 'b' && p_ + 1 < s_.size() && s_[p_ + 1] == '(');
          if (!has_shape) {
            std::size_t e = p_;
            while (e < s_.size() && (is_alpha(s_[e]) || is_digit(s_[e]))) ++e;
            has_shape = e < s_.size() && s_[e] == '[' && element_type_from_name(s_.substr(p_, e - p_)).has_value();
          }
          if (has_shape) {
            if (!parse_shape(scratch(), 1) || !ws()) return false;
          }
          const std::size_t opp = p_;
          const std::string_view on = name();
          if (on.empty()) return fail(opp, "expected an operand name, found " + found(opp));
          pending_operand po{on, opp};
          // Compact get-tuple-element (JAX >= 0.11's default dump): `%t#1` is element 1 of `%t`,
          // `%t#1#0` element 0 of that; the reader materialises the get-tuple-elements.
          if (peek() == '#') {
            po.gte_begin = static_cast<std::uint32_t>(gte_path_.size());
            while (peek() == '#') {
              ++p_;
              const std::size_t ib = p_;
              if (!is_digit(peek())) return fail(ib, "expected a tuple index after '#' in operand " + quoted(on) + ", found " + found(ib));
              std::int64_t idx = 0;
              if (!integer(idx, "as a compact get-tuple-element index")) return false;
              gte_path_.push_back(idx);
              ++po.gte_count;
            }
          }
          ops.push_back(po);
          if (!ws()) return false;
          const auto more = list_next(')', "the operand list");
          if (more == list_step::more) continue;
          if (more == list_step::error) return false;
          break;
        }
      }
    }
    // Attributes.
    for (;;) {
      const std::size_t save = p_;
      if (!ws()) return false;
      if (peek() != ',') {
        p_ = save;
        break;
      }
      ++p_;
      if (!ws()) return false;
      const std::size_t kp = p_;
      const std::string_view key = name();
      if (key.empty()) return fail(kp, "expected an attribute name, found " + found(kp));
      if (!expect('=', ("after attribute name " + quoted(key)).c_str()) || !ws()) return false;
      const std::size_t vb = p_;
      if (key == "calls" || key == "to_apply" || key == "condition" || key == "body" ||
          key == "true_computation" || key == "false_computation") {
        call_role role = key == "calls" ? call_role::calls
                         : key == "to_apply" ? call_role::to_apply
                         : key == "condition" ? call_role::condition
                         : key == "body" ? call_role::body
                                         : call_role::branch;
        const std::size_t cp = p_;
        const std::string_view cn = name();
        if (cn.empty()) return fail(cp, "expected a computation name for " + quoted(key) + ", found " + found(cp));
        pending_calls_.push_back({id, cn, cp, role, key == "false_computation" ? std::size_t{1} : std::size_t{0}});
      } else if (key == "branch_computations" || key == "called_computations") {
        const call_role role = key == "branch_computations" ? call_role::branch : call_role::called_computations;
        if (!expect('{', ("to open " + std::string(key)).c_str()) || !ws()) return false;
        std::size_t k = 0;
        if (peek() == '}') {
          ++p_;
        } else {
          for (;;) {
            if (!ws()) return false;
            const std::size_t cp = p_;
            const std::string_view cn = name();
            if (cn.empty()) return fail(cp, "expected a computation name in " + std::string(key) + ", found " + found(cp));
            pending_calls_.push_back({id, cn, cp, role, k++});
            if (!ws()) return false;
            const auto more = list_next('}', key);
            if (more == list_step::more) continue;
            if (more == list_step::error) return false;
            break;
          }
        }
      } else if (key == "output_to_operand_aliasing") {
        if (!output_to_operand_aliasing()) return false;
      } else if (key == "index" && *op == opcodes::get_tuple_element) {
        if (!integer(in.tuple_index, "as tuple index")) return false;
        if (in.tuple_index < 0) return fail(vb, "negative tuple index");
      } else {
        std::string_view v;
        if (!scan_value(v, key)) return false;
      }
      in.attributes.push_back({std::string(key), std::string(s_.substr(vb, p_ - vb))});
    }
    if (*op == opcodes::get_tuple_element && in.tuple_index < 0) {
      return fail(op_pos, "get-tuple-element " + quoted(in.name) + " needs index=N");
    }
    m_.instructions.push_back(std::move(in));
    instr_pos_.push_back(np);
    local.push_back(id);
    return true;
  }

  /// XLA's printer leaves out the get-tuple-elements it prints as `%t#i` operands, but they
  /// are in its schedule, and a tuple's index table lives until the last of them. XLA:CPU
  /// schedules a computation breadth-first: a get-tuple-element is ready once its tuple has
  /// run, so it runs before every instruction that became ready later, that is, whose last
  /// operand runs after that tuple. This moves each materialised get-tuple-element (`order`
  /// has them just before their first user) to that place: after its tuple, before the first
  /// printed instruction whose last operand is the tuple or later, or that reads it. When the
  /// printed order is not breadth-first the result is still a valid order.
  void place_compact_gtes(std::vector<instruction_id>& order, std::size_t made) const {
    // The computation's ids are contiguous: its printed instructions, then the `made` ones.
    const std::size_t n = order.size(), printed = n - made;
    const std::size_t base = index_of(*std::min_element(order.begin(), order.end()));
    auto local = [&](instruction_id id) { return index_of(id) - base; };
    auto id_of = [&](std::size_t r) { return static_cast<instruction_id>(base + r); };
    std::vector<std::vector<std::size_t>> gtes_of(n);  // by tuple, in the order they were made
    for (std::size_t g = printed; g < n; ++g) gtes_of[local(m_[id_of(g)].operands.front())].push_back(g);
    constexpr std::size_t unplaced = static_cast<std::size_t>(-1);
    std::vector<std::size_t> pos(n, unplaced);
    std::vector<std::size_t> wanted_by(n, unplaced);  // the printed instruction that reads it
    std::deque<std::size_t> ready;                    // get-tuple-elements of placed tuples, FIFO
    std::vector<instruction_id> out;
    out.reserve(n);
    auto place = [&](std::size_t r) {
      pos[r] = out.size();
      out.push_back(id_of(r));
      for (const std::size_t g : gtes_of[r]) ready.push_back(g);
    };
    for (const instruction_id id : order) {
      const std::size_t r = local(id);
      if (r >= printed) continue;
      std::size_t waiting = 0;  // operands not placed yet (materialised, so in `ready` or behind)
      std::size_t last = unplaced;  // position of the last placed operand
      auto later = [&](std::size_t p) { last = last == unplaced ? p : std::max(last, p); };
      for (const instruction_id op : m_[id].operands) {
        const std::size_t q = local(op);
        if (pos[q] != unplaced) {
          later(pos[q]);
        } else if (wanted_by[q] != r) {
          wanted_by[q] = r;
          ++waiting;
        }
      }
      while (!ready.empty()) {
        const std::size_t f = ready.front();
        const std::size_t ready_at = pos[local(m_[id_of(f)].operands.front())];
        if (waiting == 0 && (last == unplaced || ready_at > last)) break;
        ready.pop_front();
        place(f);
        if (wanted_by[f] == r) {
          --waiting;
          later(pos[f]);
        }
      }
      // An operand printed after its reader: the text is not in dependency order, so it is
      // no schedule to fit; keep the first placement.
      if (waiting != 0) return;
      place(r);
    }
    for (; !ready.empty(); ready.pop_front()) place(ready.front());  // read by nothing: keep it
    order = std::move(out);
  }

  bool finish_computation(computation_id cid, const std::unordered_map<std::string_view, instruction_id>& by_name,
                          const std::vector<instruction_id>& local, std::size_t comp_pos) {
    if (local.empty()) return fail(comp_pos, "computation " + quoted(m_[cid].name) + " has no instructions");
    // Operands. Compact GTE operands create get-tuple-element instructions, one per (tuple,
    // index), first placed just before their first user, then where XLA scheduled them.
    std::vector<instruction_id> order;
    order.reserve(local.size());
    std::unordered_map<std::uint64_t, instruction_id> gtes;  // (tuple id << 32 | index) -> GTE
    for (std::size_t k = 0; k < local.size(); ++k) {
      std::vector<instruction_id> operands;
      operands.reserve(ops_begin_[k + 1] - ops_begin_[k]);
      for (std::uint32_t oq = ops_begin_[k]; oq < ops_begin_[k + 1]; ++oq) {
        const pending_operand& o = ops_[oq];
        auto it = by_name.find(o.name);
        if (it == by_name.end()) {
          return fail(o.pos, "unknown operand " + quoted(o.name) + " in computation " + quoted(m_[cid].name));
        }
        instruction_id operand = it->second;
        for (std::uint32_t g = 0; g < o.gte_count; ++g) {
          const std::int64_t idx = gte_path_[o.gte_begin + g];
          const shape& ts = m_[operand].shape;
          if (!ts.is_tuple() || idx < 0 || static_cast<std::uint64_t>(idx) >= ts.elements.size()) {
            return fail(o.pos, "compact get-tuple-element of " + quoted(m_[operand].name) + ": index " + std::to_string(idx) +
                                   " is out of range for shape " + quoted(to_string(ts)));
          }
          const std::uint64_t key = (static_cast<std::uint64_t>(index_of(operand)) << 32) | static_cast<std::uint64_t>(idx);
          if (auto found_gte = gtes.find(key); found_gte != gtes.end()) {
            operand = found_gte->second;
            continue;
          }
          instruction gte;
          gte.name = m_[operand].name + "_gte" + std::to_string(idx);
          for (int extra = 1; by_name.count(gte.name) != 0 || names_taken_.count(gte.name) != 0; ++extra) {
            gte.name = m_[operand].name + "_gte" + std::to_string(idx) + "." + std::to_string(extra);
          }
          gte.opcode = opcodes::get_tuple_element;
          gte.shape = ts.elements[static_cast<std::size_t>(idx)];
          gte.operands.push_back(operand);
          gte.attributes.push_back({"index", std::to_string(idx)});
          gte.tuple_index = idx;
          gte.parent = cid;
          const auto gid = static_cast<instruction_id>(m_.instructions.size());
          m_.instructions.push_back(std::move(gte));
          names_taken_.insert(m_.instructions.back().name);
          instr_pos_.push_back(o.pos);
          order.push_back(gid);
          gtes.emplace(key, gid);
          operand = gid;
        }
        operands.push_back(operand);
      }
      m_[local[k]].operands = std::move(operands);
      order.push_back(local[k]);
    }
    names_taken_.clear();
    if (!gtes.empty()) place_compact_gtes(order, gtes.size());
    computation& c = m_[cid];
    c.instructions = order;
    const std::vector<instruction_id>& all = c.instructions;  // ids contiguous from all.front()
    // Root.
    bool have_root = false;
    for (auto i : all) {
      if (!m_[i].is_root) continue;
      if (have_root) {
        return fail(instr_pos_[index_of(i)], "second ROOT in computation " + quoted(c.name) + " (first is " +
                                                 quoted(m_[c.root].name) + ")");
      }
      have_root = true;
      c.root = i;
    }
    if (!have_root) {
      c.root = all.back();
      m_[c.root].is_root = true;
    }
    // Parameters: numbers 0..n-1, each once.
    std::size_t nparams = 0;
    for (auto i : all) nparams += m_[i].opcode == opcodes::parameter ? 1 : 0;
    c.parameters.assign(nparams, instruction_id{});
    std::vector<bool> seen(nparams, false);
    for (auto i : all) {
      const instruction& in = m_[i];
      if (in.opcode != opcodes::parameter) continue;
      const auto num = static_cast<std::uint64_t>(in.parameter_number);
      if (num >= nparams) {
        return fail(instr_pos_[index_of(i)], "parameter number " + std::to_string(in.parameter_number) +
                                                 " out of range: computation " + quoted(c.name) + " has " +
                                                 std::to_string(nparams) + " parameters");
      }
      if (seen[num]) {
        return fail(instr_pos_[index_of(i)], "duplicate parameter number " + std::to_string(num) +
                                                 " in computation " + quoted(c.name));
      }
      seen[num] = true;
      c.parameters[num] = i;
    }
    // Users, and a cycle check (Kahn's algorithm over all operands).
    const std::size_t base = index_of(local.front());  // lowest id: materialised GTEs come after
    std::vector<std::uint32_t> pending(all.size(), 0);
    for (auto i : all) {
      instruction& in = m_[i];
      for (auto o : in.operands) {
        auto& users = m_[o].users;
        if (std::find(users.begin(), users.end(), i) == users.end()) users.push_back(i);
      }
      pending[index_of(i) - base] = static_cast<std::uint32_t>(in.operands.size());
    }
    std::vector<instruction_id> ready;
    for (auto i : all) {
      if (pending[index_of(i) - base] == 0) ready.push_back(i);
    }
    std::size_t done = 0;
    while (!ready.empty()) {
      const auto i = ready.back();
      ready.pop_back();
      ++done;
      for (auto u : m_[i].users) {
        // Each operand occurrence counted once per occurrence.
        for (auto o : m_[u].operands) {
          if (o == i && --pending[index_of(u) - base] == 0) ready.push_back(u);
        }
      }
    }
    if (done != all.size()) {
      for (auto i : all) {
        if (pending[index_of(i) - base] != 0) {
          return fail(instr_pos_[index_of(i)], "instruction " + quoted(m_[i].name) + " is part of a cycle in computation " + quoted(c.name));
        }
      }
    }
    return true;
  }

  bool finish_module() {
    // Called computations.
    for (const auto& pc : pending_calls_) {
      auto it = comp_by_name_.find(pc.name);
      if (it == comp_by_name_.end()) return fail(pc.pos, "unknown computation " + quoted(pc.name));
      m_[pc.instr].calls.push_back({it->second, pc.role, pc.branch});
    }
    // Entry.
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
    // Structural checks the analyses rely on.
    for (std::size_t k = 0; k < m_.instructions.size(); ++k) {
      const auto id = static_cast<instruction_id>(k);
      const instruction& in = m_[id];
      const std::size_t at = instr_pos_[k];
      auto count = [&](call_role r) {
        std::size_t n = 0;
        for (const auto& ref : in.calls) n += ref.role == r ? 1 : 0;
        return n;
      };
      auto params_of = [&](call_role r) -> std::optional<std::size_t> {
        for (const auto& ref : in.calls) {
          if (ref.role == r) return m_[ref.computation].parameters.size();
        }
        return std::nullopt;
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
      } else if (op == opcodes::fusion) {
        if (count(call_role::calls) != 1) return fail(at, "fusion " + quoted(in.name) + " needs calls=COMPUTATION");
        if (*params_of(call_role::calls) != in.operands.size()) {
          return fail(at, "fusion " + quoted(in.name) + " has " + std::to_string(in.operands.size()) +
                              " operands but its fused computation has " + std::to_string(*params_of(call_role::calls)) +
                              " parameters");
        }
      } else if (op == opcodes::call) {
        if (count(call_role::to_apply) != 1) return fail(at, "call " + quoted(in.name) + " needs to_apply=COMPUTATION");
        if (*params_of(call_role::to_apply) != in.operands.size()) {
          return fail(at, "call " + quoted(in.name) + " has " + std::to_string(in.operands.size()) +
                              " operands but its callee has " + std::to_string(*params_of(call_role::to_apply)) + " parameters");
        }
      } else if (op == opcodes::while_loop) {
        if (count(call_role::body) != 1 || count(call_role::condition) != 1) {
          return fail(at, "while " + quoted(in.name) + " needs condition= and body=");
        }
        if (in.operands.size() != 1 || *params_of(call_role::body) != 1 || *params_of(call_role::condition) != 1) {
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
      if (const auto* v = in.find_attribute("output_to_operand_aliasing")) {
        for (const auto& pr : parse_output_to_operand_aliasing(*v)) {
          if (pr.operand >= in.operands.size() || in.shape.subshape(pr.output_index) == nullptr ||
              m_[in.operands[pr.operand]].shape.subshape(pr.operand_index) == nullptr) {
            return fail(at, "output_to_operand_aliasing of " + quoted(in.name) + " names an operand or index that does not exist");
          }
        }
      }
    }
    // The call graph has no cycles.
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
  detail::hlo_parser p(text, "<shape>");
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
