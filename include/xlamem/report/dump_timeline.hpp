// SPDX-License-Identifier: Apache-2.0
/// @file
/// The `memory_timeline` of a plan XLA made, from its `*-buffer-assignment.txt` dump (and the
/// `-buffer-assignment-values.txt` / `-live-range.txt` files beside it): XLA's allocations and
/// offsets as they are, no replanning. Live ranges come from the dump's `BufferLiveRange`;
/// sources from the `metadata` of each value's defining instruction in "Used values", or from
/// a caller's table (a module file beside the dump).
///
/// One timeline buffer per value; values of one heap that share bytes while live (a while
/// loop's state, an in-place update) count once (`usage_over_time`).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/io/buffer_assignment_dump.hpp"
#include "xlamem/report/memory_timeline.hpp"

namespace xlamem::report {

/// Sources by instruction name (for example from a module's `metadata`).
using source_table = std::map<std::string, op_source, std::less<>>;

/// The `metadata={...}` of one instruction's text, or an empty source.
[[nodiscard]] inline op_source source_in_instruction_text(std::string_view text) {
  const auto at = text.find("metadata={");
  if (at == std::string_view::npos) return {};
  std::size_t i = at + 9, depth = 0;
  bool quoted = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      break;
    }
  }
  return parse_op_metadata(text.substr(at + 9, i - (at + 9) + 1));
}

/// The timeline of XLA's dump `d`. `sources` (may be null) gives sources by instruction name
/// where the dump's own "Used values" has none.
[[nodiscard]] inline memory_timeline timeline_of(const buffer_assignment_dump& d, const source_table* sources = nullptr) {
  memory_timeline t;
  t.host_color = buffer_assignment_dump::host_memory_space;
  std::int64_t max_time = 0;
  if (d.live_ranges) {
    t.schedule = d.live_ranges->instruction_sequence;
    max_time = std::max<std::int64_t>(d.live_ranges->max_time, static_cast<std::int64_t>(t.schedule.size()) - 1);
  }
  source_table from_values;
  std::map<std::string, bool, std::less<>> is_parameter;  // by instruction, from "Used values"
  for (const auto& u : d.used_values) {
    if (u.from_instruction.find(" parameter(") != std::string::npos) is_parameter[u.instruction] = true;
    auto s = source_in_instruction_text(u.from_instruction);
    if (!s.empty()) from_values.emplace(u.instruction, std::move(s));
  }
  auto source = [&](const std::string& name) {
    if (const auto it = from_values.find(name); it != from_values.end()) return it->second;
    if (sources != nullptr) {
      if (const auto it = sources->find(name); it != sources->end()) return it->second;
    }
    return op_source{};
  };
  for (const auto& a : d.allocations) {
    timeline_allocation ta;
    ta.index = static_cast<std::int64_t>(a.index);
    ta.size = static_cast<std::int64_t>(a.size);
    ta.color = a.color;
    ta.kind = a.is_entry_parameter() ? buffer_kind::parameter
              : a.maybe_live_out     ? buffer_kind::output
              : a.is_constant        ? buffer_kind::constant
              : a.is_thread_local    ? buffer_kind::thread_local_
                                     : buffer_kind::temp;
    ta.is_heap = a.is_preallocated_temp;
    t.allocations.push_back(ta);
    for (const auto& v : a.values) {
      std::string name = v.instruction;
      if (v.has_shape_index) {
        name += '{';
        for (std::size_t k = 0; k < v.shape_index.size(); ++k) {
          if (k > 0) name += ',';
          name += std::to_string(v.shape_index[k]);
        }
        name += '}';
      }
      timeline_buffer b{};
      b.name = std::move(name);
      b.shape = v.shape;
      b.size = static_cast<std::int64_t>(v.size);
      b.kind = ta.kind;
      b.allocation = ta.index;
      b.offset = static_cast<std::int64_t>(v.offset);
      b.color = ta.color;
      b.source = source(v.instruction);
      if (const auto* r = d.live_range_of(v.instruction, v.shape_index)) {
        b.start = r->start;
        b.end = r->end;
      } else if (a.is_constant || a.is_thread_local) {
        continue;  // no place on the schedule (a constant no instruction reads, a reducer's scalar)
      } else {  // no live range printed: conservatively the whole program
        b.start = 0;
        b.end = -1;  // set to the end below
      }
      // An entry parameter is the caller's for the whole run (as `buffer_assignment` counts it);
      // other values XLA put in a donated parameter's allocation keep their own range. Without
      // "Used values", a value live from time 0 is taken for the parameter.
      if (a.is_entry_parameter() &&
          (d.used_values.empty() ? b.start == 0 : is_parameter.count(v.instruction) != 0)) {
        b.start = 0;
        b.end = -1;
      }
      max_time = std::max(max_time, b.end);
      t.buffers.push_back(std::move(b));
    }
  }
  for (auto& b : t.buffers) {  // the whole program, now that its end is known
    if (b.end < 0) b.end = max_time;
  }
  while (static_cast<std::int64_t>(t.schedule.size()) <= max_time) t.schedule.emplace_back("(unknown)");
  return t;
}

}  // namespace xlamem::report
