// SPDX-License-Identifier: Apache-2.0
// Small random sharding problems shaped like XLA's requests (chains of instructions, follow
// constraints and aliases as forbidden off-diagonal entries, a few shared operands, a memory
// limit between the least and the most usage), and a brute-force optimum to check solvers with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "xlamem/sharding/problem.hpp"

namespace xlamem::test {

struct sharding_shape {
  std::size_t nodes = 8;
  std::size_t max_strategies = 4;
  std::size_t time_steps = 12;
  double follow_share = 0.2;   ///< edges that force equal strategies (0 on the diagonal, forbidden elsewhere)
  double forbidden_share = 0.05; ///< node strategies that are forbidden
  double extra_edges = 0.5;     ///< edges beyond the chain, per node
  double tightness = 0.4;       ///< 0: the limit is the least usage's peak; 1: the most usage's
};

/// A random problem of `shape`, reproducible from `seed`.
inline sharding::problem random_sharding_problem(std::uint64_t seed, const sharding_shape& shape = {}) {
  using namespace sharding;
  std::mt19937_64 rng(seed);
  const auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  problem p;
  p.name = "random";
  std::vector<std::size_t> k(shape.nodes);
  for (std::size_t i = 0; i < shape.nodes; ++i) {
    k[i] = static_cast<std::size_t>(uniform(1, static_cast<std::int64_t>(shape.max_strategies)));
    std::vector<cost_type> c(k[i]);
    std::vector<usage_type> u(k[i]);
    const usage_type base = uniform(1, 100);
    for (std::size_t s = 0; s < k[i]; ++s) {
      c[s] = chance(shape.forbidden_share) ? forbidden_cost : uniform(0, 1000);
      u[s] = base / static_cast<usage_type>(s + 1) + uniform(0, 5);
    }
    live_interval live;
    if (!chance(0.1)) {
      live.lower = uniform(0, static_cast<std::int64_t>(shape.time_steps) - 1);
      live.upper = uniform(live.lower + 1, static_cast<std::int64_t>(shape.time_steps));
    }
    p.add_node(live, c, u);
  }
  const auto add_random_edge = [&](std::size_t a, std::size_t b) {
    std::vector<cost_type> m(k[a] * k[b]);
    const bool follow = chance(shape.follow_share);
    for (std::size_t x = 0; x < k[a]; ++x) {
      for (std::size_t y = 0; y < k[b]; ++y) {
        m[x * k[b] + y] = follow ? (x == y || (x >= k[b] && y == 0) ? 0 : forbidden_cost) : uniform(0, 2000) * (x != y);
      }
    }
    p.add_edge(a, b, m);
  };
  for (std::size_t i = 1; i < shape.nodes; ++i) add_random_edge(static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(i) - 1)), i);
  const auto extra = static_cast<std::size_t>(shape.extra_edges * static_cast<double>(shape.nodes));
  for (std::size_t e = 0; e < extra && shape.nodes > 1; ++e) {
    const auto a = static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(shape.nodes) - 1));
    const auto b = static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(shape.nodes) - 1));
    if (a != b) add_random_edge(a, b);
  }
  // The limit: between the peaks of the least and the most usage per node.
  const auto peak_of = [&](bool most) {
    usage_type peak = 0;
    for (std::int64_t t = 0; t < static_cast<std::int64_t>(shape.time_steps); ++t) {
      usage_type load = 0;
      for (std::size_t i = 0; i < shape.nodes; ++i) {
        if (!p.intervals[i].contains(t)) continue;
        usage_type u = p.node_usage(i, 0);
        for (std::size_t s = 1; s < k[i]; ++s) u = most ? std::max(u, p.node_usage(i, s)) : std::min(u, p.node_usage(i, s));
        load += u;
      }
      peak = std::max(peak, load);
    }
    return peak;
  };
  const usage_type lo = peak_of(false), hi = peak_of(true);
  p.limit = lo + static_cast<usage_type>(shape.tightness * static_cast<double>(hi - lo));
  return p;
}

/// The cheapest assignment within the limit that uses no forbidden choice, by enumeration
/// (nullopt when there is none). Exponential: for a handful of nodes only.
inline std::optional<sharding::wide_cost> brute_force_optimum(const sharding::problem& p) {
  using namespace sharding;
  const std::size_t n = p.node_count();
  std::int64_t horizon = 0;
  for (const auto& iv : p.intervals) horizon = std::max(horizon, iv.upper);
  std::vector<std::size_t> a(n, 0);
  std::optional<wide_cost> best;
  for (;;) {
    bool permitted = true;
    wide_cost cost;
    for (std::size_t i = 0; i < n && permitted; ++i) {
      permitted = !is_forbidden(p.node_cost(i, a[i]));
      cost += p.node_cost(i, a[i]);
    }
    for (std::size_t e = 0; e < p.edge_count() && permitted; ++e) {
      const auto c = p.edge_cost(e, a[p.edges[e].first], a[p.edges[e].second]);
      permitted = !is_forbidden(c);
      cost += c;
    }
    for (std::int64_t t = 0; t < horizon && permitted; ++t) {
      usage_type load = 0;
      for (std::size_t i = 0; i < n; ++i) if (p.intervals[i].contains(t)) load += p.node_usage(i, a[i]);
      permitted = load <= p.limit;
    }
    if (permitted && (!best || cost < *best)) best = cost;
    std::size_t i = 0;
    for (; i < n; ++i) {
      if (++a[i] < p.strategy_count(i)) break;
      a[i] = 0;
    }
    if (i == n) return best;
  }
}

}  // namespace xlamem::test
