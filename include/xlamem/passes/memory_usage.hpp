// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory in use over time, and the peak: the one definition that buffer assignment's
/// `peak_memory_in_bytes` and the memory report (`report/memory_report.hpp`) both compute.
///
/// Memory in use at a time step is the sum over the allocations that count of the bytes each
/// uses then:
/// - a temporary heap (`is_preallocated_temp`) uses the bytes its live values cover: the union
///   of their byte ranges, so an operand and the in-place user that overwrites it, which share
///   bytes, count once;
/// - any other allocation holds one value at a time and uses its largest live value.
/// Entry parameters are live the whole program; an emulated output copy (an allocation with no
/// values) at the last step. Constants, thread-local and host allocations do not count (XLA
/// leaves them out of a device's memory). The peak is the first step with the most bytes.
///
/// How it relates to XLA's `CompiledMemoryStats::peak_memory_in_bytes`: XLA:GPU computes it the
/// same way in spirit (`ComputePeakMemorySizes`: the largest buffer of every parameter,
/// constant and live-out allocation, plus a replay of the heap traces; it counts constants,
/// which are left out here); XLA:CPU reports argument + output - alias + constant bytes, which
/// leaves the temporary heap out and is not a peak of the run (docs/xla-fidelity.md).
///
/// Cost: O(k log k) per allocation of k values (a sweep over starts and ends, sorted by counting
/// when the steps are few against the values; a segment tree over a heap's byte boundaries
/// counts the covered bytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace xlamem {

/// One value of an allocation for the sweep: live over the steps `[start, end]`, at bytes
/// `[offset, offset + size)` of the allocation.
struct placed_value {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t offset = 0;
  std::int64_t size = 0;
};

/// `bytes` in use over the steps `[begin, end]`.
struct usage_piece {
  std::int64_t begin = 0, end = 0, bytes = 0;
};

/// Whether an allocation counts toward the device peak (see the file comment).
[[nodiscard]] constexpr bool counts_toward_peak(bool is_constant, bool is_thread_local, bool is_host) noexcept {
  return !is_constant && !is_thread_local && !is_host;
}

namespace detail {
/// The largest of a multiset of sizes that grows and shrinks: removals wait in a second heap
/// until they reach the top (every removed size was inserted first). No node per size, as a
/// `std::multiset` has: an allocation of 10^6 values made 2 x 10^6 heap blocks.
class largest_size {
 public:
  void insert(std::int64_t size) { in_.push(size); }
  void erase(std::int64_t size) { out_.push(size); }
  /// The largest size inserted and not erased, or 0.
  [[nodiscard]] std::int64_t get() {
    while (!out_.empty() && !in_.empty() && in_.top() == out_.top()) {
      in_.pop();
      out_.pop();
    }
    return in_.empty() ? 0 : in_.top();
  }

 private:
  std::priority_queue<std::int64_t> in_, out_;
};
}  // namespace detail

/// The bytes one allocation uses over time, as pieces of constant use, each as long as the use
/// stays the same (steps of no use left out). `values` point at anything with `start`, `end`,
/// `offset` and `size` members (`placed_value`, the report's timeline buffers); there are
/// fewer than 2^32 of them (values of one allocation, each from an input of at least as many
/// bytes). Steps are clamped to `[0, horizon)`.
template <class Value>
[[nodiscard]] std::vector<usage_piece> allocation_usage(const std::vector<const Value*>& values, bool is_heap,
                                                        std::int64_t horizon) {
  struct event {  // 16 bytes: an allocation of 10^6 values sorts 2 x 10^6 of them
    std::int64_t time;
    std::uint32_t value;  // index into `values`
    std::int32_t delta;   // +1 starts, -1 ends
  };
  if (horizon <= 0) return {};
  // Each value's steps and bytes read once, side by side: the values may be large records
  // (a report's timeline buffer is about 200 bytes), and the passes below read each 4 times.
  struct span {
    std::int64_t start, end, size;  // steps clamped to the horizon; size 0: never in use
  };
  std::vector<span> spans(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    const Value& b = *values[k];
    const std::int64_t s = std::clamp<std::int64_t>(b.start, 0, horizon - 1);
    const std::int64_t e = std::min(std::max(b.end, b.start), horizon - 1);
    if (b.size > 0 && e >= s) spans[k] = {s, e, b.size};
  }
  // The starts and ends by time, in the order of `values` at equal times: counted into place
  // when the steps are few against the values (no comparison sort: an allocation may hold
  // 10^6 values), else merge sorted.
  std::vector<event> events;
  if (static_cast<std::uint64_t>(horizon) < 4 * static_cast<std::uint64_t>(values.size())) {
    std::vector<std::size_t> first(static_cast<std::size_t>(horizon) + 2, 0);  // then: where each step's events go
    for (const auto& x : spans) {
      if (x.size == 0) continue;
      ++first[static_cast<std::size_t>(x.start) + 1];
      ++first[static_cast<std::size_t>(x.end) + 2];
    }
    for (std::size_t t = 1; t < first.size(); ++t) first[t] += first[t - 1];
    events.resize(first.back());
    for (std::size_t k = 0; k < spans.size(); ++k) {
      const auto& x = spans[k];
      if (x.size == 0) continue;
      events[first[static_cast<std::size_t>(x.start)]++] = {x.start, static_cast<std::uint32_t>(k), +1};
      events[first[static_cast<std::size_t>(x.end) + 1]++] = {x.end + 1, static_cast<std::uint32_t>(k), -1};
    }
  } else {
    events.reserve(2 * values.size());
    for (std::size_t k = 0; k < spans.size(); ++k) {
      const auto& x = spans[k];
      if (x.size == 0) continue;
      events.push_back({x.start, static_cast<std::uint32_t>(k), +1});
      events.push_back({x.end + 1, static_cast<std::uint32_t>(k), -1});
    }
    std::stable_sort(events.begin(), events.end(), [](const event& x, const event& y) { return x.time < y.time; });
  }

  // The heap's byte boundaries and, per tree node, how many live values cover all of its
  // stretch and how many of its bytes are covered.
  std::vector<std::int64_t> bounds;
  if (is_heap) {
    for (const auto& ev : events) {
      const std::int64_t offset = values[ev.value]->offset;
      bounds.push_back(offset);
      bounds.push_back(offset + spans[ev.value].size);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  }
  const std::size_t stretches = bounds.empty() ? 0 : bounds.size() - 1;
  std::vector<int> cover(4 * stretches + 4, 0);
  std::vector<std::int64_t> covered(4 * stretches + 4, 0);
  auto update = [&](auto&& self, std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to,
                    int delta) -> void {  // stretches [lo, hi) of `node`; change [from, to)
    if (to <= lo || hi <= from) return;
    if (from <= lo && hi <= to) {
      cover[node] += delta;
    } else {
      const std::size_t mid = lo + (hi - lo) / 2;
      self(self, 2 * node, lo, mid, from, to, delta);
      self(self, 2 * node + 1, mid, hi, from, to, delta);
    }
    if (cover[node] > 0) {
      covered[node] = bounds[hi] - bounds[lo];
    } else {
      covered[node] = hi - lo == 1 ? 0 : covered[2 * node] + covered[2 * node + 1];
    }
  };
  auto stretch_of = [&](std::int64_t byte) {
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), byte) - bounds.begin());
  };
  detail::largest_size live_sizes;  // outside a heap: the sizes of the live values

  std::vector<usage_piece> out;
  for (std::size_t i = 0; i < events.size();) {
    const std::int64_t time = events[i].time;
    for (; i < events.size() && events[i].time == time; ++i) {
      const std::int64_t size = spans[events[i].value].size;
      if (is_heap) {
        const std::int64_t offset = values[events[i].value]->offset;
        update(update, 1, 0, stretches, stretch_of(offset), stretch_of(offset + size), events[i].delta);
      } else if (events[i].delta > 0) {
        live_sizes.insert(size);
      } else {
        live_sizes.erase(size);
      }
    }
    const std::int64_t bytes = is_heap ? (stretches > 0 ? covered[1] : 0) : live_sizes.get();
    const std::int64_t until = i < events.size() ? events[i].time - 1 : horizon - 1;
    if (bytes <= 0 || time > until || time >= horizon) continue;
    if (!out.empty() && out.back().end + 1 == time && out.back().bytes == bytes) {
      out.back().end = std::min(until, horizon - 1);  // the same use goes on: one piece
    } else {
      out.push_back({time, std::min(until, horizon - 1), bytes});
    }
  }
  return out;
}

/// Adds `pieces` to the per-step difference array `diff` (size horizon + 1); a running sum of
/// it then gives the bytes in use at each step.
inline void add_usage(std::vector<std::int64_t>& diff, const std::vector<usage_piece>& pieces) {
  for (const auto& piece : pieces) {
    diff[static_cast<std::size_t>(piece.begin)] += piece.bytes;
    diff[static_cast<std::size_t>(piece.end) + 1] -= piece.bytes;
  }
}

/// Turns a difference array filled by `add_usage` (size horizon + 1) into the bytes in use at
/// each step (size horizon), in place.
inline void to_steps(std::vector<std::int64_t>& diff) {
  for (std::size_t t = 1; t < diff.size(); ++t) diff[t] += diff[t - 1];
  if (!diff.empty()) diff.pop_back();
}

/// The peak of per-step totals: the first step with the most bytes (step 0 and 0 bytes when
/// nothing is in use).
struct usage_peak {
  std::int64_t time = 0;
  std::int64_t bytes = 0;
};
[[nodiscard]] inline usage_peak first_peak(const std::vector<std::int64_t>& totals) noexcept {
  usage_peak p;
  for (std::size_t t = 0; t < totals.size(); ++t) {
    if (totals[t] > p.bytes) {
      p.bytes = totals[t];
      p.time = static_cast<std::int64_t>(t);
    }
  }
  return p;
}

}  // namespace xlamem
