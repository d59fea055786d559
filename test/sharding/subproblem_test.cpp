// SPDX-License-Identifier: Apache-2.0
// subproblem_search, the exact step of the neighbourhood search, against brute force: with every
// other variable fixed, the labels it gives the chosen variables cost exactly the least that any
// fitting labelling of them costs (from a state over the limit too), it changes nothing when the
// current labels are already best, it says `complete` only when it finished, and a node limit of
// 1 leaves the state as it was or better, never worse.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/local_moves.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/search_model.hpp"
#include "xlamem/sharding/subproblem.hpp"

namespace sh = xlamem::sharding;

namespace {

// The least cost of a fitting state over the labellings of `vars`, the rest as in `st`.
std::optional<sh::cost_type> best_by_enumeration(const sh::search_model& m, const sh::assignment_state& st,
                                                 const std::vector<std::uint32_t>& vars) {
  std::vector<std::size_t> k(vars.size());
  for (std::size_t i = 0; i < vars.size(); ++i) k[i] = m.labels(vars[i]);
  std::optional<sh::cost_type> best;
  xlamem::test::for_each_labelling(k, [&](const std::vector<std::uint32_t>& chosen) {
    auto labels = st.labels();
    for (std::size_t i = 0; i < vars.size(); ++i) labels[vars[i]] = chosen[i];
    const sh::assignment_state other(m, labels);
    if (other.fits() && (!best || other.cost() < *best)) best = other.cost();
  });
  return best;
}

}  // namespace

TEST_SUITE("sharding/subproblem") {
  TEST_CASE("the chosen variables' labels are the cheapest that fit") {
    std::mt19937_64 rng(9);
    int calls = 0, improved = 0, from_over = 0;
    for (std::uint64_t seed = 1; seed <= 400; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 8 + seed % 30;
      shape.tightness = static_cast<double>(seed % 5) / 4.0;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape, 2);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::subproblem_search search(m);
      sh::assignment_state st(m, xlamem::test::random_labels(m, rng));
      for (int round = 0; round < 4; ++round) {
        std::vector<std::uint32_t> all(m.var_count());
        std::iota(all.begin(), all.end(), 0u);
        std::shuffle(all.begin(), all.end(), rng);
        std::vector<std::uint32_t> vars(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(all.size(), 2 + rng() % 5)));
        const bool over = !st.fits();
        const auto before = st.cost();
        const auto best = best_by_enumeration(m, st, vars);
        const auto out = search.improve(st, vars, 1'000'000);
        ++calls;
        INFO("seed ", seed, ", round ", round);
        const sh::assignment_state fresh(m, st.labels());
        CHECK(fresh.cost() == st.cost());
        CHECK(fresh.excess() == st.excess());
        // The search answers for the rows its variables cover: from a state over the limit on
        // other rows too, no labelling of them makes the whole fit, and it may still move them
        // to labels that fit where they live (and run out of rounds adding rows).
        if (!best && over) continue;
        REQUIRE(out.complete);
        if (!best) {  // the state fits, so its own labels do: never here
          FAIL("no fitting labelling from a fitting state");
          continue;
        }
        CHECK(st.fits());
        CHECK(st.cost() == (over ? *best : std::min(before, *best)));
        CHECK(out.improved == (over || *best < before));
        if (out.improved) CHECK(out.gain == before - st.cost());
        improved += out.improved;
        from_over += over && out.improved;
      }
    }
    MESSAGE(calls, " calls, ", improved, " improved, ", from_over, " of them from a state over the limit");
    CHECK(calls > 1000);
    CHECK(improved > calls / 10);
    CHECK(from_over > 20);
  }

  TEST_CASE("a node limit of 1 over every variable: never worse, and not complete") {
    int incomplete = 0;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 12;
      const auto pre = xlamem::test::presolved_random_problem(seed, shape, 4);
      if (!pre) continue;
      const sh::search_model m(*pre);
      sh::subproblem_search search(m);
      sh::assignment_state st(m, std::vector<std::uint32_t>(m.var_count(), 0));
      if (!st.fits() && !sh::repair_memory(m, st, xlamem::solve_clock::now() + std::chrono::seconds(30))) continue;
      const auto before = st.cost();
      std::vector<std::uint32_t> vars(m.var_count());
      std::iota(vars.begin(), vars.end(), 0u);
      const auto out = search.improve(st, vars, 1);
      CHECK(st.fits());
      CHECK(st.cost() <= before);
      incomplete += !out.complete;
    }
    CHECK(incomplete > 20);
  }
}
