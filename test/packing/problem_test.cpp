// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/problem.hpp.
#include <doctest/doctest.h>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/problem") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("validate accepts a valid placement and names the first two conflicting buffers") {
    const auto p = example12();
    placement ok{{8, 8, 4, 4, 0}};
    CHECK(validate(p, ok).has_value());
    CHECK(peak_of(p, ok) == 12);

    placement bad{{8, 8, 4, 4, 6}};  // b5 [6,10) overlaps b3 [4,8) and b1/b2 [8,12)
    const auto r = validate(p, bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(r.error().message().find("'b") != std::string::npos);
    CHECK(r.error().message().find("conflict") != std::string::npos);

    CHECK_FALSE(validate(p, placement{{0, 0, 0}}).has_value());  // wrong count
    CHECK_FALSE(validate(p, placement{{8, 8, 4, 4, -4}}).has_value());
  }

  TEST_CASE("half-open intervals: touching buffers do not conflict, zero sizes never do") {
    packing_problem p;
    p.buffers = {buf("a", 0, 5, 10), buf("b", 5, 9, 10), buf("z", 0, 9, 0)};
    CHECK(validate(p, placement{{0, 0, 0}}).has_value());
    CHECK(max_live_bytes(p) == 10);
    p.buffers[1].lower = 4;
    CHECK_FALSE(validate(p, placement{{0, 0, 0}}).has_value());
    CHECK(max_live_bytes(p) == 20);
  }

  TEST_CASE("validate checks alignment and fixed offsets") {
    packing_problem p;
    p.buffers = {buf("a", 0, 5, 10), buf("b", 0, 5, 10)};
    p.buffers[1].alignment = 16;
    CHECK_FALSE(validate(p, placement{{0, 10}}).has_value());
    CHECK(validate(p, placement{{0, 16}}).has_value());
    p.buffers[0].fixed_offset = 32;
    const auto r = validate(p, placement{{0, 16}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("fixed offset") != std::string::npos);
  }

  TEST_CASE("validate_problem rejects malformed buffers with their names") {
    packing_problem p;
    p.buffers = {buf("a", 5, 5, 1)};
    auto r = validate_problem(p);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("'a'") != std::string::npos);
    p.buffers = {buf("a", 0, 5, -1)};
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers = {buf("a", 0, 5, 1)};
    p.buffers[0].alignment = 3;
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers[0].alignment = 4;
    p.buffers[0].fixed_offset = 2;
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers[0].fixed_offset = 8;
    CHECK(validate_problem(p).has_value());
    p.buffers[0].size = max_packing_value + 1;
    CHECK_FALSE(validate_problem(p).has_value());
  }

  TEST_CASE("lower bound: max live bytes rounded up to the granule, fixed tops included") {
    packing_problem p;
    p.buffers = {buf("a", 0, 4, 1024), buf("b", 2, 6, 2048), buf("c", 5, 9, 3072)};
    CHECK(max_live_bytes(p) == 5120);
    CHECK(packing_granule(p) == 1024);
    CHECK(lower_bound(p) == 5120);
    p.buffers[0].fixed_offset = 8192;
    CHECK(lower_bound(p) == 9216);
    CHECK(lower_bound(packing_problem{}) == 0);
  }
}
