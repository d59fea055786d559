// SPDX-License-Identifier: Apache-2.0
/// @file
/// Packing policies for the temporary heap of buffer assignment (`temp_packer`): a callable
/// that places a validated `packing_problem` and returns a valid placement.
///
/// - `xla_best_fit_packer`: XLA's heap simulator (`GlobalDecreasingSizeBestFitHeap` in its
///   spatial and temporal orders, keeping the smaller: `ChooseBestHeapAlgorithm`), the
///   baseline.
/// - `heuristic_packer`: the project's fast heuristic portfolio (`portfolio_fit`), which
///   includes XLA's best fit and is never worse.
/// - `search_packer`: the project's best solver: the anytime exact search (`minimize_peak`)
///   under a time budget when the packing engine provides it, else the heuristic portfolio; the
///   result is never above XLA best fit's (the better of the two is kept).
///
/// `solver_kind` names them for options and the command line ("xla", "heuristic", "search").
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"

namespace xlamem {

/// A temporary-heap packing policy: `p(problem)` returns a valid placement of a problem that
/// `validate_problem` accepts, or an error.
template <class P>
concept temp_packer = requires(const P& p, const packing_problem& problem) {
  { p(problem) } -> std::same_as<result<placement>>;
  { p.name() } -> std::convertible_to<std::string_view>;
};

/// A lower bound on the peak of a packing whose buffers all have alignment `a` (or divisors of it): at any time,
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

/// XLA's best fit (both orders, the smaller heap).
struct xla_best_fit_packer {
  [[nodiscard]] std::string_view name() const noexcept { return "xla"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const { return place(p, xla_best_fit{}); }
};
static_assert(temp_packer<xla_best_fit_packer>);

/// The heuristic portfolio (never worse than XLA best fit).
struct heuristic_packer {
  [[nodiscard]] std::string_view name() const noexcept { return "heuristic"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const { return place(p, portfolio_fit{}); }
};
static_assert(temp_packer<heuristic_packer>);

namespace detail {
/// `minimize_peak(p, o)` when the packing engine declares it (found by ADL at instantiation).
template <class Problem, class Options>
std::optional<placement> try_minimize_peak(const Problem& p, const Options& o) {
  if constexpr (requires { minimize_peak(p, o); }) {
    auto r = minimize_peak(p, o);
    if (r && r->status == search_status::feasible) return std::move(r->solution);
    return std::nullopt;
  } else {
    (void)p, (void)o;
    return std::nullopt;
  }
}
}  // namespace detail

/// The best solver: exact search with a time budget, started from the heuristic portfolio;
/// never above XLA best fit.
struct search_packer {
  double time_limit_seconds = 1.0;  ///< wall-clock budget of the search (<= 0: heuristic only)

  [[nodiscard]] std::string_view name() const noexcept { return "search"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const {
    if (auto ok = validate_problem(p); !ok) return ok.error();
    const interval_graph g(p);
    placement best = portfolio_fit{}.place(p, g);
    auto best_peak = peak_of(p, best);
    const placement xla = xla_best_fit{}.place(p, g);
    if (peak_of(p, xla) < best_peak) {
      best = xla;
      best_peak = peak_of(p, xla);
    }
    if (time_limit_seconds > 0 && best_peak > temp_lower_bound(p)) {
      minimize_options o;
      o.time_limit_seconds = time_limit_seconds;
      if (auto s = detail::try_minimize_peak(p, o); s && validate(p, *s) && peak_of(p, *s) < best_peak) {
        best = std::move(*s);
      }
    }
    return best;
  }
};
static_assert(temp_packer<search_packer>);

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

/// The packers by name.
enum class solver_kind {
  xla,        ///< `xla_best_fit_packer`
  heuristic,  ///< `heuristic_packer`
  search,     ///< `search_packer` (the default)
};

/// Parses "xla" (also "xla-best-fit"), "heuristic" (also "portfolio"), "search" (also "best").
[[nodiscard]] inline result<solver_kind> parse_solver_kind(std::string_view s) {
  if (s == "xla" || s == "xla-best-fit") return solver_kind::xla;
  if (s == "heuristic" || s == "portfolio") return solver_kind::heuristic;
  if (s == "search" || s == "best") return solver_kind::search;
  return make_error(errc::invalid_argument,
                    "unknown solver '" + std::string(s) + "' (expected xla, heuristic or search)");
}

/// The name `parse_solver_kind` reads back.
[[nodiscard]] constexpr std::string_view name_of(solver_kind k) noexcept {
  switch (k) {
    case solver_kind::xla: return "xla";
    case solver_kind::heuristic: return "heuristic";
    default: return "search";
  }
}

}  // namespace xlamem
