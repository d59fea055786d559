// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/evaluate.hpp: the format's example computed by hand, forbidden choices,
// 128-bit totals, sparse and huge time values, a problem type adapted through problem_traits,
// bad assignments, and random problems against a brute force over every time step.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "xlamem/sharding/evaluate.hpp"

using namespace xlamem;
using namespace xlamem::sharding;

namespace {

// The format's example.json, built by hand (test/io/iopddl_test.cpp reads the file itself).
problem example() {
  problem p;
  p.name = "example";
  p.add_node({30, 70}, {15}, {10});
  p.add_node({40, 70}, {55, 65}, {25, 25});
  p.add_node({50, 120}, {25, 45, 35}, {15, 20, 15});
  p.add_node({110, 140}, {85, 75}, {10, 10});
  p.add_node({110, 150}, {95}, {15});
  p.add_edge(0, 1, {30, 40});
  p.add_edge(0, 2, {50, 10, 40});
  p.add_edge(1, 3, {90, 10, 20, 80});
  p.add_edge(2, 4, {60, 20, 30});
  p.add_edge(3, 4, {70, 60});
  p.limit = 50;
  return p;
}

}  // namespace

TEST_CASE("the example's cost and memory, computed by hand") {
  const problem p = example();
  // [0, 1, 1, 1, 0]: nodes 15 + 65 + 45 + 75 + 95 = 295; edges (0,1) 40, (0,2) 10,
  // (1,3) 80 (index 1 * 2 + 1), (2,4) 20, (3,4) 60 (index 1 * 1 + 0): 210.
  // Usage 10 | 25 | 20 | 10 | 15: [30,40) 10, [40,50) 35, [50,70) 55 > 50, [70,110) 20,
  // [110,120) 45, [120,140) 25, [140,150) 15.
  auto e = evaluate(p, assignment{0, 1, 1, 1, 0});
  REQUIRE_MESSAGE(e, e.error().to_string());
  CHECK(e->node_cost == wide_cost(295));
  CHECK(e->edge_cost == wide_cost(210));
  CHECK(e->cost == wide_cost(505));
  CHECK(e->forbidden_choices == 0);
  CHECK(e->peak_usage == wide_cost(55));
  CHECK(e->peak_time == 50);
  CHECK(e->first_over_limit == std::optional<std::int64_t>(50));
  CHECK_FALSE(e->feasible);
  CHECK_FALSE(e->allowed());

  // Strategy 0 everywhere: 275 + (30 + 50 + 90 + 60 + 70) = 575; the peak 10 + 25 + 15 = 50 on
  // [50, 70) equals the limit, which is allowed.
  e = evaluate(p, assignment{0, 0, 0, 0, 0});
  REQUIRE(e);
  CHECK(e->cost == wide_cost(575));
  CHECK(e->peak_usage == wide_cost(50));
  CHECK(e->peak_time == 50);
  CHECK_FALSE(e->first_over_limit);
  CHECK(e->feasible);
  CHECK(e->allowed());

  // [0, 0, 2, 1, 0]: 15 + 55 + 35 + 75 + 95 = 275; edges 30 + 40 + 10 + 30 + 60 = 170.
  e = evaluate(p, assignment{0, 0, 2, 1, 0});
  REQUIRE(e);
  CHECK(e->cost == wide_cost(445));
}

TEST_CASE("bad assignments name the node") {
  const problem p = example();
  auto e = evaluate(p, assignment{0, 0, 0, 0});
  REQUIRE_FALSE(e);
  CHECK(e.error().to_string() == "invalid_argument: the assignment has 4 strategies, but the problem has 5 nodes");
  e = evaluate(p, assignment{0, 0, 3, 0, 0});
  REQUIRE_FALSE(e);
  CHECK(e.error().to_string() == "invalid_argument: node 2: strategy 3 is out of range (the node has 3 strategies)");
  CHECK(check_assignment(p, assignment{0, 1, 2, 1, 0}));
}

TEST_CASE("forbidden choices are counted on nodes and edges") {
  problem p;
  p.add_node({0, 1}, {forbidden_cost, 1}, {1, 1});
  p.add_node({0, 1}, {0, 0}, {1, 1});
  p.add_edge(0, 1, {0, forbidden_cost - 1, forbidden_cost + 5, 0});
  auto e = evaluate(p, assignment{0, 0});
  REQUIRE(e);
  CHECK(e->forbidden_choices == 1);
  e = evaluate(p, assignment{1, 0});
  REQUIRE(e);
  CHECK(e->forbidden_choices == 1);
  CHECK(e->cost == wide_cost(forbidden_cost + 6));
  e = evaluate(p, assignment{0, 1});
  REQUIRE(e);
  CHECK(e->forbidden_choices == 1);  // forbidden_cost - 1 is allowed
  CHECK(e->cost.to_string() == "1999999999999999999");
}

TEST_CASE("totals past int64 are exact") {
  problem p;
  constexpr cost_type big = std::numeric_limits<cost_type>::max();
  for (int i = 0; i < 1000; ++i) p.add_node({0, 0}, {big}, {0});
  for (int i = 0; i + 1 < 1000; ++i) p.add_edge(i, i + 1, {big});
  auto e = evaluate(p, assignment(1000, 0));
  REQUIRE(e);
  // 1999 * (2^63 - 1), as Python prints it
  CHECK(e->cost.to_string() == "18437520701672696838193");
  CHECK(e->node_cost.to_string() == "9223372036854775807000");
  CHECK(e->forbidden_choices == 1999);
  CHECK(e->peak_usage == wide_cost(0));
  CHECK(e->feasible);
}

TEST_CASE("sparse and huge time values: sweep, no array per time step") {
  problem p;
  constexpr std::int64_t far = std::int64_t{1} << 62;
  p.add_node({0, far}, {0}, {3});
  p.add_node({far - 1, far + 5}, {0}, {4});
  p.add_node({far + 5, std::numeric_limits<std::int64_t>::max()}, {0}, {6});
  p.add_node({7, 7}, {0}, {100});  // empty: no memory
  p.add_node({-20, -10}, {0}, {2});
  p.limit = 6;
  auto e = evaluate(p, assignment(5, 0));
  REQUIRE(e);
  CHECK(e->peak_usage == wide_cost(7));
  CHECK(e->peak_time == far - 1);
  CHECK(e->first_over_limit == std::optional<std::int64_t>(far - 1));
  p.limit = 7;
  e = evaluate(p, assignment(5, 0));
  REQUIRE(e);
  CHECK(e->feasible);
  // Usages that sum past int64 at one time step are exact too.
  problem wide;
  for (int i = 0; i < 4; ++i) wide.add_node({0, 10}, {0}, {std::numeric_limits<usage_type>::max()});
  wide.limit = std::numeric_limits<usage_type>::max();
  e = evaluate(wide, assignment(4, 0));
  REQUIRE(e);
  CHECK(e->peak_usage.to_string() == "36893488147419103228");
  CHECK(e->first_over_limit == std::optional<std::int64_t>(0));
}

TEST_CASE("no node live: peak 0 at time 0") {
  problem p;
  p.add_node({0, 0}, {1}, {5});
  p.add_node({3, 9}, {1}, {0});
  p.limit = 0;
  auto e = evaluate(p, assignment(2, 0));
  REQUIRE(e);
  CHECK(e->peak_usage == wide_cost(0));
  CHECK(e->peak_time == 0);
  CHECK(e->feasible);
  auto none = evaluate(problem{}, assignment{});
  REQUIRE(none);
  CHECK(none->cost == wide_cost(0));
}

namespace {
// A user's own problem type: the strategies of node i are (cost, usage) pairs, the edges one
// matrix per pair of nodes, read through a specialisation of problem_traits.
struct my_problem {
  struct strategy {
    std::int64_t cost, usage;
  };
  std::vector<std::vector<strategy>> nodes;
  std::vector<live_interval> lives;
  struct edge {
    std::size_t a, b;
    std::vector<std::vector<std::int64_t>> cost;  // [s_a][s_b]
  };
  std::vector<edge> edges;
  std::int64_t memory = 0;
};
}  // namespace

template <>
struct xlamem::sharding::problem_traits<my_problem> {
  static std::size_t node_count(const my_problem& p) { return p.nodes.size(); }
  static std::size_t strategy_count(const my_problem& p, std::size_t i) { return p.nodes[i].size(); }
  static cost_type node_cost(const my_problem& p, std::size_t i, std::size_t s) { return p.nodes[i][s].cost; }
  static usage_type node_usage(const my_problem& p, std::size_t i, std::size_t s) { return p.nodes[i][s].usage; }
  static live_interval interval(const my_problem& p, std::size_t i) { return p.lives[i]; }
  static std::size_t edge_count(const my_problem& p) { return p.edges.size(); }
  static std::pair<std::size_t, std::size_t> edge_nodes(const my_problem& p, std::size_t e) {
    return {p.edges[e].a, p.edges[e].b};
  }
  static cost_type edge_cost(const my_problem& p, std::size_t e, std::size_t sa, std::size_t sb) {
    return p.edges[e].cost[sa][sb];
  }
  static usage_type usage_limit(const my_problem& p) { return p.memory; }
};
static_assert(sharding_problem<my_problem>);

TEST_CASE("a problem type of the user's own, through problem_traits, evaluates like the flat one") {
  my_problem m;
  m.nodes = {{{15, 10}}, {{55, 25}, {65, 25}}, {{25, 15}, {45, 20}, {35, 15}}, {{85, 10}, {75, 10}}, {{95, 15}}};
  m.lives = {{30, 70}, {40, 70}, {50, 120}, {110, 140}, {110, 150}};
  m.edges = {{0, 1, {{30, 40}}},
             {0, 2, {{50, 10, 40}}},
             {1, 3, {{90, 10}, {20, 80}}},
             {2, 4, {{60}, {20}, {30}}},
             {3, 4, {{70}, {60}}}};
  m.memory = 50;
  const problem flat = example();
  for (const assignment& a : {assignment{0, 1, 1, 1, 0}, assignment{0, 0, 2, 0, 0}, assignment{0, 1, 0, 1, 0}}) {
    auto mine = evaluate(m, a);
    auto theirs = evaluate(flat, a);
    REQUIRE(mine);
    REQUIRE(theirs);
    CHECK(mine->cost == theirs->cost);
    CHECK(mine->peak_usage == theirs->peak_usage);
    CHECK(mine->peak_time == theirs->peak_time);
    CHECK(mine->first_over_limit == theirs->first_over_limit);
  }
}

TEST_CASE("random problems: the sweep agrees with a brute force over every time step") {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 300; ++round) {
    problem p;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const std::int64_t lo = static_cast<std::int64_t>(rng() % 20);
      const std::int64_t hi = lo + static_cast<std::int64_t>(rng() % 8);  // empty sometimes
      const std::size_t s = 1 + rng() % 3;
      std::vector<cost_type> costs;
      std::vector<usage_type> usages;
      for (std::size_t k = 0; k < s; ++k) {
        costs.push_back(static_cast<cost_type>(rng() % 100));
        usages.push_back(static_cast<usage_type>(rng() % 10));
      }
      p.add_node({lo, hi}, costs, usages);
    }
    const int m = static_cast<int>(rng() % 15);
    for (int k = 0; k < m; ++k) {  // self-loops and repeated pairs included
      const std::size_t u = rng() % n, v = rng() % n;
      std::vector<cost_type> matrix(p.strategy_count(u) * p.strategy_count(v));
      for (auto& c : matrix) c = static_cast<cost_type>(rng() % 50);
      p.add_edge(u, v, matrix);
    }
    p.limit = static_cast<usage_type>(rng() % 30);
    assignment a(n);
    for (int i = 0; i < n; ++i) a[i] = rng() % p.strategy_count(i);

    std::int64_t cost = 0;
    for (int i = 0; i < n; ++i) cost += p.node_cost(i, a[i]);
    for (std::size_t e = 0; e < p.edge_count(); ++e) cost += p.edge_cost(e, a[p.edges[e].first], a[p.edges[e].second]);
    std::int64_t peak = 0, peak_time = 0;
    std::optional<std::int64_t> over;
    bool any = false;
    for (std::int64_t t = 0; t < 30; ++t) {
      std::int64_t usage = 0;
      bool live = false;
      for (int i = 0; i < n; ++i) {
        if (p.intervals[i].contains(t) && p.node_usage(i, a[i]) != 0) {
          usage += p.node_usage(i, a[i]);
          live = true;
        }
      }
      if (live && (!any || usage > peak)) {
        peak = usage;
        peak_time = t;
        any = true;
      }
      if (!over && usage > p.limit) over = t;
    }
    CAPTURE(round);
    auto e = evaluate(p, a);
    REQUIRE(e);
    CHECK(e->cost == wide_cost(cost));
    CHECK(e->node_cost + e->edge_cost == e->cost);
    CHECK(e->peak_usage == wide_cost(peak));
    CHECK(e->peak_time == peak_time);
    CHECK(e->first_over_limit == over);
    CHECK(e->feasible == !over.has_value());
  }
}
