// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/interval_set.hpp.
#include <doctest/doctest.h>

#include "support/planning_helpers.hpp"

TEST_SUITE("planning/interval_set") {
  using namespace xlamem::test::planning_helpers;

// Inserts `n` random intervals into `set` and `all`: in random order, or (`in_time_order`)
// mostly by start, ties and a few late ones included, as buffer assignment adds values.
void fill_randomly(xlamem::term_rng& rng, xlamem::detail::interval_set<int>& set,
                   std::vector<std::pair<std::int64_t, std::int64_t>>& all, int n, std::int64_t span, bool in_time_order) {
  std::int64_t last = 0;
  for (int k = 0; k < n; ++k) {
    auto lo = rng.uniform(0, span);
    if (in_time_order && rng.uniform(0, 9) != 0) lo = last = last + rng.uniform(0, 2);
    const auto hi = lo + (rng.uniform(0, 9) == 0 ? rng.uniform(0, span) : rng.uniform(0, 5));
    set.insert(lo, hi, k);
    all.emplace_back(lo, hi);
  }
}

TEST_CASE("interval_set finds exactly the intervals meeting a query, as a scan would") {
  // Buffer assignment's reuse test leans on it: a missed interval is a wrong plan.
  xlamem::term_rng rng(21);
  for (int round = 0; round < 40; ++round) {
    xlamem::detail::interval_set<int> set;
    std::vector<std::pair<std::int64_t, std::int64_t>> all;
    const int n = static_cast<int>(rng.uniform(0, 400));
    const std::int64_t span = rng.uniform(1, 1000);
    fill_randomly(rng, set, all, n, span, round % 2 == 1);
    CHECK(set.size() == all.size());
    std::int64_t top = span;  // the latest start (in time order, starts pass `span`)
    for (const auto& [lo, hi] : all) top = std::max(top, lo);
    for (int q = 0; q < 50; ++q) {
      const auto lo = rng.uniform(-2, top + 2);
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
