// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/memory_terms/verify.hpp: each way a reduction can be wrong is named,
// and verify_memory_terms agrees with a step-by-step brute force on mutated reductions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/memory_terms_helpers.hpp"
#include "xlamem/memory_terms/verify.hpp"

namespace verify_test {

using namespace xlamem;

/// Whether `r` is exact by brute force: well-formed groups, and at every time step each
/// primitive covered exactly as often as its original interval says (once or never); the term
/// count and (when present) the live rows as the intervals give them.
inline bool exact_by_brute_force(const std::vector<term_interval>& original, const memory_term_reduction& r) {
  const auto P = static_cast<std::size_t>(r.num_primitives);
  if (r.num_primitives != static_cast<std::int64_t>(original.size())) return false;
  if (r.intervals.size() != P + r.groups.size()) return false;
  std::int64_t after = 0;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const auto& members = r.groups[g];
    if (members.empty() || !r.intervals[P + g].valid()) return false;
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (members[k] < 0 || members[k] >= r.num_primitives) return false;
      if (k > 0 && members[k - 1] >= members[k]) return false;
    }
    after += static_cast<std::int64_t>(members.size());
  }
  std::int64_t lo = 0, hi = 0;
  for (const auto* list : {&original, &r.intervals}) {
    for (const auto& iv : *list) {
      if (!iv.valid()) continue;
      lo = std::min(lo, iv.first);
      hi = std::max(hi, iv.last);
    }
  }
  for (std::size_t p = 0; p < P; ++p) {
    for (std::int64_t t = lo; t <= hi; ++t) {
      int covered = r.intervals[p].contains(t) ? 1 : 0;
      for (std::size_t g = 0; g < r.groups.size(); ++g) {
        const auto& members = r.groups[g];
        const bool member = std::find(members.begin(), members.end(), static_cast<std::int64_t>(p)) != members.end();
        if (member && r.intervals[P + g].contains(t)) ++covered;
      }
      if (covered != (original[p].contains(t) ? 1 : 0)) return false;
    }
  }
  for (const auto& iv : r.intervals) after += iv.length();
  if (after != r.terms_after) return false;
  if (!r.reduced_live.empty()) {
    if (static_cast<std::int64_t>(r.reduced_live.size()) != r.num_lives) return false;
    for (std::int64_t t = 0; t < r.num_lives; ++t) {
      std::vector<std::int64_t> row;
      for (std::size_t id = 0; id < r.intervals.size(); ++id) {
        if (r.intervals[id].contains(t)) row.push_back(static_cast<std::int64_t>(id));
      }
      if (row != r.reduced_live[static_cast<std::size_t>(t)]) return false;
    }
  }
  return true;
}

/// The term count `r`'s intervals and groups hold (what `terms_after` must say).
inline std::int64_t terms_of(const memory_term_reduction& r) {
  std::int64_t after = 0;
  for (const auto& g : r.groups) after += static_cast<std::int64_t>(g.size());
  for (const auto& iv : r.intervals) after += iv.length();
  return after;
}

/// One random change of `r`: an interval end moved, a group member added, dropped or
/// misplaced, a group emptied or added; the term count usually kept consistent.
inline void mutate(term_rng& rng, memory_term_reduction& r) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1)); };
  switch (rng.uniform(0, 6)) {
    case 0:
    case 1:
      if (!r.intervals.empty()) {
        auto& iv = r.intervals[pick(r.intervals.size())];
        auto& end = rng.uniform(0, 1) == 0 ? iv.first : iv.last;
        if (end > -100 && end < 100) end += rng.uniform(0, 1) == 0 ? -1 : 1;  // not XLA's INT64_MAX of an empty row
      }
      break;
    case 2:
      if (!r.groups.empty() && r.num_primitives > 0) {
        auto& g = r.groups[pick(r.groups.size())];
        g.push_back(rng.uniform(0, r.num_primitives - 1));
        std::sort(g.begin(), g.end());
      }
      break;
    case 3:
      if (!r.groups.empty()) {
        auto& g = r.groups[pick(r.groups.size())];
        if (!g.empty()) g.erase(g.begin() + static_cast<std::ptrdiff_t>(pick(g.size())));
      }
      break;
    case 4:
      if (!r.groups.empty() && r.groups.front().size() > 1) std::swap(r.groups.front().front(), r.groups.front().back());
      break;
    case 5:
      r.groups.push_back({});
      r.intervals.push_back({0, rng.uniform(-1, 2)});
      if (r.num_primitives > 0 && rng.uniform(0, 1) == 0) r.groups.back().push_back(rng.uniform(0, r.num_primitives - 1));
      break;
    default:
      if (r.num_primitives > 0) r.intervals[pick(static_cast<std::size_t>(r.num_primitives))] = {1, 0};
      break;
  }
  r.terms_after = terms_of(r) + (rng.uniform(0, 9) == 0 ? rng.uniform(-1, 1) : 0);
}

/// XLA's PartialOverlap vector: primitives [0, 4] and [1, 5] over 6 steps become [0, 0], [5, 5]
/// and the group {0, 1} over [1, 4].
inline memory_term_reduction partial_overlap() {
  auto r = reduce_memory_terms(6, std::vector<term_interval>{{0, 4}, {1, 5}});
  REQUIRE(r.has_value());
  REQUIRE(r->intervals == std::vector<term_interval>{{0, 0}, {5, 5}, {1, 4}});
  REQUIRE(r->groups == std::vector<std::vector<std::int64_t>>{{0, 1}});
  return *r;
}

}  // namespace verify_test

TEST_SUITE("memory_terms/errors") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE("the verifier rejects a reduction that double-counts or drops a primitive") {
    const ivs input{{0, 4}, {1, 5}};
    auto r = reduce_memory_terms(6, input);
    REQUIRE(r.has_value());
    REQUIRE(verify_memory_terms(input, *r).has_value());
    auto dup = *r;
    dup.intervals[0] = {0, 1};  // primitive 0 now also live at 1, where its group covers it
    dup.terms_after += 1;
    auto v = verify_memory_terms(input, dup);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().message().find("primitive 0 is counted twice at time 1") != std::string::npos);
    auto gap = *r;
    gap.intervals[1] = {6, 4};
    gap.terms_after -= 1;
    CHECK(verify_memory_terms(input, gap).error().message().find("primitive 1 is missing at time 5") !=
          std::string::npos);
  }
}

TEST_SUITE("memory_terms/verify") {
  using namespace xlamem::test::memory_terms_helpers;
  using verify_test::partial_overlap;

  TEST_CASE("each way a reduction can be wrong is an internal error naming the first fault") {
    const ivs input{{0, 4}, {1, 5}};
    const auto message = [&](const memory_term_reduction& r) {
      auto v = verify_memory_terms(input, r);
      REQUIRE_FALSE(v.has_value());
      CHECK(v.error().code() == errc::internal);
      return v.error().message();
    };
    REQUIRE(verify_memory_terms(input, partial_overlap()).has_value());
    auto r = partial_overlap();
    r.num_primitives = 3;
    CHECK(message(r) == "memory terms: the reduction has 3 primitives, the input 2");
    r = partial_overlap();
    r.intervals.pop_back();
    CHECK(message(r) == "memory terms: 2 intervals for 2 primitives and 1 groups");
    r = partial_overlap();
    r.groups[0].clear();
    CHECK(message(r) == "memory terms: group 0 is empty");
    r = partial_overlap();
    r.intervals[2] = {4, 1};
    CHECK(message(r) == "memory terms: group 0 has no interval");
    r = partial_overlap();
    r.groups[0] = {1, 0};
    CHECK(message(r) == "memory terms: group 0 members are not ascending and unique");
    r.groups[0] = {1, 1};
    CHECK(message(r) == "memory terms: group 0 members are not ascending and unique");
    r.groups[0] = {0, 5};
    CHECK(message(r) == "memory terms: group 0 lists primitive 5");
    r = partial_overlap();
    r.intervals[2] = {2, 4};  // the group starts a step late
    CHECK(message(r) == "memory terms: primitive 0 is missing at time 1");
    r = partial_overlap();
    r.intervals[1] = {5, 6};
    CHECK(message(r) == "memory terms: primitive 1 is live too long at time 6");
    r = partial_overlap();
    r.terms_after = 9;
    CHECK(message(r) == "memory terms: terms_after is 9, the intervals and groups hold 8");
    r = partial_overlap();
    r.reduced_live = {{0}, {2}, {2}};
    CHECK(message(r) == "memory terms: reduced_live has 3 rows for 6 time steps");
    r.reduced_live = {{0}, {2}, {1}, {2}, {2}, {1}};
    CHECK(message(r) == "memory terms: reduced_live row 2 does not match the intervals");
    r.reduced_live[2] = {2};
    CHECK(verify_memory_terms(input, r).has_value());
    // A primitive without an interval appears nowhere.
    const ivs absent{{0, 4}, {3, 2}};
    auto x = reduce_memory_terms(6, absent);
    REQUIRE(x.has_value());
    REQUIRE(verify_memory_terms(absent, *x).has_value());
    x->groups.push_back({1});
    x->intervals.push_back({5, 5});
    CHECK(verify_memory_terms(absent, *x).error().message() ==
          "memory terms: primitive 1 has no interval but appears in the reduction");
  }

  TEST_CASE("agrees with a step-by-step brute force on 2 x 10^4 mutated reductions") {
    term_rng rng(41);
    int exact = 0, wrong = 0;
    for (int i = 0; i < 20000; ++i) {
      const auto lives = rng.uniform(1, 10);
      const auto p = random_term_problem(rng.next(), rng.uniform(0, 7), lives, rng.uniform(1, lives), 6);
      auto r = i % 2 == 0 ? reduce_memory_terms(p.num_lives, p.intervals)
                          : reduce_memory_terms_live(expand(p.intervals, p.num_lives), static_cast<std::int64_t>(p.intervals.size()),
                                                     {}, split_aware_policy{});
      REQUIRE(r.has_value());
      REQUIRE(verify_memory_terms(p.intervals, *r).has_value());
      auto bad = *r;
      const int changes = static_cast<int>(rng.uniform(1, 2));
      for (int k = 0; k < changes; ++k) verify_test::mutate(rng, bad);
      const bool want = verify_test::exact_by_brute_force(p.intervals, bad);
      const auto got = verify_memory_terms(p.intervals, bad);
      CAPTURE(i);
      REQUIRE(got.has_value() == want);
      ++(want ? exact : wrong);
    }
    MESSAGE(exact << " mutated reductions still exact, " << wrong << " wrong");
    CHECK(wrong > 10000);
    CHECK(exact > 100);  // changes that leave an interval without steps, or a primitive as it was
  }
}
