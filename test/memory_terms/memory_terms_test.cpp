// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/memory_terms/memory_terms.hpp, the umbrella header: it alone declares
// the reducers, the exactness check and the constraint rows (header isolation compiles it alone).
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "xlamem/memory_terms/memory_terms.hpp"

namespace memory_terms_umbrella_test {

using namespace xlamem;

static_assert(memory_term_policy<xla_compatible_policy>);   // reduction.hpp
static_assert(memory_term_policy<split_aware_policy>);      // reduction.hpp
static_assert(std::is_same_v<decltype(verify_memory_terms(std::span<const term_interval>{}, memory_term_reduction{})),
                             result<void>>);                // verify.hpp
static_assert(std::is_class_v<memory_constraint_row>);      // constraints.hpp

}  // namespace memory_terms_umbrella_test

TEST_SUITE("memory_terms/memory_terms") {
  using namespace xlamem;

  TEST_CASE("the umbrella's parts together: reduce, check exact, then the constraint rows") {
    // XLA's PartialOverlap: [0, 4] and [1, 5] share [1, 4] as one group.
    const std::vector<term_interval> input{{0, 4}, {1, 5}};
    auto r = reduce_memory_terms(6, input, {}, split_aware_policy{});
    REQUIRE(r.has_value());
    CHECK(r->groups == std::vector<std::vector<std::int64_t>>{{0, 1}});
    CHECK(verify_memory_terms(input, *r).has_value());
    const std::vector<std::vector<double>> costs{{100.0, 50.0}, {25.0}};
    auto rows = memory_constraint_rows(*r, costs, 1000.0);
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == r->groups.size() + r->reduced_times.size());
    CHECK(rows->front().what == memory_constraint_row::kind::group_definition);
  }
}
