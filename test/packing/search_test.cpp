// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/search.hpp.
#include <doctest/doctest.h>

#include <limits>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/search") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("decision search matches brute force on small random problems") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 150; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 5), 10, 6, false);
      const auto opt = test::brute_force_optimum(p);
      search_options o;
      o.time_limit = 10;
      o.capacity = opt;
      const auto yes = pack_within(p, o);
      REQUIRE(yes.has_value());
      CHECK(yes->status == solve_status::feasible);
      CHECK(validate(p, yes->solution).has_value());
      CHECK(peak_of(p, yes->solution) <= opt);
      o.capacity = opt - 1;
      const auto no = pack_within(p, o);
      REQUIRE(no.has_value());
      CHECK(no->status == solve_status::infeasible);
    }
  }

  TEST_CASE("minimize_peak proves the optimum of small problems") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 60; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 5), 12, 8, false);
      minimize_options o;
      o.time_limit = 10;
      const auto r = minimize_peak(p, o);
      REQUIRE(r.has_value());
      CHECK(r->status == solve_status::optimal);
      CHECK(validate(p, r->solution).has_value());
      CHECK(r->optimal);
      CHECK(r->peak == test::brute_force_optimum(p));
      CHECK(r->lower_bound == r->peak);
    }
  }

  TEST_CASE("property: every placement of the search passes validate (alignment, fixed, zero sizes)") {
    std::mt19937_64 rng(13);
    for (int round = 0; round < 80; ++round) {
      const auto p = random_problem(rng, 1 + static_cast<int>(rng() % 30), 40, 32, true);
      minimize_options o;
      o.time_limit = 0.05;
      const auto r = minimize_peak(p, o);
      REQUIRE(r.has_value());
      REQUIRE(has_answer(r->status));
      CHECK(validate(p, r->solution).has_value());
      CHECK(r->peak <= peak_of(p, xla_best_fit{}.place(p, interval_graph(p))));
      CHECK(r->lower_bound <= r->peak);
      search_options so;
      so.capacity = r->peak;
      so.time_limit = 0.05;
      const auto d = pack_within(p, so);
      REQUIRE(d.has_value());
      CHECK(d->status == solve_status::feasible);
      CHECK(validate(p, d->solution).has_value());
      CHECK(peak_of(p, d->solution) <= r->peak);
    }
  }

  TEST_CASE("the search respects fixed offsets as obstacles") {
    packing_problem p;
    p.buffers = {buf("fixed", 0, 10, 4), buf("a", 0, 10, 4), buf("b", 0, 5, 4), buf("c", 5, 10, 4)};
    p.buffers[0].fixed_offset = 4;
    search_options o;
    o.capacity = 12;
    const auto r = pack_within(p, o);
    REQUIRE(r.has_value());
    REQUIRE(r->status == solve_status::feasible);
    CHECK(r->solution.offsets[0] == 4);
    CHECK(validate(p, r->solution).has_value());
    o.capacity = 8;
    CHECK(pack_within(p, o)->status == solve_status::infeasible);
  }

  TEST_CASE("same input and seed give the same placement; a tiny node limit times out") {
    std::mt19937_64 rng(21);
    const auto p = random_problem(rng, 60, 80, 100, false);
    search_options o;
    o.capacity = lower_bound(p) + lower_bound(p) / 20;
    o.time_limit = std::numeric_limits<double>::infinity();
    o.node_limit = 200000;
    const auto a = pack_within(p, o);
    const auto b = pack_within(p, o);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->status == b->status);
    CHECK(a->solution.offsets == b->solution.offsets);
    o.capacity = lower_bound(p);
    o.node_limit = 1;
    const auto c = pack_within(p, o);
    CHECK((c->status == solve_status::no_answer || c->status == solve_status::feasible ||
           c->status == solve_status::infeasible));
  }

  TEST_CASE("a capacity below the lower bound is infeasible at once") {
    search_options o;
    o.capacity = 11;
    const auto r = pack_within(example12(), o);
    REQUIRE(r.has_value());
    CHECK(r->status == solve_status::infeasible);
    minimize_options m;
    m.capacity = 11;
    CHECK(minimize_peak(example12(), m)->status == solve_status::infeasible);
  }

  TEST_CASE("challenging suite: heuristics beat XLA; J and K solved at capacity 1 MiB") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto folder = dir / "minimalloc" / "challenging";
    for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
      const auto file = read_interval_csv_file((folder / (std::string(name) + ".1048576.csv")).string());
      REQUIRE(file.has_value());
      const auto& p = file->problem;
      const interval_graph g(p);
      const auto xla = xla_best_fit{}.place(p, g);
      const auto port = portfolio_fit{}.place(p, g);
      CHECK(validate(p, port).has_value());
      CHECK(peak_of(p, port) <= peak_of(p, xla));
    }
    for (const char* name : {"J", "K"}) {
      const auto file = read_interval_csv_file((folder / (std::string(name) + ".1048576.csv")).string());
      REQUIRE(file.has_value());
      search_options o;
      o.capacity = 1048576;
      o.time_limit = 60;
      const auto r = pack_within(file->problem, o);
      REQUIRE(r.has_value());
      CHECK(r->status == solve_status::feasible);
      CHECK(validate(file->problem, r->solution).has_value());
      CHECK(peak_of(file->problem, r->solution) <= 1048576);
    }
  }
}
