// SPDX-License-Identifier: Apache-2.0
/// @file
/// Greedy packing heuristics as policies: XLA's `GlobalDecreasingSizeBestFitHeap` (best fit in
/// its spatial and temporal orders, keeping the better), first fit, the canonical "skyline"
/// greedy (always place the buffer that can sit lowest), and `portfolio_fit`, the default: the
/// best of several orders and fits, never worse than XLA's best fit because it includes it.
///
/// Every policy models `packing_heuristic`: `h.place(problem, graph)` returns a valid placement
/// of a validated problem; `h.name()` names it. Placement of one buffer costs O(k log k), k the
/// number of conflicting buffers placed before it; no heuristic allocates per buffer. Policies
/// are stateless values, safe to share between threads.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// A greedy placement policy: places every buffer of a validated problem.
template <class H>
concept packing_heuristic = requires(const H& h, const packing_problem& p, const interval_graph& g) {
  { h.name() } -> std::convertible_to<std::string_view>;
  { h.place(p, g) } -> std::same_as<placement>;
};

/// How a greedy chooses among the free gaps that fit a buffer.
enum class fit_rule {
  best,   ///< the smallest gap that fits (XLA, TFLite), else on top
  first,  ///< the lowest gap that fits
};

namespace detail {

inline std::int64_t align_up_i64(std::int64_t x, std::int64_t a) noexcept {
  return (x + a - 1) / a * a;
}

/// Places buffers in `order` (fixed buffers first, wherever they appear), each into a gap
/// among the already placed conflicting buffers chosen by `rule`. Returns the offsets.
inline placement place_in_order(const packing_problem& p, const interval_graph& g,
                                const std::vector<int>& order, fit_rule rule) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> used;
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    if (placed[i]) continue;
    placed[i] = 1;
    const auto& b = p.buffers[i];
    if (b.size <= 0) {
      out.offsets[i] = 0;
      continue;
    }
    used.clear();
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) used.emplace_back(out.offsets[j], out.offsets[j] + p.buffers[j].size);
    }
    std::sort(used.begin(), used.end());
    std::int64_t cursor = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
    for (const auto& [lo, hi] : used) {
      const auto start = align_up_i64(cursor, b.alignment);
      if (lo > start && lo - start >= b.size) {
        const auto gap = lo - start;  // XLA measures a free chunk from its aligned start
        if (rule == fit_rule::first) {
          best = start;
          break;
        }
        if (gap < best_gap) {
          best_gap = gap;
          best = start;
        }
      }
      cursor = std::max(cursor, hi);
    }
    out.offsets[i] = best >= 0 ? best : align_up_i64(cursor, b.alignment);
  }
  return out;
}

/// Orders on buffers used by the greedy policies; every key ends with the index (stable).
enum class order_key { size, duration, area, contention, start, conflicts };

inline std::vector<int> sorted_order(const packing_problem& p, const interval_graph& g,
                                     order_key first, order_key second, order_key third = order_key::size) {
  const std::size_t n = p.buffers.size();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::int64_t> contention;
  if (first == order_key::contention || second == order_key::contention || third == order_key::contention) {
    contention.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (int s = g.first_section(i); s < g.last_section(i); ++s) {
        contention[i] = std::max(contention[i], g.section_bytes(static_cast<std::size_t>(s)));
      }
    }
  }
  auto key = [&](order_key k, std::size_t i) -> std::int64_t {
    const auto& b = p.buffers[i];
    switch (k) {
      case order_key::size: return b.size;
      case order_key::duration: return b.upper - b.lower;
      case order_key::area: {
        const auto d = static_cast<long double>(b.upper - b.lower) * static_cast<long double>(b.size);
        return d > 9e18L ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(d);
      }
      case order_key::contention: return contention[i];
      case order_key::start: return -b.lower;  // earlier first
      case order_key::conflicts: return static_cast<std::int64_t>(g.degree(i));
    }
    return 0;
  };
  struct keys3 {
    std::int64_t a, b, c;
  };
  std::vector<keys3> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {key(first, i), key(second, i), key(third, i)};
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& ka = keys[static_cast<std::size_t>(a)];
    const auto& kb = keys[static_cast<std::size_t>(b)];
    if (ka.a != kb.a) return ka.a > kb.a;
    if (ka.b != kb.b) return ka.b > kb.b;
    if (ka.c != kb.c) return ka.c > kb.c;
    return a < b;
  });
  return order;
}

/// The canonical greedy: repeatedly places, at its lowest possible offset (on top of every
/// placed conflicting buffer), the unplaced buffer whose offset would be lowest; ties go to
/// the earlier buffer in `order`. This is the first leaf of the exact search.
inline placement skyline_in_order(const packing_problem& p, const interval_graph& g,
                                  const std::vector<int>& order) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (std::size_t r = 0; r < order.size(); ++r) rank[static_cast<std::size_t>(order[r])] = static_cast<int>(r);
  std::vector<std::int64_t> low(n, 0);
  std::vector<char> placed(n, 0);
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> fixed_of;  // per buffer, fixed obstacles
  bool any_fixed = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
      any_fixed = true;
    }
  }
  if (any_fixed) {
    fixed_of.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (placed[i]) continue;
      for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
        const auto j = static_cast<std::size_t>(*it);
        if (p.buffers[j].fixed_offset) fixed_of[i].emplace_back(out.offsets[j], out.offsets[j] + p.buffers[j].size);
      }
    }
  }
  using entry = std::pair<std::int64_t, int>;  // (low, rank); min-heap
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap;
  for (std::size_t i = 0; i < n; ++i) {
    if (!placed[i]) heap.emplace(0, rank[i]);
  }
  while (!heap.empty()) {
    const auto [o, r] = heap.top();
    heap.pop();
    const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(r)]);
    if (placed[i] || o != low[i]) continue;
    const auto& b = p.buffers[i];
    if (b.size <= 0) {
      placed[i] = 1;
      out.offsets[i] = 0;
      continue;
    }
    if (any_fixed) {
      std::int64_t at = low[i];
      for (bool moved = true; moved;) {
        moved = false;
        for (const auto& [lo, hi] : fixed_of[i]) {
          if (at < hi && lo < at + b.size) {
            at = align_up_i64(hi, b.alignment);
            moved = true;
          }
        }
      }
      if (at != low[i]) {
        low[i] = at;
        heap.emplace(at, r);
        continue;
      }
    }
    placed[i] = 1;
    out.offsets[i] = low[i];
    const auto top = low[i] + b.size;
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) continue;
      const auto nl = align_up_i64(top, p.buffers[j].alignment);
      if (nl > low[j]) {
        low[j] = nl;
        heap.emplace(nl, rank[j]);
      }
    }
  }
  return out;
}

}  // namespace detail

/// XLA's `GlobalDecreasingSizeBestFitHeap` order.
enum class xla_order {
  spatial,       ///< size descending, then live range descending, then index (kSpatial)
  temporal,      ///< live range descending, then size descending, then index (kTemporal)
  best_of_both,  ///< both, keeping the smaller peak; spatial wins ties (ChooseBestHeapAlgorithm)
};

/// XLA's best fit, the reference baseline: buffers in decreasing size (or live range), each
/// into the smallest free gap that fits among placed conflicting buffers, else on top.
struct xla_best_fit {
  xla_order order = xla_order::best_of_both;

  [[nodiscard]] std::string_view name() const noexcept { return "xla-best-fit"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    placement spatial, temporal;
    if (order != xla_order::temporal) {
      spatial = detail::place_in_order(p, g, detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration),
                                       fit_rule::best);
      if (order == xla_order::spatial) return spatial;
    }
    temporal = detail::place_in_order(p, g, detail::sorted_order(p, g, detail::order_key::duration, detail::order_key::size),
                                      fit_rule::best);
    if (order == xla_order::temporal) return temporal;
    return peak_of(p, temporal) < peak_of(p, spatial) ? temporal : spatial;
  }
};
static_assert(packing_heuristic<xla_best_fit>);

/// First fit: size descending, each buffer into the lowest gap that fits.
struct first_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "first-fit"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return detail::place_in_order(p, g, detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration),
                                  fit_rule::first);
  }
};
static_assert(packing_heuristic<first_fit>);

/// The canonical skyline greedy (size descending breaks ties): always place next the buffer
/// that can sit lowest, directly on top of the conflicting buffers below it.
struct skyline_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "skyline"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return detail::skyline_in_order(p, g, detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration));
  }
};
static_assert(packing_heuristic<skyline_fit>);

/// The default fast heuristic: XLA's best fit in both orders (so never worse than XLA), then
/// the skyline greedy under six buffer rankings (size, contention = the fullest section a
/// buffer lives in, area, live range, conflicts, in several combinations); keeps the
/// smallest peak, earliest on ties. Above `small_limit` buffers it adds only one skyline run
/// so that 10^5 buffers stay well under a second.
struct portfolio_fit {
  std::size_t small_limit = 20000;

  [[nodiscard]] std::string_view name() const noexcept { return "portfolio"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    using detail::order_key;
    placement best = xla_best_fit{}.place(p, g);
    std::int64_t best_peak = peak_of(p, best);
    struct ranking {
      order_key a, b, c;
    };
    const ranking rankings[] = {
        {order_key::contention, order_key::area, order_key::size},
        {order_key::size, order_key::duration, order_key::size},
        {order_key::duration, order_key::size, order_key::size},
        {order_key::area, order_key::size, order_key::size},
        {order_key::conflicts, order_key::size, order_key::size},
        {order_key::contention, order_key::duration, order_key::area},
    };
    const std::size_t runs = p.buffers.size() <= small_limit ? std::size(rankings) : 1;
    for (std::size_t k = 0; k < runs; ++k) {
      auto s = detail::skyline_in_order(p, g, detail::sorted_order(p, g, rankings[k].a, rankings[k].b, rankings[k].c));
      const auto peak = peak_of(p, s);
      if (peak < best_peak) {
        best_peak = peak;
        best = std::move(s);
      }
    }
    return best;
  }
};
static_assert(packing_heuristic<portfolio_fit>);

/// Validates `p`, builds its interval graph and places it with `h`.
template <packing_heuristic H = portfolio_fit>
[[nodiscard]] result<placement> place(const packing_problem& p, const H& h = {}) {
  if (auto ok = validate_problem(p); !ok) return ok.error();
  const interval_graph g(p);
  return h.place(p, g);
}

}  // namespace xlamem
