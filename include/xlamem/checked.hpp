// SPDX-License-Identifier: Apache-2.0
/// @file
/// Checked integer arithmetic for sizes, offsets and sums read from untrusted input: each
/// helper returns nullopt instead of wrapping, so a byte count that would overflow becomes an
/// error naming the shape or instruction rather than a silently small number.
///
/// Also the one limit every reader and pass agrees on, `max_total_bytes` (2^60, an exabyte):
/// readers refuse inputs whose sizes sum above it, which leaves every later sum of sizes,
/// offsets and alignment padding far inside `int64_t`.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>

namespace xlamem {

/// Largest byte size, and largest sum of byte sizes, that readers accept (2^60).
inline constexpr std::uint64_t max_total_bytes = std::uint64_t{1} << 60;

/// `a + b`, or nullopt when it does not fit in `T`.
template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, T b) noexcept {
  if constexpr (std::is_signed_v<T>) {
    if (b > 0 && a > std::numeric_limits<T>::max() - b) return std::nullopt;
    if (b < 0 && a < std::numeric_limits<T>::min() - b) return std::nullopt;
  } else {
    if (a > std::numeric_limits<T>::max() - b) return std::nullopt;
  }
  return static_cast<T>(a + b);
}

/// `a * b`, or nullopt when it does not fit in `T`.
template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, T b) noexcept {
  if (a == 0 || b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    // Done in the unsigned magnitude; the one asymmetric case (min * -1) is covered by the bound.
    const bool neg = (a < 0) != (b < 0);
    using U = std::make_unsigned_t<T>;
    const U ua = a < 0 ? U(0) - static_cast<U>(a) : static_cast<U>(a);
    const U ub = b < 0 ? U(0) - static_cast<U>(b) : static_cast<U>(b);
    const U limit = neg ? static_cast<U>(std::numeric_limits<T>::max()) + 1 : static_cast<U>(std::numeric_limits<T>::max());
    if (ua > limit / ub) return std::nullopt;
    const U r = ua * ub;
    return neg ? static_cast<T>(U(0) - r) : static_cast<T>(r);
  } else {
    if (a > std::numeric_limits<T>::max() / b) return std::nullopt;
    return static_cast<T>(a * b);
  }
}

/// `total += v` when the result stays within `limit`; @returns false (total unchanged) otherwise.
template <std::integral T>
[[nodiscard]] constexpr bool checked_accumulate(T& total, T v, T limit = std::numeric_limits<T>::max()) noexcept {
  const auto s = checked_add(total, v);
  if (!s || *s > limit) return false;
  total = *s;
  return true;
}

}  // namespace xlamem
