// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/name_table.hpp: lookup by name and alias, the names, the help line
// and the error, for rows with and without aliases and help, and the library's three tables
// (solvers, backends, memory-term policies) through it.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <string_view>

#include "xlamem/hlo/backend.hpp"
#include "xlamem/memory_terms/named_policies.hpp"
#include "xlamem/name_table.hpp"
#include "xlamem/packing/solvers.hpp"

namespace {

struct colour {
  static constexpr std::string_view kind = "colour";
  std::string_view name;
  std::string_view aliases;
  std::string_view help;
  int code = 0;
};

struct plain {
  static constexpr std::string_view kind = "thing";
  std::string_view name;
};

constexpr std::array<colour, 3> colours{{{"red", "crimson,scarlet", "warm", 1}, {"green", "", "", 2}, {"blue", "", "cold", 3}}};
constexpr std::array<plain, 2> things{{{"a"}, {"b"}}};

}  // namespace

TEST_SUITE("core/name_table") {
  TEST_CASE("lookup by name and by each alias; unknown names and alias fragments are not found") {
    constexpr xlamem::name_table<colour> table(colours);
    static_assert(table.find("scarlet")->code == 1);  // usable at compile time
    CHECK(table.find("red")->code == 1);
    CHECK(table.find("crimson")->code == 1);
    CHECK(table.find("blue")->code == 3);
    CHECK(table.find("crim") == nullptr);
    CHECK(table.find("crimson,scarlet") == nullptr);
    CHECK(table.find("") == nullptr);
    CHECK(table.size() == 3);
  }

  TEST_CASE("the names, the help and the error list the choices the same way for every table") {
    const xlamem::name_table<colour> table(colours);
    CHECK(table.names() == "red, green or blue");
    CHECK(table.help() == "red (warm; also crimson,scarlet); green; blue (cold)");
    const auto bad = table.parse("mauve");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code() == xlamem::errc::invalid_argument);
    CHECK(bad.error().message() == "unknown colour 'mauve' (expected red, green or blue)");
    CHECK(table.parse("scarlet")->name == "red");
    const xlamem::name_table<plain> few(things);
    CHECK(few.names() == "a or b");
    CHECK(few.help() == "a; b");
    CHECK(few.parse("c").error().message() == "unknown thing 'c' (expected a or b)");
  }

  TEST_CASE("the library's three tables speak through it") {
    CHECK(xlamem::parse_solver("nope").error().message() ==
          "unknown solver 'nope' (expected search, heuristic, xla, first-fit, skyline, stack or sweep)");
    CHECK(xlamem::find_solver("portfolio")->name == "heuristic");
    CHECK(xlamem::hlo::parse_backend("tpu").error().message() == "unknown backend 'tpu' (expected cpu or gpu)");
    CHECK(xlamem::parse_memory_term_policy("x").error().message() ==
          "unknown policy 'x' (expected xla_compatible or split_aware)");
    CHECK(xlamem::parse_memory_term_policy("split_aware")->name == "split_aware");
  }
}
