// SPDX-License-Identifier: Apache-2.0
/// @file
/// XLA's best-fit heap (`GlobalDecreasingSizeBestFitHeap` with `ChooseBestHeapAlgorithm`) as
/// buffer assignment needs it: `xla_best_fit_packer` places a problem with `xla_best_fit` (both
/// orders, the smaller heap), and `xla_colocated_best_fit` places items that are colocation
/// groups with the sort keys XLA's heap simulator sees (`xla_heap_keys`), which is what makes
/// `xlamem plan --solver xla` reproduce XLA's temporary offsets byte for byte. O(n log n + the
/// conflicts best fit visits).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// XLA's best fit (both orders, the smaller heap).
struct xla_best_fit_packer {
  [[nodiscard]] std::string_view name() const noexcept { return "xla"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const { return place(p, xla_best_fit{}); }
};

/// The sort keys XLA's `GlobalDecreasingSizeBestFitHeap` sees for each item of a heap, when
/// they differ from what the problem's intervals say: durations measured in heap-simulator
/// events (every Alloc, ShareWith and Free is one tick) rather than schedule steps, and ties
/// broken by `HloValue` id rather than by item index. Empty vectors fall back to the problem.
struct xla_heap_keys {
  std::vector<std::int64_t> own_duration;  ///< spatial: the first value's own interval
  std::vector<std::int64_t> span;          ///< temporal: first start to last end of the group
  std::vector<std::int64_t> rank;          ///< tie-break: the first value's id order
};

/// XLA's best fit on a heap whose items are colocation groups (values that take over a dying
/// operand's chunk, XLA's `ShareWith`, and the values of one buffer): every item conflicts
/// over its whole hull; the spatial order sorts by size, then the *own* duration of the
/// group's first value, then id; the temporal order by the group's span, then size, then id
/// (`keys`; the problem's hulls and indices where `keys` is empty). Both orders are placed
/// with best fit and the smaller heap is kept (spatial wins ties). With no colocations and no
/// keys this is `xla_best_fit`. @pre `p` is valid.
[[nodiscard]] inline placement xla_colocated_best_fit(const packing_problem& p, const interval_graph& g,
                                                      const xla_heap_keys& keys = {}) {
  const std::size_t n = p.buffers.size();
  std::vector<int> spatial(n), temporal(n);
  for (std::size_t i = 0; i < n; ++i) spatial[i] = temporal[i] = static_cast<int>(i);
  auto hull = [&](int i) { return p.buffers[static_cast<std::size_t>(i)].upper - p.buffers[static_cast<std::size_t>(i)].lower; };
  auto pick = [&](const std::vector<std::int64_t>& v, int i, std::int64_t fallback) {
    const auto k = static_cast<std::size_t>(i);
    return k < v.size() ? v[k] : fallback;
  };
  auto own = [&](int i) { return pick(keys.own_duration, i, hull(i)); };
  auto span = [&](int i) { return pick(keys.span, i, hull(i)); };
  auto rank = [&](int i) { return pick(keys.rank, i, i); };
  auto size = [&](int i) { return p.buffers[static_cast<std::size_t>(i)].size; };
  std::sort(spatial.begin(), spatial.end(), [&](int a, int b) {
    if (size(a) != size(b)) return size(a) > size(b);
    if (own(a) != own(b)) return own(a) > own(b);
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a < b;
  });
  std::sort(temporal.begin(), temporal.end(), [&](int a, int b) {
    if (span(a) != span(b)) return span(a) > span(b);
    if (size(a) != size(b)) return size(a) > size(b);
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a < b;
  });
  placement s = detail::place_in_order(p, g, spatial, fit_rule::best);
  placement t = detail::place_in_order(p, g, temporal, fit_rule::best);
  return peak_of(p, t) < peak_of(p, s) ? t : s;
}

}  // namespace xlamem
