// SPDX-License-Identifier: Apache-2.0
/// @file
/// The HLO text reader's grammar of instructions (`hlo/reader.hpp` is the reader): one
/// instruction (`[ROOT] name = shape opcode(operands), attributes`) with its operands (long
/// and short form, compact get-tuple-elements `%t#1#0`), parameters, constant literals and
/// attributes (called computations, `output_to_operand_aliasing`, `index`, anything else
/// verbatim), and the end of a computation: operands resolved (the compact get-tuple-elements
/// materialised where XLA schedules them), its root, its parameters numbered densely, users
/// linked and cycles refused. Not API: the reader builds on it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/detail/name_table.hpp"
#include "xlamem/hlo/detail/shape_grammar.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem::hlo::detail {

class instruction_grammar : public shape_grammar {
 public:
  using shape_grammar::shape_grammar;

 protected:
  struct pending_operand {
    std::string_view name;
    std::size_t pos;
    std::uint32_t gte_begin = 0;  // compact GTE `%t#1#0`: indices gte_path_[begin, begin + count)
    std::uint32_t gte_count = 0;
    // Found when it was read (defined above its user, as in nearly every dump): the name's
    // table slot is then still in cache, not looked up again at the computation's end.
    bool found = false;
    instruction_id id{};
  };
  struct pending_call {
    instruction_id instr;
    std::string_view name;
    std::size_t pos;
    call_role role;
    std::size_t branch;
  };
  using name_map = name_table<instruction_id>;

  hlo::module m_;  // qualified: a line starting with `module` is a module declaration to some front ends
  std::vector<std::size_t> instr_pos_;   // source offset of each instruction's name
  std::vector<std::size_t> comp_pos_;    // source offset of each computation's name
  std::vector<pending_call> pending_calls_;
  name_table<computation_id> comp_by_name_;
  // Operands of every instruction of the computation being read, flat: instruction k owns
  // ops_[ops_begin_[k], ops_begin_[k + 1]). Reused across computations.
  std::vector<pending_operand> ops_;
  std::vector<std::uint32_t> ops_begin_;
  std::vector<std::int64_t> gte_path_;           // indices of compact GTE operands, flat; reused
  std::unordered_set<std::string> names_taken_;  // names given to materialised GTEs
  name_map names_;                               // of the computation being read
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

  // One instruction of computation `cid`: `[ROOT] name = shape opcode(...), attributes`.
  bool parse_instruction(computation_id cid, std::vector<instruction_id>& local) {
    instruction in;
    in.parent = cid;
    const auto id = static_cast<instruction_id>(m_.instructions.size());
    std::size_t np = p_;  // where its name is
    std::string_view nm;  // in the text, as the name table keeps it
    std::uint32_t name_hash = 0;
    if (!instruction_head(in, np, nm, name_hash)) return false;
    const std::size_t op_pos = p_;
    std::string_view opn;
    if (!instruction_opcode(in, opn)) return false;
    if (!expect('(', [&] { return "after opcode " + quoted(opn); })) return false;
    if (in.opcode == opcodes::parameter) {
      if (!integer(in.parameter_number, "as parameter number") || !expect(')', "after the parameter number")) return false;
      if (in.parameter_number < 0) return fail(op_pos, "negative parameter number");
    } else if (in.opcode == opcodes::constant) {
      if (!constant_literal(in)) return false;
    } else if (!operand_list()) {
      return false;
    }
    if (!instruction_attributes(in, id)) return false;
    if (in.opcode == opcodes::get_tuple_element && in.tuple_index < 0) {
      return fail(op_pos, "get-tuple-element " + quoted(in.name) + " needs index=N");
    }
    if (const auto [first, added] = names_.emplace(nm, name_hash, id); !added) {
      return fail(np, "duplicate instruction name " + quoted(nm) + " (first defined at " +
                          location(instr_pos_[index_of(first)]) + ")");
    }
    m_.instructions.push_back(std::move(in));
    instr_pos_.push_back(np);
    local.push_back(id);
    return true;
  }

  // `[ROOT] name = shape`, the shape's sizes in bounds. The name is checked for uniqueness in
  // its computation when the whole instruction is read (`name_hash` is its `names_` hash).
  bool instruction_head(instruction& in, std::size_t& np, std::string_view& nm, std::uint32_t& name_hash) {
    if (keyword("ROOT")) {
      in.is_root = true;
      if (!ws()) return false;
    }
    np = p_;
    nm = name();
    if (nm.empty()) return fail(np, "expected an instruction name or '}', found " + found(np));
    name_hash = names_.prepare(nm);
    in.name = std::string(nm);
    if (!expect('=', [&] { return "after instruction name " + quoted(in.name); })) return false;
    if (!ws()) return false;
    const std::size_t shape_pos = p_;
    return parse_shape(in.shape, 0) && check_sizes(in.shape, in.name, shape_pos) && ws();
  }

  // The opcode; async sugar (`custom-call-start`, `fusion-done`, ...) stands for
  // async-start/-update/-done wrapping that opcode (XLA prints them that way).
  bool instruction_opcode(instruction& in, std::string_view& opn) {
    const std::size_t op_pos = p_;
    std::size_t q = p_;
    while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]) || s_[q] == '-' || s_[q] == '_')) ++q;
    opn = s_.substr(p_, q - p_);
    if (opn.empty()) return fail(op_pos, "expected an opcode, found " + found(op_pos));
    auto op = opcode_from_name(opn);
    if (!op) {
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
    return true;
  }

  // A constant's literal up to its ')', kept as text.
  bool constant_literal(instruction& in) {
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
    return true;
  }

  // The operands up to ')': names, each after its shape in the long form, resolved when the
  // computation ends.
  bool operand_list() {
    if (!ws()) return false;
    if (peek() == ')') {
      ++p_;
      return true;
    }
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
      if (!operand()) return false;
      if (!ws()) return false;
      const auto more = list_next(')', "the operand list");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  // One operand name. Compact get-tuple-element (JAX >= 0.11's default dump): `%t#1` is
  // element 1 of `%t`, `%t#1#0` element 0 of that; the reader materialises them.
  bool operand() {
    const std::size_t opp = p_;
    const std::string_view on = name();
    if (on.empty()) return fail(opp, "expected an operand name, found " + found(opp));
    pending_operand po{on, opp};
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
    if (const instruction_id* found = names_.find(on); found != nullptr) {  // unique in a computation: the end finds the same
      po.found = true;
      po.id = *found;
    }
    ops_.push_back(po);
    return true;
  }

  // The key of the next `, key=value` of an attribute list (the module's or an instruction's):
  // empty at the list's end (the position kept before it), false when malformed. `what` names a
  // key in the message ("an attribute name").
  bool next_attribute_key(std::string_view& key, std::string_view what) {
    key = {};
    const std::size_t save = p_;
    if (!ws()) return false;
    if (peek() != ',') {
      p_ = save;
      return true;
    }
    ++p_;
    if (!ws()) return false;
    const std::size_t kp = p_;
    key = name();
    if (key.empty()) return fail(kp, "expected " + std::string(what) + ", found " + found(kp));
    return true;
  }

  // `, key=value` attributes; every one is kept verbatim too.
  bool instruction_attributes(instruction& in, instruction_id id) {
    for (;;) {
      std::string_view key;
      if (!next_attribute_key(key, "an attribute name")) return false;
      if (key.empty()) return true;
      if (!expect('=', [&] { return "after attribute name " + quoted(key); }) || !ws()) return false;
      const std::size_t vb = p_;
      if (!attribute_value(in, id, key, vb)) return false;
      in.attributes.push_back(key, s_.substr(vb, p_ - vb));
    }
  }

  bool attribute_value(instruction& in, instruction_id id, std::string_view key, std::size_t vb) {
    if (key == "calls" || key == "to_apply" || key == "condition" || key == "body" || key == "true_computation" ||
        key == "false_computation") {
      const call_role role = key == "calls"      ? call_role::calls
                             : key == "to_apply"  ? call_role::to_apply
                             : key == "condition" ? call_role::condition
                             : key == "body"      ? call_role::body
                                                  : call_role::branch;
      const std::size_t cp = p_;
      const std::string_view cn = name();
      if (cn.empty()) return fail(cp, "expected a computation name for " + quoted(key) + ", found " + found(cp));
      pending_calls_.push_back({id, cn, cp, role, key == "false_computation" ? std::size_t{1} : std::size_t{0}});
      return true;
    }
    if (key == "branch_computations" || key == "called_computations") return computation_list(id, key);
    if (key == "output_to_operand_aliasing") return output_to_operand_aliasing();
    if (key == "index" && in.opcode == opcodes::get_tuple_element) {
      if (!integer(in.tuple_index, "as tuple index")) return false;
      if (in.tuple_index < 0) return fail(vb, "negative tuple index");
      return true;
    }
    std::string_view v;
    return scan_value(v, key);
  }

  // `{a, b, ...}` of `branch_computations` or `called_computations`.
  bool computation_list(instruction_id id, std::string_view key) {
    const call_role role = key == "branch_computations" ? call_role::branch : call_role::called_computations;
    if (!expect('{', [&] { return "to open " + std::string(key); }) || !ws()) return false;
    std::size_t k = 0;
    if (peek() == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      if (!ws()) return false;
      const std::size_t cp = p_;
      const std::string_view cn = name();
      if (cn.empty()) return fail(cp, "expected a computation name in " + std::string(key) + ", found " + found(cp));
      pending_calls_.push_back({id, cn, cp, role, k++});
      if (!ws()) return false;
      const auto more = list_next('}', key);
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
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

  // The end of computation `cid` (its instructions `local`): operands resolved, root,
  // parameters, users and the cycle check.
  bool finish_computation(computation_id cid, const std::vector<instruction_id>& local, std::size_t comp_pos) {
    if (local.empty()) return fail(comp_pos, "computation " + quoted(m_[cid].name) + " has no instructions");
    std::vector<instruction_id> order;
    if (!resolve_operands(cid, local, order)) return false;
    computation& c = m_[cid];
    c.instructions = std::move(order);
    return root_and_parameters(c) && link_users(c, index_of(local.front()));
  }

  // Operands by name. Compact GTE operands create get-tuple-element instructions, one per
  // (tuple, index), first placed just before their first user, then where XLA scheduled them.
  bool resolve_operands(computation_id cid, const std::vector<instruction_id>& local, std::vector<instruction_id>& order) {
    order.reserve(local.size());
    std::unordered_map<std::uint64_t, instruction_id> gtes;  // (tuple id << 32 | index) -> GTE
    for (std::size_t k = 0; k < local.size(); ++k) {
      compact_vector<instruction_id> operands;  // not a reference: compact GTEs add instructions
      operands.reserve(ops_begin_[k + 1] - ops_begin_[k]);
      for (std::uint32_t oq = ops_begin_[k]; oq < ops_begin_[k + 1]; ++oq) {
        const pending_operand& o = ops_[oq];
        const instruction_id* found_operand = o.found ? &o.id : names_.find(o.name);
        if (found_operand == nullptr) {
          return fail(o.pos, "unknown operand " + quoted(o.name) + " in computation " + quoted(m_[cid].name));
        }
        instruction_id operand = *found_operand;
        for (std::uint32_t g = 0; g < o.gte_count; ++g) {
          if (!compact_gte(cid, o, gte_path_[o.gte_begin + g], operand, gtes, order)) return false;
        }
        operands.push_back(operand);
      }
      m_[local[k]].operands = std::move(operands);
      order.push_back(local[k]);
    }
    names_taken_.clear();
    if (!gtes.empty()) place_compact_gtes(order, gtes.size());
    return true;
  }

  // Element `idx` of `operand` (a tuple) through a get-tuple-element, made once per (tuple,
  // index); `operand` becomes it.
  bool compact_gte(computation_id cid, const pending_operand& o, std::int64_t idx, instruction_id& operand,
                   std::unordered_map<std::uint64_t, instruction_id>& gtes, std::vector<instruction_id>& order) {
    const shape& ts = m_[operand].shape;
    if (!ts.is_tuple() || idx < 0 || static_cast<std::uint64_t>(idx) >= ts.elements.size()) {
      return fail(o.pos, "compact get-tuple-element of " + quoted(m_[operand].name) + ": index " + std::to_string(idx) +
                             " is out of range for shape " + quoted(to_string(ts)));
    }
    const std::uint64_t key = (static_cast<std::uint64_t>(index_of(operand)) << 32) | static_cast<std::uint64_t>(idx);
    if (auto found_gte = gtes.find(key); found_gte != gtes.end()) {
      operand = found_gte->second;
      return true;
    }
    instruction gte;
    gte.name = m_[operand].name + "_gte" + std::to_string(idx);
    for (int extra = 1; names_.contains(gte.name) || names_taken_.count(gte.name) != 0; ++extra) {
      gte.name = m_[operand].name + "_gte" + std::to_string(idx) + "." + std::to_string(extra);
    }
    gte.opcode = opcodes::get_tuple_element;
    gte.shape = ts.elements[static_cast<std::size_t>(idx)];
    gte.operands.push_back(operand);
    gte.attributes.push_back("index", std::to_string(idx));
    gte.tuple_index = idx;
    gte.parent = cid;
    const auto gid = static_cast<instruction_id>(m_.instructions.size());
    m_.instructions.push_back(std::move(gte));
    names_taken_.insert(m_.instructions.back().name);
    instr_pos_.push_back(o.pos);
    order.push_back(gid);
    gtes.emplace(key, gid);
    operand = gid;
    return true;
  }

  // The root (the one ROOT, else the last instruction) and the parameters, numbered 0..n-1,
  // each once: one pass over the instructions (each pass over 10^6 of them is a cache miss
  // apiece), then the parameters alone.
  bool root_and_parameters(computation& c) {
    std::optional<instruction_id> root, second_root;
    std::vector<instruction_id> params;  // in text order
    for (auto i : c.instructions) {
      const instruction& in = m_[i];
      if (in.is_root && !root) {
        root = i;
      } else if (in.is_root && !second_root) {
        second_root = i;
      }
      if (in.opcode == opcodes::parameter) params.push_back(i);
    }
    if (second_root) {
      return fail(instr_pos_[index_of(*second_root)], "second ROOT in computation " + quoted(c.name) + " (first is " +
                                                          quoted(m_[*root].name) + ")");
    }
    c.root = root.value_or(c.instructions.back());
    m_[c.root].is_root = true;
    const std::size_t nparams = params.size();
    c.parameters.assign(nparams, instruction_id{});
    std::vector<bool> seen(nparams, false);
    for (auto i : params) {
      const instruction& in = m_[i];
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
    return true;
  }

  // Users, each once, and a cycle check (Kahn's algorithm over distinct operands). The
  // computation's ids are contiguous from `base` (materialised GTEs come after its printed
  // instructions). Linear in the operands: an instruction's operands are linked in a row, so
  // a repeated operand already has that instruction as its last user (no search through 10^5
  // users), and a finished instruction visits each user once (not each user's operands).
  bool link_users(const computation& c, std::size_t base) {
    const auto& all = c.instructions;
    std::vector<std::uint32_t> pending(all.size(), 0);  // distinct operands not finished yet
    for (auto i : all) {
      std::uint32_t distinct = 0;
      for (auto o : m_[i].operands) {
        auto& users = m_[o].users;
        if (!users.empty() && users.back() == i) continue;
        users.push_back(i);
        ++distinct;
      }
      pending[index_of(i) - base] = distinct;
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
        if (--pending[index_of(u) - base] == 0) ready.push_back(u);
      }
    }
    if (done == all.size()) return true;
    for (auto i : all) {
      if (pending[index_of(i) - base] != 0) {
        return fail(instr_pos_[index_of(i)], "instruction " + quoted(m_[i].name) + " is part of a cycle in computation " + quoted(c.name));
      }
    }
    return true;
  }
};

}  // namespace xlamem::hlo::detail
