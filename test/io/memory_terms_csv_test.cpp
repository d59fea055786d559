// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/memory_terms/memory_terms_csv.hpp.
#include <doctest/doctest.h>

#include "support/reliability_helpers.hpp"

TEST_SUITE("reliability/memory_terms_csv") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("ids are mapped densely: a huge id costs nothing and is reported as a missing id") {
    auto r = read_memory_terms_csv("id,first,last\n100000000,0,1\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(),
                   "t.csv:2:1: id 100000000 is not in 0..0: ids must be 0..N-1 with none missing; id 0 is missing"));
    auto ok = read_memory_terms_csv("# any order\n2,5,5\n0,0,3\n1,2,9\n", "t.csv");
    REQUIRE(ok.has_value());
    REQUIRE(ok->size() == 3);
    CHECK((*ok)[0].first == 0);
    CHECK((*ok)[1].last == 9);
    CHECK((*ok)[2].first == 5);
  }

  TEST_CASE("numbers are range-checked so that last + 1 cannot overflow") {
    auto r = read_memory_terms_csv("id,first,last\n0,0,9223372036854775807\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:2:5: last '9223372036854775807' is out of range (limit 2^60)"));
    r = read_memory_terms_csv("0,0,99999999999999999999\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "out of range"));
    r = read_memory_terms_csv("0,-5,3\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "starts before time 0"));
    r = read_memory_terms_csv("0,0,3\n0,1,2\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:2:1: id 0 repeats line 1"));
    r = read_memory_terms_csv("0,0\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:1:"));
    r = read_memory_terms_csv("0,0,1,2\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "found more"));
  }

  TEST_CASE("every first > last is no interval, XLA's marker {INT64_MAX, 0} included") {
    auto r = read_memory_terms_csv("id,first,last\n0,9223372036854775807,0\n1,0,3\n2,7,-9223372036854775807\n", "t.csv");
    REQUIRE(r.has_value());
    REQUIRE(r->size() == 3);
    CHECK_FALSE((*r)[0].valid());
    CHECK((*r)[1].valid());
    CHECK((*r)[1].last == 3);
    CHECK_FALSE((*r)[2].valid());
    // A live interval is still bounded, and a number beyond 64 bits is still refused.
    r = read_memory_terms_csv("0,1152921504606846976,1152921504606846977\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:1:"));
    CHECK(contains(r.error().message(), "out of range (limit 2^60)"));
    r = read_memory_terms_csv("0,99999999999999999999,0\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "out of range"));
  }

  TEST_CASE("a file with no rows, a directory or /dev/zero is refused") {
    const auto empty = temp_file("empty.csv", "id,first,last\n");
    auto r = read_memory_terms_csv_file(empty.string());
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "no primitives"));
    fs::remove(empty);
    CHECK(!read_memory_terms_csv_file(fs::temp_directory_path().string()));
  }
}
