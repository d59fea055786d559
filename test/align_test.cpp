// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/align.hpp: powers of two, rounding sizes and pointers up and down,
// the overflow-checked round-up and the natural alignment of an offset.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "xlamem/align.hpp"

TEST_SUITE("core") {
  using namespace xlamem;

  TEST_CASE("alignment helpers") {
    static_assert(is_power_of_two(1) && is_power_of_two(4096) && !is_power_of_two(0) &&
                  !is_power_of_two(12));
    static_assert(align_up(0, 64) == 0 && align_up(1, 64) == 64 && align_up(64, 64) == 64);
    static_assert(align_down(127, 64) == 64);
    static_assert(next_power_of_two(0) == 1 && next_power_of_two(5) == 8 &&
                  next_power_of_two(8) == 8);
    static_assert(alignment_of(96) == 32 && alignment_of(0) == 0);
    static_assert(is_aligned(std::uint64_t{256}, 256) && !is_aligned(std::uint64_t{100}, 8));
    CHECK(checked_align_up(~std::uint64_t{0}, 64) == std::nullopt);
    CHECK(checked_align_up(10, 3) == std::nullopt);
    CHECK(checked_align_up(10, 8) == std::optional<std::uint64_t>(16));
    alignas(64) char buf[128];
    CHECK(is_aligned(static_cast<void*>(buf), 64));
    CHECK(align_pointer_up(buf + 1, 64) == buf + 64);
  }
}

TEST_SUITE("core/align") {
  using namespace xlamem;
  constexpr std::uint64_t top = std::uint64_t{1} << 63;
  constexpr std::uint64_t all_ones = std::numeric_limits<std::uint64_t>::max();

  TEST_CASE("is_power_of_two holds for exactly the 64 single-bit values") {
    int powers = 0;
    for (int b = 0; b < 64; ++b) {
      const std::uint64_t p = std::uint64_t{1} << b;
      CHECK(is_power_of_two(p));
      powers += is_power_of_two(p) ? 1 : 0;
      if (b >= 2) CHECK_FALSE(is_power_of_two(p - 1));  // 3, 7, 15, ...: several bits
      if (b >= 1) CHECK_FALSE(is_power_of_two(p + 1));
    }
    CHECK(powers == 64);
    CHECK_FALSE(is_power_of_two(0));
    CHECK_FALSE(is_power_of_two(all_ones));
    CHECK_FALSE(is_power_of_two(top | 1));
  }

  TEST_CASE("next_power_of_two: the smallest power not below x, up to 2^63") {
    static_assert(next_power_of_two(1) == 1 && next_power_of_two(2) == 2 && next_power_of_two(3) == 4);
    for (std::uint64_t x = 1; x <= 4097; ++x) {
      const std::uint64_t p = next_power_of_two(x);
      REQUIRE(is_power_of_two(p));
      CHECK(p >= x);
      CHECK((p == 1 || p / 2 < x));  // the smallest such power
    }
    CHECK(next_power_of_two(top) == top);
    CHECK(next_power_of_two(top - 1) == top);
    CHECK(next_power_of_two((std::uint64_t{1} << 40) + 1) == std::uint64_t{1} << 41);
  }

  TEST_CASE("align_up and align_down bracket x by the nearest multiples") {
    for (const std::uint64_t a : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{8}, std::uint64_t{64},
                                  std::uint64_t{4096}}) {
      for (std::uint64_t x = 0; x < 3 * a + 3; ++x) {
        const std::uint64_t up = align_up(x, a);
        const std::uint64_t down = align_down(x, a);
        CHECK(is_aligned(up, a));
        CHECK(is_aligned(down, a));
        CHECK(down <= x);
        CHECK(x <= up);
        CHECK(up - down == (is_aligned(x, a) ? 0 : a));
      }
    }
    CHECK(align_up(5, 1) == 5);  // alignment 1 changes nothing
    CHECK(align_down(all_ones, 4096) == all_ones - 4095);
    CHECK(align_down(top + 5, top) == top);
    CHECK(align_up(top - 1, top) == top);
  }

  TEST_CASE("checked_align_up: empty for a bad alignment or a result past 2^64 - 1, exact at the edge") {
    CHECK(checked_align_up(10, 0) == std::nullopt);   // 0 is not a power of two
    CHECK(checked_align_up(10, 24) == std::nullopt);  // nor is 24
    CHECK(checked_align_up(0, 4096) == std::optional<std::uint64_t>(0));
    CHECK(checked_align_up(all_ones, 1) == std::optional<std::uint64_t>(all_ones));
    CHECK(checked_align_up(all_ones - 63, 64) == std::optional<std::uint64_t>(all_ones - 63));  // aligned already
    CHECK(checked_align_up(all_ones - 62, 64) == std::nullopt);                             // one past
    CHECK(checked_align_up(top, top) == std::optional<std::uint64_t>(top));
    CHECK(checked_align_up(top + 1, top) == std::nullopt);
    static_assert(checked_align_up(100, 32).value() == 128);
  }

  TEST_CASE("alignment_of is the lowest set bit: the largest power of two dividing x") {
    CHECK(alignment_of(1) == 1);
    CHECK(alignment_of(7) == 1);
    CHECK(alignment_of(8) == 8);
    CHECK(alignment_of(24) == 8);
    CHECK(alignment_of(top) == top);
    CHECK(alignment_of(all_ones) == 1);
    for (std::uint64_t x = 1; x < 2000; ++x) {
      const std::uint64_t a = alignment_of(x);
      REQUIRE(is_power_of_two(a));
      CHECK(is_aligned(x, a));
      CHECK_FALSE(is_aligned(x, 2 * a));
    }
  }

  TEST_CASE("pointers: is_aligned and align_pointer_up keep the address inside the buffer") {
    alignas(256) unsigned char buf[1024];
    void* const base = buf;
    CHECK(is_aligned(base, 256));
    CHECK(is_aligned(base, 1));
    CHECK_FALSE(is_aligned(static_cast<void*>(buf + 1), 2));
    CHECK(is_aligned(static_cast<void*>(buf + 96), 32));
    CHECK_FALSE(is_aligned(static_cast<void*>(buf + 96), 64));
    CHECK(align_pointer_up(base, 256) == base);  // aligned already: unchanged
    for (std::size_t off = 0; off <= 256; ++off) {
      void* const p = buf + off;
      void* const q = align_pointer_up(p, 128);
      CHECK(is_aligned(q, 128));
      CHECK(static_cast<unsigned char*>(q) >= buf + off);
      CHECK(static_cast<unsigned char*>(q) - (buf + off) < 128);
    }
    CHECK(align_pointer_up(buf + 1, 1) == buf + 1);
  }
}
