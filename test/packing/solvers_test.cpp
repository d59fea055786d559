// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/solvers.hpp: the table of named solvers and `solve`. A toy
// solver added in one row is found by name and alias, listed in the help, solved with, and
// packs the temporary heaps of a plan.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/packing_helpers.hpp"
#include "xlamem/align.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/packing/solvers.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

namespace solvers_test {

using namespace xlamem;

/// The toy: every buffer on top of the one before (always valid, never good).
result<solver_outcome> stack_all(const packing_problem& p, const interval_graph&, const solve_options&) {
  solver_outcome out;
  std::int64_t top = 0;
  for (const auto& b : p.buffers) {
    const auto offset = b.fixed_offset ? *b.fixed_offset : static_cast<std::int64_t>(align_up(static_cast<std::uint64_t>(top), static_cast<std::uint64_t>(b.alignment)));
    out.solution.offsets.push_back(offset);
    top = std::max(top, offset + b.size);
  }
  return out;
}

/// A broken solver: every buffer at offset 0.
result<solver_outcome> all_at_zero(const packing_problem& p, const interval_graph&, const solve_options&) {
  solver_outcome out;
  out.solution.offsets.assign(p.buffers.size(), 0);
  return out;
}

// Adding a solver is this one row.
constexpr auto toy_table = with_solver(packing_solvers, {"tower", "pile", "every buffer on top of the last", solver_family::heuristic, &stack_all});

packing_problem three() {
  packing_problem p;
  p.buffers = {{"a", 0, 2, 8, 1, {}}, {"b", 1, 3, 8, 1, {}}, {"c", 2, 4, 8, 1, {}}};
  return p;
}

/// A problem the sweep does not solve optimally, with thousands of buffers live at once:
/// enough work for every phase to read the clock.
packing_problem busy() {
  std::mt19937_64 rng(7);
  return xlamem::test::packing_helpers::random_problem(rng, 20000, 4000, 1000, false);
}

}  // namespace solvers_test

TEST_SUITE("packing/solvers") {
  using namespace solvers_test;

  TEST_CASE("the table: names, aliases, help, families; the default first") {
    CHECK(packing_solvers.front().name == "search");
    CHECK(find_solver("portfolio")->name == "heuristic");
    CHECK(find_solver("xla-best-fit")->family == solver_family::xla);
    CHECK(find_solver("auto")->family == solver_family::search);
    CHECK(find_solver("skyline")->family == solver_family::heuristic);
    CHECK(find_solver("nope") == nullptr);
    CHECK(solver_names() == "search, heuristic, xla, first-fit, skyline, stack or sweep");
    auto bad = parse_solver("nope");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::invalid_argument);
    CHECK(bad.error().message() == "unknown solver 'nope' (expected search, heuristic, xla, first-fit, skyline, stack or sweep)");
    CHECK(solvers_help().find("heuristic (the best of the fast heuristics; also portfolio)") != std::string::npos);
  }

  TEST_CASE("a toy solver added in one row is found, listed and solved with") {
    static_assert(toy_table.size() == packing_solvers.size() + 1);
    static_assert(find_solver("pile", toy_table) == &toy_table.back());
    CHECK(find_solver("tower") == nullptr);  // the library's table is unchanged
    CHECK(solver_names(toy_table) == "search, heuristic, xla, first-fit, skyline, stack, sweep or tower");
    CHECK(solvers_help(toy_table).find("tower (every buffer on top of the last; also pile)") != std::string::npos);
    auto r = solve(three(), "pile", {}, toy_table);
    REQUIRE(r.has_value());
    CHECK(r->placed());
    CHECK(r->peak == 24);         // stacked
    CHECK(r->max_live == 16);     // two buffers live at a time
    CHECK(r->lower_bound == 16);
    CHECK_FALSE(r->optimal());
    CHECK(r->xla_best_fit_peak == 16);
    CHECK(r->placement.offsets == std::vector<std::int64_t>{0, 8, 16});
    // A capacity the toy misses but the bound allows: out of time, not proven infeasible.
    solve_options o;
    o.capacity = 20;
    auto c = solve(three(), "tower", o, toy_table);
    REQUIRE(c.has_value());
    CHECK(c->status == solve_status::no_answer);
    o.capacity = 10;
    CHECK(solve(three(), "tower", o, toy_table)->status == solve_status::infeasible);
  }

  TEST_CASE("the toy packs the temporary heaps of a plan, never above XLA's best fit") {
    auto m = hlo::parse_module(R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} exponential(p)
  b = f32[64]{0} negate(a)
  c = f32[64]{0} add(a, b)
  ROOT d = f32[64]{0} sine(c)
})", "toy.hlo");
    REQUIRE(m);
    buffer_assignment_options o;
    o.solver = *find_solver("tower", toy_table);
    auto a = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE(a);
    CHECK(a->validate(*m).has_value());
    REQUIRE(a->heaps().size() == 1);
    CHECK(a->heaps().front().solver == "tower");
    o.solver = *find_solver("xla");
    auto x = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE(x);
    CHECK(a->heaps().front().size <= x->heaps().front().size);
  }

  TEST_CASE("solve: the search proves optimality and infeasibility; a broken solver is an internal error") {
    const auto p = xlamem::test::packing_helpers::example12();
    auto r = solve(p, "search");
    REQUIRE(r.has_value());
    CHECK(r->placed());
    CHECK(r->optimal());
    CHECK(r->peak == r->lower_bound);
    CHECK(validate(p, r->placement).has_value());
    CHECK(r->sections > 0);
    solve_options o;
    o.capacity = r->peak - 1;
    o.time_limit = 5;
    auto no = solve(p, "search", o);
    REQUIRE(no.has_value());
    CHECK(no->status == solve_status::infeasible);
    CHECK_FALSE(no->placed());
    CHECK(no->placement.offsets.empty());
    const named_solver broken{"zero", "", "everything at offset 0", solver_family::heuristic, &all_at_zero};
    auto bad = solve(three(), broken);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::internal);
    CHECK(bad.error().message().find("solver 'zero' returned an invalid placement") == 0);
    packing_problem wrong;
    wrong.buffers = {{"x", 3, 1, 8, 1, {}}};
    CHECK_FALSE(solve(wrong, "xla").has_value());
    CHECK(solve(three(), "nope").error().message().find("unknown solver 'nope'") == 0);
  }

  TEST_CASE("the result's shape, as sharding's: the gap, and the seconds to the first and the returned placement") {
    // Every solver on a problem the sweep leaves above the bound, and the search on one it proves.
    const auto p = busy();
    solve_options o;
    o.time_limit = 0.5;
    for (const auto& s : packing_solvers) {
      CAPTURE(s.name);
      auto r = solve(p, s, o);
      REQUIRE(r.has_value());
      REQUIRE(r->placed());
      REQUIRE(r->gap.has_value());
      CHECK(*r->gap == doctest::Approx(static_cast<double>(r->peak - r->lower_bound) / static_cast<double>(r->peak)));
      CHECK(*r->gap >= 0.0);
      CHECK(*r->gap < 1.0);
      CHECK(r->seconds_to_first_feasible >= 0.0);
      CHECK(r->seconds_to_first_feasible <= r->seconds_to_best);
      CHECK(r->seconds_to_best <= r->seconds);
    }
    const auto e = xlamem::test::packing_helpers::example12();
    auto proven = solve(e, "search");
    REQUIRE(proven.has_value());
    CHECK(proven->optimal());
    CHECK(proven->gap == 0.0);
    CHECK(proven->seconds_to_best <= proven->seconds);
    // No placement: no gap, no times.
    solve_options under;
    under.capacity = proven->peak - 1;
    auto none = solve(e, "search", under);
    REQUIRE(none.has_value());
    CHECK(none->status == solve_status::infeasible);
    CHECK_FALSE(none->gap.has_value());
    CHECK(none->seconds_to_first_feasible == -1);
    CHECK(none->seconds_to_best == -1);
    // Counted from the caller's start, as every time reported.
    solve_options early;
    early.started = solve_clock::now() - std::chrono::seconds(2);
    auto counted = solve(three(), "stack", early);
    REQUIRE(counted.has_value());
    CHECK(counted->seconds_to_first_feasible >= 2.0);
    CHECK(counted->seconds >= counted->seconds_to_best);
  }

  TEST_CASE("the time limit is kept by every solver: a deadline already passed gives a valid placement and says how") {
    const auto p = busy();
    solve_options o;
    o.deadline = solve_clock::now();  // passed before anything starts
    for (const auto& s : packing_solvers) {
      CAPTURE(s.name);
      auto r = solve(p, s, o);
      REQUIRE(r.has_value());
      CHECK(r->placed());
      CHECK(validate(p, r->placement).has_value());
      CHECK(r->peak >= r->lower_bound);
      const bool own_deadline = s.name != "stack" && s.name != "sweep";  // those two are the O(n log n) floor
      CHECK(r->stopped_by_time_limit == own_deadline);
      // The greedy passes with no placement in hand fall back on the sweep; the search and the
      // portfolio hold the sweep's placement from their start, and the skyline stacks the rest.
      const bool falls_back = s.name == "xla" || s.name == "first-fit";
      CHECK(r->fallback == (falls_back ? "sweep" : ""));
      CHECK(r->xla_best_fit_peak == -1);  // XLA's baseline: skipped (too many pairs) or out of time
    }
    // Where an offset is fixed the sweep cannot run: the fallback is the stacking.
    auto fixed = p;
    fixed.buffers.push_back({"pinned", 0, 2, 64, 64, std::int64_t{0}});
    auto f = solve(fixed, "first-fit", o);
    REQUIRE(f.has_value());
    CHECK(f->fallback == "stack");
    CHECK(validate(fixed, f->placement).has_value());
    // Without a limit every solver finishes: nothing is said of a limit.
    solve_options none;
    none.time_limit = std::numeric_limits<double>::infinity();
    auto x = solve(p, "xla", none);
    REQUIRE(x.has_value());
    CHECK_FALSE(x->stopped_by_time_limit);
    CHECK(x->fallback.empty());
    CHECK(x->xla_best_fit_peak == x->peak);
  }

  TEST_CASE("a set cancellation flag stops every solver as a passed deadline does: a valid placement, and cancelled") {
    const auto p = busy();
    cancellation_flag stop{true};
    for (const double limit : {std::numeric_limits<double>::infinity(), 60.0}) {  // with no time limit too
      solve_options o;
      o.time_limit = limit;
      o.deadline.cancel = &stop;
      for (const auto& s : packing_solvers) {
        CAPTURE(s.name);
        CAPTURE(limit);
        auto r = solve(p, s, o);
        REQUIRE(r.has_value());
        CHECK(r->cancelled);
        CHECK(r->placed());
        CHECK(validate(p, r->placement).has_value());
        CHECK(r->nodes == 0);  // the search never started
      }
    }
    // A flag never set changes nothing.
    cancellation_flag idle{false};
    solve_options o;
    o.deadline.cancel = &idle;
    auto r = solve(three(), "search", o);
    REQUIRE(r.has_value());
    CHECK_FALSE(r->cancelled);
    CHECK(r->optimal());
  }

  TEST_CASE("a flag set by another thread ends a search that has no time limit, with its best placement so far") {
    // 500 buffers the search cannot close quickly: with no limit it would run on (minutes).
    std::mt19937_64 rng(11);
    const auto p = xlamem::test::packing_helpers::random_problem(rng, 500, 100, 1000, false);
    cancellation_flag stop{false};
    solve_options o;
    o.time_limit = std::numeric_limits<double>::infinity();
    o.deadline.cancel = &stop;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      stop.store(true);
    });
    auto r = solve(p, "search", o);
    canceller.join();
    REQUIRE(r.has_value());
    CHECK(r->cancelled);
    CHECK(r->placed());
    CHECK(validate(p, r->placement).has_value());
    CHECK(r->nodes > 0);  // stopped in the search, not before it
    CHECK_FALSE(r->optimal());
    // The planner's packer with the flag set: every family still gives a valid placement.
    for (const auto& s : packing_solvers) {
      CAPTURE(s.name);
      const named_temp_packer packer{s, 60.0, &stop};
      auto placed = packer(p);
      REQUIRE(placed.has_value());
      CHECK(validate(p, *placed).has_value());
    }
  }

  TEST_CASE("the long phases stop at a passed deadline: XLA's best fit, the skyline, the conflict lists") {
    const auto p = busy();
    const interval_graph g(p);
    const solve_deadline passed = solve_clock::now();
    const auto order = detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration);
    CHECK_FALSE(detail::place_in_order_until(p, g, order, fit_rule::best, passed).has_value());
    CHECK(detail::place_in_order_until(p, g, order, fit_rule::best, std::nullopt).has_value());
    const auto x = xla_best_fit{}.place_by(p, g, passed);
    CHECK_FALSE(x.complete);
    CHECK_FALSE(x.solution.has_value());
    const auto port = portfolio_fit{}.place_by(p, g, passed);
    CHECK_FALSE(port.complete);
    REQUIRE(port.solution.has_value());  // the sweep always completes
    CHECK(validate(p, *port.solution).has_value());
    // A skyline run cut by the deadline stacks the buffers it has left: valid, and not above
    // stacking them all.
    const auto sky = skyline_fit{}.place_by(p, g, passed);
    CHECK_FALSE(sky.complete);
    REQUIRE(sky.solution.has_value());
    CHECK(validate(p, *sky.solution).has_value());
    CHECK(skyline_fit{}.place_by(p, g, std::nullopt).complete);
    auto pinned = p;  // and the stacked buffers clear fixed ones, low in memory
    for (int k = 0; k < 10; ++k) {
      pinned.buffers.push_back({"pinned" + std::to_string(k), 400 * k, 400 * k + 300, 500, 1, std::int64_t{600 * k}});
    }
    const interval_graph pg(pinned);
    const auto cut = skyline_fit{}.place_by(pinned, pg, passed);
    REQUIRE(cut.solution.has_value());
    CHECK(validate(pinned, *cut.solution).has_value());
    CHECK_FALSE(detail::build_conflicts(g.first_sections(), g.last_sections(), std::size_t{1} << 30, passed).has_value());
    const auto lists = detail::build_conflicts(g.first_sections(), g.last_sections(), std::size_t{1} << 30);
    REQUIRE(lists.has_value());
    CHECK(lists->adjacent.size() == 2 * g.edge_count());
  }
}
