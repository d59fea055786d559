// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/packing/interval_csv.hpp.
#include <doctest/doctest.h>

#include "support/packing_helpers.hpp"
#include "support/reliability_helpers.hpp"

TEST_SUITE("reliability/interval_csv") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("a UTF-8 byte-order mark is skipped; duplicate ids are refused with the line") {
    auto r = read_interval_csv("\xEF\xBB\xBFid,lower,upper,size\na,0,2,8\nb,1,3,8\n", "bom.csv");
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    CHECK(r->problem.buffers.size() == 2);
    auto d = read_interval_csv("id,lower,upper,size\na,0,2,8\nb,1,3,8\na,2,4,8\n", "dup.csv");
    REQUIRE(!d);
    CHECK(contains(d.error().message(), "dup.csv:4:1: duplicate id 'a' (first given on line 2)"));
  }

  TEST_CASE("sizes summing above 2^60 are refused (pack used to end in an internal error)") {
    std::string text = "id,lower,upper,size\n";
    for (int k = 0; k < 16; ++k) text += std::to_string(k) + ",0,2,1152921504606846976\n";
    auto r = read_interval_csv(text, "big.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "big.csv:2:"));  // the first alone plus its alignment
    CHECK(contains(r.error().message(), "2^60"));
    auto ok = read_interval_csv("id,lower,upper,size\n0,0,2,576460752303423487\n1,0,2,576460752303423487\n", "ok.csv");
    REQUIRE_MESSAGE(ok.has_value(), ok.error().to_string());
  }

  TEST_CASE("a line never holds more fields than the header names, and quoted tokens are bounded") {
    auto r = read_interval_csv("id,lower,upper,size\n0,0,2,8" + std::string(100000, ',') + "\n", "wide.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "wide.csv:2:"));
    CHECK(r.error().message().size() < 200);
    r = read_interval_csv("id,lower,upper,size\n0,0,2," + std::string(1000000, '9') + "\n", "long.csv");
    REQUIRE(!r);
    CHECK(r.error().message().size() < 200);
  }
}

TEST_SUITE("packing/io") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("CSV: reads MiniMalloc's format and writes it back with offsets") {
    const auto r = read_interval_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\r\n\nb3,0,9,4\n", "x.csv");
    REQUIRE(r.has_value());
    REQUIRE(r->problem.buffers.size() == 3);
    CHECK(r->problem.buffers[1].id == "b2");
    CHECK(r->problem.buffers[1].upper == 9);
    CHECK_FALSE(r->offsets.has_value());
    const placement s{{0, 0, 4}};
    const auto text = write_interval_csv(r->problem, &s);
    CHECK(text == "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,0\nb3,0,9,4,4\n");
    const auto back = read_interval_csv(text);
    REQUIRE(back.has_value());
    REQUIRE(back->offsets.has_value());
    CHECK(back->offsets->offsets == s.offsets);
  }

}

TEST_SUITE("packing/io") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("CSV: old column names, alignment, ignored columns") {
    const auto r = read_interval_csv("buffer,start,end,size,alignment,hint\nx,0,2,8,4,1\n");
    REQUIRE(r.has_value());
    CHECK(r->problem.buffers[0].upper == 3);  // closed end
    CHECK(r->problem.buffers[0].alignment == 4);
  }

}

TEST_SUITE("packing/io") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("CSV: errors name the file, line and column") {
    auto err = [](const char* text) {
      const auto r = read_interval_csv(text, "in.csv");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::parse_error);
      return r.error().message();
    };
    CHECK(err("id,lower,upper,size\na,0,x,4\n") == "in.csv:2:5: 'x' is not an integer");
    CHECK(err("id,lower,upper,size\na,0,3\n").find("in.csv:2:1: expected 4 fields") == 0);
    CHECK(err("id,lower,upper,size\na,0,3,4\nb,5,5,4\n").find("in.csv:3:") == 0);
    CHECK(err("id,lower,upper,size\na,7,3,4\n").find("negative live interval") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,-4\n").find("negative size") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,99999999999999999999\n").find("out of range") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,2000000000000000000\n").find("out of range") != std::string::npos);
    CHECK(err("id,lower,size\n").find("header must name") != std::string::npos);
    CHECK(err("id,lower,upper,size,colour\n").find("unknown column 'colour'") != std::string::npos);
    CHECK(err("").find("empty input") != std::string::npos);
    CHECK(err("id,lower,upper,size,alignment\na,0,3,4,3\n").find("power of two") != std::string::npos);
  }

}
