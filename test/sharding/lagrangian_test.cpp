// SPDX-License-Identifier: Apache-2.0
// The Lagrangian relaxation of the memory limit checked on its own against brute force over the
// presolved model (small generated problems, tight and loose limits): every step's bound plus
// the constant is at most the optimum within the limit, whatever target it is steered toward (the
// true optimum, a loose one, one below the optimum); the best bound is the largest step bound;
// with the limit tight the bound rises above the optimum without the limit's bound more often
// than not; a step cut short by a deadline gives minus infinity, never a bound.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/lagrangian.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace sh = xlamem::sharding;

namespace {

struct optima {
  std::optional<sh::cost_type> within_limit;  // the least cost of a labelling that fits
  sh::cost_type free = std::numeric_limits<sh::cost_type>::max();  // memory aside
};

optima brute_force(const sh::search_model& m) {
  optima o;
  xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
    const sh::assignment_state st(m, labels);
    if (m.is_penalty(st.cost())) return;
    o.free = std::min(o.free, st.cost());
    if (st.fits() && (!o.within_limit || st.cost() < *o.within_limit)) o.within_limit = st.cost();
  });
  return o;
}

bool at_most(double bound, sh::cost_type optimum) {
  const auto o = static_cast<double>(optimum);
  return bound <= o + 1e-9 * std::abs(o) + 1e-6;
}

}  // namespace

TEST_SUITE("sharding/lagrangian") {
  TEST_CASE("every step's bound is at most the optimum within the limit, whatever the target") {
    int problems = 0, raised = 0, binding = 0;
    for (std::uint64_t seed = 1; seed <= 400; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 4 + seed % 5;
      shape.tightness = static_cast<double>(seed % 4) / 6.0;  // mostly tight
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      const auto o = brute_force(m);
      if (!o.within_limit) continue;
      ++problems;
      binding += *o.within_limit > o.free;
      const double targets[] = {static_cast<double>(*o.within_limit), 2.0 * static_cast<double>(*o.within_limit) + 1000,
                                0.5 * static_cast<double>(*o.within_limit)};
      for (const double target : targets) {
        sh::lagrangian_relaxation lr(m);
        double best = -std::numeric_limits<double>::infinity();
        for (int step = 0; step < 30; ++step) {
          const double bound = lr.step(target);
          INFO("seed ", seed, ", target ", target, ", step ", step);
          CHECK(at_most(bound, *o.within_limit));
          best = std::max(best, bound);
          CHECK(lr.best_bound() == best);
        }
        if (target == targets[0] && *o.within_limit > o.free && best > static_cast<double>(o.free) + 1e-6) ++raised;
      }
    }
    MESSAGE(problems, " problems, ", binding, " where the limit binds, the bound above the optimum without the limit on ", raised);
    CHECK(problems > 200);
    CHECK(2 * raised > binding);
  }

  TEST_CASE("a deadline in the past: no bound") {
    // The clock is read once every 4,096 units of work: a step over a handful of variables
    // finishes first (and its bound is valid); one over thousands is cut short.
    xlamem::test::sharding_shape shape;
    shape.nodes = 5000;
    shape.forbidden_share = 0;  // so that presolve finds an allowed assignment exists
    shape.follow_share = 0;
    const auto pre = xlamem::test::presolved_random_problem(5, shape);
    REQUIRE(pre);
    const sh::search_model m(*pre);
    sh::lagrangian_relaxation lr(m);
    const double bound = lr.step(1000.0, 5, xlamem::solve_clock::now() - std::chrono::seconds(1));
    CHECK(bound == -std::numeric_limits<double>::infinity());
  }
}
