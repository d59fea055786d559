// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/memory_terms/named_policies.hpp: the policies by name, and a reduction
// with a named policy checked exact.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "xlamem/memory_terms/named_policies.hpp"

TEST_SUITE("memory_terms/named_policies") {
  using namespace xlamem;

  TEST_CASE("both policies by name; the default first; unknown names are null") {
    CHECK(memory_term_policies.front().name == "xla_compatible");
    CHECK(find_memory_term_policy("split_aware") != nullptr);
    CHECK(find_memory_term_policy("nope") == nullptr);
    CHECK(memory_term_policy_names() == "xla_compatible or split_aware");
  }

  TEST_CASE("a named reduction equals the policy's own, over the steps up to the last end") {
    const std::vector<term_interval> iv = {{0, 5}, {2, 7}, {3, 9}, {6, 4}, {1, 8}};
    for (const auto& p : memory_term_policies) {
      CAPTURE(p.name);
      auto named = reduce_memory_terms(iv, p);
      REQUIRE(named.has_value());
      CHECK(named->num_lives == 10);
      auto direct = p.name == "xla_compatible" ? reduce_memory_terms(10, iv, {}, xla_compatible_policy{})
                                              : reduce_memory_terms(10, iv, {}, split_aware_policy{});
      REQUIRE(direct.has_value());
      CHECK(named->intervals == direct->intervals);
      CHECK(named->groups == direct->groups);
      CHECK(named->terms_after <= named->terms_before);
    }
    const std::vector<term_interval> negative = {{-3, 2}};
    CHECK_FALSE(reduce_memory_terms(negative, memory_term_policies.front()).has_value());
  }
}
