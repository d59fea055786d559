// SPDX-License-Identifier: Apache-2.0
// Tests for autoshard/schedule.hpp: on a module whose text makes a large value first and uses it
// last (as JAX's depth-first printer does), the memory order runs the chain that frees memory
// first; every order is topological, parameters lead, and nothing is lost.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "xlamem/autoshard/schedule.hpp"
#include "xlamem/hlo/reader.hpp"

using namespace xlamem;

TEST_SUITE("autoshard/schedule") {
  TEST_CASE("a value made early for a late use waits; the order is topological") {
    auto m = hlo::parse_module(R"(HloModule order

ENTRY main {
  p = f32[1024]{0} parameter(0)
  big = f32[1024,1024]{1,0} broadcast(p), dimensions={1}
  a = f32[1024]{0} negate(p)
  b = f32[1024]{0} exponential(a)
  c = f32[1024]{0} add(a, b)
  q = f32[8]{0} parameter(1)
  ROOT r = f32[1024,1024]{1,0} multiply(big, big)
}
)");
    REQUIRE_MESSAGE(m, m.error().to_string());
    const auto order = autoshard::memory_order(*m, m->entry);
    REQUIRE(order.size() == m->computations[hlo::index_of(m->entry)].instructions.size());
    std::vector<std::string> names;
    for (const auto id : order) names.push_back((*m)[id].name);
    CHECK(names[0] == "p");
    CHECK(names[1] == "q");  // parameters first
    const auto at = [&](const char* n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
    // The small chain runs before the 4 MiB broadcast, which is made just before its use.
    CHECK(at("c") < at("big"));
    CHECK(at("big") + 1 == at("r"));
    for (const auto id : order) {
      for (const auto o : (*m)[id].operands) {
        CHECK(std::find(order.begin(), order.end(), o) < std::find(order.begin(), order.end(), id));
      }
    }
  }
}
