// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/jit/page_run_arena.hpp (no LLVM needed).
#include <doctest/doctest.h>

#include <string>

#include "xlamem/jit/page_run_arena.hpp"

TEST_SUITE("jit/page_run_arena") {
  using namespace xlamem;

  TEST_CASE("page_run_arena: fresh runs, first-fit reuse, merging, errors") {
    xlamem::page_run_arena a(4 * 4096, 8 * 4096, 4096);
    auto r1 = a.try_allocate(1);
    auto r2 = a.try_allocate(4096 + 1);
    auto r3 = a.try_allocate(4096);
    REQUIRE(r1.has_value());
    REQUIRE(r2.has_value());
    REQUIRE(r3.has_value());
    CHECK(r1->offset == 4 * 4096);
    CHECK(r1->size == 4096);
    CHECK_FALSE(r1->reused);
    CHECK(r2->offset == 5 * 4096);
    CHECK(r2->size == 2 * 4096);
    CHECK(a.used_bytes() == 4 * 4096);
    CHECK(a.live_bytes() == 4 * 4096);

    REQUIRE(a.release(*r1).has_value());
    REQUIRE(a.release(*r2).has_value());  // merges with r1's run
    CHECK(a.free_runs() == 1);
    CHECK(a.free_bytes() == 3 * 4096);
    auto again = a.release(*r2);
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code() == errc::invalid_argument);
    CHECK(again.error().message().find("overlaps") != std::string::npos);

    auto r4 = a.try_allocate(2 * 4096);  // first fit: the merged run, not fresh pages
    REQUIRE(r4.has_value());
    CHECK(r4->reused);
    CHECK(r4->offset == 4 * 4096);
    CHECK(a.used_bytes() == 4 * 4096);
    CHECK(a.reused_bytes() == 2 * 4096);

    auto big = a.try_allocate(5 * 4096);  // 1 freed page + 4 fresh: does not fit
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().code() == errc::resource_exhausted);
    CHECK(big.error().message().find("16384 never used") != std::string::npos);
    CHECK(a.try_allocate(0).error().code() == errc::invalid_argument);
    CHECK(a.release(xlamem::page_run{100 * 4096, 4096}).error().code() == errc::invalid_argument);
  }
}
