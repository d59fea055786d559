// SPDX-License-Identifier: Apache-2.0
// Small random sharding problems shaped like XLA's requests (chains of instructions, follow
// constraints and aliases as forbidden off-diagonal entries, a few shared operands, a memory
// limit between the least and the most usage), and a brute-force optimum to check solvers with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/problem.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace xlamem::test {

struct sharding_shape {
  std::size_t nodes = 8;
  std::size_t max_strategies = 4;
  std::size_t time_steps = 12;
  double follow_share = 0.2;   ///< edges that force equal strategies (0 on the diagonal, forbidden elsewhere)
  double forbidden_share = 0.05; ///< node strategies that are forbidden
  double extra_edges = 0.5;     ///< edges beyond the chain, per node
  double tightness = 0.4;       ///< 0: the limit is the least usage's peak; 1: the most usage's
  double forbidden_pairs = 0;   ///< entries of the other edges that are forbidden (pairs presolve may leave)
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
        if (!follow && shape.forbidden_pairs > 0 && chance(shape.forbidden_pairs)) m[x * k[b] + y] = forbidden_cost;
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

/// The cost of `a` on `p`, scored here independently of the library, when it uses no forbidden
/// choice and keeps the limit at every step; else nullopt.
template <class Labels>
std::optional<sharding::wide_cost> permitted_cost(const sharding::problem& p, const Labels& a) {
  using namespace sharding;
  wide_cost cost;
  for (std::size_t i = 0; i < p.node_count(); ++i) {
    if (is_forbidden(p.node_cost(i, a[i]))) return std::nullopt;
    cost += p.node_cost(i, a[i]);
  }
  for (std::size_t e = 0; e < p.edge_count(); ++e) {
    const auto c = p.edge_cost(e, a[p.edges[e].first], a[p.edges[e].second]);
    if (is_forbidden(c)) return std::nullopt;
    cost += c;
  }
  std::int64_t horizon = 0;
  for (const auto& iv : p.intervals) horizon = std::max(horizon, iv.upper);
  for (std::int64_t t = 0; t < horizon; ++t) {
    usage_type load = 0;
    for (std::size_t i = 0; i < p.node_count(); ++i) if (p.intervals[i].contains(t)) load += p.node_usage(i, a[i]);
    if (load > p.limit) return std::nullopt;
  }
  return cost;
}

/// Calls `f(labels)` for every labelling with `sizes[i]` labels at position i (none when a size
/// is 0). Exponential: for a handful of positions only.
template <class F>
void for_each_labelling(const std::vector<std::size_t>& sizes, F&& f) {
  if (std::find(sizes.begin(), sizes.end(), std::size_t{0}) != sizes.end()) return;
  std::vector<std::uint32_t> a(sizes.size(), 0);
  for (;;) {
    f(static_cast<const std::vector<std::uint32_t>&>(a));
    std::size_t i = 0;
    for (; i < a.size(); ++i) {
      if (++a[i] < sizes[i]) break;
      a[i] = 0;
    }
    if (i == a.size()) return;
  }
}

/// The cheapest assignment within the limit that uses no forbidden choice, by enumeration
/// (nullopt when there is none). Exponential: for a handful of nodes only.
inline std::optional<sharding::wide_cost> brute_force_optimum(const sharding::problem& p) {
  std::vector<std::size_t> sizes(p.node_count());
  for (std::size_t i = 0; i < sizes.size(); ++i) sizes[i] = p.strategy_count(i);
  std::optional<sharding::wide_cost> best;
  for_each_labelling(sizes, [&](const std::vector<std::uint32_t>& a) {
    const auto c = permitted_cost(p, a);
    if (c && (!best || *c < *best)) best = c;
  });
  return best;
}

/// The presolved form of `random_sharding_problem(seed, shape)`, or nullopt when presolve proved
/// that no permitted assignment exists or left fewer than `min_vars` variables.
inline std::optional<sharding::presolved> presolved_random_problem(std::uint64_t seed, const sharding_shape& shape,
                                                                   std::size_t min_vars = 1) {
  auto pre = sharding::presolve(random_sharding_problem(seed, shape));
  if (!pre.has_permitted_assignment || pre.var_count() < min_vars) return std::nullopt;
  return pre;
}

/// The number of labels of every variable of `m` (for `for_each_labelling`).
inline std::vector<std::size_t> label_counts(const sharding::search_model& m) {
  std::vector<std::size_t> k(m.var_count());
  for (std::size_t v = 0; v < k.size(); ++v) k[v] = m.labels(v);
  return k;
}

/// A label drawn uniformly for every variable of `m`.
inline std::vector<std::uint32_t> random_labels(const sharding::search_model& m, std::mt19937_64& rng) {
  std::vector<std::uint32_t> labels(m.var_count());
  for (std::size_t v = 0; v < labels.size(); ++v) labels[v] = static_cast<std::uint32_t>(rng() % m.labels(v));
  return labels;
}

}  // namespace xlamem::test
