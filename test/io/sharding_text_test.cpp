// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/sharding/sharding_text.hpp: a solve and an evaluation for people (every
// line and its variants, file names made safe for a terminal) and their JSON (128-bit sums as strings).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/sharding/sharding_text.hpp"
#include "xlamem/sharding/evaluate.hpp"

using namespace xlamem;

namespace {

// Two nodes over [0, 2) and [1, 3) (the first with a forbidden second strategy), one edge, limit 8.
sharding::problem two_nodes() {
  sharding::problem p;
  p.add_node({0, 2}, {5, sharding::forbidden_cost}, {4, 1});
  p.add_node({1, 3}, {3}, {6});
  p.add_edge(0, 1, {2, 9});
  p.limit = 8;
  return p;
}

// A solve stopped by its time limit with a bound 25 % below the cost.
sharding::solve_result timed_out() {
  sharding::solve_result r;
  r.status = solve_status::time_limit;
  r.cost = sharding::wide_cost(1000);
  r.feasible = true;
  r.peak = sharding::wide_cost(7);
  r.lower_bound = sharding::wide_cost(750);
  r.gap = 0.25;
  r.seconds = 1.5;
  r.seconds_to_first_feasible = 0.5;
  r.seconds_to_best = 1.0;
  r.variables = 3;
  r.relaxation_steps = 40;
  r.search.steps = 12;
  return r;
}

}  // namespace

TEST_SUITE("io/sharding_text") {
  TEST_CASE("the solve for people: sizes, pacing, status, cost, peak, bound and gap, times, the output") {
    const auto p = two_nodes();
    const auto r = timed_out();
    sharding_report x{"p.json", &p, &r, 4, 1.5, 0.125, std::string("p.sol"), std::uint64_t{1000}, 7};
    CHECK(sharding_text(x) ==
          "p.json: 2 nodes, 1 edges, limit 8; presolved to 3 variables; 4 threads, 1.50 s, at most 1000 steps, seed 7\n"
          "status:      time_limit\n"
          "cost:        1000\n"
          "peak usage:  7 of the limit 8 (within the limit)\n"
          "lower bound: 750 (gap 25.00 %)\n"
          "time:        read 0.12 s, first feasible 0.50 s, best 1.00 s, total 1.50 s\n"
          "wrote p.sol\n");
    // One thread, no step budget (no seed then), no output.
    x.threads = 1;
    x.work_limit = std::nullopt;
    x.output = std::nullopt;
    const auto text = sharding_text(x);
    CHECK(text.rfind("p.json: 2 nodes, 1 edges, limit 8; presolved to 3 variables; 1 thread, 1.50 s\n", 0) == 0);
    CHECK(text.find("wrote") == std::string::npos);
  }

  TEST_CASE("the solve's variants: no bound, over the limit with forbidden choices, an internal error") {
    const auto p = two_nodes();
    auto r = timed_out();
    r.lower_bound.reset();
    r.gap.reset();
    const sharding_report x{"p.json", &p, &r, 1, 2, 0, std::nullopt, std::nullopt, 1};
    CHECK(sharding_text(x).find("\nlower bound: unknown\n") != std::string::npos);
    r.feasible = false;
    r.status = solve_status::no_answer;
    r.forbidden_choices = 3;
    r.peak = sharding::wide_cost(11);
    r.internal_error = "the lower bound 1500 is above the cost 1000";
    const auto text = sharding_text(x);
    CHECK(text.find("status:      no_answer\n") != std::string::npos);
    CHECK(text.find("cost:        1000 (3 forbidden choices)\npeak usage:  11 of the limit 8 (over the limit)\n") !=
          std::string::npos);
    CHECK(text.find("\nlower bound:") == std::string::npos);  // nothing to say of a bound for no answer
    CHECK(text.find("internal error: the lower bound 1500 is above the cost 1000\n") != std::string::npos);
    // A cost past int64 (forbidden choices add up) is written whole.
    r.cost = sharding::wide_cost(sharding::forbidden_cost) + sharding::wide_cost(INT64_MAX);
    CHECK(sharding_text(x).find("cost:        10223372036854775807 (3 forbidden choices)") != std::string::npos);
  }

  TEST_CASE("file names reach the terminal only escaped; the JSON escapes them its way") {
    const auto p = two_nodes();
    const auto r = timed_out();
    const sharding_report x{"evil\x1b]0;x\x07.json", &p, &r, 1, 2, 0, std::string("out\x1b[2J"), std::nullopt, 1};
    const auto text = sharding_text(x);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\x07') == std::string::npos);
    CHECK(text.rfind("evil\\x1b]0;x\\x07.json: 2 nodes", 0) == 0);
    CHECK(text.find("wrote out\\x1b[2J\n") != std::string::npos);
    const auto json = to_json(x);
    CHECK(json.find("\"file\":\"evil\\u001b]0;x\\u0007.json\"") != std::string::npos);
    CHECK(json.find('\x1b') == std::string::npos);
  }

  TEST_CASE("the solve's JSON: every field in order, sums as decimal strings, null for what is unknown") {
    const auto p = two_nodes();
    auto r = timed_out();
    const sharding_report x{"p.json", &p, &r, 4, 1.5, 0.125, std::string("p.sol"), std::uint64_t{1000}, 7};
    CHECK(to_json(x) ==
          R"({"file":"p.json","status":"time_limit","cost":"1000","feasible":true,"forbidden_choices":0,"peak":"7",)"
          R"("limit":8,"lower_bound":"750","gap":0.25,"internal_error":null,"seconds":1.5,"seconds_reading":0.125,)"
          R"("seconds_to_first_feasible":0.5,"seconds_to_best":1.0,"time_limit":1.5,"threads":4,"work_limit":1000,)"
          R"("seed":7,"nodes":2,"edges":1,"variables_after_presolve":3,"relaxation_steps":40,"search_steps":12,)"
          R"("output":"p.sol"})");
    r.lower_bound.reset();
    r.gap.reset();
    r.internal_error = "bound above cost";
    const sharding_report y{"p.json", &p, &r, 1, 2, 0, std::nullopt, std::nullopt, 1};
    const auto json = to_json(y);
    CHECK(json.find(R"("lower_bound":null,"gap":null,"internal_error":"bound above cost",)") != std::string::npos);
    CHECK(json.find(R"("work_limit":null,)") != std::string::npos);
    CHECK(json.ends_with(R"("output":null})"));
  }

  TEST_CASE("an evaluation for people and programs: over the limit from its first step, or within it") {
    const auto p = two_nodes();
    auto over = sharding::evaluate(p, sharding::assignment{0, 0});
    REQUIRE_MESSAGE(over, over.error().to_string());
    const sharding_evaluation_report x{"p.json", "s.txt", &p, &*over};
    CHECK(sharding_evaluation_text(x) ==
          "cost:        10\n"
          "peak usage:  10 at time step 1 of the limit 8 (over the limit from time step 1)\n");
    CHECK(to_json(x) ==
          R"({"file":"p.json","solution":"s.txt","cost":"10","node_cost":"8","edge_cost":"2","feasible":false,)"
          R"("forbidden_choices":0,"peak":"10","peak_time":1,"first_over_limit":1,"limit":8})");
    auto forbidden = sharding::evaluate(p, sharding::assignment{1, 0});
    REQUIRE_MESSAGE(forbidden, forbidden.error().to_string());
    const sharding_evaluation_report y{"p.json", "s.txt", &p, &*forbidden};
    CHECK(sharding_evaluation_text(y) ==
          "cost:        1000000000000000012 (1 forbidden choices)\n"
          "peak usage:  7 at time step 1 of the limit 8 (within the limit)\n");
    CHECK(to_json(y).find(R"("feasible":true,"forbidden_choices":1,"peak":"7","peak_time":1,"first_over_limit":null,)") !=
          std::string::npos);
  }
}
