// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `compact_vector<T>`: a vector of small trivial values (ids, integers) in 16 bytes that keeps
/// up to 8 bytes of elements in place. An HLO instruction's operands and users are one or two
/// ids almost always; a `std::vector` of them is 24 bytes plus a heap block of 32, so a module
/// of 10^6 instructions spent about 110 MB on them. Sizes are held in 32 bits: growing past
/// 2^32 - 1 elements throws `std::length_error`.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <new>
#include <ranges>
#include <span>
#include <stdexcept>
#include <type_traits>

namespace xlamem {

/// What a `compact_vector` holds: trivial values of at most a pointer's size.
template <class T>
concept compact_element = std::is_trivial_v<T> && sizeof(T) <= sizeof(void*);

template <compact_element T>
class compact_vector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  /// Elements held without a heap block.
  static constexpr std::size_t inline_capacity = sizeof(void*) / sizeof(T);

  compact_vector() noexcept = default;
  compact_vector(std::initializer_list<T> values) { assign(std::span<const T>(values.begin(), values.size())); }
  explicit compact_vector(std::span<const T> values) { assign(values); }
  compact_vector(const compact_vector& o) { assign(std::span<const T>(o.data(), o.size())); }
  compact_vector(compact_vector&& o) noexcept : size_(o.size_), capacity_(o.capacity_) {
    std::memcpy(bytes_, o.bytes_, sizeof bytes_);
    o.forget();
  }
  compact_vector& operator=(const compact_vector& o) {
    if (this != &o) assign(std::span<const T>(o.data(), o.size()));
    return *this;
  }
  compact_vector& operator=(compact_vector&& o) noexcept {
    if (this != &o) {
      release();
      std::memcpy(bytes_, o.bytes_, sizeof bytes_);
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.forget();
    }
    return *this;
  }
  compact_vector& operator=(std::initializer_list<T> values) {
    assign(std::span<const T>(values.begin(), values.size()));
    return *this;
  }
  ~compact_vector() { release(); }

  /// Replaces the elements with `values` (which must not point into this vector).
  void assign(std::span<const T> values) {
    clear();
    reserve(values.size());
    if (!values.empty()) std::memcpy(data(), values.data(), values.size() * sizeof(T));
    size_ = static_cast<std::uint32_t>(values.size());
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] T* data() noexcept { return on_heap() ? heap() : std::launder(reinterpret_cast<T*>(bytes_)); }
  [[nodiscard]] const T* data() const noexcept {
    return on_heap() ? heap() : std::launder(reinterpret_cast<const T*>(bytes_));
  }
  [[nodiscard]] T* begin() noexcept { return data(); }
  [[nodiscard]] T* end() noexcept { return data() + size_; }
  [[nodiscard]] const T* begin() const noexcept { return data(); }
  [[nodiscard]] const T* end() const noexcept { return data() + size_; }
  [[nodiscard]] const T* cbegin() const noexcept { return data(); }
  [[nodiscard]] const T* cend() const noexcept { return data() + size_; }
  [[nodiscard]] T& operator[](std::size_t k) noexcept { return data()[k]; }
  [[nodiscard]] const T& operator[](std::size_t k) const noexcept { return data()[k]; }
  [[nodiscard]] T& at(std::size_t k) {
    if (k >= size_) throw std::out_of_range("compact_vector::at: index out of range");
    return data()[k];
  }
  [[nodiscard]] const T& at(std::size_t k) const {
    if (k >= size_) throw std::out_of_range("compact_vector::at: index out of range");
    return data()[k];
  }
  [[nodiscard]] T& front() noexcept { return data()[0]; }
  [[nodiscard]] const T& front() const noexcept { return data()[0]; }
  [[nodiscard]] T& back() noexcept { return data()[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data()[size_ - 1]; }

  void push_back(T v) {
    if (size_ == capacity_) grow(static_cast<std::size_t>(size_) + 1);
    data()[size_++] = v;
  }
  /// Inserts `v` before `pos` (a pointer into this vector, or `end()`). @returns where it went.
  T* insert(const T* pos, T v) {
    const auto at = static_cast<std::size_t>(pos - data());
    if (size_ == capacity_) grow(static_cast<std::size_t>(size_) + 1);
    T* d = data();
    std::memmove(static_cast<void*>(d + at + 1), d + at, (size_ - at) * sizeof(T));
    d[at] = v;
    ++size_;
    return d + at;
  }
  void pop_back() noexcept { --size_; }
  void clear() noexcept { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  /// New elements are value-initialised (zero).
  void resize(std::size_t n) {
    reserve(n);
    if (n > size_) std::memset(static_cast<void*>(data() + size_), 0, (n - size_) * sizeof(T));
    size_ = static_cast<std::uint32_t>(n);
  }

  friend bool operator==(const compact_vector& a, const compact_vector& b) noexcept {
    return std::ranges::equal(a, b);
  }
  /// Compares with any other range of `T` (a `std::vector<T>`, a span).
  template <std::ranges::input_range R>
    requires(!std::same_as<std::remove_cvref_t<R>, compact_vector>) && std::equality_comparable_with<std::ranges::range_reference_t<const R&>, const T&>
  friend bool operator==(const compact_vector& a, const R& b) {
    return std::ranges::equal(a, b);
  }

 private:
  // The elements in place, or the heap block's address (copied in and out as bytes).
  alignas(T*) alignas(T) unsigned char bytes_[sizeof(T*)] = {};
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = inline_capacity;

  [[nodiscard]] bool on_heap() const noexcept { return capacity_ > inline_capacity; }
  [[nodiscard]] T* heap() const noexcept {
    T* p;
    std::memcpy(&p, bytes_, sizeof p);
    return p;
  }

  void grow(std::size_t at_least) {
    constexpr std::size_t most = std::numeric_limits<std::uint32_t>::max();
    if (at_least > most) throw std::length_error("compact_vector: more than 2^32 - 1 elements");
    const std::size_t cap = std::min(most, std::max(at_least, 2 * static_cast<std::size_t>(capacity_)));
    T* block = static_cast<T*>(::operator new(cap * sizeof(T)));
    if (size_ != 0) std::memcpy(static_cast<void*>(block), data(), size_ * sizeof(T));
    release();
    std::memcpy(bytes_, &block, sizeof block);
    capacity_ = static_cast<std::uint32_t>(cap);
  }
  void release() noexcept {
    if (on_heap()) ::operator delete(heap());
  }
  void forget() noexcept {
    std::memset(bytes_, 0, sizeof bytes_);
    size_ = 0;
    capacity_ = inline_capacity;
  }
};

}  // namespace xlamem
