// SPDX-License-Identifier: Apache-2.0
// TRW-S checked on its own against brute force over the presolved model (small generated
// problems): the bound is at most the cheapest labelling's cost (memory aside) after every pass,
// with or without extra per-label costs, and never falls from one pass to the next; on trees it
// settles at that optimum and the labels read off reach it; a pass cut short by a deadline
// leaves a bound that is still valid.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/search_model.hpp"
#include "xlamem/sharding/trws.hpp"

namespace sh = xlamem::sharding;

namespace {

// The least cost + extra over every labelling of `m` (memory aside), by enumeration.
double free_optimum(const sh::search_model& m, const std::vector<double>& extra, const sh::trws& t) {
  double best = std::numeric_limits<double>::infinity();
  xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
    double c = static_cast<double>(sh::assignment_state(m, labels).cost());
    for (std::size_t v = 0; v < labels.size(); ++v) c += extra.empty() ? 0.0 : extra[t.label_base(v) + labels[v]];
    best = std::min(best, c);
  });
  return best;
}

double labelling_cost(const sh::search_model& m, const std::vector<std::uint32_t>& labels) {
  return static_cast<double>(sh::assignment_state(m, labels).cost());
}

constexpr double slack = 1e-6;

}  // namespace

TEST_SUITE("sharding/trws") {
  TEST_CASE("the bound is at most the optimum after every pass and never falls") {
    std::mt19937_64 rng(13);
    int problems = 0, with_extra = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 4 + seed % 5;
      shape.extra_edges = static_cast<double>(seed % 3);  // trees, sparse and dense-ish graphs
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::trws t(m);
      std::vector<double> extra;
      if (seed % 2 == 0) {  // memory prices, as the Lagrangian relaxation sets them
        extra = t.extra();
        for (auto& x : extra) x = static_cast<double>(rng() % 500);
        t.extra() = extra;
        ++with_extra;
      }
      const double optimum = free_optimum(m, extra, t);
      if (optimum >= static_cast<double>(m.penalty())) continue;  // every labelling meets a forbidden pair
      ++problems;
      double previous = -std::numeric_limits<double>::infinity();
      for (int pass = 0; pass < 20; ++pass) {
        t.iterate();
        const double bound = t.lower_bound();
        INFO("seed ", seed, ", pass ", pass);
        CHECK(bound <= optimum + slack * std::abs(optimum) + slack);
        CHECK(bound >= previous - slack * std::abs(previous) - slack);
        previous = bound;
      }
    }
    CHECK(problems > 150);
    CHECK(with_extra > 75);
  }

  TEST_CASE("exact on trees: the bound settles at the optimum and the labels reach it") {
    int trees = 0, exact = 0, labels_exact = 0;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 4 + seed % 6;
      shape.extra_edges = 0;  // a random tree; presolve keeps a tree a tree
      shape.follow_share = 0;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::trws t(m);
      const double optimum = free_optimum(m, {}, t);
      if (optimum >= static_cast<double>(m.penalty())) continue;
      ++trees;
      for (int pass = 0; pass < 50; ++pass) t.iterate();
      exact += t.lower_bound() >= optimum - slack * optimum - slack;
      labels_exact += labelling_cost(m, t.labels()) == optimum;
    }
    CHECK(trees > 100);
    CHECK(exact == trees);
    CHECK(labels_exact == trees);
  }

  TEST_CASE("a pass cut short by a deadline keeps a valid bound") {
    xlamem::test::sharding_shape shape;
    shape.nodes = 8;
    shape.extra_edges = 1;
    const auto pre = xlamem::test::presolved_random_problem(21, shape);
    REQUIRE(pre);
    const sh::search_model m(*pre);
    sh::trws t(m);
    const double optimum = free_optimum(m, {}, t);
    for (int pass = 0; pass < 5; ++pass) {
      xlamem::deadline_watch watch(xlamem::solve_clock::now() - std::chrono::seconds(1), 3);  // reads the clock after 3 units
      t.iterate(watch);
      CHECK(watch.seen_passed());
      CHECK(t.lower_bound() <= optimum + slack * std::abs(optimum) + slack);
    }
  }
}
