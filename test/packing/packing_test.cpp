// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/packing.hpp, the umbrella header: it alone declares what every
// packing header it promises does (header isolation compiles it alone), and they work together.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "xlamem/packing/packing.hpp"

namespace packing_umbrella_test {

using namespace xlamem;

// One name of each header the umbrella includes.
static_assert(std::is_class_v<packing_problem>);                         // problem.hpp
static_assert(std::is_class_v<interval_graph>);                          // interval_graph.hpp
static_assert(std::is_class_v<detail::placed_index>);                    // interval_index.hpp
static_assert(std::is_class_v<solve_deadline>);                          // deadline.hpp
static_assert(packing_heuristic<portfolio_fit>);                         // heuristics.hpp
static_assert(std::is_class_v<xla_best_fit_packer>);                     // xla_best_fit.hpp
static_assert(std::is_class_v<minimize_options>);                        // search.hpp
static_assert(std::is_class_v<strong_bound_options>);                    // strong_lower_bound.hpp
static_assert(packing_solvers.front().name == "search");                 // solvers.hpp
static_assert(std::is_same_v<decltype(&aligned_lower_bound), std::int64_t (*)(const packing_problem&, std::int64_t)>);  // aligned_lower_bound.hpp

}  // namespace packing_umbrella_test

TEST_SUITE("packing/packing") {
  using namespace xlamem;

  TEST_CASE("the umbrella's parts together: bounds below the optimum, every solver at or above it") {
    // MiniMalloc's README example: 12 is optimal, max live bytes 12 too.
    packing_problem p;
    const std::int64_t lives[][2] = {{0, 3}, {3, 9}, {0, 9}, {9, 21}, {0, 21}};
    for (const auto& live : lives) {
      interval_buffer b;
      b.id = "b" + std::to_string(p.buffers.size());
      b.lower = live[0];
      b.upper = live[1];
      b.size = 4;
      p.buffers.push_back(b);
    }
    REQUIRE(validate_problem(p).has_value());
    const interval_graph g(p);
    CHECK(g.section_count() == 3);
    CHECK(lower_bound(p) == 12);
    CHECK(temp_lower_bound(p) == 12);
    auto strong = strong_lower_bound(p);
    REQUIRE(strong.has_value());
    CHECK(strong->lower_bound == 12);
    auto best = minimize_peak(p);
    REQUIRE(best.has_value());
    CHECK(best->status == solve_status::optimal);
    CHECK(best->peak == 12);
    for (const auto& s : packing_solvers) {
      CAPTURE(s.name);
      auto r = solve(p, s);
      REQUIRE(r.has_value());
      CHECK(r->placed());
      CHECK(validate(p, r->placement).has_value());
      CHECK(r->peak >= 12);
    }
    CHECK(peak_of(p, xla_best_fit{}.place(p, g)) >= 12);
  }
}
