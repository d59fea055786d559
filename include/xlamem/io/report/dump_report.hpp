// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory report of a plan XLA made, from its `*-buffer-assignment.txt` dump (and the
/// `-buffer-assignment-values.txt` / `-live-range.txt` files beside it): XLA's allocations and
/// offsets as they are, no replanning. `timeline_of` gives its `memory_timeline`, `report_of`
/// the whole `memory_report` (through `build_report`, as for xlamem's plans). Live ranges come
/// from the dump's `BufferLiveRange`; sources from the `metadata` of each value's defining
/// instruction in "Used values", or from a caller's table (a module file beside the dump).
///
/// One timeline buffer per value; values of one heap that share bytes while live (a while
/// loop's state, an in-place update) count once (`usage_over_time`).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem::report {

namespace detail {

/// The dump's live ranges by (instruction, shape index): one lookup per value instead of a scan
/// of every range (`live_range_of`), which made a dump of 10^6 values quadratic. The first
/// range printed for a position wins, as with `live_range_of`.
class live_range_index {
 public:
  explicit live_range_index(const buffer_assignment_dump& d) {
    if (!d.live_ranges) return;
    for (const auto& r : d.live_ranges->buffers) by_position_.emplace(key{r.instruction, r.shape_index}, &r);
  }
  [[nodiscard]] const buffer_assignment_dump::buffer_live_range* find(std::string_view instruction,
                                                                      const std::vector<std::int64_t>& index) const {
    const auto it = by_position_.find(key{instruction, index});
    return it == by_position_.end() ? nullptr : it->second;
  }

 private:
  using key = std::pair<std::string_view, std::vector<std::int64_t>>;
  std::map<key, const buffer_assignment_dump::buffer_live_range*> by_position_;
};

/// `instruction` or `instruction{index}`, as the dump prints a value.
[[nodiscard]] inline std::string dump_value_name(const buffer_assignment_dump::assigned_value& v) {
  std::string name = v.instruction;
  if (v.has_shape_index) {
    name += '{';
    for (std::size_t k = 0; k < v.shape_index.size(); ++k) {
      if (k > 0) name += ',';
      name += std::to_string(v.shape_index[k]);
    }
    name += '}';
  }
  return name;
}

/// The kind of a dump's allocation: parameter before output before constant.
[[nodiscard]] inline buffer_kind dump_kind(const buffer_assignment_dump::allocation& a) noexcept {
  return a.is_entry_parameter() ? buffer_kind::parameter
         : a.maybe_live_out     ? buffer_kind::output
         : a.is_constant        ? buffer_kind::constant
         : a.is_thread_local    ? buffer_kind::embedded
                                : buffer_kind::temp;
}
}  // namespace detail

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
  const detail::live_range_index ranges(d);
  source_table from_values;
  std::map<std::string, bool, std::less<>> is_parameter;  // by instruction, from "Used values"
  for (const auto& u : d.used_values) {
    if (u.from_instruction.find(" parameter(") != std::string::npos) is_parameter[u.instruction] = true;
    auto s = source_in_instruction_text(u.from_instruction);
    if (!s.empty()) from_values.emplace(u.instruction, std::move(s));
  }
  // The dump's own metadata first; the module's when the dump's has no file (newer JAX writes
  // a stack_frame_id, which only the module's tables resolve to file:line).
  auto source = [&](const std::string& name) {
    op_source s;
    if (const auto it = from_values.find(name); it != from_values.end()) s = it->second;
    if (s.source_file.empty() && sources != nullptr) {
      if (const auto it = sources->find(name); it != sources->end() && (s.empty() || !it->second.source_file.empty())) {
        return it->second;
      }
    }
    return s;
  };
  for (const auto& a : d.allocations) {
    timeline_allocation ta;
    ta.index = static_cast<std::int64_t>(a.index);
    ta.size = static_cast<std::int64_t>(a.size);
    ta.color = a.color;
    ta.kind = detail::dump_kind(a);
    ta.is_heap = a.is_preallocated_temp;
    t.allocations.push_back(ta);
    for (const auto& v : a.values) {
      timeline_buffer b{};
      b.name = detail::dump_value_name(v);
      b.shape = v.shape;
      b.size = static_cast<std::int64_t>(v.size);
      b.kind = ta.kind;
      b.allocation = ta.index;
      b.offset = static_cast<std::int64_t>(v.offset);
      b.color = ta.color;
      b.source = source(v.instruction);
      if (const auto* r = ranges.find(v.instruction, v.shape_index)) {
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

namespace detail {
/// Every allocation of the dump with its predicates and values.
[[nodiscard]] inline std::vector<report_allocation> dump_allocations(const buffer_assignment_dump& d) {
  std::vector<report_allocation> out;
  for (const auto& a : d.allocations) {
    report_allocation x;
    x.index = static_cast<std::int64_t>(a.index);
    x.size = static_cast<std::int64_t>(a.size);
    x.color = a.color;
    x.kind = dump_kind(a);
    x.is_entry_parameter = a.is_entry_parameter();
    x.parameter_number = a.parameter.value_or(-1);
    x.parameter_index = a.parameter_shape_index;
    x.is_parameter_aliased_with_output = a.is_aliased_parameter();
    x.maybe_live_out = a.maybe_live_out;
    x.is_constant = a.is_constant;
    x.is_thread_local = a.is_thread_local;
    x.is_preallocated_temp = a.is_preallocated_temp;
    for (const auto& v : a.values) {
      x.values.push_back({static_cast<std::int64_t>(v.id), dump_value_name(v), static_cast<std::int64_t>(v.offset),
                          static_cast<std::int64_t>(v.size)});
    }
    out.push_back(std::move(x));
  }
  return out;
}

/// Every value's live range as the dump's `BufferLiveRange` prints it.
[[nodiscard]] inline std::vector<report_live_range> dump_live_ranges(const buffer_assignment_dump& d) {
  std::vector<report_live_range> out;
  const live_range_index ranges(d);
  for (const auto& a : d.allocations) {
    for (const auto& v : a.values) {
      if (const auto* r = ranges.find(v.instruction, v.shape_index)) {
        out.push_back({static_cast<std::int64_t>(v.id), dump_value_name(v), r->start, r->end,
                       static_cast<std::int64_t>(v.size)});
      }
    }
  }
  return out;
}
}  // namespace detail

/// The report of XLA's plan `d`, read from `file` (its module is the file name's stem before
/// `-buffer-assignment.txt`). `sources` as for `timeline_of`. `xla_table` is left empty: the
/// dump's own text is XLA's table.
[[nodiscard]] inline memory_report report_of(const buffer_assignment_dump& d, std::string_view file,
                                             const source_table* sources = nullptr) {
  constexpr std::string_view suffix = "-buffer-assignment.txt";
  memory_report r;
  r.file = std::string(file);
  r.from_xla = true;
  r.description = "XLA's buffer assignment (as XLA planned it, no replanning)";
  std::string_view stem = file.substr(file.find_last_of('/') == std::string_view::npos ? 0 : file.find_last_of('/') + 1);
  if (stem.size() >= suffix.size() && stem.substr(stem.size() - suffix.size()) == suffix) stem.remove_suffix(suffix.size());
  r.module = std::string(stem);
  r.timeline = timeline_of(d, sources);
  r.timeline.module = r.module;
  r.instructions = r.timeline.schedule.size();
  const auto s = d.stats();
  r.stats = s.compiled;
  r.stats.total_allocation_bytes = static_cast<std::int64_t>(s.total);
  for (const auto& a : r.timeline.allocations) {
    if (!a.is_heap) continue;
    heap_summary h{a.index, a.color, a.size, live_bytes_bound(r.timeline, a), 0, "xla"};
    for (const auto& b : r.timeline.buffers) h.buffers += b.allocation == a.index ? 1 : 0;
    r.heaps.push_back(h);
  }
  r.allocations = detail::dump_allocations(d);
  r.live_ranges = detail::dump_live_ranges(d);
  return build_report(std::move(r));
}

}  // namespace xlamem::report
