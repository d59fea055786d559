// SPDX-License-Identifier: Apache-2.0
/// @file
/// What an assignment of strategies costs and how much memory it needs: the exact cost (node
/// and edge parts, 128-bit), the forbidden choices it makes, and the memory profile over time
/// (its peak, when it peaks, the first time step over the limit). Generic over
/// `sharding_problem`, read only through `problem_traits`.
///
/// The profile is a sweep over the sorted ends of the live intervals, O(n log n) for n nodes:
/// time steps are never enumerated, so sparse or huge time values (up to int64) cost nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/problem.hpp"

namespace xlamem::sharding {

/// The cost and memory of one assignment.
struct evaluation {
  wide_cost cost;                ///< node_cost + edge_cost
  wide_cost node_cost;           ///< the chosen strategies' costs
  wide_cost edge_cost;           ///< the chosen pairs' costs over every edge
  std::size_t forbidden_choices = 0;  ///< node and edge choices of cost >= `forbidden_cost`
  /// The largest total usage at a time step where a node of nonzero usage is live (0 when
  /// there is none).
  wide_cost peak_usage;
  /// The first time step where the usage is `peak_usage` (0 when no node of nonzero usage is live).
  std::int64_t peak_time = 0;
  /// The first time step where the usage exceeds the limit, if any.
  std::optional<std::int64_t> first_over_limit;
  /// The usage stays within the limit at every time step (`!first_over_limit`).
  bool feasible = true;

  /// Feasible and no forbidden choice: an answer the problem allows.
  [[nodiscard]] bool allowed() const noexcept { return feasible && forbidden_choices == 0; }
};

/// Checks that `a` has one strategy per node, each in range. @returns `errc::invalid_argument`
/// naming the first node at fault.
template <sharding_problem P>
[[nodiscard]] result<void> check_assignment(const P& p, std::span<const std::size_t> a) {
  using traits = problem_traits<P>;
  const std::size_t n = traits::node_count(p);
  if (a.size() != n) {
    return make_error(errc::invalid_argument, "the assignment has " + std::to_string(a.size()) +
                                                  " strategies, but the problem has " + std::to_string(n) + " nodes");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t count = traits::strategy_count(p, i);
    if (a[i] >= count) {
      return make_error(errc::invalid_argument, "node " + std::to_string(i) + ": strategy " + std::to_string(a[i]) +
                                                    " is out of range (the node has " + std::to_string(count) +
                                                    " strategies)");
    }
  }
  return {};
}

namespace detail {
/// A change of the usage at a time step: +usage where an interval starts, -usage where it ends
/// (16 bytes, so that the sort of 2n events moves little memory).
struct usage_event {
  std::int64_t time;
  std::int64_t change;
};

/// Sweeps the usage profile of `a` (already checked) into `e`.
/// Sorts `events` by time: a counting sort, linear, when the times span at most a few slots
/// per event (time steps are small integers in practice), else a comparison sort.
inline void sort_by_time(std::vector<usage_event>& events) {
  if (events.empty()) return;
  const auto [lo, hi] = std::minmax_element(events.begin(), events.end(),
                                            [](const usage_event& x, const usage_event& y) { return x.time < y.time; });
  const std::uint64_t span = static_cast<std::uint64_t>(hi->time) - static_cast<std::uint64_t>(lo->time);
  if (span >= 4 * static_cast<std::uint64_t>(events.size()) + 1024 || events.size() >= std::numeric_limits<std::uint32_t>::max()) {
    std::sort(events.begin(), events.end(), [](const usage_event& x, const usage_event& y) { return x.time < y.time; });
    return;
  }
  const std::int64_t first = lo->time;
  const auto slot = [first](const usage_event& e) {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(e.time) - static_cast<std::uint64_t>(first));
  };
  std::vector<std::uint32_t> start(static_cast<std::size_t>(span) + 2, 0);
  for (const auto& e : events) ++start[slot(e) + 1];
  for (std::size_t t = 1; t < start.size(); ++t) start[t] += start[t - 1];
  std::vector<usage_event> sorted(events.size());
  for (const auto& e : events) sorted[start[slot(e)]++] = e;
  events = std::move(sorted);
}

template <sharding_problem P>
void sweep_usage(const P& p, std::span<const std::size_t> a, evaluation& e) {
  using traits = problem_traits<P>;
  const std::size_t n = traits::node_count(p);
  std::vector<usage_event> events;
  events.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const live_interval live = traits::interval(p, i);
    const usage_type u = traits::node_usage(p, i, a[i]);
    if (live.empty() || u == 0) continue;
    events.push_back({live.lower, u});
    events.push_back({live.upper, -u});
  }
  sort_by_time(events);
  const wide_cost limit = traits::usage_limit(p);
  wide_cost usage;
  bool any = false;
  for (std::size_t k = 0; k < events.size();) {
    const std::int64_t t = events[k].time;
    for (; k < events.size() && events[k].time == t; ++k) usage += events[k].change;
    // The usage holds from t until the next event; after the last event nothing is live.
    if (k == events.size()) break;
    if (!any || usage > e.peak_usage) {
      e.peak_usage = usage;
      e.peak_time = t;
      any = true;
    }
    if (!e.first_over_limit && usage > limit) e.first_over_limit = t;
  }
  e.feasible = !e.first_over_limit.has_value();
}
}  // namespace detail

/// Evaluates the assignment `a` of `p`: exact cost (128-bit sums), forbidden choices, and the
/// usage profile against the limit. @returns `errc::invalid_argument` for an assignment of the
/// wrong length or with a strategy out of range (naming the node). Time O(n log n + m) for n
/// nodes and m edges, O(n + m) when the time steps span O(n); memory O(n). @pre `p` is well
/// formed (edge ends are nodes; a reader or builder checked it).
template <sharding_problem P>
[[nodiscard]] result<evaluation> evaluate(const P& p, std::span<const std::size_t> a) {
  using traits = problem_traits<P>;
  if (auto ok = check_assignment(p, a); !ok) return ok.error();
  evaluation e;
  const std::size_t n = traits::node_count(p);
  for (std::size_t i = 0; i < n; ++i) {
    const cost_type c = traits::node_cost(p, i, a[i]);
    e.node_cost += c;
    if (is_forbidden(c)) ++e.forbidden_choices;
  }
  const std::size_t m = traits::edge_count(p);
  for (std::size_t k = 0; k < m; ++k) {
    const auto [u, v] = traits::edge_nodes(p, k);
    const cost_type c = traits::edge_cost(p, k, a[u], a[v]);
    e.edge_cost += c;
    if (is_forbidden(c)) ++e.forbidden_choices;
  }
  e.cost = e.node_cost + e.edge_cost;
  detail::sweep_usage(p, a, e);
  return e;
}

}  // namespace xlamem::sharding
