// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `hlo::attribute_list`: an instruction's attributes, verbatim and in text order, in one heap
/// block (8 bytes in the instruction). A `std::vector` of key and value strings took 24 bytes,
/// a block of 64 per attribute and another for every value past 15 characters: about 136
/// bytes for the usual single `metadata={...}`, 10^6 times in a large module.
///
/// Iterating yields `{key, value}` views into the block; they stay valid until the list
/// changes or goes. Appending is amortised constant time.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace xlamem::hlo {

class attribute_list {
 public:
  /// One attribute as views into the list.
  struct entry {
    std::string_view key;
    std::string_view value;
    friend bool operator==(const entry&, const entry&) = default;
  };

  /// Walks the records in text order.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = entry;
    using difference_type = std::ptrdiff_t;
    using reference = entry;
    using pointer = void;

    iterator() = default;
    explicit iterator(const char* at) noexcept : at_(at) {}
    [[nodiscard]] entry operator*() const noexcept {
      const std::uint32_t k = read_length(at_), v = read_length(at_ + 4);
      return {std::string_view(at_ + 8, k), std::string_view(at_ + 8 + k, v)};
    }
    iterator& operator++() noexcept {
      at_ += 8 + read_length(at_) + read_length(at_ + 4);
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator was = *this;
      ++*this;
      return was;
    }
    friend bool operator==(const iterator&, const iterator&) = default;

   private:
    const char* at_ = nullptr;
  };

  attribute_list() noexcept = default;
  attribute_list(const attribute_list& o) {
    if (o.block_ != nullptr) {
      reserve(o.head().used);
      std::memcpy(block_, o.block_, header_bytes + o.head().used);
      head().capacity = o.head().used;
    }
  }
  attribute_list(attribute_list&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
  attribute_list& operator=(const attribute_list& o) {
    if (this != &o) *this = attribute_list(o);
    return *this;
  }
  attribute_list& operator=(attribute_list&& o) noexcept {
    if (this != &o) {
      ::operator delete(block_);
      block_ = o.block_;
      o.block_ = nullptr;
    }
    return *this;
  }
  ~attribute_list() { ::operator delete(block_); }

  /// Appends `key=value` (kept as given; keys may repeat, as in the text).
  void push_back(std::string_view key, std::string_view value) {
    constexpr std::size_t most = std::numeric_limits<std::uint32_t>::max();
    const std::size_t used = block_ ? head().used : 0;
    const std::size_t need = used + 8 + key.size() + value.size();
    if (key.size() > most || value.size() > most || need > most) {
      throw std::length_error("hlo::attribute_list: attributes of one instruction past 4 GiB");
    }
    reserve(need);
    char* at = block_ + header_bytes + used;
    write_length(at, static_cast<std::uint32_t>(key.size()));
    write_length(at + 4, static_cast<std::uint32_t>(value.size()));
    if (!key.empty()) std::memcpy(at + 8, key.data(), key.size());
    if (!value.empty()) std::memcpy(at + 8 + key.size(), value.data(), value.size());
    head().used = static_cast<std::uint32_t>(need);
    ++head().count;
  }

  [[nodiscard]] std::size_t size() const noexcept { return block_ ? head().count : 0; }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] iterator begin() const noexcept { return iterator(block_ ? block_ + header_bytes : nullptr); }
  [[nodiscard]] iterator end() const noexcept { return iterator(block_ ? block_ + header_bytes + head().used : nullptr); }

  /// The value of the first attribute named `key`, or nullopt.
  [[nodiscard]] std::optional<std::string_view> find(std::string_view key) const noexcept {
    for (const entry e : *this) {
      if (e.key == key) return e.value;
    }
    return std::nullopt;
  }

  friend bool operator==(const attribute_list& a, const attribute_list& b) noexcept {
    const std::size_t n = a.block_ ? a.head().used : 0;
    if (n != (b.block_ ? b.head().used : 0)) return false;
    return n == 0 || std::memcmp(a.block_ + header_bytes, b.block_ + header_bytes, n) == 0;
  }

 private:
  struct header {
    std::uint32_t count;
    std::uint32_t used;      // bytes of records
    std::uint32_t capacity;  // bytes of records the block holds
  };
  static constexpr std::size_t header_bytes = sizeof(header);
  char* block_ = nullptr;  // header, then per attribute: key length, value length (4 bytes each), key, value

  [[nodiscard]] header& head() noexcept { return *std::launder(reinterpret_cast<header*>(block_)); }
  [[nodiscard]] const header& head() const noexcept { return *std::launder(reinterpret_cast<const header*>(block_)); }

  void reserve(std::size_t bytes) {
    const std::size_t cap = block_ ? head().capacity : 0;
    if (block_ != nullptr && bytes <= cap) return;
    const std::size_t grown = std::min<std::size_t>(std::numeric_limits<std::uint32_t>::max(),
                                                    block_ ? std::max(bytes, 2 * cap) : bytes);
    char* fresh = static_cast<char*>(::operator new(header_bytes + grown));
    header h{0, 0, static_cast<std::uint32_t>(grown)};
    if (block_ != nullptr) {
      h.count = head().count;
      h.used = head().used;
      std::memcpy(fresh + header_bytes, block_ + header_bytes, h.used);
      ::operator delete(block_);
    }
    ::new (static_cast<void*>(fresh)) header(h);
    block_ = fresh;
  }

  static std::uint32_t read_length(const char* at) noexcept {
    std::uint32_t n;
    std::memcpy(&n, at, 4);
    return n;
  }
  static void write_length(char* at, std::uint32_t n) noexcept { std::memcpy(at, &n, 4); }
};

}  // namespace xlamem::hlo
