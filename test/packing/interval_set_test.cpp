// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/interval_set.hpp.
#include <doctest/doctest.h>

#include "support/planning_helpers.hpp"

TEST_SUITE("planning/interval_set") {
  using namespace xlamem::test::planning_helpers;

TEST_CASE("interval_set finds exactly the intervals meeting a query, as a scan would") {
  // Buffer assignment's reuse test leans on it: a missed interval is a wrong plan.
  xlamem::term_rng rng(21);
  for (int round = 0; round < 20; ++round) {
    xlamem::detail::interval_set<int> set;
    std::vector<std::pair<std::int64_t, std::int64_t>> all;
    const int n = static_cast<int>(rng.uniform(0, 400));
    const std::int64_t span = rng.uniform(1, 1000);
    for (int k = 0; k < n; ++k) {
      const auto lo = rng.uniform(0, span);
      const auto hi = lo + (rng.uniform(0, 9) == 0 ? rng.uniform(0, span) : rng.uniform(0, 5));
      set.insert(lo, hi, k);
      all.emplace_back(lo, hi);
    }
    CHECK(set.size() == all.size());
    for (int q = 0; q < 50; ++q) {
      const auto lo = rng.uniform(-2, span + 2);
      const auto hi = lo + rng.uniform(0, 20);
      std::set<int> want, got;
      for (int k = 0; k < n; ++k) {
        if (all[static_cast<std::size_t>(k)].first <= hi && all[static_cast<std::size_t>(k)].second >= lo) want.insert(k);
      }
      CHECK_FALSE(set.any_meeting(lo, hi, [&](int k) { return !got.insert(k).second; }));  // each once
      CHECK(got == want);
      if (!want.empty()) {
        int seen = 0;
        CHECK(set.any_meeting(lo, hi, [&](int) { return ++seen == 1; }));  // stops at the first
        CHECK(seen == 1);
      }
    }
  }
}
}
