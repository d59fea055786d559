// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/memory_terms/constraints.hpp.
#include <doctest/doctest.h>

#include "support/memory_terms_helpers.hpp"

TEST_SUITE("memory_terms/rows") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE("constraint rows reproduce the memory of every reduced time for any choice") {
    term_rng rng(3);
    for (int i = 0; i < 300; ++i) {
      const auto lives = rng.uniform(1, 10);
      const auto prims = rng.uniform(1, 8);
      const auto p = random_term_problem(rng.next(), prims, lives, lives, 6);
      auto r = reduce_memory_terms(p.num_lives, p.intervals, {}, split_aware_policy{});
      REQUIRE(r.has_value());
      std::vector<std::vector<double>> costs(static_cast<std::size_t>(prims));
      std::vector<std::int64_t> choice(static_cast<std::size_t>(prims));
      for (std::int64_t q = 0; q < prims; ++q) {
        const auto n = rng.uniform(1, 3);
        for (std::int64_t j = 0; j < n; ++j) costs[static_cast<std::size_t>(q)].push_back(static_cast<double>(rng.uniform(0, 1000)));
        choice[static_cast<std::size_t>(q)] = rng.uniform(0, n - 1);
      }
      const double budget = 5000.0, multiplier = 1e6;
      auto rows = memory_constraint_rows(*r, costs, budget, multiplier);
      REQUIRE(rows.has_value());
      REQUIRE(rows->size() == r->groups.size() + r->reduced_times.size());
      // Group variables at their smallest feasible value: the summed memory of the members.
      std::vector<double> gvar;
      for (const auto& row : *rows) {
        if (row.what != memory_constraint_row::kind::group_definition) continue;
        double sum = 0;
        for (const auto& [var, coef] : row.terms) {
          if (var.what == memory_variable::kind::strategy && choice[static_cast<std::size_t>(var.index)] == var.strategy) sum += coef;
          if (var.what == memory_variable::kind::group) CHECK(coef == -1.0);
        }
        gvar.push_back(sum);
        CHECK(row.upper_bound == 0.0);
      }
      for (const auto& row : *rows) {
        if (row.what != memory_constraint_row::kind::time_step) continue;
        double lhs = 0;
        for (const auto& [var, coef] : row.terms) {
          if (var.what == memory_variable::kind::group) lhs += coef * gvar[static_cast<std::size_t>(var.index)];
          else if (choice[static_cast<std::size_t>(var.index)] == var.strategy) lhs += coef;
        }
        double truth = 0;
        for (std::int64_t q = 0; q < prims; ++q) {
          if (p.intervals[static_cast<std::size_t>(q)].contains(row.id)) {
            truth += costs[static_cast<std::size_t>(q)][static_cast<std::size_t>(choice[static_cast<std::size_t>(q)])] / (budget / multiplier);
          }
        }
        CHECK(lhs == doctest::Approx(truth));
        CHECK(row.upper_bound == multiplier);
      }
    }
  }

  TEST_CASE("constraint rows reject bad costs and budgets") {
    auto r = reduce_memory_terms(6, ivs{{0, 4}, {1, 5}});
    REQUIRE(r.has_value());
    const std::vector<std::vector<double>> ok{{1.0, 2.0}, {3.0}};
    CHECK(memory_constraint_rows(*r, ok, 0.0).error().code() == errc::invalid_argument);
    CHECK(memory_constraint_rows(*r, std::vector<std::vector<double>>{{1.0}}, 10.0).error().message().find("1 cost vectors for 2 primitives") != std::string::npos);
    const std::vector<std::vector<double>> nan{{1.0}, {-2.0}};
    CHECK(memory_constraint_rows(*r, nan, 10.0).error().message().find("primitive 1 strategy 0") != std::string::npos);
    auto rows = memory_constraint_rows(*r, ok, 10.0);
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == 2);  // one group row, one time row (t = 1)
    CHECK((*rows)[0].what == memory_constraint_row::kind::group_definition);
    CHECK((*rows)[0].terms.size() == 4);  // 2 + 1 strategies, then -g
    CHECK((*rows)[1].id == 1);
    CHECK((*rows)[1].terms.size() == 1);  // only the group covers t = 1
    CHECK((*rows)[1].terms[0].first == memory_variable{memory_variable::kind::group, 0, 0});
  }
}
