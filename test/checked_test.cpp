// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/checked.hpp: checked_add, checked_mul and checked_accumulate against
// exact wide arithmetic, at the limits of signed and unsigned types, and max_total_bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "xlamem/checked.hpp"

TEST_SUITE("reliability/checked") {
  using namespace xlamem;

  TEST_CASE("checked_add and checked_mul refuse what does not fit, signed and unsigned") {
    CHECK(checked_add<std::uint64_t>(UINT64_MAX - 1, 1) == UINT64_MAX);
    CHECK(!checked_add<std::uint64_t>(UINT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_add<std::int64_t>(INT64_MIN, INT64_MAX) == -1);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 62, 4) == std::nullopt);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 31, std::uint64_t{1} << 32) == std::uint64_t{1} << 63);
    CHECK(checked_mul<std::int64_t>(INT64_MIN, 1) == INT64_MIN);
    CHECK(!checked_mul<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_mul<std::int64_t>(-3, 4) == -12);
    std::uint64_t total = 0;
    CHECK(checked_accumulate(total, max_total_bytes, max_total_bytes));
    CHECK(!checked_accumulate(total, std::uint64_t{1}, max_total_bytes));
    CHECK(total == max_total_bytes);
  }
}

TEST_SUITE("core/checked") {
  using namespace xlamem;

  // Pairs of values of a small type against the exact result in 64 bits: every value with
  // step 1, else a lattice of step `step` plus the values around 0 and the two ends.
  template <class T>
  void check_all_pairs(int step) {
    constexpr auto lo = static_cast<std::int64_t>(std::numeric_limits<T>::min());
    constexpr auto hi = static_cast<std::int64_t>(std::numeric_limits<T>::max());
    std::vector<std::int64_t> values;
    for (std::int64_t v = lo; v <= hi; v += step) values.push_back(v);
    if (step != 1) {
      for (const std::int64_t v : {lo + 1, std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, hi - 1, hi}) {
        if (v >= lo && v <= hi) values.push_back(v);
      }
    }
    std::int64_t wrong = 0;
    for (const std::int64_t a : values) {
      for (const std::int64_t b : values) {
        const std::int64_t sum = a + b;
        const std::int64_t product = a * b;
        const auto s = checked_add(static_cast<T>(a), static_cast<T>(b));
        const auto p = checked_mul(static_cast<T>(a), static_cast<T>(b));
        const bool sum_fits = sum >= lo && sum <= hi;
        const bool product_fits = product >= lo && product <= hi;
        if (s.has_value() != sum_fits || (sum_fits && *s != static_cast<T>(sum))) ++wrong;
        if (p.has_value() != product_fits || (product_fits && *p != static_cast<T>(product))) ++wrong;
      }
    }
    CHECK(wrong == 0);
  }

  TEST_CASE("checked_add and checked_mul agree with exact arithmetic on every 8-bit pair, and across 16 bits") {
    check_all_pairs<std::int8_t>(1);
    check_all_pairs<std::uint8_t>(1);
    check_all_pairs<char>(1);  // plain char, signed or not
    check_all_pairs<std::int16_t>(61);
    check_all_pairs<std::uint16_t>(61);
  }

  TEST_CASE("the limits of int32 and uint32, and multiplication by zero, one and minus one") {
    constexpr std::int32_t imin = std::numeric_limits<std::int32_t>::min();
    constexpr std::int32_t imax = std::numeric_limits<std::int32_t>::max();
    CHECK(checked_mul<std::int32_t>(0, imin) == 0);
    CHECK(checked_mul<std::int32_t>(imin, 0) == 0);
    CHECK(checked_mul<std::int32_t>(imax, -1) == -imax);
    CHECK(checked_mul<std::int32_t>(-1, imin) == std::nullopt);  // -imin does not fit
    CHECK(checked_mul<std::int32_t>(imin / 2, 2) == imin);        // exactly the minimum
    CHECK(checked_mul<std::int32_t>(imin / 2, -2) == std::nullopt);
    CHECK(checked_mul<std::int32_t>(46341, 46341) == std::nullopt);  // 46341^2 > 2^31 - 1
    CHECK(checked_mul<std::int32_t>(46340, -46340) == -2147395600);
    CHECK(checked_add<std::int32_t>(imax, imin) == -1);
    CHECK(checked_add<std::int32_t>(imin, 0) == imin);
    CHECK(checked_add<std::uint32_t>(0xFFFFFFFFu, 0) == 0xFFFFFFFFu);
    CHECK(checked_add<std::uint32_t>(0x80000000u, 0x80000000u) == std::nullopt);
    CHECK(checked_mul<std::uint32_t>(0x10000u, 0xFFFFu) == 0xFFFF0000u);
    CHECK(checked_mul<std::uint32_t>(0x10000u, 0x10000u) == std::nullopt);
    // constexpr: usable in constant expressions.
    static_assert(checked_add<std::int32_t>(2, 3) == 5);
    static_assert(!checked_mul<std::uint64_t>(max_total_bytes, 16).has_value());
  }

  TEST_CASE("checked_accumulate adds only while the total stays within the limit") {
    std::int64_t total = 10;
    CHECK(checked_accumulate<std::int64_t>(total, 5, 20));
    CHECK(total == 15);
    CHECK(checked_accumulate<std::int64_t>(total, 5, 20));  // exactly the limit
    CHECK(total == 20);
    CHECK_FALSE(checked_accumulate<std::int64_t>(total, 1, 20));
    CHECK(total == 20);  // unchanged on refusal
    CHECK(checked_accumulate<std::int64_t>(total, -30, 20));  // a negative step is allowed
    CHECK(total == -10);

    std::uint64_t bytes = std::numeric_limits<std::uint64_t>::max() - 1;
    CHECK(checked_accumulate<std::uint64_t>(bytes, 1));  // default limit: the type's maximum
    CHECK_FALSE(checked_accumulate<std::uint64_t>(bytes, 1));  // would wrap to 0
    CHECK(bytes == std::numeric_limits<std::uint64_t>::max());

    std::int32_t small = std::numeric_limits<std::int32_t>::min();
    CHECK_FALSE(checked_accumulate<std::int32_t>(small, -1));  // underflow, not only overflow
    CHECK(small == std::numeric_limits<std::int32_t>::min());
  }

  TEST_CASE("max_total_bytes is 2^60, and sums of a few such sizes stay inside int64") {
    static_assert(max_total_bytes == std::uint64_t{1} << 60);
    CHECK(checked_mul<std::int64_t>(static_cast<std::int64_t>(max_total_bytes), 7).has_value());
    CHECK_FALSE(checked_mul<std::int64_t>(static_cast<std::int64_t>(max_total_bytes), 8).has_value());
    std::uint64_t sum = 0;
    for (int k = 0; k < 4; ++k) CHECK(checked_accumulate(sum, max_total_bytes / 4, max_total_bytes));
    CHECK(sum == max_total_bytes);
    CHECK_FALSE(checked_accumulate(sum, std::uint64_t{1}, max_total_bytes));
  }
}
