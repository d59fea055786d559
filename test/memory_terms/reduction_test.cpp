// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/memory_terms/reduction.hpp.
#include <doctest/doctest.h>

#include "support/memory_terms_helpers.hpp"

TEST_SUITE("memory_terms/xla_vectors") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE("xla_compatible reproduces all 21 XLA vectors through the interval form") {
    const auto vectors = xla_vectors();
    REQUIRE(vectors.size() == 21);
    for (const auto& v : vectors) {
      auto r = reduce_memory_terms(v.num_lives, v.input, {v.max_iterations});
      REQUIRE(r.has_value());
      check_vector(v, *r, false);
    }
  }

  TEST_CASE("xla_compatible reproduces all 21 XLA vectors through the live-matrix form") {
    for (const auto& v : xla_vectors()) {
      const auto live = expand(v.input, v.num_lives);
      auto r = reduce_memory_terms_live(live, v.num_primitives, {v.max_iterations});
      REQUIRE(r.has_value());
      check_vector(v, *r, true);
    }
  }
}

TEST_SUITE("memory_terms/properties") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE_TEMPLATE("10^4 random instances: every result expands back exactly", Policy,
                     xla_compatible_policy, split_aware_policy) {
    term_rng rng(7);
    for (int i = 0; i < 10000; ++i) {
      const auto lives = rng.uniform(1, 12);
      const auto prims = rng.uniform(0, 9);
      const auto p = random_term_problem(rng.next(), prims, lives, rng.uniform(1, lives), 8);
      const std::int64_t cap = rng.uniform(0, 3) == 0 ? rng.uniform(0, 2) : kUnlimited;
      auto r = reduce_memory_terms(p.num_lives, p.intervals, {cap}, Policy{});
      REQUIRE(r.has_value());
      check_exact(p, *r);
      if (i % 10 == 0) {  // the live-matrix form gives the same reduction plus its matrix
        // (A primitive without an interval reads back as XLA's [INT64_MAX, 0].)
        const auto matrix = expand(p.intervals, p.num_lives);
        const auto hull = live_matrix_intervals(matrix, prims);
        REQUIRE(hull.has_value());
        auto same = reduce_memory_terms(p.num_lives, *hull, {cap}, Policy{});
        auto live = reduce_memory_terms_live(matrix, prims, {cap}, Policy{});
        REQUIRE((live.has_value() && same.has_value()));
        const bool equal = live->intervals == same->intervals && live->groups == same->groups &&
                           live->terms_before == same->terms_before &&
                           live->terms_after == same->terms_after &&
                           live->reduced_times == same->reduced_times;
        CHECK(equal);
        CHECK(verify_memory_terms(p.intervals, *live).has_value());
      }
    }
  }

  TEST_CASE("split_aware never has more terms than xla_compatible") {
    term_rng rng(11);
    for (int i = 0; i < 3000; ++i) {
      const auto lives = rng.uniform(1, 16);
      const auto p = random_term_problem(rng.next(), rng.uniform(0, 12), lives, rng.uniform(1, lives));
      const std::int64_t cap = rng.uniform(0, 1) == 0 ? 1 : kUnlimited;
      auto x = reduce_memory_terms(p.num_lives, p.intervals, {cap});
      auto s = reduce_memory_terms(p.num_lives, p.intervals, {cap}, split_aware_policy{});
      REQUIRE((x.has_value() && s.has_value()));
      CHECK(s->terms_after <= x->terms_after);
      CHECK(s->reduced_times == x->reduced_times);  // both exact: same locally maximal sets
    }
  }

  TEST_CASE("split_aware: at least 10 % fewer terms on average over the staircase/nested family") {
    double saved = 0;
    constexpr int n = 200;
    for (int i = 0; i < n; ++i) {
      const auto p = training_step_problem(1000 + static_cast<std::uint64_t>(i));
      auto x = reduce_memory_terms(p.num_lives, p.intervals);
      auto s = reduce_memory_terms(p.num_lives, p.intervals, {}, split_aware_policy{});
      REQUIRE((x.has_value() && s.has_value()));
      REQUIRE(verify_memory_terms(p.intervals, *s).has_value());
      REQUIRE(s->terms_after <= x->terms_after);
      saved += 1.0 - static_cast<double>(s->terms_after) / static_cast<double>(x->terms_after);
    }
    MESSAGE("split_aware saves " << 100.0 * saved / n << " % of xla_compatible's terms on average");
    CHECK(saved / n >= 0.10);
  }

  TEST_CASE("split_aware merges nested lifetimes that XLA cannot") {
    ivs nested;
    for (std::int64_t i = 0; i < 20; ++i) nested.push_back({i, 39 - i});
    auto x = reduce_memory_terms(40, nested);
    auto s = reduce_memory_terms(40, nested, {}, split_aware_policy{});
    REQUIRE((x.has_value() && s.has_value()));
    CHECK(x->terms_after == x->terms_before);  // every pair splits: nothing to merge for XLA
    CHECK(s->terms_after * 2 < x->terms_after);
    CHECK(verify_memory_terms(nested, *s).has_value());
  }
}

TEST_SUITE("memory_terms/errors") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE("bad input gives an error naming what is wrong") {
    const ivs outside{{0, 2}, {3, 6}};
    auto r = reduce_memory_terms(6, outside);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_range);
    CHECK(r.error().message().find("primitive 1 has interval [3, 6]") != std::string::npos);

    const ivs negative{{-1, 2}};
    CHECK(reduce_memory_terms(6, negative).error().code() == errc::out_of_range);
    CHECK(reduce_memory_terms(-1, ivs{}).error().code() == errc::invalid_argument);
    CHECK(reduce_memory_terms(6, ivs{{0, 1}}, {-1}).error().code() == errc::invalid_argument);

    const std::vector<std::vector<std::int64_t>> bad_id{{0}, {0, 5}};
    auto l = reduce_memory_terms_live(bad_id, 2);
    REQUIRE_FALSE(l.has_value());
    CHECK(l.error().message().find("live row 1 lists primitive 5") != std::string::npos);
    const std::vector<std::vector<std::int64_t>> twice{{1, 1}};
    CHECK(reduce_memory_terms_live(twice, 2).error().message().find("twice") != std::string::npos);
  }

  TEST_CASE("edge cases: nothing live, zero iterations, gaps in the live matrix") {
    auto empty = reduce_memory_terms(0, ivs{});
    REQUIRE(empty.has_value());
    CHECK(empty->terms_before == 0);
    CHECK(empty->reduced_times == std::vector<std::int64_t>{-1});  // as XLA

    const ivs doc{{0, 9}, {1, 9}, {5, 12}, {5, 13}};
    auto none = reduce_memory_terms(14, doc, {0});
    REQUIRE(none.has_value());
    CHECK(none->intervals == doc);
    CHECK(none->terms_after == 36);

    // Intervals without steps keep their values, however extreme, under every policy.
    constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
    const ivs odd{{kMax, 0}, {0, 7}, {3, kMin}, {1, 6}, {2, 5}, {kMax, kMin}};
    auto s = reduce_memory_terms(8, odd, {}, split_aware_policy{});
    REQUIRE(s.has_value());
    CHECK(s->intervals[0] == odd[0]);
    CHECK(s->intervals[2] == odd[2]);
    CHECK(s->intervals[5] == odd[5]);
    CHECK(s->terms_before == 8 + 6 + 4);
    CHECK(verify_memory_terms(odd, *s).has_value());

    // Gaps are filled (XLA takes the hull of the rows a primitive appears in).
    const std::vector<std::vector<std::int64_t>> gappy{{0}, {}, {0}};
    auto g = reduce_memory_terms_live(gappy, 1);
    REQUIRE(g.has_value());
    CHECK(g->terms_before == 2);
    CHECK(g->intervals == ivs{{0, 2}});
    CHECK(g->terms_after == 3);
  }
}

TEST_SUITE("memory_terms/internals") {
  using namespace xlamem::test::memory_terms_helpers;

  TEST_CASE("rank_set answers successor and predecessor like std::set") {
    term_rng rng(5);
    for (const std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                                std::size_t{4096}, std::size_t{70000}}) {
      detail::rank_set bits;
      bits.reset(n);
      std::set<std::size_t> ref;
      for (int op = 0; op < 3000; ++op) {
        const auto i = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1));
        if (rng.uniform(0, 2) != 0) {
          bits.insert(i);
          ref.insert(i);
        } else if (ref.count(i) != 0) {
          bits.erase(i);
          ref.erase(i);
        }
        const auto q = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1));
        const auto up = ref.upper_bound(q);
        const auto lo = ref.lower_bound(q);
        const bool ok_next = bits.next(q) == (up == ref.end() ? detail::rank_set::npos : *up);
        const bool ok_prev = bits.prev(q) == (lo == ref.begin() ? detail::rank_set::npos : *std::prev(lo));
        REQUIRE(ok_next);
        REQUIRE(ok_prev);
      }
    }
  }
}
