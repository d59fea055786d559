// SPDX-License-Identifier: Apache-2.0
// Tests for io/sharding/iopddl_solution.hpp: the contest's solution line read against a problem
// (whitespace, counts, ranges, syntax errors with their byte offsets), written back, and via files.
#include <doctest/doctest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/io/sharding/iopddl_solution.hpp"

using namespace xlamem;

namespace {

// Two nodes (2 and 1 strategies), one edge: the smallest problem with every field.
const std::string base =
    R"({"problem":{"name":"t","nodes":{"intervals":[[0,2],[1,3]],"costs":[[1,2],[3]],"usages":[[4,5],[6]]},)"
    R"("edges":{"nodes":[[0,1]],"costs":[[7,8]]},"usage_limit":10}})";

}  // namespace

TEST_CASE("solution lines are read against a problem and written back") {
  auto p = parse_iopddl(base, "t.json");
  REQUIRE(p);
  auto a = parse_iopddl_solution("[1, 0]\n", *p, "s.txt");
  REQUIRE_MESSAGE(a, a.error().to_string());
  CHECK(*a == sharding::assignment{1, 0});
  a = parse_iopddl_solution(" \r\n[ 1 ,\n\t0 ]  \n\n", *p, "s.txt");
  REQUIRE_MESSAGE(a, a.error().to_string());
  CHECK(*a == sharding::assignment{1, 0});

  const auto err = [&](std::string_view text) {
    auto r = parse_iopddl_solution(text, *p, "s.txt");
    return r ? std::string("no error") : r.error().to_string();
  };
  CHECK(err("[1]") == "invalid_argument: s.txt: at byte 2: 1 strategies, but the problem has 2 nodes");
  CHECK(err("[1, 0, 0]") == "invalid_argument: s.txt: at byte 7: more strategies than the problem's 2 nodes");
  CHECK(err("[0, 1]") == "invalid_argument: s.txt: at byte 4: node 1: strategy 1 is out of range (the node has 1 strategies)");
  CHECK(err("[2, 0]") == "invalid_argument: s.txt: at byte 1: node 0: strategy 2 is out of range (the node has 2 strategies)");
  CHECK(err("[0, -1]") == "parse_error: s.txt: at byte 4: expected a strategy index (a non-negative integer), found '-1'");
  CHECK(err("[0, 1.5]") == "parse_error: s.txt: at byte 4: expected a strategy index (a non-negative integer), found '1.5'");
  CHECK(err("[0, ]") == "parse_error: s.txt: at byte 4: expected a strategy index (a non-negative integer), found ']'");
  CHECK(err("[0 1]") == "parse_error: s.txt: at byte 3: expected ',' or ']', found '1'");
  CHECK(err("[0, 0") == "parse_error: s.txt: at byte 5: expected ',' or ']', found the end of the text");
  CHECK(err("0, 1") == "parse_error: s.txt: at byte 0: expected '[', found '0'");
  CHECK(err("") == "parse_error: s.txt: at byte 0: expected '[', found the end of the text");
  CHECK(err("[1, 0] x") == "parse_error: s.txt: at byte 7: trailing characters after the solution: 'x'");
  CHECK(err("[1, 99999999999999999999999]") == "parse_error: s.txt: at byte 4: '99999999999999999999999' is out of range");

  auto any = parse_iopddl_solution("[]");
  REQUIRE(any);
  CHECK(any->empty());
  CHECK(format_iopddl_solution(sharding::assignment{0, 12, 3}) == "[0, 12, 3]\n");
  CHECK(format_iopddl_solution(sharding::assignment{}) == "[]\n");

  const auto path = (std::filesystem::temp_directory_path() / "xlamem_iopddl_solution.txt").string();
  REQUIRE(write_iopddl_solution(path, sharding::assignment{1, 0}));
  auto back = read_iopddl_solution(path, *p);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(back, back.error().to_string());
  CHECK(*back == sharding::assignment{1, 0});
}

TEST_CASE("solution lines without a problem: syntax only; long tokens quoted short; an unwritable path named") {
  // A string literal names the source: a type without a problem's members is no problem.
  static_assert(!sharding::sharding_problem<const char*>);
  static_assert(!sharding::sharding_problem<std::string_view>);
  auto literal = parse_iopddl_solution("[3]", "named.txt");
  REQUIRE(literal.has_value());
  CHECK(*literal == sharding::assignment{3});
  CHECK(parse_iopddl_solution("[", "named.txt").error().message().rfind("named.txt:", 0) == 0);
  const std::string_view source = "s.txt";
  // Any count and any index within std::size_t is accepted without a problem to check against.
  auto a = parse_iopddl_solution("[7, 0, 18446744073709551615]", source);
  REQUIRE_MESSAGE(a, a.error().to_string());
  CHECK(*a == sharding::assignment{7, 0, 18446744073709551615u});
  auto r = parse_iopddl_solution("[18446744073709551616]", source);
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: s.txt: at byte 1: '18446744073709551616' is out of range");
  r = parse_iopddl_solution("[1e3]", source);
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: s.txt: at byte 1: expected a strategy index (a non-negative integer), found '1e3'");
  r = parse_iopddl_solution("[1,]", source);
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: s.txt: at byte 3: expected a strategy index (a non-negative integer), found ']'");
  // A token from the input is quoted at a bounded length, its control bytes as '?'.
  r = parse_iopddl_solution("[0] " + std::string(200, 'z'), source);
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: s.txt: at byte 4: trailing characters after the solution: '" +
                                     std::string(max_quoted_chars, 'z') + "\xE2\x80\xA6'");
  r = parse_iopddl_solution("\x1b[2J", source);
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: s.txt: at byte 0: expected '[', found '?[2J'");
  CHECK(parse_iopddl_solution("").error().message() == "<solution>: at byte 0: expected '[', found the end of the text");

  const auto missing = (std::filesystem::temp_directory_path() / "xlamem-no-such-dir" / "s.txt").string();
  auto w = write_iopddl_solution(missing, sharding::assignment{0});
  REQUIRE_FALSE(w);
  CHECK(w.error().code() == errc::unavailable);
  CHECK(w.error().message().starts_with(missing + ": cannot open for writing"));
  auto p = parse_iopddl(base, "t.json");
  REQUIRE(p);
  auto back = read_iopddl_solution(missing, *p);
  REQUIRE_FALSE(back);
  CHECK(back.error().code() == errc::not_found);
}
