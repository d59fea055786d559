// SPDX-License-Identifier: Apache-2.0
// Tests for memory_terms/ (memory_terms.hpp): XLA's 21 MemoryTermReducer vectors in both input forms,
// random property tests of every policy against the verifier, the split-aware policy against
// xla_compatible on the staircase/nested family, and the constraint rows.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "xlamem/memory_terms/memory_terms.hpp"
#include "support/memory_terms_generators.hpp"

using namespace xlamem;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kUnlimited = kMax;

using ivs = std::vector<term_interval>;
using groups_t = std::vector<std::vector<std::int64_t>>;

struct xla_vector {
  const char* name;
  std::int64_t num_primitives;
  std::int64_t num_lives;
  ivs input;
  std::int64_t max_iterations;
  ivs intervals;
  groups_t groups;
  std::int64_t before, after;
  std::vector<std::int64_t> times;
};

// All 21 vectors of XLA's auto_sharding_memory_test.cc (see docs/memory-terms.md).
std::vector<xla_vector> xla_vectors() {
  const ivs doc_input{{0, 9}, {1, 9}, {5, 12}, {5, 13}};
  return {
      {"WithoutOverlap", 2, 6, {{0, 2}, {3, 5}}, kUnlimited, {{0, 2}, {3, 5}}, {}, 6, 6, {0, 3}},
      {"PartialOverlap", 2, 6, {{0, 4}, {1, 5}}, kUnlimited, {{0, 0}, {5, 5}, {1, 4}}, {{0, 1}}, 10, 8, {1}},
      {"PartialOverlapReversed", 2, 6, {{1, 5}, {0, 4}}, kUnlimited, {{5, 5}, {0, 0}, {1, 4}}, {{0, 1}}, 10, 8, {1}},
      {"DoesNotSplitPrimitive", 2, 6, {{0, 5}, {1, 4}}, kUnlimited, {{0, 5}, {1, 4}}, {}, 10, 10, {1}},
      {"OnePrimitiveVanishes", 2, 6, {{0, 5}, {1, 5}}, kUnlimited, {{0, 0}, {6, 0}, {1, 5}}, {{0, 1}}, 11, 8, {1}},
      {"BothPrimitivesVanish", 2, 6, {{0, 5}, {0, 5}}, kUnlimited, {{6, -1}, {6, -1}, {0, 5}}, {{0, 1}}, 12, 8, {0}},
      {"OneGroupingPreventsAnother", 3, 9, {{0, 4}, {0, 7}, {4, 8}}, kUnlimited,
       {{5, -1}, {5, 7}, {4, 8}, {0, 4}}, {{0, 1}}, 18, 15, {4}},
      {"TwoGroups", 3, 6, {{0, 5}, {0, 2}, {3, 5}}, kUnlimited,
       {{6, 2}, {3, -1}, {6, 2}, {0, 2}, {3, 5}}, {{0, 1}, {0, 2}}, 12, 10, {0, 3}},
      {"TwoGroupsMutuallyExclusive", 4, 8, {{0, 3}, {1, 3}, {4, 6}, {4, 7}}, kUnlimited,
       {{0, 0}, {4, 0}, {7, 3}, {7, 7}, {1, 3}, {4, 6}}, {{0, 1}, {2, 3}}, 14, 12, {1, 4}},
      {"MergingPrimitivesWouldNotReduceTerms", 2, 2, {{0, 1}, {0, 1}}, kUnlimited, {{0, 1}, {0, 1}}, {}, 4, 4, {0}},
      {"AllPrimitivesVanish", 3, 6, {{0, 5}, {0, 5}, {0, 5}}, kUnlimited,
       {{6, -1}, {6, -1}, {6, -1}, {0, 5}}, {{0, 1, 2}}, 18, 9, {0}},
      {"MergingGroupsWouldNotReduceTerms", 4, 9, {{0, 6}, {0, 6}, {3, 8}, {3, 8}}, kUnlimited,
       {{7, -1}, {7, -1}, {9, 2}, {9, 2}, {0, 6}, {3, 8}}, {{0, 1}, {2, 3}}, 26, 17, {3}},
      {"ExampleFromDocumentation", 4, 14, doc_input, kUnlimited,
       {{0, 0}, {10, 0}, {13, 4}, {13, 13}, {1, 4}, {10, 12}, {5, 9}}, {{0, 1}, {2, 3}, {0, 1, 2, 3}}, 36, 22, {5}},
      {"MergesWithRightmost", 3, 4, {{0, 2}, {3, 3}, {0, 3}}, kUnlimited,
       {{3, -1}, {3, 3}, {3, 3}, {0, 2}}, {{0, 2}}, 8, 7, {0, 3}},
      {"ExampleFromDocumentationUsingIntervals", 4, 14, doc_input, kUnlimited,
       {{0, 0}, {10, 0}, {13, 4}, {13, 13}, {1, 4}, {10, 12}, {5, 9}}, {{0, 1}, {2, 3}, {0, 1, 2, 3}}, 36, 22, {5}},
      {"InvalidIntervals", 3, 5, {{0, 4}, {kMax, 0}, {kMax, 0}}, kUnlimited,
       {{0, 4}, {kMax, 0}, {kMax, 0}}, {}, 5, 5, {0}},
      {"OneIterationOnly", 4, 14, doc_input, 1,
       {{0, 0}, {10, 0}, {13, 4}, {13, 13}, {1, 9}, {5, 12}}, {{0, 1}, {2, 3}}, 36, 23, {5}},
      {"StairsBottomLeft", 4, 14, {{0, 13}, {0, 10}, {0, 7}, {0, 4}}, 1,
       {{11, 13}, {11, -1}, {5, 7}, {5, -1}, {0, 10}, {0, 4}}, {{0, 1}, {2, 3}}, 38, 26, {0}},
      {"StairsTopLeft", 4, 14, {{0, 4}, {0, 7}, {0, 10}, {0, 13}}, 1,
       {{5, -1}, {5, 7}, {11, -1}, {11, 13}, {0, 10}, {0, 4}}, {{2, 3}, {0, 1}}, 38, 26, {0}},
      {"StairsTopRight", 4, 14, {{9, 13}, {6, 13}, {3, 13}, {0, 13}}, 1,
       {{14, 8}, {6, 8}, {14, 2}, {0, 2}, {3, 13}, {9, 13}}, {{2, 3}, {0, 1}}, 38, 26, {9}},
      {"StairsBottomRight", 4, 14, {{0, 13}, {3, 13}, {6, 13}, {9, 13}}, 1,
       {{0, 2}, {14, 2}, {6, 8}, {14, 8}, {3, 13}, {9, 13}}, {{0, 1}, {2, 3}}, 38, 26, {9}},
  };
}

// Row t = ascending ids whose interval contains t.
std::vector<std::vector<std::int64_t>> expand(const ivs& intervals, std::int64_t num_lives) {
  std::vector<std::vector<std::int64_t>> live(static_cast<std::size_t>(num_lives));
  for (std::size_t id = 0; id < intervals.size(); ++id) {
    for (std::int64_t t = 0; t < num_lives; ++t) {
      if (intervals[id].contains(t)) live[static_cast<std::size_t>(t)].push_back(static_cast<std::int64_t>(id));
    }
  }
  return live;
}

std::string show(const ivs& v) {
  std::string s;
  for (const auto& i : v) s += "(" + std::to_string(i.first) + "," + std::to_string(i.last) + ")";
  return s;
}

void check_vector(const xla_vector& v, const memory_term_reduction& r, bool live_form) {
  INFO(v.name << (live_form ? " [live matrix]" : " [intervals]") << ": got " << show(r.intervals));
  CHECK(r.intervals == v.intervals);
  CHECK(r.groups == v.groups);
  CHECK(r.terms_before == v.before);
  CHECK(r.terms_after == v.after);
  CHECK(r.reduced_times == v.times);
  if (live_form) {
    CHECK(r.reduced_live == expand(v.intervals, v.num_lives));
  } else {
    CHECK(r.reduced_live.empty());
  }
  CHECK(verify_memory_terms(v.input, r).has_value());
}

}  // namespace

TEST_SUITE("memory_terms/xla_vectors") {
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

namespace {

// Whether `r` is exact against `input`, and its reduced times suffice: every step's live set is
// contained in the live set of some reduced time.
void check_exact(const term_problem& p, const memory_term_reduction& r) {
  const auto ok = verify_memory_terms(p.intervals, r);
  INFO("verifier: " << (ok ? std::string("ok") : ok.error().message()));
  REQUIRE(ok.has_value());
  CHECK(r.terms_after <= r.terms_before + 1);
  CHECK(std::is_sorted(r.reduced_times.begin(), r.reduced_times.end()));
  for (std::int64_t t = 0; t < p.num_lives; ++t) {
    bool covered = false;
    for (const auto rt : r.reduced_times) {
      bool subset = true;
      for (const auto& iv : p.intervals) {
        if (iv.contains(t) && !iv.contains(rt)) subset = false;
      }
      covered = covered || subset;
    }
    CHECK(covered);
  }
}

}  // namespace

TEST_SUITE("memory_terms/properties") {
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

TEST_SUITE("memory_terms/rows") {
  TEST_CASE("constraint rows reproduce the memory of every reduced time for any choice") {
    term_rng rng(3);
    for (int i = 0; i < 300; ++i) {
      const auto lives = rng.uniform(1, 10);
      const auto prims = rng.uniform(1, 8);
      const auto p = random_term_problem(rng.next(), prims, lives, lives, 6);
      auto r = reduce_memory_terms(p.num_lives, p.intervals, {}, split_aware_policy{});
      REQUIRE(r.has_value());
      std::vector<std::vector<double>> costs(static_cast<std::size_t>(prims));
      std::vector<std::int64_t> choice(static_cast<std::size_t>(prims));
      for (std::int64_t q = 0; q < prims; ++q) {
        const auto n = rng.uniform(1, 3);
        for (std::int64_t j = 0; j < n; ++j) costs[static_cast<std::size_t>(q)].push_back(static_cast<double>(rng.uniform(0, 1000)));
        choice[static_cast<std::size_t>(q)] = rng.uniform(0, n - 1);
      }
      const double budget = 5000.0, multiplier = 1e6;
      auto rows = memory_constraint_rows(*r, costs, budget, multiplier);
      REQUIRE(rows.has_value());
      REQUIRE(rows->size() == r->groups.size() + r->reduced_times.size());
      // Group variables at their smallest feasible value: the summed memory of the members.
      std::vector<double> gvar;
      for (const auto& row : *rows) {
        if (row.what != memory_constraint_row::kind::group_definition) continue;
        double sum = 0;
        for (const auto& [var, coef] : row.terms) {
          if (var.what == memory_variable::kind::strategy && choice[static_cast<std::size_t>(var.index)] == var.strategy) sum += coef;
          if (var.what == memory_variable::kind::group) CHECK(coef == -1.0);
        }
        gvar.push_back(sum);
        CHECK(row.upper_bound == 0.0);
      }
      for (const auto& row : *rows) {
        if (row.what != memory_constraint_row::kind::time_step) continue;
        double lhs = 0;
        for (const auto& [var, coef] : row.terms) {
          if (var.what == memory_variable::kind::group) lhs += coef * gvar[static_cast<std::size_t>(var.index)];
          else if (choice[static_cast<std::size_t>(var.index)] == var.strategy) lhs += coef;
        }
        double truth = 0;
        for (std::int64_t q = 0; q < prims; ++q) {
          if (p.intervals[static_cast<std::size_t>(q)].contains(row.id)) {
            truth += costs[static_cast<std::size_t>(q)][static_cast<std::size_t>(choice[static_cast<std::size_t>(q)])] / (budget / multiplier);
          }
        }
        CHECK(lhs == doctest::Approx(truth));
        CHECK(row.upper_bound == multiplier);
      }
    }
  }

  TEST_CASE("constraint rows reject bad costs and budgets") {
    auto r = reduce_memory_terms(6, ivs{{0, 4}, {1, 5}});
    REQUIRE(r.has_value());
    const std::vector<std::vector<double>> ok{{1.0, 2.0}, {3.0}};
    CHECK(memory_constraint_rows(*r, ok, 0.0).error().code() == errc::invalid_argument);
    CHECK(memory_constraint_rows(*r, std::vector<std::vector<double>>{{1.0}}, 10.0).error().message().find("1 cost vectors for 2 primitives") != std::string::npos);
    const std::vector<std::vector<double>> nan{{1.0}, {-2.0}};
    CHECK(memory_constraint_rows(*r, nan, 10.0).error().message().find("primitive 1 strategy 0") != std::string::npos);
    auto rows = memory_constraint_rows(*r, ok, 10.0);
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == 2);  // one group row, one time row (t = 1)
    CHECK((*rows)[0].what == memory_constraint_row::kind::group_definition);
    CHECK((*rows)[0].terms.size() == 4);  // 2 + 1 strategies, then -g
    CHECK((*rows)[1].id == 1);
    CHECK((*rows)[1].terms.size() == 1);  // only the group covers t = 1
    CHECK((*rows)[1].terms[0].first == memory_variable{memory_variable::kind::group, 0, 0});
  }
}

TEST_SUITE("memory_terms/internals") {
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
