// SPDX-License-Identifier: Apache-2.0
// The fuzz input read as a stream of choices, for structure-aware harnesses. Our own, so the
// harnesses build with any compiler (the `fuzz replay` tests use g++), not only with clang's
// libFuzzer headers. Once the bytes run out every choice is the lowest value: generation ends.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace xlamem::fuzz {

class byte_choices {
 public:
  byte_choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::size_t remaining() const { return size_ - pos_; }

  bool flag() { return (next_byte() & 1U) != 0; }

  /// A value in [lo, hi] from as few bytes as the range needs.
  template <std::integral T>
  T in_range(T lo, T hi) {
    using U = std::make_unsigned_t<T>;
    const std::uint64_t span = static_cast<std::uint64_t>(static_cast<U>(hi) - static_cast<U>(lo));
    if (span == 0) return lo;
    std::uint64_t v = 0;
    for (std::uint64_t seen = 0; seen < span && remaining() > 0; seen = (seen << 8) | 0xff) {
      v = (v << 8) | next_byte();
    }
    const std::uint64_t offset = span == UINT64_MAX ? v : v % (span + 1);
    return static_cast<T>(static_cast<U>(lo) + static_cast<U>(offset));
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;

  std::uint8_t next_byte() { return pos_ < size_ ? data_[pos_++] : 0; }
};

}  // namespace xlamem::fuzz
