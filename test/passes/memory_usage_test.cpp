// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/memory_usage.hpp: the one definition of memory in use and of the
// peak, which buffer assignment and the memory report share.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "xlamem/passes/memory_usage.hpp"

TEST_SUITE("passes/memory_usage") {
  using namespace xlamem;

  static std::vector<const placed_value*> pointers(const std::vector<placed_value>& v) {
    std::vector<const placed_value*> out;
    for (const auto& x : v) out.push_back(&x);
    return out;
  }

  TEST_CASE("a heap uses the bytes its live values cover: an in-place pair counts once") {
    // An operand [0, 64) live at 0..2 and the user that overwrites it, the same bytes, 2..4; a
    // neighbour [64, 96) at 1..3.
    const std::vector<placed_value> v = {{0, 2, 0, 64}, {2, 4, 0, 64}, {1, 3, 64, 32}};
    const auto pieces = allocation_usage(pointers(v), true, 6);
    std::vector<std::int64_t> diff(7, 0);
    add_usage(diff, pieces);
    std::vector<std::int64_t> total;
    std::int64_t run = 0;
    for (std::size_t t = 0; t < 6; ++t) total.push_back(run += diff[t]);
    CHECK(total == std::vector<std::int64_t>{64, 96, 96, 96, 64, 0});
    const auto p = first_peak(total);
    CHECK(p.time == 1);
    CHECK(p.bytes == 96);
  }

  TEST_CASE("steps with the same use are one piece") {
    // A chain of 100 values, each live 2 steps, the next starting where one ends: 64 bytes in
    // use from step 0 to 100 (10^6 such values gave 10^6 pieces).
    std::vector<placed_value> v;
    for (std::int64_t t = 0; t < 100; ++t) v.push_back({t, t + 1, 0, 64});
    for (const bool heap : {false, true}) {
      const auto pieces = allocation_usage(pointers(v), heap, 101);
      REQUIRE(pieces.size() == 1);
      CHECK(pieces[0].begin == 0);
      CHECK(pieces[0].end == 100);
      CHECK(pieces[0].bytes == 64);
    }
  }

  TEST_CASE("another allocation uses its largest live value; steps are clamped to the horizon") {
    const std::vector<placed_value> v = {{0, 1, 0, 16}, {1, 9, 0, 40}, {-5, 0, 0, 8}, {3, 3, 0, 0}};
    std::vector<std::int64_t> diff(5, 0);
    add_usage(diff, allocation_usage(pointers(v), false, 4));
    std::vector<std::int64_t> total;
    std::int64_t run = 0;
    for (std::size_t t = 0; t < 4; ++t) total.push_back(run += diff[t]);
    CHECK(total == std::vector<std::int64_t>{16, 40, 40, 40});
  }

  TEST_CASE("use by brute force, with few steps per value (counted into order) and many (sorted)") {
    // Per step: the union of the live values' byte ranges (a heap) or the largest live value.
    const auto brute = [](const std::vector<placed_value>& v, bool heap, std::int64_t horizon) {
      std::vector<std::int64_t> out;
      for (std::int64_t t = 0; t < horizon; ++t) {
        std::vector<char> bytes(256, 0);
        std::int64_t largest = 0;
        for (const auto& x : v) {
          const auto s = std::clamp<std::int64_t>(x.start, 0, horizon - 1);
          const auto e = std::min(std::max(x.end, x.start), horizon - 1);
          if (x.size <= 0 || t < s || t > e) continue;
          largest = std::max(largest, x.size);
          std::fill(bytes.begin() + x.offset, bytes.begin() + x.offset + x.size, 1);
        }
        out.push_back(heap ? std::count(bytes.begin(), bytes.end(), 1) : largest);
      }
      return out;
    };
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
      const std::int64_t horizon = round % 2 == 0 ? 5 + static_cast<std::int64_t>(rng() % 10)    // fewer steps than values
                                                  : 200 + static_cast<std::int64_t>(rng() % 300);  // far more
      std::vector<placed_value> v;
      for (int k = 0, n = 8 + static_cast<int>(rng() % 24); k < n; ++k) {
        const auto start = static_cast<std::int64_t>(rng() % (horizon + 4)) - 2;
        const auto offset = static_cast<std::int64_t>(rng() % 128);
        v.push_back({start, start + static_cast<std::int64_t>(rng() % 12) - 1, offset, static_cast<std::int64_t>(rng() % 64)});
      }
      for (const bool heap : {false, true}) {
        std::vector<std::int64_t> diff(static_cast<std::size_t>(horizon) + 1, 0);
        add_usage(diff, allocation_usage(pointers(v), heap, horizon));
        std::vector<std::int64_t> total;
        std::int64_t run = 0;
        for (std::int64_t t = 0; t < horizon; ++t) total.push_back(run += diff[static_cast<std::size_t>(t)]);
        CAPTURE(round);
        CAPTURE(heap);
        CHECK(total == brute(v, heap, horizon));
      }
    }
  }

  TEST_CASE("what counts toward the peak; the first step with the most bytes") {
    CHECK(counts_toward_peak(false, false, false));
    CHECK_FALSE(counts_toward_peak(true, false, false));   // constants
    CHECK_FALSE(counts_toward_peak(false, true, false));   // thread-local
    CHECK_FALSE(counts_toward_peak(false, false, true));    // host memory
    CHECK(first_peak({3, 7, 7, 2}).time == 1);
    CHECK(first_peak({}).bytes == 0);
    CHECK(first_peak({0, 0}).time == 0);
  }
}
