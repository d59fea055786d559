// SPDX-License-Identifier: Apache-2.0
/// @file
/// A program's memory as a person reads it: every buffer with its kind, allocation, offset,
/// live range and source line, and the questions asked of it when chasing an out-of-memory
/// error or a regression: when is the peak, what is live then, how much of the temporary heap
/// is wasted and how large is its largest free hole, and what changed between two
/// compilations.
///
/// The timeline is plain data, filled from whatever knows the plan (xlamem's own
/// `buffer_assignment`: `report/plan_timeline.hpp`, or XLA's `*-buffer-assignment.txt`:
/// `io/report/dump_report.hpp`), so the same report serves a plan xlamem made and a plan XLA made.
/// Memory at a time is the bytes in use then, by the one definition of
/// `passes/memory_usage.hpp` (which `buffer_assignment`'s `peak_memory_in_bytes` also uses): a
/// temporary heap counts the bytes its live buffers cover (an operand and the in-place user
/// that overwrites it share bytes and count once), any other allocation its largest live
/// buffer; constants, thread-local and host allocations are kept apart from the device total.
///
/// Cost: O(buffers log buffers + time) for `usage_over_time` and the rest. Plain values, no
/// state.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/passes/memory_usage.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem::report {

/// What an allocation holds, as a person groups memory (the stacks of the chart).
enum class buffer_kind : std::uint8_t {
  parameter,     ///< an entry parameter (also when an output aliases it)
  output,        ///< lives out of the program
  temp,          ///< the temporary heap
  constant,      ///< a constant (not in XLA's peak)
  embedded,      ///< thread-local: inside reduce / sort / map regions (not in XLA's peak)
};
inline constexpr std::size_t buffer_kind_count = 5;

[[nodiscard]] constexpr std::string_view name_of(buffer_kind k) noexcept {
  switch (k) {
    case buffer_kind::parameter: return "parameter";
    case buffer_kind::output: return "output";
    case buffer_kind::temp: return "temp";
    case buffer_kind::constant: return "constant";
    default: return "thread-local";
  }
}

/// One buffer on the timeline (for XLA's dumps, one value).
struct timeline_buffer {
  std::string name;             ///< `instruction` or `instruction{index}`
  std::string shape;            ///< e.g. "f32[256,512]{1,0}"
  std::int64_t size = 0;        ///< bytes
  buffer_kind kind = buffer_kind::temp;
  std::int64_t start = 0;       ///< first time live (inclusive)
  std::int64_t end = 0;         ///< last time live (inclusive)
  std::int64_t allocation = 0;  ///< index of the allocation holding it
  std::int64_t offset = 0;      ///< offset inside that allocation
  std::int64_t color = 0;       ///< memory space
  op_source source;
};

/// One allocation, as far as the report needs it.
struct timeline_allocation {
  std::int64_t index = 0;
  std::int64_t size = 0;
  buffer_kind kind = buffer_kind::temp;
  std::int64_t color = 0;
  bool is_heap = false;  ///< a preallocated-temp heap: its buffers are summed, not shared
};

/// A program's memory: the schedule, the allocations and the buffers in them.
struct memory_timeline {
  std::string module;
  std::vector<std::string> schedule;  ///< the instruction running at each time
  std::vector<timeline_allocation> allocations;
  std::vector<timeline_buffer> buffers;
  std::int64_t host_color = 5;        ///< allocations of this colour are host memory

  /// Times run 0 .. horizon() - 1.
  [[nodiscard]] std::int64_t horizon() const noexcept {
    std::int64_t h = static_cast<std::int64_t>(schedule.size());
    for (const auto& b : buffers) h = std::max(h, b.end + 1);
    return std::max<std::int64_t>(h, 1);
  }
  /// The allocation with `index`, or null.
  [[nodiscard]] const timeline_allocation* find_allocation(std::int64_t index) const noexcept {
    // Allocations are usually listed by index: look there first (a report asks once per buffer).
    if (index >= 0 && static_cast<std::size_t>(index) < allocations.size() &&
        allocations[static_cast<std::size_t>(index)].index == index) {
      return &allocations[static_cast<std::size_t>(index)];
    }
    for (const auto& a : allocations) {
      if (a.index == index) return &a;
    }
    return nullptr;
  }
  /// Whether allocation `a` counts toward the device peak (`counts_toward_peak`: XLA leaves
  /// constants, thread-local and host allocations out).
  [[nodiscard]] bool counts_in_peak(const timeline_allocation& a) const noexcept {
    return counts_toward_peak(a.kind == buffer_kind::constant, a.kind == buffer_kind::embedded, a.color == host_color);
  }
};

/// Bytes in use at one time, by kind.
using kind_bytes = std::array<std::int64_t, buffer_kind_count>;

namespace detail {
/// Each allocation's use over time (`allocation_usage`), in the order of `t.allocations`
/// (none for an allocation without buffers): the device peak and the memory spaces both read
/// it, so `build_report` computes it once. The functions taking one read it as `uses_of(t)` of
/// the same timeline (their public forms compute it).
using allocation_uses = std::vector<std::vector<usage_piece>>;
[[nodiscard]] inline allocation_uses uses_of(const memory_timeline& t) {
  const auto horizon = t.horizon();
  // Buffers by the position of their allocation (a buffer of no listed allocation is left out).
  std::map<std::int64_t, std::size_t> position;
  for (std::size_t k = 0; k < t.allocations.size(); ++k) {
    if (t.allocations[k].index != static_cast<std::int64_t>(k)) position.emplace(t.allocations[k].index, k);
  }
  std::vector<std::vector<const timeline_buffer*>> mine(t.allocations.size());
  for (const auto& b : t.buffers) {
    const auto a = b.allocation;
    if (a >= 0 && static_cast<std::size_t>(a) < t.allocations.size() && t.allocations[static_cast<std::size_t>(a)].index == a) {
      mine[static_cast<std::size_t>(a)].push_back(&b);
    } else if (const auto it = position.find(a); it != position.end()) {
      mine[it->second].push_back(&b);
    }
  }
  allocation_uses out(t.allocations.size());
  for (std::size_t k = 0; k < t.allocations.size(); ++k) {
    if (!mine[k].empty()) out[k] = allocation_usage(mine[k], t.allocations[k].is_heap, horizon);
    std::vector<const timeline_buffer*>().swap(mine[k]);
  }
  return out;
}

/// Bytes in use at every time by kind, over the allocations that are not host memory; `uses`
/// is `uses_of(t)`.
[[nodiscard]] inline std::vector<kind_bytes> usage_by_kind(const memory_timeline& t, const allocation_uses& uses) {
  const auto horizon = t.horizon();
  // Each piece adds its bytes at `begin` and takes them away after `end`; a running sum reads.
  std::vector<kind_bytes> out(static_cast<std::size_t>(horizon) + 1, kind_bytes{});
  for (std::size_t n = 0; n < t.allocations.size(); ++n) {
    const auto& a = t.allocations[n];
    if (a.color == t.host_color) continue;
    const auto k = static_cast<std::size_t>(a.kind);
    for (const auto& piece : uses[n]) {
      out[static_cast<std::size_t>(piece.begin)][k] += piece.bytes;
      out[static_cast<std::size_t>(piece.end) + 1][k] -= piece.bytes;
    }
  }
  for (std::size_t x = 1; x < out.size(); ++x) {
    for (std::size_t k = 0; k < buffer_kind_count; ++k) out[x][k] += out[x - 1][k];
  }
  out.pop_back();
  return out;
}
}  // namespace detail

/// Device bytes in use at every time 0 .. horizon()-1, by kind (the kind of the allocation;
/// host allocations are left out), by `allocation_usage` (`passes/memory_usage.hpp`): a heap
/// counts the bytes its live buffers cover, another allocation its largest live buffer.
[[nodiscard]] inline std::vector<kind_bytes> usage_over_time(const memory_timeline& t) {
  return detail::usage_by_kind(t, detail::uses_of(t));
}

/// The peak of the device memory and when it happens: the one peak of `passes/memory_usage.hpp`
/// (equal to `buffer_assignment`'s `peak_memory_in_bytes` for the timeline of its plan).
struct peak_info {
  std::int64_t time = 0;
  std::int64_t bytes = 0;
  kind_bytes by_kind{};
  std::vector<std::size_t> live;  ///< indices into `buffers` live then (peak allocations), largest first
};

namespace detail {
/// `find_peak` from `uses = uses_of(t)`.
[[nodiscard]] inline peak_info find_peak(const memory_timeline& t, const allocation_uses& uses) {
  // The device total at every time (a running sum of the pieces' starts and ends), then the
  // kinds at the peak only.
  std::vector<std::int64_t> totals(static_cast<std::size_t>(t.horizon()) + 1, 0);
  for (std::size_t n = 0; n < t.allocations.size(); ++n) {
    if (t.counts_in_peak(t.allocations[n])) add_usage(totals, uses[n]);
  }
  to_steps(totals);
  const auto peak = first_peak(totals);
  peak_info p;
  p.time = peak.time;
  p.bytes = peak.bytes;
  for (std::size_t n = 0; n < t.allocations.size() && p.bytes > 0; ++n) {
    if (!t.counts_in_peak(t.allocations[n])) continue;
    for (const auto& piece : uses[n]) {
      if (piece.begin <= p.time && p.time <= piece.end) p.by_kind[static_cast<std::size_t>(t.allocations[n].kind)] += piece.bytes;
    }
  }
  for (std::size_t i = 0; i < t.buffers.size(); ++i) {
    const auto& b = t.buffers[i];
    if (b.size <= 0 || b.start > p.time || p.time > b.end) continue;
    const auto* a = t.find_allocation(b.allocation);
    if (a != nullptr && t.counts_in_peak(*a)) p.live.push_back(i);
  }
  std::stable_sort(p.live.begin(), p.live.end(), [&](std::size_t x, std::size_t y) {
    if (t.buffers[x].size != t.buffers[y].size) return t.buffers[x].size > t.buffers[y].size;
    return t.buffers[x].name < t.buffers[y].name;
  });
  return p;
}
}  // namespace detail

/// The first time with the most device bytes in use, and the buffers live then.
[[nodiscard]] inline peak_info find_peak(const memory_timeline& t) { return detail::find_peak(t, detail::uses_of(t)); }

/// How much of a temporary heap is in use at one time.
struct fragmentation {
  std::int64_t allocation = -1;  ///< the heap's allocation index
  std::int64_t heap_size = 0;
  std::int64_t live_bytes = 0;   ///< bytes of buffers live then
  std::int64_t wasted = 0;       ///< heap_size - live_bytes
  std::int64_t largest_hole = 0; ///< the largest free byte range then
  std::int64_t hole_offset = 0;  ///< where it starts
};

/// Fragmentation of heap allocation `a` at time `time`: the free ranges between the live
/// buffers' byte ranges (overlaps are merged, so buffers sharing bytes count once).
[[nodiscard]] inline fragmentation fragmentation_at(const memory_timeline& t, const timeline_allocation& a,
                                                    std::int64_t time) {
  fragmentation f;
  f.allocation = a.index;
  f.heap_size = a.size;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const auto& b : t.buffers) {
    if (b.allocation != a.index || b.size <= 0 || b.start > time || time > b.end) continue;
    ranges.emplace_back(b.offset, b.offset + b.size);
  }
  std::sort(ranges.begin(), ranges.end());
  std::int64_t cursor = 0;
  auto hole = [&](std::int64_t from, std::int64_t to) {
    if (to - from > f.largest_hole) {
      f.largest_hole = to - from;
      f.hole_offset = from;
    }
  };
  for (const auto& [lo, hi] : ranges) {
    if (lo > cursor) hole(cursor, lo);
    if (hi > cursor) {
      f.live_bytes += hi - std::max(lo, cursor);
      cursor = hi;
    }
  }
  if (a.size > cursor) hole(cursor, a.size);
  f.wasted = a.size - f.live_bytes;
  return f;
}

/// Fragmentation of every heap allocation at the peak time, largest heap first.
[[nodiscard]] inline std::vector<fragmentation> fragmentation_at_peak(const memory_timeline& t, const peak_info& p) {
  std::vector<fragmentation> out;
  for (const auto& a : t.allocations) {
    if (a.is_heap && t.counts_in_peak(a)) out.push_back(fragmentation_at(t, a, p.time));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const fragmentation& x, const fragmentation& y) { return x.heap_size > y.heap_size; });
  return out;
}

/// The most bytes of allocation `a`'s buffers live at one time: for a heap, the lower bound
/// of any packing of it (its buffers must all fit then).
[[nodiscard]] inline std::int64_t live_bytes_bound(const memory_timeline& t, const timeline_allocation& a) {
  std::vector<const timeline_buffer*> mine;
  for (const auto& b : t.buffers) {
    if (b.allocation == a.index) mine.push_back(&b);
  }
  std::int64_t best = 0;
  for (const auto& piece : allocation_usage(mine, a.is_heap, t.horizon())) best = std::max(best, piece.bytes);
  return best;
}

/// Total bytes of the allocations of each kind (XLA's argument / output / temp figures split
/// the same way; an aliased parameter counts as a parameter).
[[nodiscard]] inline kind_bytes allocation_bytes(const memory_timeline& t) {
  kind_bytes out{};
  for (const auto& a : t.allocations) out[static_cast<std::size_t>(a.kind)] += a.size;
  return out;
}

/// The fields of a buffer as the report's JSON shows them (`io/codec/json.hpp`); the source only
/// when there is one.
template <class F>
void visit_fields(const timeline_buffer& b, F&& f) {
  f("name", b.name);
  f("shape", b.shape);
  f("size", b.size);
  f("kind", name_of(b.kind));
  f("allocation", b.allocation);
  f("offset", b.offset);
  f("color", b.color);
  f("start", b.start);
  f("end", b.end);
  if (!b.source.empty()) f("source", b.source);
}

/// The fields of a heap's fragmentation as the report's JSON shows them.
template <class F>
void visit_fields(const fragmentation& x, F&& f) {
  f("allocation", x.allocation);
  f("heap_size", x.heap_size);
  f("live_bytes", x.live_bytes);
  f("wasted", x.wasted);
  f("largest_hole", x.largest_hole);
  f("hole_offset", x.hole_offset);
}

}  // namespace xlamem::report
