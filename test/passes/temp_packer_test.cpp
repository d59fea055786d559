// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/temp_packer.hpp: named_temp_packer by family (XLA's best fit,
// a heuristic row's own placement, the search family's best of the heuristics then the search,
// the exhaustive optimum on small problems), its errors and a set cancellation flag.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/packing.hpp"
#include "support/packing_helpers.hpp"
#include "xlamem/passes/temp_packer.hpp"

namespace temp_packer_test {

using namespace xlamem;

inline int search_calls = 0;

/// The real search, counted.
inline result<solver_outcome> counted_search(const packing_problem& p, const interval_graph& g, const solve_options& o) {
  ++search_calls;
  return detail::run_search(p, g, o);
}

inline result<solver_outcome> failing(const packing_problem&, const interval_graph&, const solve_options&) {
  return make_error(errc::internal, "the solver broke");
}

/// Every buffer at offset 0: invalid wherever two buffers meet.
inline result<solver_outcome> all_at_zero(const packing_problem& p, const interval_graph&, const solve_options&) {
  solver_outcome out;
  out.solution.offsets.assign(p.buffers.size(), 0);
  return out;
}

/// The optimal placement, reported with the status `reported`.
template <solve_status reported>
result<solver_outcome> optimum_saying(const packing_problem& p, const interval_graph& g, const solve_options&) {
  minimize_options o;
  o.time_limit = std::numeric_limits<double>::infinity();
  auto r = minimize_peak(p, g, o);
  return solver_outcome{reported, std::move(r.solution), 0, r.nodes, false};
}

inline named_solver search_row(solver_function run) { return {"probe", "", "a search row of the test", solver_family::search, run}; }

/// A problem whose heuristics both miss the optimum (13; the portfolio reaches 14, XLA's best
/// fit 16), found among random ones (the 20,248th of `random_problem(rng(3), 7, 12, 9, false)`).
inline packing_problem heuristics_miss() {
  using xlamem::test::packing_helpers::buf;
  packing_problem p;
  p.buffers = {buf("b0", 10, 13, 4), buf("b1", 0, 4, 8), buf("b2", 0, 1, 4), buf("b3", 6, 9, 3),
               buf("b4", 10, 13, 1), buf("b5", 3, 7, 5), buf("b6", 8, 11, 7)};
  return p;
}

}  // namespace temp_packer_test

TEST_SUITE("passes/temp_packer") {
  using namespace temp_packer_test;

  TEST_CASE("the concept; a row's name; the default is the search with a second per heap and no flag") {
    static_assert(temp_packer<named_temp_packer>);
    static_assert(temp_packer<xla_best_fit_packer>);
    static_assert(!temp_packer<int>);
    const named_temp_packer fallback;
    CHECK(fallback.name() == "search");
    CHECK(fallback.time_limit == 1.0);
    CHECK(fallback.cancel == nullptr);
    CHECK_FALSE(fallback.places_as_xla());
    const named_temp_packer xla{*find_solver("xla-best-fit")};
    CHECK(xla.name() == "xla");
    CHECK(xla.places_as_xla());
    CHECK_FALSE(named_temp_packer{*find_solver("skyline")}.places_as_xla());
  }

  TEST_CASE("the XLA row places by XLA's best fit, a heuristic row by its own pass") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 100; ++round) {
      const auto p = xlamem::test::packing_helpers::random_problem(rng, 1 + static_cast<int>(rng() % 40), 50, 200, true);
      const interval_graph g(p);
      CAPTURE(round);
      CHECK(named_temp_packer{*find_solver("xla")}(p)->offsets == xla_best_fit{}.place(p, g).offsets);
      CHECK(named_temp_packer{*find_solver("first-fit")}(p)->offsets == first_fit{}.place(p, g).offsets);
      CHECK(named_temp_packer{*find_solver("skyline")}(p)->offsets == skyline_fit{}.place(p, g).offsets);
      CHECK(named_temp_packer{*find_solver("stack")}(p)->offsets == stack_fit{}.place(p, g).offsets);
      CHECK(named_temp_packer{*find_solver("heuristic")}(p)->offsets == portfolio_fit{}.place(p, g).offsets);
    }
  }

  TEST_CASE("the search family with no time: the better of the portfolio and XLA's best fit, the portfolio on ties") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
      const auto p = xlamem::test::packing_helpers::random_problem(rng, 1 + static_cast<int>(rng() % 40), 50, 200, true);
      const interval_graph g(p);
      const auto portfolio = portfolio_fit{}.place(p, g);
      const auto xla = xla_best_fit{}.place(p, g);
      const auto& want = peak_of(p, xla) < peak_of(p, portfolio) ? xla : portfolio;
      auto got = named_temp_packer{*find_solver("search"), 0.0}(p);
      REQUIRE(got.has_value());
      CHECK(got->offsets == want.offsets);
    }
  }

  TEST_CASE("the search family reaches the exhaustively found optimum on small problems") {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 300; ++round) {
      auto p = xlamem::test::packing_helpers::random_problem(rng, 1 + static_cast<int>(rng() % 7), 16, 40, false);
      for (auto& b : p.buffers) b.alignment = std::int64_t{1} << (rng() % 4);
      CAPTURE(round);
      auto got = named_temp_packer{*find_solver("search"), 10.0}(p);
      REQUIRE(got.has_value());
      CHECK(validate(p, *got).has_value());
      CHECK(peak_of(p, *got) == xlamem::test::brute_force_optimum(p));
    }
  }

  TEST_CASE("the search runs only above the bound, and its placement is kept only when valid, answered and strictly better") {
    // At the bound already: the search is not asked.
    packing_problem easy;
    easy.buffers = {xlamem::test::packing_helpers::buf("a", 0, 2, 8), xlamem::test::packing_helpers::buf("b", 2, 4, 8)};
    search_calls = 0;
    REQUIRE(named_temp_packer{search_row(&counted_search)}(easy).has_value());
    CHECK(search_calls == 0);
    const auto p = heuristics_miss();
    const interval_graph g(p);
    const auto optimum = xlamem::test::brute_force_optimum(p);
    const auto portfolio = portfolio_fit{}.place(p, g);
    const auto xla = xla_best_fit{}.place(p, g);
    REQUIRE(optimum == 13);
    REQUIRE(peak_of(p, portfolio) == 14);
    REQUIRE(peak_of(p, xla) == 16);
    const auto heuristics = peak_of(p, xla) < peak_of(p, portfolio) ? xla : portfolio;
    auto searched = named_temp_packer{search_row(&counted_search)}(p);
    REQUIRE(searched.has_value());
    CHECK(search_calls == 1);
    CHECK(peak_of(p, *searched) == optimum);
    CHECK(named_temp_packer{search_row(&optimum_saying<solve_status::feasible>)}(p)->offsets != heuristics.offsets);
    // A search that fails, answers nothing or places wrongly leaves the heuristics' placement.
    CHECK(named_temp_packer{search_row(&failing)}(p)->offsets == heuristics.offsets);
    CHECK(named_temp_packer{search_row(&optimum_saying<solve_status::no_answer>)}(p)->offsets == heuristics.offsets);
    CHECK(named_temp_packer{search_row(&optimum_saying<solve_status::infeasible>)}(p)->offsets == heuristics.offsets);
    CHECK(named_temp_packer{search_row(&all_at_zero)}(p)->offsets == heuristics.offsets);
  }

  TEST_CASE("errors: a problem validate_problem refuses, a row without a function, a heuristic row's own error") {
    packing_problem wrong;
    wrong.buffers = {xlamem::test::packing_helpers::buf("x", 3, 1, 8)};
    auto bad = named_temp_packer{}(wrong);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == validate_problem(wrong).error().code());
    CHECK(bad.error().message() == validate_problem(wrong).error().message());
    const auto p = xlamem::test::packing_helpers::example12();
    auto empty = named_temp_packer{named_solver{"hollow", "", "no function", solver_family::heuristic, nullptr}}(p);
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().code() == errc::invalid_argument);
    CHECK(empty.error().message() == "solver 'hollow' has no function");
    auto broken = named_temp_packer{named_solver{"broken", "", "fails", solver_family::heuristic, &failing}}(p);
    REQUIRE_FALSE(broken.has_value());
    CHECK(broken.error().message() == "the solver broke");
    // A time limit means what it means everywhere: negative and NaN are refused, not read as 0.
    for (const double refused : {-1.0, std::nan("")}) {
      auto r = named_temp_packer{*find_solver("search"), refused}(p);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::invalid_argument);
      CHECK(r.error().message() == time_limit_error(refused));
    }
  }

  TEST_CASE("a set cancellation flag: the XLA row falls back on stacking, the search family keeps the sweep") {
    std::mt19937_64 rng(13);
    const auto p = xlamem::test::packing_helpers::random_problem(rng, 5000, 1000, 1000, false);
    const interval_graph g(p);
    cancellation_flag stop{true};
    auto xla = named_temp_packer{*find_solver("xla"), 1.0, &stop}(p);
    REQUIRE(xla.has_value());
    CHECK(xla->offsets == stack_fit{}.place(p, g).offsets);  // XLA's best fit had no placement
    auto search = named_temp_packer{*find_solver("search"), 60.0, &stop}(p);
    REQUIRE(search.has_value());
    CHECK(validate(p, *search).has_value());
    CHECK(search->offsets == sweep_fit{}.place(p, g).offsets);  // the portfolio's first placement
    cancellation_flag idle{false};
    CHECK(named_temp_packer{*find_solver("xla"), 1.0, &idle}(p)->offsets == xla_best_fit{}.place(p, g).offsets);
  }
}
