// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/aligned_lower_bound.hpp: aligned_lower_bound against its
// definition at every time and against the exhaustively found optimum; temp_lower_bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "support/packing.hpp"
#include "support/packing_helpers.hpp"
#include "xlamem/packing/aligned_lower_bound.hpp"

namespace aligned_lower_bound_test {

using xlamem::test::packing_helpers::buf;

/// The bound by its definition: at each start time, the rounded sizes of the live buffers
/// minus the largest rounding slack among them (the topmost needs only its own bytes).
inline std::int64_t by_definition(const xlamem::packing_problem& p, std::int64_t a) {
  std::int64_t best = 0;
  for (const auto& at : p.buffers) {
    const std::int64_t t = at.lower;
    std::int64_t sum = 0, slack = 0;
    for (const auto& b : p.buffers) {
      if (b.size <= 0 || t < b.lower || t >= b.upper) continue;
      const auto rounded = (b.size + a - 1) / a * a;
      sum += rounded;
      slack = std::max(slack, rounded - b.size);
    }
    best = std::max(best, sum - slack);
  }
  return best;
}

/// A small problem whose every buffer has alignment `a` or `2a`, sizes around `a`.
inline xlamem::packing_problem small_aligned(std::mt19937_64& rng, std::int64_t a, bool one_alignment) {
  xlamem::packing_problem p;
  const int n = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    const auto lo = static_cast<std::int64_t>(rng() % 8);
    auto b = buf("b" + std::to_string(i), lo, lo + 1 + static_cast<std::int64_t>(rng() % 6),
                 static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(3 * a + 1)));
    b.alignment = one_alignment || rng() % 2 == 0 ? a : 2 * a;
    p.buffers.push_back(b);
  }
  return p;
}

}  // namespace aligned_lower_bound_test

TEST_SUITE("packing/aligned_lower_bound") {
  using namespace xlamem;
  using namespace aligned_lower_bound_test;

  TEST_CASE("by hand: every live buffer but the topmost spans its size rounded up; zero sizes and ends do not count") {
    packing_problem p;
    p.buffers = {buf("a", 0, 2, 1), buf("b", 0, 2, 1)};
    for (auto& b : p.buffers) b.alignment = 64;
    CHECK(aligned_lower_bound(p, 64) == 64 + 1);  // b sits at 64 at the lowest
    CHECK(lower_bound(p) == 2);
    CHECK(temp_lower_bound(p) == 65);
    CHECK(xlamem::test::brute_force_optimum(p) == 65);
    p.buffers[1].lower = 2;  // [0, 2) and [2, 4) never meet
    p.buffers[1].upper = 4;
    CHECK(aligned_lower_bound(p, 64) == 1);
    p.buffers = {buf("a", 0, 4, 100), buf("b", 1, 3, 64), buf("z", 0, 4, 0), buf("c", 2, 4, 10)};
    // At time 2: 128 + 64 + 64 rounded, the largest slack 54 (c's).
    CHECK(aligned_lower_bound(p, 64) == 128 + 64 + 64 - 54);
    CHECK(aligned_lower_bound(p, 1) == max_live_bytes(p));  // alignment 1: nothing to round
    CHECK(aligned_lower_bound(packing_problem{}, 64) == 0);
  }

  TEST_CASE("aligned_lower_bound equals its definition at every time (random problems)") {
    std::mt19937_64 rng(17);
    for (int round = 0; round < 2000; ++round) {
      const auto p = xlamem::test::packing_helpers::random_problem(rng, 1 + static_cast<int>(rng() % 30), 40, 300, true);
      for (const std::int64_t a : {1, 2, 8, 64, 256}) {
        CAPTURE(a);
        REQUIRE(aligned_lower_bound(p, a) == by_definition(p, a));
      }
    }
  }

  TEST_CASE("never above the exhaustively found optimum when every alignment is a multiple of a") {
    std::mt19937_64 rng(23);
    int tight = 0, rounds = 0;
    for (const std::int64_t a : {2, 8, 64}) {
      for (int round = 0; round < 300; ++round, ++rounds) {
        const auto p = small_aligned(rng, a, round % 2 == 0);
        const auto optimum = xlamem::test::brute_force_optimum(p);
        CAPTURE(a);
        CAPTURE(round);
        REQUIRE(aligned_lower_bound(p, a) <= optimum);
        REQUIRE(temp_lower_bound(p) <= optimum);
        CHECK(temp_lower_bound(p) >= lower_bound(p));
        if (aligned_lower_bound(p, a) == optimum) ++tight;
      }
    }
    MESSAGE("aligned_lower_bound meets the optimum on " << tight << " of " << rounds << " problems");
    CHECK(tight * 2 > rounds);  // it is usually the optimum itself on such problems
  }

  TEST_CASE("buffers all live together, each smaller than a: the bound is the optimum (n - 1) a + smallest") {
    for (const std::int64_t a : {4, 16, 256}) {
      for (int n = 1; n <= 5; ++n) {
        packing_problem p;
        for (int i = 0; i < n; ++i) {
          p.buffers.push_back(buf("b" + std::to_string(i), 0, 3, 1 + (i * 5) % (a - 1)));
          p.buffers.back().alignment = a;
        }
        std::int64_t smallest = a;
        for (const auto& b : p.buffers) smallest = std::min(smallest, b.size);
        CHECK(aligned_lower_bound(p, a) == (n - 1) * a + smallest);
        CHECK(xlamem::test::brute_force_optimum(p) == (n - 1) * a + smallest);
      }
    }
  }

  TEST_CASE("temp_lower_bound: the aligned bound only when every buffer has one alignment above 1") {
    CHECK(temp_lower_bound(packing_problem{}) == 0);
    packing_problem p;
    p.buffers = {buf("a", 0, 2, 1), buf("b", 0, 2, 1)};
    CHECK(temp_lower_bound(p) == lower_bound(p));  // alignment 1
    for (auto& b : p.buffers) b.alignment = 8;
    CHECK(temp_lower_bound(p) == 9);
    p.buffers[1].alignment = 16;  // two alignments: max live bytes only
    CHECK(temp_lower_bound(p) == lower_bound(p));
    // A large buffer keeps max live bytes above the aligned bound: the larger is taken.
    p.buffers = {buf("a", 0, 2, 64), buf("b", 0, 2, 64), buf("c", 0, 2, 64)};
    for (auto& b : p.buffers) b.alignment = 64;
    CHECK(temp_lower_bound(p) == 192);
    CHECK(aligned_lower_bound(p, 64) == 192);
  }
}
