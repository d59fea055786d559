// SPDX-License-Identifier: Apache-2.0
/// @file
/// constexpr helpers for powers of two and alignment of sizes, offsets and pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace xlamem {

/// True when `x` is a power of two (0 is not).
[[nodiscard]] constexpr bool is_power_of_two(std::uint64_t x) noexcept {
  return x != 0 && (x & (x - 1)) == 0;
}

/// The smallest power of two not below `x` (1 for 0). @pre the result fits in 64 bits.
[[nodiscard]] constexpr std::uint64_t next_power_of_two(std::uint64_t x) noexcept {
  std::uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

/// Rounds `x` up to a multiple of `alignment`. @pre `alignment` is a power of two and the
/// result does not overflow; use `checked_align_up` for untrusted sizes.
[[nodiscard]] constexpr std::uint64_t align_up(std::uint64_t x, std::uint64_t alignment) noexcept {
  return (x + (alignment - 1)) & ~(alignment - 1);
}

/// Rounds `x` down to a multiple of `alignment`. @pre `alignment` is a power of two.
[[nodiscard]] constexpr std::uint64_t align_down(std::uint64_t x,
                                                 std::uint64_t alignment) noexcept {
  return x & ~(alignment - 1);
}

/// `align_up` that reports overflow or a bad alignment as an empty optional.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_align_up(
    std::uint64_t x, std::uint64_t alignment) noexcept {
  if (!is_power_of_two(alignment)) return std::nullopt;
  if (x > std::numeric_limits<std::uint64_t>::max() - (alignment - 1)) return std::nullopt;
  return align_up(x, alignment);
}

/// True when `x` is a multiple of `alignment`. @pre `alignment` is a power of two.
[[nodiscard]] constexpr bool is_aligned(std::uint64_t x, std::uint64_t alignment) noexcept {
  return (x & (alignment - 1)) == 0;
}

/// True when the address `p` is a multiple of `alignment`. @pre `alignment` is a power of two.
[[nodiscard]] inline bool is_aligned(const void* p, std::size_t alignment) noexcept {
  return is_aligned(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)), alignment);
}

/// The pointer `p` rounded up to `alignment`. @pre `alignment` is a power of two.
[[nodiscard]] inline void* align_pointer_up(void* p, std::size_t alignment) noexcept {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const auto aligned = (addr + (alignment - 1)) & ~static_cast<std::uintptr_t>(alignment - 1);
  return static_cast<char*>(p) + (aligned - addr);
}

/// The largest power of two dividing `x` (0 for 0): the natural alignment of an offset.
[[nodiscard]] constexpr std::uint64_t alignment_of(std::uint64_t x) noexcept {
  return x & (~x + 1);
}

}  // namespace xlamem
