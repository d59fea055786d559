// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/text_format.hpp: the one byte formatter, fixed decimals, columns.
#include <doctest/doctest.h>

#include <string>

#include "xlamem/io/codec/text_format.hpp"

TEST_SUITE("io/text_format") {
  using namespace xlamem;

  TEST_CASE("human_bytes: three significant digits in binary units") {
    CHECK(human_bytes(512) == "512 B");
    CHECK(human_bytes(1536) == "1.50 KiB");
    CHECK(human_bytes(2157968) == "2.06 MiB");
    CHECK(human_bytes(-2048) == "-2.00 KiB");
    CHECK(human_bytes(150 * 1024) == "150 KiB");
    CHECK(human_bytes(std::int64_t{1} << 60) == "1024 PiB");
  }

  TEST_CASE("bytes_text adds the exact figure; fixed and percent_of round as printf") {
    CHECK(bytes_text(1000) == "1000 B");
    CHECK(bytes_text(244736) == "239 KiB (244736 B)");
    CHECK(fixed(0.25, 1) == "0.2");  // the binary value of 0.25 is a tie: to even, as printf
    CHECK(fixed(2.0 / 3.0, 3) == "0.667");
    CHECK(fixed(1.5, 1, true) == "+1.5");
    CHECK(fixed(-1.5, 1, true) == "-1.5");
    CHECK(percent_of(1, 8, 1, true) == "+12.5");
    CHECK(percent_of(5, 0, 0) == "0");
  }

  TEST_CASE("columns pad by characters, not bytes; clip and trim_right") {
    CHECK(pad_right("ab", 4) == "ab  ");
    CHECK(pad_left("ab", 4) == "  ab");
    CHECK(pad_right("\xc3\xa9t\xc3\xa9", 4) == "\xc3\xa9t\xc3\xa9 ");  // "ete" with accents: 3 characters
    CHECK(pad_right("toolong", 3) == "toolong");
    CHECK(clip("abcdefgh", 6) == "abc...");
    CHECK(clip("abc", 6) == "abc");
    CHECK(trim_right("a b  ") == "a b");
  }
}
