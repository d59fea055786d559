// SPDX-License-Identifier: Apache-2.0
// search_model and assignment_state against a direct reading of the problem: the cost of every
// labelling is the original problem's cost less presolve's constant, the penalty marks exactly
// the labellings that use a forbidden choice, the loads say "fits" exactly when the original
// assignment keeps the limit, and the incremental updates (delta, fits_with, set) agree with a
// state built from scratch after each change.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace sh = xlamem::sharding;

namespace {

xlamem::test::sharding_shape small_shape(std::uint64_t seed) {
  xlamem::test::sharding_shape s;
  s.nodes = 4 + seed % 5;
  s.max_strategies = 3;
  s.follow_share = 0.1;
  s.tightness = static_cast<double>(seed % 4) / 3.0;
  s.forbidden_pairs = 0.1;
  return s;
}

}  // namespace

TEST_SUITE("sharding/search_model") {
  TEST_CASE("every labelling's cost, penalty and fit agree with the original problem") {
    int labellings = 0, permitted = 0, fitting = 0;
    for (std::uint64_t seed = 1; seed <= 150; ++seed) {
      const auto p = xlamem::test::random_sharding_problem(seed, small_shape(seed));
      const auto pre = sh::presolve(p);
      if (!pre.has_permitted_assignment) continue;
      const sh::search_model m(pre);
      xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
        ++labellings;
        const sh::assignment_state st(m, labels);
        const auto original = pre.expand(labels);
        sh::problem free = p;  // the same problem without the limit: the cost alone
        free.limit = std::numeric_limits<sh::usage_type>::max();
        const auto cost = xlamem::test::permitted_cost(free, original);
        INFO("seed ", seed);
        CHECK(m.is_penalty(st.cost()) == !cost.has_value());
        if (!cost) return;
        ++permitted;
        CHECK(pre.constant_cost + sh::wide_cost(st.cost()) == *cost);
        const bool keeps_limit = xlamem::test::permitted_cost(p, original).has_value();
        CHECK(st.fits() == keeps_limit);
        fitting += keeps_limit;
      });
    }
    MESSAGE(labellings, " labellings, ", permitted, " permitted, ", fitting, " within the limit");
    CHECK(fitting > 100);
    CHECK(permitted > fitting);
    CHECK(labellings > permitted);  // some labellings meet a forbidden pair presolve left
  }

  TEST_CASE("delta, fits_with and set agree with a state built from scratch") {
    std::mt19937_64 rng(7);
    int moves = 0;
    for (std::uint64_t seed = 1; seed <= 150; ++seed) {
      auto shape = small_shape(seed);
      shape.nodes = 6 + seed % 20;
      const auto p = xlamem::test::random_sharding_problem(seed, shape);
      const auto pre = sh::presolve(p);
      if (!pre.has_permitted_assignment || pre.var_count() == 0) continue;
      const sh::search_model m(pre);
      std::vector<std::uint32_t> labels(m.var_count(), 0);
      sh::assignment_state st(m, labels);
      for (int step = 0; step < 60; ++step) {
        const auto v = std::uniform_int_distribution<std::size_t>(0, m.var_count() - 1)(rng);
        const auto s = static_cast<std::uint32_t>(std::uniform_int_distribution<std::size_t>(0, m.labels(v) - 1)(rng));
        auto moved = labels;
        moved[v] = s;
        const sh::assignment_state fresh(m, moved);
        INFO("seed ", seed, ", step ", step);
        CHECK(st.delta(v, s) == fresh.cost() - st.cost());
        // fits_with asks whether the rows `v` covers keep the limit: the whole answer when the
        // state fits now.
        if (st.fits()) CHECK(st.fits_with(v, s) == fresh.fits());
        st.set(v, s);
        labels = moved;
        ++moves;
        CHECK(st.cost() == fresh.cost());
        CHECK(st.excess() == fresh.excess());
        CHECK(st.labels() == labels);
      }
    }
    CHECK(moves > 4000);
  }
}
