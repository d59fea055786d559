// SPDX-License-Identifier: Apache-2.0
// The deadline in every phase of the sharding solver: reading stops with deadline_exceeded (the
// CLI's "no answer"), presolve and relaxation steps stop where it passes, a solve whose deadline
// has already passed still returns the first answer (every node at its least usage, within the
// limit), and a deadline that does not pass changes nothing (presolve of the contest's
// instances, the format's example solved to its proven optimum).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "support/common.hpp"
#include "support/sharding_generators.hpp"
#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/sharding/lagrangian.hpp"
#include "xlamem/sharding/solver.hpp"

namespace sh = xlamem::sharding;

namespace {

// Twenty thousand nodes of up to six strategies over 5,000 time steps, few follow edges.
sh::problem large_problem() {
  return xlamem::test::random_sharding_problem(11, {20000, 6, 5000, 0.05});
}

xlamem::solve_deadline passed() { return xlamem::solve_clock::now() - std::chrono::seconds(1); }
xlamem::solve_deadline far_away() { return xlamem::solve_clock::now() + std::chrono::hours(1); }


}  // namespace

TEST_SUITE("sharding/deadline") {
  TEST_CASE("reading stops with deadline_exceeded once the deadline has passed") {
    const auto dir = xlamem::test::shared_data_dir();
    if (dir.empty()) {
      MESSAGE("skipped: ../shared/data/iopddl is absent");
      return;
    }
    const auto path = (dir / "iopddl" / "example.json").string();
    const auto cut = xlamem::read_iopddl(path, xlamem::iopddl_limits(), passed());
    REQUIRE_FALSE(cut);
    CHECK(cut.error().code() == xlamem::errc::deadline_exceeded);
    CHECK(cut.error().message().find("time limit") != std::string::npos);
    const auto whole = xlamem::read_iopddl(path, xlamem::iopddl_limits(), far_away());
    REQUIRE_MESSAGE(whole, whole.error().to_string());
    CHECK(whole->node_count() == 5);
  }

  TEST_CASE("presolve and a relaxation step stop where the deadline passes") {
    const auto p = large_problem();
    const auto cut = sh::presolve(p, passed());
    CHECK_FALSE(cut.complete);
    const auto whole = sh::presolve(p, far_away());
    REQUIRE(whole.complete);
    const auto plain = sh::presolve(p);
    CHECK(whole.var_count() == plain.var_count());
    CHECK(whole.edges.size() == plain.edges.size());
    const sh::search_model model(whole);
    sh::lagrangian_relaxation lr(model);
    CHECK(lr.step(0.0, 5, passed()) == -std::numeric_limits<double>::infinity());
    CHECK(lr.step(0.0, 5, far_away()) > -std::numeric_limits<double>::infinity());
  }

  TEST_CASE("a solve past its deadline returns the least-usage answer at once, within the limit") {
    const auto p = large_problem();
    sh::solve_options o;
    o.deadline = passed();
    o.threads = 2;
    const auto r = sh::solve(p, o);
    REQUIRE(r);
    CHECK(r->variables == 0);  // presolve was cut: nothing after it ran
    REQUIRE(r->strategies.size() == p.node_count());
    CHECK(r->feasible);  // least usage everywhere fits whenever anything does
    // (it may use a forbidden choice here: the random problem forbids some least-usage pairs)
    CHECK((r->forbidden_choices > 0 || r->seconds_to_first_feasible >= 0));
    CHECK_FALSE(r->lower_bound.has_value());  // no relaxation ran
    const auto scored = sh::evaluate(p, r->strategies);
    REQUIRE(scored);
    CHECK(scored->cost == r->cost);
  }

  TEST_CASE("a deadline that does not pass changes nothing on the contest's instances") {
    const auto dir = xlamem::test::shared_data_dir();
    if (dir.empty()) {
      MESSAGE("skipped: ../shared/data/iopddl is absent");
      return;
    }
    for (const char letter : {'B', 'G', 'V'}) {
      const auto path = dir / "iopddl" / (std::string("asplos-2025-iopddl-") + letter + ".json.gz");
      auto p = xlamem::read_iopddl(path.string(), xlamem::iopddl_limits(), far_away());
      REQUIRE_MESSAGE(p, p.error().to_string());
      const auto with = sh::presolve(*p, far_away());
      const auto without = sh::presolve(*p);
      CAPTURE(letter);
      CHECK(with.complete);
      CHECK(with.var_count() == without.var_count());
      CHECK(with.edges.size() == without.edges.size());
      CHECK(with.constant_cost == without.constant_cost);
      CHECK(with.stats.merged == without.stats.merged);
      CHECK(with.stats.eliminated == without.stats.eliminated);
    }
    // The format's example through the deadline: proven optimal as before (15 + 55 + 45 + ...).
    auto example = xlamem::read_iopddl((dir / "iopddl" / "example.json").string());
    REQUIRE(example);
    sh::solve_options o;
    o.threads = 1;
    o.deadline = far_away();
    const auto r = sh::solve(*example, o);
    REQUIRE(r);
    CHECK(r->status == xlamem::solve_status::optimal);
    CHECK(r->cost == *xlamem::test::brute_force_optimum(*example));
  }
}
