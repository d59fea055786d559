// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/json.hpp: JSON from field visitors, laid out as nlohmann-json lays
// it out (compact, or indented by one space), escaped, and always valid.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/io/codec/json.hpp"

namespace json_test {
struct point {
  std::int64_t x = 0, y = 0;
  std::optional<std::string> label;
};
template <class F>
void visit_fields(const point& p, F&& f) {
  f("x", p.x);
  f("y", p.y);
  if (p.label) f("label", *p.label);
}
struct shape {
  std::string name;
  std::vector<point> points;
  std::vector<int> empty;
  bool closed = false;
  double area = 0;
  const point* anchor = nullptr;
};
template <class F>
void visit_fields(const shape& s, F&& f) {
  f("name", s.name);
  f("points", s.points);
  f("empty", s.empty);
  f("closed", s.closed);
  f("area", s.area);
  f("anchor", s.anchor);
}
}  // namespace json_test

TEST_SUITE("io/json") {
  using namespace xlamem;
  using namespace json_test;

  TEST_CASE("objects from visitors, arrays from ranges, null for a null pointer or an empty optional") {
    const shape s{"tri", {{1, 2, "a"}, {3, 4, std::nullopt}}, {}, true, 0.5, nullptr};
    CHECK(to_json(s) ==
          R"({"name":"tri","points":[{"x":1,"y":2,"label":"a"},{"x":3,"y":4}],"empty":[],"closed":true,"area":0.5,"anchor":null})");
    CHECK(to_json(s, 1) == "{\n \"name\": \"tri\",\n \"points\": [\n  {\n   \"x\": 1,\n   \"y\": 2,\n   \"label\": \"a\"\n  },\n"
                           "  {\n   \"x\": 3,\n   \"y\": 4\n  }\n ],\n \"empty\": [],\n \"closed\": true,\n \"area\": 0.5,\n"
                           " \"anchor\": null\n}");
    CHECK(to_json(std::optional<int>()) == "null");
    CHECK(to_json(std::pair<int, int>{3, 4}) == "[3,4]");
    CHECK(to_json(std::vector<std::vector<int>>{{1}, {}}) == "[[1],[]]");
    CHECK(json_document("cmd", point{7, 8, std::nullopt}) == "{\n \"command\": \"cmd\",\n \"x\": 7,\n \"y\": 8\n}");
  }

  TEST_CASE("numbers as nlohmann-json writes them; strings escaped; bytes that are not UTF-8 replaced") {
    CHECK(to_json(2.0) == "2.0");
    CHECK(to_json(0.001234) == "0.001234");
    CHECK(to_json(1.5e-5) == "1.5e-05");
    CHECK(to_json(1e20) == "1e+20");
    CHECK(to_json(123456.789) == "123456.789");
    CHECK(to_json(-0.0) == "-0.0");
    CHECK(to_json(std::int64_t{-9}) == "-9");
    CHECK(to_json(std::uint64_t{18446744073709551615u}) == "18446744073709551615");
    CHECK(to_json(std::string("a\"b\\c\n\t\x01/")) == R"("a\"b\\c\n\t\u0001/")");
    CHECK(to_json(std::string("caf\xc3\xa9")) == "\"caf\xc3\xa9\"");  // UTF-8 passes through
    CHECK(to_json(std::string("bad\xff\xc3")) == R"("bad\ufffd\ufffd")");
    CHECK(to_json(std::string("\xed\xa0\x80")) == R"("\ufffd\ufffd\ufffd")");  // a surrogate is not UTF-8
  }
}
