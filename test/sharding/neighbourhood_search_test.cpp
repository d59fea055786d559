// SPDX-License-Identifier: Apache-2.0
// The large-neighbourhood search checked on its own against brute force (small generated
// problems): from a fitting labelling no step makes the cost worse or leaves the limit, each
// step's reported gain is exact, the state's bookkeeping matches a rebuilt one, it reaches the
// optimum within a few hundred steps on nearly every problem, a guide is followed without harm,
// and the same seed gives the same steps.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/local_moves.hpp"
#include "xlamem/sharding/neighbourhood_search.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace sh = xlamem::sharding;

namespace {

std::optional<sh::cost_type> optimum_within_limit(const sh::search_model& m) {
  std::optional<sh::cost_type> best;
  xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
    const sh::assignment_state st(m, labels);
    if (st.fits() && (!best || st.cost() < *best)) best = st.cost();
  });
  return best;
}

}  // namespace

TEST_SUITE("sharding/neighbourhood_search") {
  TEST_CASE("never worse, gains exact, the optimum reached") {
    std::mt19937_64 rng(17);
    int runs = 0, reached = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 5 + seed % 5;
      shape.tightness = static_cast<double>(seed % 4) / 3.0;
      shape.extra_edges = static_cast<double>(seed % 3) / 2.0;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      const auto optimum = optimum_within_limit(m);
      if (!optimum) continue;
      sh::assignment_state st(m, xlamem::test::random_labels(m, rng));
      if (!st.fits() && !sh::repair_memory(m, st, xlamem::solve_clock::now() + std::chrono::seconds(30))) continue;
      ++runs;
      sh::neighbourhood_search lns(m, seed);
      if (seed % 3 == 0) lns.set_guide(xlamem::test::random_labels(m, rng));  // a guide, even a poor one, does no harm
      for (int step = 0; step < 400 && st.cost() != *optimum; ++step) {
        const auto before = st.cost();
        const auto gain = lns.step(st);
        INFO("seed ", seed, ", step ", step);
        REQUIRE(st.fits());
        CHECK(gain >= 0);
        CHECK(st.cost() == before - gain);
        CHECK(st.cost() >= *optimum);
      }
      const sh::assignment_state fresh(m, st.labels());
      CHECK(fresh.cost() == st.cost());
      CHECK(fresh.excess() == st.excess());
      reached += st.cost() == *optimum;
      CHECK(lns.stats().steps >= lns.stats().improvements);
    }
    MESSAGE(reached, " of ", runs, " reached the optimum within 400 steps");
    CHECK(runs > 150);
    CHECK(100 * reached >= 99 * runs);
  }

  TEST_CASE("the same seed gives the same steps") {
    xlamem::test::sharding_shape shape;
    shape.nodes = 40;
    const auto pre = xlamem::test::presolved_random_problem(8, shape);
    REQUIRE(pre);
    const sh::search_model m(*pre);
    std::vector<std::vector<std::uint32_t>> runs;
    for (int run = 0; run < 2; ++run) {
      sh::assignment_state st(m, std::vector<std::uint32_t>(m.var_count(), 0));
      (void)sh::repair_memory(m, st, xlamem::solve_clock::now() + std::chrono::seconds(30));
      sh::neighbourhood_search lns(m, 99);
      for (int step = 0; step < 200; ++step) (void)lns.step(st);
      runs.push_back(st.labels());
    }
    CHECK(runs[0] == runs[1]);
  }
}
