// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/packing/packing_report.hpp: what `solve` found, for people and as JSON.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <string>

#include "support/packing_helpers.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/packing/packing_report.hpp"

TEST_SUITE("io/packing_report") {
  using namespace xlamem;

  TEST_CASE("placed: the bound, XLA's baseline, the peak, the result line, the JSON") {
    packing_problem p;
    p.buffers = {{"a", 0, 2, 2048, 1, {}}, {"b", 1, 3, 1024, 1, {}}, {"c", 2, 4, 2048, 1, {}}};
    auto r = solve(p, "search");
    REQUIRE(r.has_value());
    const packing_report rep{"p.csv", &p, "search", {}, *r};
    const auto t = packing_text(rep);
    CHECK(t.rfind("p.csv: 3 buffers, time [0, 4), ", 0) == 0);
    CHECK(t.find("  lower bound (max live bytes)   3.00 KiB (3072 B)\n") != std::string::npos);
    CHECK(t.find("  XLA best fit (baseline)        3.00 KiB (3072 B)  +0.0% over the bound\n") != std::string::npos);
    CHECK(t.find("  search peak                    3.00 KiB (3072 B)  +0.0% over the bound, 0.0% below XLA best fit (optimal)\n") !=
          std::string::npos);
    CHECK(packing_result_line(*r).rfind("peak=3072 lower_bound=3072 optimal=yes seconds=", 0) == 0);
    const auto j = json_document("pack", rep);
    CHECK(j.find("\"status\": \"optimal\",\n \"peak\": 3072,") != std::string::npos);
    CHECK(j.find("\"capacity\"") == std::string::npos);
    CHECK(packing_svg(rep).find("p.csv: 3 buffers, peak 3072 B, lower bound 3072 B (optimal)") != std::string::npos);
  }

  TEST_CASE("not placed: proven infeasible, null peak, the capacity in the JSON") {
    packing_problem p;
    p.buffers = {{"a", 0, 2, 8, 1, {}}, {"b", 1, 3, 8, 1, {}}};
    solve_options o;
    o.capacity = 8;
    auto r = solve(p, "first-fit", o);
    REQUIRE(r.has_value());
    CHECK(r->status == solve_status::infeasible);
    const packing_report rep{"p.csv", &p, "first-fit", o, *r};
    CHECK(packing_text(rep).find("  no placement fits the capacity (proven)\n") != std::string::npos);
    CHECK(packing_result_line(*r).rfind("peak=none lower_bound=16 optimal=no", 0) == 0);
    const auto j = json_document("pack", rep);
    CHECK(j.find("\"status\": \"infeasible\",\n \"peak\": null,") != std::string::npos);
    CHECK(j.find("\"capacity\": 8") != std::string::npos);
  }

  TEST_CASE("cut by the time limit: status time_limit, the fallback named in the text, the line and the JSON") {
    std::mt19937_64 rng(7);  // thousands live at once: enough work for the deadline to be read
    const auto p = xlamem::test::packing_helpers::random_problem(rng, 20000, 4000, 1000, false);
    solve_options o;
    o.deadline = solve_clock::now();
    auto r = solve(p, "first-fit", o);
    REQUIRE(r.has_value());
    REQUIRE(r->placed());
    CHECK(status_name(*r) == "time_limit");
    const packing_report rep{"p.csv", &p, "first-fit", o, *r};
    CHECK(packing_text(rep).find("  stopped by the time limit (10.0 s): placed by the fallback 'sweep' (O(n log n)), "
                                 "as first-fit had not finished\n") != std::string::npos);
    CHECK(packing_result_line(*r).find(" status=time_limit\n") != std::string::npos);
    const auto j = json_document("pack", rep);
    CHECK(j.find("\"status\": \"time_limit\",") != std::string::npos);
    CHECK(j.find("\"fallback\": \"sweep\",") != std::string::npos);
    o.deadline.reset();
    o.time_limit = std::numeric_limits<double>::infinity();
    auto done = solve(p, "first-fit", o);
    REQUIRE(done.has_value());
    CHECK((status_name(*done) == "feasible" || status_name(*done) == "optimal"));
    CHECK(json_document("pack", packing_report{"p.csv", &p, "first-fit", o, *done}).find("\"fallback\": null,") !=
          std::string::npos);
  }
}
