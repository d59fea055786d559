// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/csv.hpp, the lexer the CSV readers share.
#include <doctest/doctest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "xlamem/io/codec/csv.hpp"

TEST_SUITE("io/csv") {
  using namespace xlamem;

  TEST_CASE("lines are numbered from 1, a byte-order mark is skipped, \\r\\n reads as \\n") {
    csv_lines lines("\xEF\xBB\xBFid,x\r\n1,2\n\nlast");
    std::string_view line;
    std::size_t n = 0;
    std::vector<std::string_view> seen;
    while (lines.next(line, n)) seen.push_back(csv_trim(line));
    CHECK(n == 4);
    CHECK(seen == std::vector<std::string_view>{"id,x", "1,2", "", "last"});
  }

  TEST_CASE("fields: trimmed, with the column where each starts; bounded") {
    std::vector<csv_field> f;
    CHECK(split_csv_fields(" a ,\tbb,c", 3, f) == 0);
    REQUIRE(f.size() == 3);
    CHECK(f[0].text == "a");
    CHECK(f[0].column == 2);
    CHECK(f[1].text == "bb");
    CHECK(f[1].column == 6);
    CHECK(f[2].column == 9);
    CHECK(split_csv_fields("a,b,c,d", 3, f) == 6);  // the comma that would start a fourth field
    CHECK(f.size() == 3);
    CHECK(split_csv_fields("", 3, f) == 0);
    CHECK(f.size() == 1);
  }

  TEST_CASE("integers: whole, too long, beyond the limit, not numbers") {
    constexpr std::int64_t limit = std::int64_t{1} << 60;
    CHECK(read_csv_integer("42", limit).ok());
    CHECK(read_csv_integer("-7", limit).value == -7);
    CHECK(read_csv_integer("", limit).empty);
    CHECK(read_csv_integer("99999999999999999999", limit).too_long);
    CHECK(read_csv_integer("2000000000000000000", limit).beyond_limit);
    CHECK_FALSE(read_csv_integer("12x", limit).whole);
    CHECK_FALSE(read_csv_integer("x", limit).parsed);
  }
}
