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
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/interval_set.hpp"
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
  /// Per item, the heap-simulator interval [start, end] (closed, in events) of each of its
  /// values. XLA's `MakeFreeChunks` and `CommitChunk` use each colocated value's own
  /// interval, so an item conflicts only where one of its values is live: another buffer may
  /// sit in the dead gap of a loop-carried buffer. Empty: the problem's hulls.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> pieces;
};

namespace detail {

/// Best fit in `order` where item i occupies its chunk only during `pieces[i]` (closed
/// intervals): `gap_offset` among the placed items whose pieces meet one of i's, as
/// `place_in_order` does among conflicting buffers.
inline placement place_pieces_in_order(const packing_problem& p, const std::vector<int>& order,
                                       const std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>>& pieces) {
  placement out;
  out.offsets.assign(p.buffers.size(), 0);
  interval_set<int> placed;
  std::vector<std::pair<std::int64_t, std::int64_t>> used;
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    const auto& b = p.buffers[i];
    if (b.size <= 0) continue;
    used.clear();
    for (const auto& [lo, hi] : pieces[i]) {
      placed.any_meeting(lo, hi, [&](int j) {
        const auto ju = static_cast<std::size_t>(j);
        used.emplace_back(out.offsets[ju], out.offsets[ju] + p.buffers[ju].size);
        return false;
      });
    }
    std::sort(used.begin(), used.end());
    out.offsets[i] = gap_offset(used, b.size, b.alignment, fit_rule::best);
    for (const auto& [lo, hi] : pieces[i]) placed.insert(lo, hi, bi);
  }
  return out;
}

/// The problem whose buffers are the items' pieces (each item's pieces merged, half-open in
/// events): any placement of the items that keeps `pieces` apart is a placement of it, so its
/// lower bound bounds theirs. `p` itself when the items have no pieces (`keys.pieces` empty).
[[nodiscard]] inline packing_problem pieces_problem(const packing_problem& p, const xla_heap_keys& keys) {
  if (keys.pieces.size() != p.buffers.size()) return p;
  packing_problem out;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    auto pieces = keys.pieces[i];
    if (pieces.empty()) return p;
    std::sort(pieces.begin(), pieces.end());
    interval_buffer b = p.buffers[i];
    b.lower = pieces.front().first;
    b.upper = pieces.front().second + 1;
    for (std::size_t k = 1; k <= pieces.size(); ++k) {
      if (k < pieces.size() && pieces[k].first <= b.upper) {
        b.upper = std::max(b.upper, pieces[k].second + 1);
        continue;
      }
      out.buffers.push_back(b);
      if (k < pieces.size()) {
        b.lower = pieces[k].first;
        b.upper = pieces[k].second + 1;
      }
    }
  }
  return out;
}

}  // namespace detail

/// XLA's best fit on a heap whose items are colocation groups (values that take over a dying
/// operand's chunk, XLA's `ShareWith`, and the values of one buffer): an item conflicts where
/// one of its values is live (`keys.pieces`; over its whole hull without them); the spatial order sorts by size, then the *own* duration of the
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
  bool by_pieces = !p.buffers.empty() && keys.pieces.size() == n;
  for (std::size_t i = 0; by_pieces && i < n; ++i) {
    by_pieces = !keys.pieces[i].empty() && !p.buffers[i].fixed_offset;
  }
  if (by_pieces) {
    placement s = detail::place_pieces_in_order(p, spatial, keys.pieces);
    placement t = detail::place_pieces_in_order(p, temporal, keys.pieces);
    return peak_of(p, t) < peak_of(p, s) ? t : s;
  }
  placement s = detail::place_in_order(p, g, spatial, fit_rule::best);
  placement t = detail::place_in_order(p, g, temporal, fit_rule::best);
  return peak_of(p, t) < peak_of(p, s) ? t : s;
}

}  // namespace xlamem
