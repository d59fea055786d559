// SPDX-License-Identifier: Apache-2.0
/// @file
/// Lower bounds on the peak of a packing that know about alignment: `aligned_lower_bound(p, a)`
/// for buffers placed at multiples of `a`, and `temp_lower_bound(p)`, the larger of it and
/// `lower_bound(p)` (the most bytes live at one time) when every buffer has one alignment. Buffer
/// assignment reports it beside each temporary heap and stops searching when a placement meets
/// it. Both are O(n log n).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// A lower bound on the peak of a packing whose buffers all have alignment `a` or a multiple of
/// it (every offset a multiple of `a`; a smaller alignment breaks the bound): at any time,
/// every live buffer but the topmost spans at least its size rounded up to `a` (the next one
/// starts at an aligned offset above it), so the peak is at least the sum of the rounded sizes
/// minus the largest rounding slack. O(n log n).
[[nodiscard]] inline std::int64_t aligned_lower_bound(const packing_problem& p, std::int64_t a) {
  struct event {
    std::int64_t time;
    int kind;  // 0 = end, 1 = start
    std::size_t index;
  };
  std::vector<event> events;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    if (p.buffers[i].size <= 0) continue;
    events.push_back({p.buffers[i].lower, 1, i});
    events.push_back({p.buffers[i].upper, 0, i});
  }
  std::sort(events.begin(), events.end(), [](const event& x, const event& y) {
    return x.time != y.time ? x.time < y.time : x.kind < y.kind;
  });
  std::multiset<std::int64_t> slack;
  std::int64_t sum = 0, best = 0;
  for (const auto& e : events) {
    const auto size = p.buffers[e.index].size;
    const auto rounded = (size + a - 1) / a * a;
    if (e.kind == 0) {
      sum -= rounded;
      slack.erase(slack.find(rounded - size));
    } else {
      sum += rounded;
      slack.insert(rounded - size);
      best = std::max(best, sum - *slack.rbegin());
    }
  }
  return best;
}
/// The best lower bound known here: `lower_bound(p)`, or the alignment-aware bound when every
/// buffer has the same alignment and that is larger.
[[nodiscard]] inline std::int64_t temp_lower_bound(const packing_problem& p) {
  std::int64_t lb = lower_bound(p);
  if (p.buffers.empty()) return lb;
  const auto a = p.buffers.front().alignment;
  for (const auto& b : p.buffers) {
    if (b.alignment != a) return lb;
  }
  return a > 1 ? std::max(lb, aligned_lower_bound(p, a)) : lb;
}

}  // namespace xlamem
