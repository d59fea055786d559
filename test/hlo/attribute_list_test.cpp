// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/attribute_list.hpp: attributes kept verbatim and in text order in one
// block (repeated keys, empty and binary text, growth), lookup, copies, moves and equality.
#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "xlamem/hlo/attribute_list.hpp"

namespace attribute_list_test {
using xlamem::hlo::attribute_list;

inline std::vector<std::pair<std::string, std::string>> items(const attribute_list& a) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto e : a) out.emplace_back(e.key, e.value);
  return out;
}

// The same list, whatever the expression (keeps -Wself-assign-overloaded quiet).
inline attribute_list& same(attribute_list& a) { return a; }
}  // namespace attribute_list_test

TEST_SUITE("hlo/attribute_list") {
  using namespace attribute_list_test;
  using pairs = std::vector<std::pair<std::string, std::string>>;

  TEST_CASE("empty: no entries, nothing found, equal to any other empty list") {
    const attribute_list a;
    CHECK(a.empty());
    CHECK(a.size() == 0);
    CHECK(a.begin() == a.end());
    CHECK_FALSE(a.find("metadata").has_value());
    CHECK(a == attribute_list{});
    const attribute_list copy = a;
    CHECK(copy.empty());
    CHECK(copy == a);
    static_assert(std::forward_iterator<attribute_list::iterator>);
  }

  TEST_CASE("entries in text order, keys repeating as in the text, the first found; empty and binary text kept") {
    attribute_list a;
    a.push_back("metadata", "{op_name=\"jit(f)/dot\"}");
    a.push_back("index", "1");
    a.push_back("index", "2");
    a.push_back("", "");
    a.push_back(std::string_view("k\0y", 3), std::string_view("v\0\xff", 3));
    CHECK(a.size() == 5);
    CHECK_FALSE(a.empty());
    CHECK(items(a) == pairs{{"metadata", "{op_name=\"jit(f)/dot\"}"},
                            {"index", "1"},
                            {"index", "2"},
                            {"", ""},
                            {std::string("k\0y", 3), std::string("v\0\xff", 3)}});
    CHECK(a.find("index") == std::string_view("1"));
    CHECK(a.find("") == std::string_view(""));
    CHECK(a.find(std::string_view("k\0y", 3)) == std::string_view("v\0\xff", 3));
    CHECK_FALSE(a.find("k").has_value());
    CHECK_FALSE(a.find("indexx").has_value());
    auto it = a.begin();
    const auto first = *it++;
    CHECK(first == attribute_list::entry{"metadata", "{op_name=\"jit(f)/dot\"}"});
    CHECK((*it).value == "1");
    CHECK(std::distance(a.begin(), a.end()) == 5);
  }

  TEST_CASE("growth keeps every entry: thousands of attributes, long values") {
    attribute_list a;
    pairs want;
    for (int k = 0; k < 3000; ++k) {
      const std::string key = "k" + std::to_string(k);
      const std::string value(static_cast<std::size_t>(k % 97), static_cast<char>('a' + k % 26));
      a.push_back(key, value);
      want.emplace_back(key, value);
    }
    CHECK(a.size() == 3000);
    CHECK(items(a) == want);
    CHECK(a.find("k2999") == std::string_view(want.back().second));
  }

  TEST_CASE("copies are independent and equal; moves leave the source empty; assignment to itself keeps the list") {
    attribute_list a;
    a.push_back("x", "1");
    a.push_back("y", "22");
    attribute_list b = a;
    CHECK(b == a);
    b.push_back("z", "333");  // the copy grows on its own
    CHECK(a.size() == 2);
    CHECK(b.size() == 3);
    CHECK_FALSE(b == a);
    attribute_list c;
    c = b;
    CHECK(c == b);
    c = same(c);
    CHECK(items(c) == pairs{{"x", "1"}, {"y", "22"}, {"z", "333"}});
    attribute_list d = std::move(c);
    CHECK(d == b);
    CHECK(c.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    CHECK(c.begin() == c.end());
    attribute_list e;
    e.push_back("old", "value");
    e = std::move(d);
    CHECK(e == b);
    e = std::move(same(e));
    CHECK(e == b);
    c.push_back("again", "fine");  // a moved-from list can be used again
    CHECK(items(c) == pairs{{"again", "fine"}});
  }

  TEST_CASE("equality is the entries in order: order, keys, values and their boundaries all count") {
    attribute_list a, b, c, d;
    a.push_back("x", "1");
    a.push_back("y", "2");
    b.push_back("y", "2");
    b.push_back("x", "1");
    c.push_back("x", "1");
    c.push_back("y", "2");
    d.push_back("x1", "");  // the same bytes as "x" + "1", split elsewhere
    d.push_back("y", "2");
    CHECK(a == c);
    CHECK_FALSE(a == b);
    CHECK_FALSE(a == d);
    CHECK_FALSE(a == attribute_list{});
  }

  TEST_CASE("attributes past 4 GiB are refused before anything is copied") {
    // A value of 2^32 bytes, mapped but never touched: the length check comes first.
    const std::size_t n = std::size_t{1} << 32;
    void* big = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big == MAP_FAILED) {
      MESSAGE("skipped: 4 GiB of address space could not be mapped");
      return;
    }
    attribute_list a;
    a.push_back("x", "1");
    CHECK_THROWS_AS(a.push_back("big", std::string_view(static_cast<const char*>(big), n)), std::length_error);
    CHECK_THROWS_AS(a.push_back(std::string_view(static_cast<const char*>(big), n - 10), "v"), std::length_error);  // each part fits, not the sum
    CHECK(items(a) == pairs{{"x", "1"}});  // unchanged
    ::munmap(big, n);
  }
}
