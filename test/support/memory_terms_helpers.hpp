// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/memory_terms_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "support/memory_terms_generators.hpp"
#include "xlamem/memory_terms/memory_terms.hpp"

namespace xlamem::test::memory_terms_helpers {
using namespace xlamem;


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
inline std::vector<xla_vector> xla_vectors() {
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
inline std::vector<std::vector<std::int64_t>> expand(const ivs& intervals, std::int64_t num_lives) {
  std::vector<std::vector<std::int64_t>> live(static_cast<std::size_t>(num_lives));
  for (std::size_t id = 0; id < intervals.size(); ++id) {
    for (std::int64_t t = 0; t < num_lives; ++t) {
      if (intervals[id].contains(t)) live[static_cast<std::size_t>(t)].push_back(static_cast<std::int64_t>(id));
    }
  }
  return live;
}

inline std::string show(const ivs& v) {
  std::string s;
  for (const auto& i : v) s += "(" + std::to_string(i.first) + "," + std::to_string(i.last) + ")";
  return s;
}

inline void check_vector(const xla_vector& v, const memory_term_reduction& r, bool live_form) {
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




// Whether `r` is exact against `input`, and its reduced times suffice: every step's live set is
// contained in the live set of some reduced time.
inline void check_exact(const term_problem& p, const memory_term_reduction& r) {
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

}  // namespace xlamem::test::memory_terms_helpers
