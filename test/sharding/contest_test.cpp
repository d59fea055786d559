// SPDX-License-Identifier: Apache-2.0
// The solver on the contest's own instances (../shared/data/iopddl, skipped when absent): the
// proven optimum of B and the best known cost of G in short solves, and the committed
// solutions that cost less than the best known (test/data/sharding/*.sol.gz) re-checked.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "support/common.hpp"
#include "support/sharding_generators.hpp"
#include "xlamem/io/codec/gzip.hpp"
#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/io/sharding/iopddl_solution.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/solver.hpp"

namespace sh = xlamem::sharding;

namespace {

std::filesystem::path instance(char letter) {
  const auto dir = xlamem::test::shared_data_dir();
  if (dir.empty()) return {};
  return dir / "iopddl" / (std::string("asplos-2025-iopddl-") + letter + ".json.gz");
}

sh::solve_options seconds(double s) {
  sh::solve_options o;
  o.time_limit = s;
  o.threads = 2;
  return o;
}

}  // namespace

TEST_SUITE("sharding/contest") {
  TEST_CASE("the format's example: the brute-force optimum, proven") {
    const auto dir = xlamem::test::shared_data_dir();
    if (dir.empty()) {
      MESSAGE("skipped: ../shared/data/iopddl is absent");
      return;
    }
    auto p = xlamem::read_iopddl((dir / "iopddl" / "example.json").string());
    REQUIRE_MESSAGE(p, p.error().to_string());
    const auto best = xlamem::test::brute_force_optimum(*p);
    REQUIRE(best);
    const auto r = sh::solve(*p, seconds(2.0));
    REQUIRE(r);
    CHECK(r->status == xlamem::solve_status::optimal);
    CHECK(r->cost == *best);
    CHECK(r->lower_bound == *best);
  }

  TEST_CASE("B: the proven optimum (532,843, Gurobi) in a short solve") {
    const auto path = instance('B');
    if (path.empty()) {
      MESSAGE("skipped: ../shared/data/iopddl is absent");
      return;
    }
    auto p = xlamem::read_iopddl(path.string());
    REQUIRE_MESSAGE(p, p.error().to_string());
    const auto r = sh::solve(*p, seconds(8.0));
    REQUIRE(r);
    CHECK(r->feasible);
    CHECK(r->forbidden_choices == 0);
    CHECK(r->cost == sh::wide_cost(532843));
    CHECK(r->lower_bound <= r->cost);
    auto ev = sh::evaluate(*p, r->strategies);
    REQUIRE(ev);
    CHECK(ev->cost == r->cost);
  }

  TEST_CASE("G: the best known cost (217,039) in a short solve") {
    const auto path = instance('G');
    if (path.empty()) {
      MESSAGE("skipped: ../shared/data/iopddl is absent");
      return;
    }
    auto p = xlamem::read_iopddl(path.string());
    REQUIRE_MESSAGE(p, p.error().to_string());
    const auto r = sh::solve(*p, seconds(8.0));
    REQUIRE(r);
    CHECK(r->feasible);
    CHECK(r->cost <= sh::wide_cost(217039));
  }

  TEST_CASE("committed solutions below the best known cost") {
    // Instance, best known cost (docs: ../shared/data/iopddl/README.md), our solution file.
    const struct {
      char letter;
      std::int64_t best_known;
    } cases[] = {{'A', 6548641531}, {'D', 313220105872}, {'K', 2257227094}, {'L', 1970993742}, {'Q', 526776842042}};
    for (const auto& c : cases) {
      const auto path = instance(c.letter);
      if (path.empty()) {
        MESSAGE("skipped: ../shared/data/iopddl is absent");
        return;
      }
      const auto sol = std::filesystem::path(XLAMEM_TEST_SOURCE_DIR) / "data" / "sharding" /
                       (std::string(1, c.letter) + ".sol.gz");
      auto p = xlamem::read_iopddl(path.string());
      REQUIRE_MESSAGE(p, p.error().to_string());
      auto text = xlamem::inflate_all(xlamem::test::read_text(sol));
      REQUIRE_MESSAGE(text, sol.string());
      auto a = xlamem::parse_iopddl_solution(*text, *p, sol.string());
      REQUIRE_MESSAGE(a, a.error().to_string());
      auto ev = sh::evaluate(*p, *a);
      REQUIRE(ev);
      CHECK_MESSAGE(ev->feasible, c.letter);
      CHECK_MESSAGE(ev->forbidden_choices == 0, c.letter);
      CHECK_MESSAGE(ev->cost < sh::wide_cost(c.best_known), c.letter, ": ", ev->cost.to_string());
      MESSAGE(c.letter, ": ", ev->cost.to_string(), " < best known ", c.best_known);
    }
  }
}
