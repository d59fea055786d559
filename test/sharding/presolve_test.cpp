// SPDX-License-Identifier: Apache-2.0
// presolve against brute force on small generated problems shaped to set off every reduction
// (follow edges to merge, single-strategy nodes to fold, memory-free nodes to eliminate,
// repeated edges to sum, forbidden entries to propagate): the presolved model's optimum plus the
// constant is the original optimum, its best labelling expands to an original assignment that
// costs exactly that, "no permitted assignment" is said only when there is none, and a deadline
// in the past leaves it incomplete instead of wrong.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace sh = xlamem::sharding;

namespace {

// `p` with every third node's usage the same for all its strategies (memory-free, so presolve
// may eliminate it) and its first edge added once more (a duplicate to sum).
sh::problem with_reductions(const sh::problem& p) {
  sh::problem q;
  q.limit = p.limit;
  for (std::size_t i = 0; i < p.node_count(); ++i) {
    std::vector<sh::cost_type> c(p.strategy_count(i));
    std::vector<sh::usage_type> u(p.strategy_count(i));
    for (std::size_t s = 0; s < c.size(); ++s) {
      c[s] = p.node_cost(i, s);
      u[s] = i % 3 == 0 ? p.node_usage(i, 0) : p.node_usage(i, s);
    }
    q.add_node(p.intervals[i], c, u);
  }
  for (std::size_t e = 0; e <= p.edge_count() && p.edge_count() > 0; ++e) {
    const std::size_t from = e < p.edge_count() ? e : 0;
    const auto [a, b] = p.edges[from];
    std::vector<sh::cost_type> m(p.strategy_count(a) * p.strategy_count(b));
    for (std::size_t x = 0; x < p.strategy_count(a); ++x) {
      for (std::size_t y = 0; y < p.strategy_count(b); ++y) m[x * p.strategy_count(b) + y] = p.edge_cost(from, x, y);
    }
    q.add_edge(a, b, m);
  }
  return q;
}

// The least constant + cost over the model's labellings that fit and use no forbidden choice,
// with one labelling that reaches it.
struct model_best {
  std::optional<sh::wide_cost> cost;
  std::vector<std::uint32_t> labels;
};

model_best best_of_model(const sh::presolved& pre) {
  const sh::search_model m(pre);
  model_best best;
  xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
    const sh::assignment_state st(m, labels);
    if (!st.fits() || m.is_penalty(st.cost())) return;
    const auto total = pre.constant_cost + sh::wide_cost(st.cost());
    if (!best.cost || total < *best.cost) best = {total, labels};
  });
  return best;
}

}  // namespace

TEST_SUITE("sharding/presolve") {
  TEST_CASE("the optimum is kept and the best labelling expands to it") {
    sh::presolved::statistics seen;
    int with_answer = 0, without = 0, refused = 0;
    for (std::uint64_t seed = 1; seed <= 600; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 4 + seed % 5;
      shape.max_strategies = 3;
      shape.follow_share = 0.35;
      shape.forbidden_share = 0.15;
      shape.forbidden_pairs = seed % 2 == 0 ? 0.1 : 0.0;
      shape.tightness = static_cast<double>(seed % 4) / 3.0;
      const auto p = with_reductions(xlamem::test::random_sharding_problem(seed, shape));
      const auto optimum = xlamem::test::brute_force_optimum(p);
      const auto pre = sh::presolve(p);
      INFO("seed ", seed);
      REQUIRE(pre.complete);
      seen.labels_removed += pre.stats.labels_removed;
      seen.merged += pre.stats.merged;
      seen.fixed += pre.stats.fixed;
      seen.eliminated += pre.stats.eliminated;
      seen.duplicate_edges += pre.stats.duplicate_edges;
      if (!pre.has_permitted_assignment) {  // arc consistency found a contradiction: a proof
        CHECK_FALSE(optimum);
        CHECK_FALSE(pre.infeasibility.empty());
        ++refused;
        continue;
      }
      const auto best = best_of_model(pre);
      CHECK(best.cost == optimum);
      if (!optimum) {
        ++without;
        continue;
      }
      ++with_answer;
      CHECK(xlamem::test::permitted_cost(p, pre.expand(best.labels)) == optimum);
    }
    MESSAGE(with_answer, " with an answer, ", without, " without (", refused, " refused by presolve); labels removed ",
            seen.labels_removed, ", merged ", seen.merged, ", fixed ", seen.fixed, ", eliminated ", seen.eliminated,
            ", duplicate edges ", seen.duplicate_edges);
    CHECK(with_answer > 150);
    CHECK(refused > 0);
    // Every reduction took part.
    CHECK(seen.labels_removed > 0);
    CHECK(seen.merged > 0);
    CHECK(seen.fixed > 0);
    CHECK(seen.eliminated > 0);
    CHECK(seen.duplicate_edges > 0);
  }

  TEST_CASE("a deadline in the past: incomplete on a problem past the clock's first reading") {
    // The clock is read once every 4,096 units of work, so a handful of nodes finish (correctly)
    // before the first reading; 5,000 nodes do not.
    xlamem::test::sharding_shape shape;
    shape.nodes = 5000;
    const auto p = xlamem::test::random_sharding_problem(3, shape);
    const auto pre = sh::presolve(p, xlamem::solve_clock::now() - std::chrono::seconds(1));
    CHECK_FALSE(pre.complete);
    CHECK(sh::presolve(p).complete);
  }
}
