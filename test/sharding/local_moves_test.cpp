// SPDX-License-Identifier: Apache-2.0
// The single-variable moves checked on small generated problems against brute force:
// repair_memory brings a labelling within the limit whenever it says so (and says so on most
// problems where some labelling fits), never breaking the state's bookkeeping; improve_single
// never raises the cost, keeps the fit, reports its gain exactly and stops at a labelling no
// single fitting relabelling improves; a deadline in the past stops both at once.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/local_moves.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace sh = xlamem::sharding;

namespace {

const auto later = [] { return xlamem::solve_clock::now() + std::chrono::seconds(30); };

// Whether some labelling of the model fits the limit (brute force).
bool some_labelling_fits(const sh::search_model& m) {
  bool any = false;
  xlamem::test::for_each_labelling(xlamem::test::label_counts(m), [&](const std::vector<std::uint32_t>& labels) {
    any = any || sh::assignment_state(m, labels).fits();
  });
  return any;
}

}  // namespace

TEST_SUITE("sharding/local_moves") {
  TEST_CASE("repair_memory: within the limit whenever it says so") {
    std::mt19937_64 rng(3);
    int repaired = 0, could_fit = 0, declined = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 5 + seed % 4;
      shape.tightness = 0.05 + 0.3 * static_cast<double>(seed % 4) / 3.0;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::assignment_state st(m, xlamem::test::random_labels(m, rng));
      if (st.fits()) continue;
      const bool fits_somewhere = some_labelling_fits(m);
      could_fit += fits_somewhere;
      INFO("seed ", seed);
      const bool ok = sh::repair_memory(m, st, later());
      CHECK(ok == st.fits());
      if (ok) {
        ++repaired;
        CHECK(fits_somewhere);
      } else {
        ++declined;
      }
      const sh::assignment_state fresh(m, st.labels());  // the bookkeeping matches a rebuilt state
      CHECK(fresh.cost() == st.cost());
      CHECK(fresh.excess() == st.excess());
    }
    MESSAGE(repaired, " repaired, ", declined, " declined, of which ", could_fit - repaired, " could fit");
    CHECK(repaired > 50);
    // One relabelling at a time can get stuck; it should not be stuck often.
    CHECK(10 * repaired >= 7 * could_fit);
  }

  TEST_CASE("improve_single: never worse, a single-move local optimum, the gain exact") {
    std::mt19937_64 rng(5);
    int improved = 0, runs = 0;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 6 + seed % 25;
      shape.tightness = static_cast<double>(seed % 5) / 4.0;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::assignment_state st(m, xlamem::test::random_labels(m, rng));
      if (!st.fits() && !sh::repair_memory(m, st, later())) continue;
      ++runs;
      const auto before = st.cost();
      const auto gain = sh::improve_single(m, st, later());
      INFO("seed ", seed);
      CHECK(gain >= 0);
      CHECK(st.cost() == before - gain);
      CHECK(st.fits());
      improved += gain > 0;
      const sh::assignment_state fresh(m, st.labels());
      CHECK(fresh.cost() == st.cost());
      for (std::size_t v = 0; v < m.var_count(); ++v) {
        for (std::uint32_t s = 0; s < m.labels(v); ++s) {
          auto moved = st.labels();
          moved[v] = s;
          const sh::assignment_state other(m, moved);
          CHECK_MESSAGE((!other.fits() || other.cost() >= st.cost()), "relabelling variable ", v, " to ", s, " is cheaper and fits");
        }
      }
    }
    CHECK(runs > 150);
    CHECK(improved > runs / 2);
  }

  TEST_CASE("a deadline in the past: no move") {
    const auto p = xlamem::test::random_sharding_problem(11, {});
    const auto pre = sh::presolve(p);
    REQUIRE(pre.has_permitted_assignment);
    const sh::search_model m(pre);
    sh::assignment_state st(m, std::vector<std::uint32_t>(m.var_count(), 0));
    const auto labels = st.labels();
    const auto past = xlamem::solve_clock::now() - std::chrono::seconds(1);
    CHECK(sh::improve_single(m, st, past) == 0);
    if (!st.fits()) CHECK_FALSE(sh::repair_memory(m, st, past));
    CHECK(st.labels() == labels);
  }
}
