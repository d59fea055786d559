// SPDX-License-Identifier: Apache-2.0
/// @file
/// What changed between two compilations of one program (before and after a code change, a
/// flag, an upgrade): `diff(a, b)` of two `memory_report`s gives the delta of every statistic
/// and of the peak, and the buffers behind it, matched by name, op_name and shape, with their
/// sources (`xlamem diff`, the Python package). Plain values; nothing prints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/memory_timeline.hpp"

namespace xlamem::report {

/// One buffer matched between two compilations.
struct buffer_change {
  std::string name;         ///< in the second program (the first when it vanished)
  std::string shape_before, shape_after;
  std::int64_t size_before = 0, size_after = 0;
  bool at_peak_before = false, at_peak_after = false;
  op_source source;         ///< from the second program when it has one, else the first
  [[nodiscard]] std::int64_t delta() const noexcept { return size_after - size_before; }
};

/// What changed between two compilations of one program.
struct timeline_diff {
  peak_info peak_before, peak_after;
  kind_bytes bytes_before{}, bytes_after{};     ///< `allocation_bytes`
  std::vector<buffer_change> changed;           ///< matched buffers whose size or shape changed, largest |delta| first
  std::vector<buffer_change> added, removed;    ///< unmatched, largest first
  std::size_t unchanged = 0;                    ///< matched with the same size and shape
  [[nodiscard]] bool identical() const noexcept {
    return changed.empty() && added.empty() && removed.empty() && peak_before.bytes == peak_after.bytes &&
           bytes_before == bytes_after;
  }
};

/// Matches the buffers of `a` and `b` and reports the differences. Matching goes from the
/// strictest key to the loosest, each buffer matched at most once: name + op_name + shape,
/// then name + op_name (the shape changed), then op_name + source line when the names moved
/// (XLA renumbers fusions between compilations).
[[nodiscard]] inline timeline_diff diff_timelines(const memory_timeline& a, const memory_timeline& b) {
  timeline_diff d;
  d.peak_before = find_peak(a);
  d.peak_after = find_peak(b);
  d.bytes_before = allocation_bytes(a);
  d.bytes_after = allocation_bytes(b);
  std::vector<char> at_peak_a(a.buffers.size(), 0), at_peak_b(b.buffers.size(), 0);
  for (auto i : d.peak_before.live) at_peak_a[i] = 1;
  for (auto i : d.peak_after.live) at_peak_b[i] = 1;
  std::vector<char> used_a(a.buffers.size(), 0), used_b(b.buffers.size(), 0);
  using key_fn = std::string (*)(const timeline_buffer&);
  const key_fn keys[] = {
      [](const timeline_buffer& x) { return x.name + '\x1f' + x.source.op_name + '\x1f' + x.shape; },
      [](const timeline_buffer& x) { return x.name + '\x1f' + x.source.op_name; },
      [](const timeline_buffer& x) {
        return x.source.op_name.empty() ? std::string() : x.source.op_name + '\x1f' + x.source.location();
      },
  };
  auto record = [&](std::size_t i, std::size_t j) {
    used_a[i] = used_b[j] = 1;
    const auto& x = a.buffers[i];
    const auto& y = b.buffers[j];
    if (x.size == y.size && x.shape == y.shape) {
      ++d.unchanged;
      return;
    }
    d.changed.push_back({y.name, x.shape, y.shape, x.size, y.size, at_peak_a[i] != 0, at_peak_b[j] != 0,
                         y.source.empty() ? x.source : y.source});
  };
  for (const auto key : keys) {
    std::multimap<std::string, std::size_t> index;
    for (std::size_t i = 0; i < a.buffers.size(); ++i) {
      if (used_a[i] == 0) {
        auto k = key(a.buffers[i]);
        if (!k.empty()) index.emplace(std::move(k), i);
      }
    }
    for (std::size_t j = 0; j < b.buffers.size(); ++j) {
      if (used_b[j] != 0) continue;
      const auto k = key(b.buffers[j]);
      if (k.empty()) continue;
      for (auto [lo, hi] = index.equal_range(k); lo != hi; ++lo) {
        if (used_a[lo->second] == 0) {
          record(lo->second, j);
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    if (used_a[i] != 0) continue;
    const auto& x = a.buffers[i];
    d.removed.push_back({x.name, x.shape, {}, x.size, 0, at_peak_a[i] != 0, false, x.source});
  }
  for (std::size_t j = 0; j < b.buffers.size(); ++j) {
    if (used_b[j] != 0) continue;
    const auto& y = b.buffers[j];
    d.added.push_back({y.name, {}, y.shape, 0, y.size, false, at_peak_b[j] != 0, y.source});
  }
  auto by_delta = [](const buffer_change& x, const buffer_change& y) {
    const auto dx = x.delta() < 0 ? -x.delta() : x.delta();
    const auto dy = y.delta() < 0 ? -y.delta() : y.delta();
    return std::tie(dy, x.name) < std::tie(dx, y.name);
  };
  std::stable_sort(d.changed.begin(), d.changed.end(), by_delta);
  std::stable_sort(d.added.begin(), d.added.end(), by_delta);
  std::stable_sort(d.removed.begin(), d.removed.end(), by_delta);
  return d;
}

/// One statistic before and after.
struct stat_change {
  std::string_view name;  ///< "peak", "argument", "output", "alias", "temp", "host temp", "host peak",
                          ///< "to host", "to device" (bytes transferred), "all allocations"
  std::int64_t before = 0, after = 0;
  [[nodiscard]] std::int64_t delta() const noexcept { return after - before; }
};

/// What changed between two reports.
struct memory_report_diff {
  std::string file_before, file_after;
  std::string module_before, module_after;
  std::string peak_instruction_before, peak_instruction_after;  ///< running at each peak ("" when unknown)
  std::vector<stat_change> stats;  ///< the peak first, then XLA's figures
  timeline_diff buffers;           ///< the peaks and the matched, added and removed buffers

  [[nodiscard]] bool identical() const noexcept { return buffers.identical(); }
  /// Every changed, added and removed buffer, largest |delta| first (ties: changed, added, removed).
  [[nodiscard]] std::vector<const buffer_change*> largest_changes() const {
    std::vector<const buffer_change*> all;
    for (const auto* list : {&buffers.changed, &buffers.added, &buffers.removed}) {
      for (const auto& c : *list) all.push_back(&c);
    }
    auto magnitude = [](const buffer_change* c) { return c->delta() < 0 ? -c->delta() : c->delta(); };
    std::stable_sort(all.begin(), all.end(), [&](const auto* x, const auto* y) { return magnitude(x) > magnitude(y); });
    return all;
  }
};

/// Compares two reports: statistics, peaks and buffers (`diff_timelines`).
[[nodiscard]] inline memory_report_diff diff(const memory_report& a, const memory_report& b) {
  memory_report_diff d;
  d.file_before = a.file;
  d.file_after = b.file;
  d.module_before = a.module;
  d.module_after = b.module;
  d.buffers = diff_timelines(a.timeline, b.timeline);
  d.peak_instruction_before = a.instruction_at(d.buffers.peak_before.time);
  d.peak_instruction_after = b.instruction_at(d.buffers.peak_after.time);
  const auto& x = a.stats;
  const auto& y = b.stats;
  d.stats = {
      {"peak", d.buffers.peak_before.bytes, d.buffers.peak_after.bytes},
      {"argument", x.argument_size_in_bytes, y.argument_size_in_bytes},
      {"output", x.output_size_in_bytes, y.output_size_in_bytes},
      {"alias", x.alias_size_in_bytes, y.alias_size_in_bytes},
      {"temp", x.temp_size_in_bytes, y.temp_size_in_bytes},
      {"host temp", x.host_temp_size_in_bytes, y.host_temp_size_in_bytes},
      {"host peak", a.host_peak(), b.host_peak()},
      {"to host", a.transferred_bytes(true), b.transferred_bytes(true)},
      {"to device", a.transferred_bytes(false), b.transferred_bytes(false)},
      {"all allocations", x.total_allocation_bytes, y.total_allocation_bytes},
  };
  return d;
}

template <class F>
void visit_fields(const buffer_change& c, F&& f) {
  f("name", c.name);
  f("shape_before", c.shape_before);
  f("shape_after", c.shape_after);
  f("size_before", c.size_before);
  f("size_after", c.size_after);
  f("delta", c.delta());
  f("at_peak_before", c.at_peak_before);
  f("at_peak_after", c.at_peak_after);
  if (!c.source.empty()) f("source", c.source);
}

/// A statistic in the diff's JSON: before, after, delta.
template <class F>
void visit_fields(const stat_change& s, F&& f) {
  f("before", s.before);
  f("after", s.after);
  f("delta", s.delta());
}

/// The statistics keyed by name (spaces as underscores: "all_allocations").
struct stat_changes_view {
  const std::vector<stat_change>* stats = nullptr;
};
template <class F>
void visit_fields(const stat_changes_view& v, F&& f) {
  for (const auto& s : *v.stats) {
    std::string key(s.name);
    std::replace(key.begin(), key.end(), ' ', '_');
    f(key, s);
  }
}

/// The peaks' times in the diff's JSON.
struct peak_times_view {
  std::int64_t before = 0, after = 0;
};
template <class F>
void visit_fields(const peak_times_view& v, F&& f) {
  f("time_before", v.before);
  f("time_after", v.after);
}

/// The diff's JSON fields (after the command, which the writer puts first).
template <class F>
void visit_fields(const memory_report_diff& d, F&& f) {
  f("files", std::vector<std::string>{d.file_before, d.file_after});
  f("identical", d.identical());
  f("stats", stat_changes_view{&d.stats});
  f("peak", peak_times_view{d.buffers.peak_before.time, d.buffers.peak_after.time});
  f("unchanged_buffers", d.buffers.unchanged);
  f("changed", d.buffers.changed);
  f("added", d.buffers.added);
  f("removed", d.buffers.removed);
}

}  // namespace xlamem::report
