// SPDX-License-Identifier: Apache-2.0
/// @file
/// An HLO module before SPMD partitioning (what `jax.jit(f).lower(...).as_text(dialect="hlo")`
/// prints) as the auto-sharding builder's program (sharding/program.hpp), and the answer
/// written back as `sharding=` attributes.
///
/// Every instruction of the entry computation becomes one operation, in text order, with index
/// letters by opcode (a dimension no rule below names carries `whole_dimension`):
/// - parameter, constant, iota, rng: each dimension its own letter (an argument's layout is free);
/// - elementwise (XLA's list), copy, a `Sharding` custom call (JAX's `with_sharding_constraint`):
///   the result's letters on every operand of the same rank; scalars take none;
/// - broadcast: operand dimension j shares the letter of result dimension `dimensions[j]`;
/// - transpose: result dimension i shares the letter of operand dimension `dimensions[i]`;
/// - reshape: dimensions are matched in groups of equal element counts, and the most major
///   dimension of a group on each side shares a letter (a split of it keeps whole rows);
/// - reduce (one result): kept dimensions share letters with the result, reduced ones are summed;
/// - dot: batch and contracting dimensions shared by both operands, free dimensions with the
///   result (partial sums over contracting splits);
/// - convolution (`dim_labels`, no feature or batch groups): batch with the result's batch,
///   output feature with the kernel's, input feature summed; spatial dimensions whole;
/// - slice, pad, concatenate, dynamic-slice, dynamic-update-slice: the dimensions they leave
///   untouched shared, the others whole;
/// - anything else (gather, scatter, sort, custom calls, while, conditional, call, tuples):
///   every dimension whole, so it runs replicated, always correct (`auto_shard_module`
///   inlines calls first: inline_calls.hpp).
/// Operations come in the order of the module's schedule, or for an unscheduled module in the
/// order of lower memory of its text's and `memory_order`'s (schedule.hpp), which also gives
/// the live ranges.
/// Instructions of computations the entry calls (loop bodies, branches) are not operations of
/// their own: their values are held replicated, and appear as memory-only operations so that
/// the per-device peak counts them. A `sharding=` attribute on an array instruction is kept as a
/// fixed choice. A broadcast, iota or reshape whose every user fuses it is held nowhere, as
/// XLA's loop fusion leaves it.
/// Memory: each operation holds the bytes of the values it defines (XLA's
/// dataflow) over their live range (the library's `live_range_analysis`, XLA's rules), a value
/// the entry returns from the start (XLA's `memory_analysis()` counts arguments and results
/// whole beside the temporaries), so the solver's limit bounds the values held at any time.
/// Not counted: the buffers a collective receives into (an all-gathered operand) and a
/// fusion's scratch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/autoshard/schedule.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/passes/liveness.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/program.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::autoshard {

/// A module read as a program: the operations, and which instruction each one is.
struct hlo_program {
  sharding::sharding_program program;
  std::vector<hlo::instruction_id> instruction;  ///< per operation; memory-only ones included
  std::size_t entry_ops = 0;                     ///< operations [0, entry_ops) are the entry's
  std::int64_t time_steps = 0;                   ///< steps of the flattened schedule (live intervals lie within)
  std::vector<hlo::instruction_id> schedule;     ///< the instruction at each step but the last (the end)
  /// Per instruction of the module: its operation (an open marker: its operand's), or npos.
  std::vector<std::size_t> op_of_instruction;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

namespace detail {

using letters = std::vector<std::int32_t>;

/// Reads "{1,2,3}" or "{}" (blanks allowed); nullopt when it is not such a list.
[[nodiscard]] inline std::optional<std::vector<std::int64_t>> int_list(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::int64_t> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const auto v = sharding::detail::whole_integer(sharding::detail::trim(text.substr(0, comma)));
    if (!v) return std::nullopt;
    out.push_back(*v);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

/// The list attribute `key` of `in`, each entry a dimension below `rank`; errors name it.
[[nodiscard]] inline result<std::vector<std::size_t>> dims_attribute(const hlo::instruction& in, std::string_view key,
                                                                     std::size_t rank) {
  const auto text = in.find_attribute(key);
  const std::string who = "instruction '" + in.name + "': " + std::string(key);
  if (!text) return std::vector<std::size_t>{};
  const auto list = int_list(*text);
  if (!list) return make_error(errc::parse_error, who + " is not a list of dimensions");
  std::vector<std::size_t> out;
  for (auto d : *list) {
    if (d < 0 || static_cast<std::size_t>(d) >= rank) {
      return make_error(errc::invalid_argument, who + " names dimension " + std::to_string(d) + " of a rank-" +
                                                    std::to_string(rank) + " array");
    }
    out.push_back(static_cast<std::size_t>(d));
  }
  return out;
}

/// The array shape the builder uses for an HLO shape: arrays as they are (sub-byte elements
/// rounded up to a byte), anything else a rank-0 array of its bytes (at least 1).
[[nodiscard]] inline sharding::array_shape array_of(const hlo::shape& s) {
  sharding::array_shape out;
  if (s.is_array()) {
    out.dims.assign(s.dims.begin(), s.dims.end());
    for (auto& d : out.dims) d = std::max<std::int64_t>(d, 0);
    out.element_bytes = static_cast<std::int64_t>(std::max<std::uint64_t>(1, (s.stored_element_bits() + 7) / 8));
  } else {
    out.element_bytes = static_cast<std::int64_t>(std::max<std::uint64_t>(1, s.byte_size()));
  }
  return out;
}

/// Letters 0, 1, ... for `rank` dimensions.
[[nodiscard]] inline letters own_letters(std::size_t rank) {
  letters out(rank);
  for (std::size_t d = 0; d < rank; ++d) out[d] = static_cast<std::int32_t>(d);
  return out;
}

[[nodiscard]] inline double element_count(const sharding::array_shape& s) {
  double n = 1;
  for (auto d : s.dims) n *= static_cast<double>(d);
  return n;
}

/// Reshape: the operand's letters, given the result's `out` letters (own_letters), by groups of
/// equal element counts whose most major dimensions share a letter.
[[nodiscard]] inline letters reshape_letters(const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to) {
  letters in(from.size(), sharding::whole_dimension);
  std::size_t i = 0, j = 0;
  while (i < from.size() && j < to.size()) {
    // Dimensions of size 1 form no group of their own.
    if (from[i] == 1) { ++i; continue; }
    if (to[j] == 1) { ++j; continue; }
    const std::size_t gi = i, gj = j;
    std::int64_t a = from[i++], b = to[j++];
    while (a != b) {
      if (a < b) {
        if (i == from.size()) return in;
        a *= from[i++];
      } else {
        if (j == to.size()) return in;
        b *= to[j++];
      }
    }
    in[gi] = static_cast<std::int32_t>(gj);
  }
  return in;
}

/// The result letters `out_letters` with the dimensions in `whole` made whole.
[[nodiscard]] inline letters without(letters l, const std::vector<std::size_t>& whole) {
  for (std::size_t d : whole) l[d] = sharding::whole_dimension;
  return l;
}

/// Convolution letters from `dim_labels=b01f_01io->b01f`: lhs batch and the result's batch
/// share letter 0, the kernel's output feature and the result's feature letter 1, the lhs
/// feature and the kernel's input feature letter 2 (summed); spatial dimensions whole.
[[nodiscard]] inline bool convolution_letters(std::string_view labels, sharding::program_op& op) {
  const std::size_t us = labels.find('_'), arrow = labels.find("->");
  if (us == std::string_view::npos || arrow == std::string_view::npos || us > arrow) return false;
  const std::string_view lhs = labels.substr(0, us), rhs = labels.substr(us + 1, arrow - us - 1), out = labels.substr(arrow + 2);
  if (lhs.size() != op.operand_letters[0].size() || rhs.size() != op.operand_letters[1].size() ||
      out.size() != op.output_letters.size()) {
    return false;
  }
  const auto place = [](std::string_view l, letters& v, char c, std::int32_t letter) {
    for (std::size_t d = 0; d < l.size(); ++d) {
      if (l[d] == c) v[d] = letter;
    }
  };
  for (auto* v : {&op.operand_letters[0], &op.operand_letters[1], &op.output_letters}) {
    std::fill(v->begin(), v->end(), sharding::whole_dimension);
  }
  place(lhs, op.operand_letters[0], 'b', 0);
  place(out, op.output_letters, 'b', 0);
  place(rhs, op.operand_letters[1], 'o', 1);
  place(out, op.output_letters, 'f', 1);
  place(lhs, op.operand_letters[0], 'f', 2);
  place(rhs, op.operand_letters[1], 'i', 2);
  return true;
}

/// Whether `in` is a `Sharding` custom call (JAX's sharding constraint).
[[nodiscard]] inline bool is_sharding_constraint(const hlo::instruction& in) {
  if (in.opcode != hlo::opcodes::custom_call) return false;
  const auto target = in.find_attribute("custom_call_target");
  return target && (*target == "\"Sharding\"" || *target == "Sharding");
}

/// An error naming `in` whose dimension attributes do not match its shapes.
[[nodiscard]] inline error mismatch(const hlo::instruction& in) {
  return make_error(errc::invalid_argument, "instruction '" + in.name + "': its " + std::string(hlo::name_of(in.opcode)) +
                                                " dimensions do not match its shapes");
}

/// Broadcast, transpose and reshape: the operand's dimensions take the result's letters.
[[nodiscard]] inline result<void> moved_letters(const hlo::instruction& in, sharding::program_op& op) {
  const std::size_t rank = op.shape.dims.size(), from = op.operand_shapes[0].dims.size();
  const std::string_view name = hlo::name_of(in.opcode);
  if (name == "reshape" || in.opcode == hlo::opcodes::bitcast) {
    op.operand_letters[0] = reshape_letters(op.operand_shapes[0].dims, op.shape.dims);
    return {};
  }
  auto dims = dims_attribute(in, "dimensions", rank);
  if (!dims) return dims.error();
  if (dims->size() != from || (name == "transpose" && from != rank)) return mismatch(in);
  for (std::size_t j = 0; j < from; ++j) {
    // broadcast: operand j is result dimensions[j]; transpose: result j is operand dimensions[j].
    if (name == "broadcast") op.operand_letters[0][j] = static_cast<std::int32_t>((*dims)[j]);
    else op.operand_letters[0][(*dims)[j]] = static_cast<std::int32_t>(j);
  }
  return {};
}

/// A reduce of one array: kept dimensions share the result's letters, reduced ones are summed.
[[nodiscard]] inline result<void> reduce_letters(const hlo::instruction& in, sharding::program_op& op) {
  const std::size_t rank = op.shape.dims.size(), in_rank = op.operand_shapes[0].dims.size();
  auto reduced = dims_attribute(in, "dimensions", in_rank);
  if (!reduced) return reduced.error();
  if (in_rank != rank + reduced->size()) return mismatch(in);
  std::int32_t next_kept = 0, next_reduced = static_cast<std::int32_t>(rank);
  for (std::size_t d = 0; d < in_rank; ++d) {
    const bool gone = std::find(reduced->begin(), reduced->end(), d) != reduced->end();
    op.operand_letters[0][d] = gone ? next_reduced++ : next_kept++;
  }
  op.flops = element_count(op.operand_shapes[0]);
  return {};
}

/// A dot: batch and contracting dimensions shared by both operands, free dimensions with the
/// result in XLA's order (batch, lhs free, rhs free).
[[nodiscard]] inline result<void> dot_letters(const hlo::instruction& in, sharding::program_op& op) {
  const std::size_t rank = op.shape.dims.size(), lr = op.operand_shapes[0].dims.size(), rr = op.operand_shapes[1].dims.size();
  auto lb = dims_attribute(in, "lhs_batch_dims", lr), rb = dims_attribute(in, "rhs_batch_dims", rr);
  auto lc = dims_attribute(in, "lhs_contracting_dims", lr), rc = dims_attribute(in, "rhs_contracting_dims", rr);
  for (auto* r : {&lb, &rb, &lc, &rc}) {
    if (!*r) return r->error();
  }
  if (lb->size() != rb->size() || lc->size() != rc->size() || lr < lb->size() + lc->size() ||
      rr < rb->size() + rc->size() || rank != lr + rr - lb->size() - lc->size() - rc->size()) {
    return mismatch(in);
  }
  std::int32_t next = 0;
  for (std::size_t b = 0; b < lb->size(); ++b) op.operand_letters[0][(*lb)[b]] = op.operand_letters[1][(*rb)[b]] = next++;
  const auto free_dims = [&](letters& l, const std::vector<std::size_t>& contracting) {
    for (std::size_t d = 0; d < l.size(); ++d) {
      if (l[d] == sharding::whole_dimension && std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        l[d] = next++;
      }
    }
  };
  free_dims(op.operand_letters[0], *lc);
  free_dims(op.operand_letters[1], *rc);
  double contracted = 1;
  for (std::size_t c = 0; c < lc->size(); ++c) {
    op.operand_letters[0][(*lc)[c]] = op.operand_letters[1][(*rc)[c]] = next++;
    contracted *= static_cast<double>(op.operand_shapes[0].dims[(*lc)[c]]);
  }
  op.flops = 2 * element_count(op.shape) * contracted;
  return {};
}

/// A convolution without feature or batch groups (`convolution_letters`); grouped ones and
/// unreadable labels run replicated.
inline void convolution(const hlo::instruction& in, sharding::program_op& op) {
  const auto labels = in.find_attribute("dim_labels");
  const auto groups = in.find_attribute("feature_group_count");
  const auto batch_groups = in.find_attribute("batch_group_count");
  const bool grouped = (groups && *groups != "1") || (batch_groups && *batch_groups != "1");
  if (!labels || grouped || !convolution_letters(*labels, op)) {
    std::fill(op.output_letters.begin(), op.output_letters.end(), sharding::whole_dimension);
    return;
  }
  // Each result element sums over the kernel's elements of one output feature.
  double per_output = element_count(op.operand_shapes[1]);
  const std::size_t o = labels->substr(labels->find('_') + 1).find('o');
  if (o < op.operand_shapes[1].dims.size() && op.operand_shapes[1].dims[o] > 0) {
    per_output /= static_cast<double>(op.operand_shapes[1].dims[o]);
  }
  op.flops = 2 * element_count(op.shape) * per_output;
}

/// Slice, dynamic-slice, pad, dynamic-update-slice, concatenate: a dimension they leave as it is
/// (same size, no padding, not the concatenated one) is shared; the others are whole.
[[nodiscard]] inline result<void> untouched_letters(const hlo::instruction& in, sharding::program_op& op) {
  const std::size_t rank = op.shape.dims.size();
  const std::string_view name = hlo::name_of(in.opcode);
  std::vector<char> kept(rank, 1);
  // The array whose dimensions are compared with the result's: a dynamic-update-slice's update.
  const std::size_t compared = name == "dynamic-update-slice" ? 1 : 0;
  if (name == "concatenate") {
    auto along = dims_attribute(in, "dimensions", rank);
    if (!along) return along.error();
    for (std::size_t d : *along) kept[d] = 0;
  } else {
    if (op.operands.size() <= compared || op.operand_shapes[compared].dims.size() != rank) return mismatch(in);
    for (std::size_t d = 0; d < rank; ++d) kept[d] = op.operand_shapes[compared].dims[d] == op.shape.dims[d];
  }
  if (name == "pad") {  // negative or interior padding can keep a size and still move elements
    const auto padding = in.find_attribute("padding");
    std::string_view rest = padding ? *padding : std::string_view();
    for (std::size_t d = 0; !rest.empty() && d < rank; ++d) {
      const std::size_t x = rest.find('x');
      if (rest.substr(0, x) != "0_0" && rest.substr(0, x) != "0_0_0") kept[d] = 0;
      rest = x == std::string_view::npos ? std::string_view() : rest.substr(x + 1);
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (!kept[d]) op.output_letters[d] = sharding::whole_dimension;
  }
  for (std::size_t k = 0; k < op.operands.size(); ++k) {
    if (op.operand_shapes[k].dims.size() == rank && (name != "dynamic-update-slice" || k < 2)) {
      op.operand_letters[k] = op.output_letters;
    }
  }
  return {};
}

/// Whether `in` is an open `Sharding` custom call: a constraint that leaves every dimension
/// free (JAX's `P.UNCONSTRAINED` everywhere; Shardy writes `{?}` per dimension, GSPMD lists them
/// all in `unspecified_dims`). Such a call marks a value without constraining it: the value
/// keeps its operation, and the call takes that operation's layout.
[[nodiscard]] inline bool is_open_marker(const hlo::instruction& in) {
  if (!is_sharding_constraint(in) || in.operands.size() != 1 || !in.shape.is_array()) return false;
  if (const auto f = in.find_attribute("frontend_attributes")) {
    const std::size_t at = f->find("xla.sdy.sharding=");
    if (at != std::string_view::npos) {
      const std::string_view sdy = f->substr(at);
      const std::size_t open = sdy.find("{?}");
      // Open when some dimension is `{?}` and no axis is named (names are quoted: \"x\").
      return (open != std::string_view::npos || in.shape.dims.empty()) && sdy.find("\\\"") == std::string_view::npos &&
             sdy.find("{}") == std::string_view::npos;
    }
  }
  const auto unspecified = in.find_attribute("unspecified_dims");
  if (!unspecified) return false;
  const auto dims = int_list(*unspecified);
  return dims && dims->size() == in.shape.dims.size();
}

/// Whether XLA always fuses `in` into its users, so that it makes no buffer of its own when
/// they take it: broadcasts, iotas and reshapes (they only index). Elementwise results stay
/// buffers here: measured against XLA:CPU, counting them fused made plans that XLA compiled
/// above their limit (it keeps layout copies and collective buffers this model does not see).
[[nodiscard]] inline bool is_fusible(const hlo::instruction& in) {
  const std::string_view name = hlo::name_of(in.opcode);
  return in.opcode == hlo::opcodes::bitcast || name == "broadcast" || name == "iota" || name == "reshape";
}

/// Whether a user of a fusible value takes it into its own loop: an elementwise operation, a
/// fusible one, a reduce (XLA fuses a reduce's input), a transpose, slice or copy.
[[nodiscard]] inline bool fuses_its_operands(const hlo::instruction& user) {
  const std::string_view name = hlo::name_of(user.opcode);
  return is_fusible(user) || hlo::detail::is_elementwise(user.opcode) || user.opcode == hlo::opcodes::copy ||
         name == "reduce" || name == "transpose" || name == "slice";
}

/// Whether every use of `id` takes it into a fusion (`fuses_its_operands`; an open marker passes
/// the question on to its own users), so that the value is never a buffer. A root always is.
[[nodiscard]] inline bool fused_away(const hlo::module& m, hlo::instruction_id id, int depth = 0) {
  const hlo::instruction& in = m[id];
  if (in.is_root || in.users.empty() || depth > 8) return false;
  for (const auto u : in.users) {
    const hlo::instruction& user = m[u];
    if (is_open_marker(user)) {
      if (!fused_away(m, u, depth + 1)) return false;
      continue;
    }
    if (!fuses_its_operands(user)) return false;
  }
  return true;
}

/// The letters and flops of entry instruction `in` (its operands' letters are whole on entry).
[[nodiscard]] inline result<void> describe(const hlo::instruction& in, sharding::program_op& op) {
  const std::size_t rank = op.shape.dims.size();
  const std::string_view name = hlo::name_of(in.opcode);
  if (!in.shape.is_array()) return {};
  op.output_letters = own_letters(rank);
  if (op.operands.empty()) return {};  // parameter, constant, iota, rng: a free layout
  if (hlo::detail::is_elementwise(in.opcode) || in.opcode == hlo::opcodes::copy || is_sharding_constraint(in)) {
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      if (op.operand_shapes[k].dims == op.shape.dims) op.operand_letters[k] = own_letters(rank);
    }
    op.flops = element_count(op.shape);
    return {};
  }
  const std::size_t n = op.operands.size();
  if ((name == "broadcast" || name == "transpose" || name == "reshape" || in.opcode == hlo::opcodes::bitcast) && n == 1) {
    return moved_letters(in, op);
  }
  if (name == "reduce" && n == 2) return reduce_letters(in, op);
  if (name == "dot" && n == 2) return dot_letters(in, op);
  if (name == "convolution" && n == 2) {
    convolution(in, op);
    return {};
  }
  if (name == "slice" || name == "dynamic-slice" || name == "pad" || name == "dynamic-update-slice" ||
      name == "concatenate") {
    return untouched_letters(in, op);
  }
  // Anything else runs replicated.
  std::fill(op.output_letters.begin(), op.output_letters.end(), sharding::whole_dimension);
  return {};
}

}  // namespace detail

namespace detail {

/// The program of `m`'s entry with live ranges on `timeline` (`m`, or `m` with its entry
/// reordered).
[[nodiscard]] inline result<hlo_program> read_on_timeline(const hlo::module& m, const hlo::module& timeline,
                                                          const sharding::device_mesh& mesh) {
  using analysis = live_range_analysis<hlo::module>;
  auto live = analysis::run(timeline);
  if (!live) return live.error().with_context("auto-sharding: liveness of the module");
  const auto& df = live->dataflow();
  const auto entry = m.entry;
  hlo_program out;
  out.program.name = m.name;
  out.time_steps = live->end_time() + 1;  // the last step is end_time() itself
  for (const std::size_t n : live->sequence()) out.schedule.push_back(df.instruction(n));
  auto& op_of = out.op_of_instruction;
  op_of.assign(m.instructions.size(), hlo_program::npos);

  // The bytes and live interval of the values `id` defines.
  const auto held = [&](hlo::instruction_id id, std::int64_t& bytes, sharding::live_interval& interval) {
    bytes = 0;
    interval = {};
    const std::size_t n = df.number(id);
    const hlo::shape& whole = m[id].shape;
    bool any = false;
    for (const auto& index : df.subshapes(n)) {
      const auto v = df.value_defined_at(n, index);
      if (!v || !live->has_range(*v)) continue;
      auto r = live->range(*v);
      if (live->lives_out(*v)) r.start = 0;  // a result's buffer is held for the whole run, as XLA counts it
      const hlo::shape* s = whole.subshape(index);
      if (s == nullptr || s->is_tuple()) continue;  // a tuple's index table: not counted
      bytes += s ? static_cast<std::int64_t>(s->byte_size()) : 0;
      interval = any ? sharding::live_interval{std::min(interval.lower, r.start), std::max(interval.upper, r.end + 1)}
                     : sharding::live_interval{r.start, r.end + 1};
      any = true;
    }
  };

  for (const hlo::instruction_id id : timeline[entry].instructions) {
    const hlo::instruction& in = m[id];
    if (detail::is_open_marker(in) && m[in.operands[0]].shape.dims == in.shape.dims) {
      // The marked value keeps its operation, held until the marker's last use.
      const std::size_t marked = op_of[hlo::index_of(in.operands[0])];
      auto& target = out.program.ops[marked];
      std::int64_t bytes = 0;
      sharding::live_interval live;
      held(id, bytes, live);
      if (!live.empty() && !target.live.empty()) {
        target.live = {std::min(target.live.lower, live.lower), std::max(target.live.upper, live.upper)};
      }
      target.is_output = target.is_output || in.is_root;
      op_of[hlo::index_of(id)] = marked;
      continue;
    }
    sharding::program_op op;
    op.name = in.name;
    op.shape = detail::array_of(in.shape);
    for (const hlo::instruction_id o : in.operands) {
      op.operands.push_back(op_of[hlo::index_of(o)]);
      op.operand_shapes.push_back(out.program.ops[op.operands.back()].shape);
      op.operand_letters.emplace_back(op.operand_shapes.back().dims.size(), sharding::whole_dimension);
    }
    op.output_letters.assign(op.shape.dims.size(), sharding::whole_dimension);
    op.is_input = in.opcode == hlo::opcodes::parameter;
    op.is_output = in.is_root;
    if (auto ok = detail::describe(in, op); !ok) return ok.error();
    std::int64_t bytes = 0;
    held(id, bytes, op.live);
    if (!in.shape.is_array()) op.shape.element_bytes = std::max<std::int64_t>(1, bytes);
    if (in.shape.is_array() && bytes == 0) op.live = {};  // forwards another's value (bitcast, gte)
    // A value XLA will fuse into its users is never a buffer (the unoptimised module has many).
    if (in.shape.is_array() && detail::is_fusible(in) && detail::fused_away(m, id)) op.live = {};
    if (const auto text = in.find_attribute("sharding"); text && in.shape.is_array()) {
      auto fixed = sharding::parse_hlo_sharding(*text, op.shape.dims.size(), mesh);
      if (!fixed) return fixed.error().with_context("instruction '" + in.name + "'");
      op.fixed = std::move(*fixed);
    }
    op_of[hlo::index_of(id)] = out.program.ops.size();
    out.program.ops.push_back(std::move(op));
    out.instruction.push_back(id);
  }
  out.entry_ops = out.program.ops.size();
  // Values of called computations: held replicated, memory only.
  for (std::size_t c = 0; c < m.computations.size(); ++c) {
    const auto cid = static_cast<hlo::computation_id>(c);
    if (cid == entry || live->context(df.computation_number(cid)) != computation_context::sequential) continue;
    for (const hlo::instruction_id id : m[cid].instructions) {
      sharding::program_op op;
      op.name = m[id].name;
      std::int64_t bytes = 0;
      held(id, bytes, op.live);
      if (bytes == 0) continue;
      op.shape.element_bytes = bytes;
      out.program.ops.push_back(std::move(op));
      out.instruction.push_back(id);
    }
  }
  return out;
}

/// The peak of `p`'s values all held whole (replicated): how well its order keeps memory low.
[[nodiscard]] inline std::int64_t whole_peak(const hlo_program& p) {
  std::vector<std::pair<std::int64_t, std::int64_t>> events;
  for (const auto& op : p.program.ops) {
    if (op.live.empty()) continue;
    std::int64_t bytes = op.shape.element_bytes;
    for (auto d : op.shape.dims) bytes *= d;
    events.emplace_back(op.live.lower, bytes);
    events.emplace_back(op.live.upper, -bytes);
  }
  std::sort(events.begin(), events.end());
  std::int64_t now = 0, peak = 0;
  for (const auto& [t, change] : events) {
    now += change;
    peak = std::max(peak, now);
  }
  return peak;
}

}  // namespace detail

/// The program of `m`'s entry computation on `mesh` (see the file comment): fixed shardings
/// are read onto `mesh`. A scheduled module keeps its schedule; an unscheduled one (what JAX
/// lowers) takes the order of lower memory of two, its text's and `memory_order`'s (neither
/// wins everywhere: the list scheduler is greedy). Errors name the instruction (a bad
/// attribute, a sharding the mesh cannot hold) or come from the liveness analysis.
[[nodiscard]] inline result<hlo_program> read_hlo_program(const hlo::module& m, const sharding::device_mesh& mesh) {
  auto as_written = detail::read_on_timeline(m, m, mesh);
  if (m.is_scheduled || !as_written) return as_written;
  hlo::module ordered = m;
  ordered[ordered.entry].instructions = memory_order(m, m.entry);
  auto reordered = detail::read_on_timeline(m, ordered, mesh);
  if (!reordered || detail::whole_peak(*reordered) >= detail::whole_peak(*as_written)) return as_written;
  return reordered;
}

}  // namespace xlamem::autoshard
