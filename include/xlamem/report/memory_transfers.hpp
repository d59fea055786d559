// SPDX-License-Identifier: Apache-2.0
/// @file
/// What a program moves between memory spaces: host offloading (JAX's memory kinds, activation
/// offloading, `MoveToHost` / `MoveToDevice` after XLA's host offloader) leaves copies,
/// `copy-start`s, `dynamic-update-slice`s into and `dynamic-slice`s out of buffers whose layout
/// says `S(5)`. Each instruction of those kinds, outside fusions, whose destination's memory
/// space differs from its source's is one transfer; the bytes are the destination's (for a
/// dynamic-update-slice, the update's). `memory_report::transfers` holds them (`plan_report.hpp`
/// fills it); the summary sums them each way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xlamem/hlo/module.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/plan_timeline.hpp"

namespace xlamem::report {

namespace detail {

/// The memory space of an array shape (its layout's `S(n)`; 0 without one).
[[nodiscard]] inline std::int64_t space_of(const hlo::shape& s) noexcept {
  return s.is_array() && s.has_layout ? s.layout.memory_space : 0;
}

[[nodiscard]] inline std::int64_t bytes_of(const hlo::shape& s) noexcept {
  const auto b = s.checked_byte_size();
  return b && *b <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(*b) : 0;
}

}  // namespace detail

/// The transfers of `m`, in module order, with their sources; `schedule` (the instruction at
/// each step) gives their times.
[[nodiscard]] inline std::vector<memory_transfer> memory_transfers_of(const hlo::module& m,
                                                                      const std::vector<std::string>& schedule) {
  namespace ops = hlo::opcodes;
  const auto may_move = [](hlo::opcode op) {
    return op == ops::copy_start || op == ops::dynamic_update_slice || op == ops::copy || op == ops::dynamic_slice;
  };
  // Most modules move nothing: one pass over the opcodes, and nothing built, decides that.
  if (std::none_of(m.instructions.begin(), m.instructions.end(), [&](const auto& in) { return may_move(in.opcode); })) {
    return {};
  }
  // Fusion bodies run inside their fusion: nothing in them moves between memory spaces alone.
  std::vector<bool> fused(m.computations.size(), false);
  for (const auto& in : m.instructions) {
    if (in.opcode != ops::fusion) continue;
    for (const auto& ref : in.calls) {
      if (ref.role == hlo::call_role::calls) fused[hlo::index_of(ref.computation)] = true;
    }
  }
  // Both built at the first transfer: a schedule of 10^6 steps must not cost a table of 10^6
  // names for nothing.
  std::optional<stack_frame_index> frames;
  std::unordered_map<std::string_view, std::int64_t> step;

  std::vector<memory_transfer> out;
  for (std::size_t c = 0; c < m.computations.size(); ++c) {
    if (fused[c]) continue;
    for (const auto id : m.computations[c].instructions) {
      const auto& in = m[id];
      if (!may_move(in.opcode) || in.operands.empty()) continue;
      const hlo::shape* from = &m[in.operands[0]].shape;
      const hlo::shape* to = &in.shape;
      const hlo::shape* moved = to;
      if (in.opcode == ops::copy_start) {
        if (!to->is_tuple() || to->elements.empty()) continue;
        to = moved = &to->elements[0];  // (destination, source, context)
      } else if (in.opcode == ops::dynamic_update_slice) {
        if (in.operands.size() < 2) continue;
        from = moved = &m[in.operands[1]].shape;  // the update is what moves
      }
      const auto a = detail::space_of(*from), b = detail::space_of(*to);
      if (a == b) continue;
      memory_transfer t{in.name, std::string(hlo::name_of(in.opcode)), a, b, detail::bytes_of(*moved), -1, {}};
      if (!frames) {
        frames.emplace(m);
        step.reserve(schedule.size());
        for (std::size_t k = 0; k < schedule.size(); ++k) step.emplace(schedule[k], static_cast<std::int64_t>(k));
      }
      if (const auto s = step.find(in.name); s != step.end()) t.time = s->second;
      t.source = source_of(*frames, in);
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace xlamem::report
