// SPDX-License-Identifier: Apache-2.0
/// @file
/// Free-list policies for `fixed_block_pool`: they hold the indices of free blocks.
/// - `lock_free_policy`: a Treiber stack over an array of next-indices; the head is one 64-bit
///   word packing the top index (low 32 bits) with an ABA tag (high 32 bits) bumped by every
///   push and pop, so a stale compare-exchange fails instead of handing one block to two owners.
///   The tag wraps after 2^32 operations between a thread's load and its compare-exchange,
///   which would need a thread stalled for billions of operations.
/// - `mutex_fifo_policy`: `std::mutex` + a ring of indices, first released is first reused (the
///   behaviour of XLA's HostMemoryPool, without its per-push `std::queue` node allocations).
/// - `single_thread_policy`: a LIFO stack with no synchronisation at all.
///
/// Contract the compiler cannot check: `push(i)` is called only for an index in
/// `[0, max_capacity)` that is not already in the list; `push_range(first, n)` makes
/// `first .. first+n-1` available so that the next pops return them in that order (absent
/// concurrent pushes); `pop()` returns `free_list_npos` when empty. Optional batch members
/// `pop_many(out, n) -> count` and `push_many(in, n)` let the pool's bulk operations and
/// `local_cache` move many indices in one synchronised step. All three are O(1)
/// (`push_range` O(n)) and noexcept; `thread_safe` says whether concurrent calls are allowed.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "xlamem/align.hpp"

namespace xlamem {

/// The index `pop()` returns from an empty free list.
inline constexpr std::uint32_t free_list_npos = 0xFFFFFFFFu;

/// A free list of block indices in `[0, max_capacity)`, built from `max_capacity` (empty at
/// first).
template <class F>
concept free_list_policy = std::constructible_from<F, std::uint32_t> &&
    requires(F& f, std::uint32_t i) {
  { f.pop() }
  noexcept->std::same_as<std::uint32_t>;
  { f.push(i) }
  noexcept;
  { f.push_range(i, i) }
  noexcept;
  { F::thread_safe } -> std::convertible_to<bool>;
};

/// Lock-free LIFO free list (ABA-safe through a tagged 64-bit head). Thread-safe.
class lock_free_policy {
 public:
  static constexpr bool thread_safe = true;

  explicit lock_free_policy(std::uint32_t max_capacity)
      : next_(std::make_unique<std::atomic<std::uint32_t>[]>(max_capacity)) {}

  [[nodiscard]] std::uint32_t pop() noexcept {
    std::uint64_t h = head_.load(std::memory_order_acquire);
    for (;;) {
      const auto top = static_cast<std::uint32_t>(h);
      if (top == free_list_npos) return free_list_npos;
      // May read a stale next if another thread popped `top` meanwhile; the tag then differs
      // and the compare-exchange below fails.
      const std::uint32_t next = next_[top].load(std::memory_order_relaxed);
      const std::uint64_t desired = pack(tag(h) + 1, next);
      if (head_.compare_exchange_weak(h, desired, std::memory_order_acquire,
                                      std::memory_order_acquire)) {
        return top;
      }
    }
  }

  void push(std::uint32_t index) noexcept { link(index, index); }

  /// Pops up to `n` indices with one compare-exchange; returns how many.
  [[nodiscard]] std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    std::uint64_t h = head_.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t k = 0;
      std::uint32_t cur = static_cast<std::uint32_t>(h);
      // Stale reads are harmless: every stored next is a valid index or npos, the walk is
      // bounded by n, and a changed head fails the compare-exchange.
      while (k < n && cur != free_list_npos) {
        out[k++] = cur;
        cur = next_[cur].load(std::memory_order_relaxed);
      }
      if (k == 0) return 0;
      if (head_.compare_exchange_weak(h, pack(tag(h) + 1, cur), std::memory_order_acquire,
                                      std::memory_order_acquire)) {
        return k;
      }
    }
  }

  /// Pushes `n` indices with one compare-exchange.
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    if (n == 0) return;
    for (std::uint32_t k = 0; k + 1 < n; ++k)
      next_[in[k]].store(in[k + 1], std::memory_order_relaxed);
    link(in[0], in[n - 1]);
  }

  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    if (count == 0) return;
    for (std::uint32_t i = first; i + 1 < first + count; ++i) {
      next_[i].store(i + 1, std::memory_order_relaxed);
    }
    link(first, first + count - 1);
  }

 private:
  static constexpr std::uint64_t pack(std::uint64_t tag, std::uint32_t index) noexcept {
    return (tag << 32) | index;
  }
  static constexpr std::uint64_t tag(std::uint64_t head) noexcept { return head >> 32; }

  // Pushes the chain first -> ... -> last (already linked) in one compare-exchange.
  void link(std::uint32_t first, std::uint32_t last) noexcept {
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    for (;;) {
      next_[last].store(static_cast<std::uint32_t>(h), std::memory_order_relaxed);
      const std::uint64_t desired = pack(tag(h) + 1, first);
      // release: the block's contents and next_[last] become visible to the next popper.
      if (head_.compare_exchange_weak(h, desired, std::memory_order_release,
                                      std::memory_order_relaxed)) {
        return;
      }
    }
  }

  alignas(64) std::atomic<std::uint64_t> head_{pack(0, free_list_npos)};
  alignas(64) std::unique_ptr<std::atomic<std::uint32_t>[]> next_;
};
static_assert(free_list_policy<lock_free_policy>);

/// Mutex-guarded FIFO free list: the least recently released block is reused first, as in
/// XLA's HostMemoryPool. Thread-safe.
class mutex_fifo_policy {
 public:
  static constexpr bool thread_safe = true;

  explicit mutex_fifo_policy(std::uint32_t max_capacity)
      : mask_(next_power_of_two(max_capacity == 0 ? 1 : max_capacity) - 1),
        ring_(std::make_unique<std::uint32_t[]>(mask_ + 1)) {}

  [[nodiscard]] std::uint32_t pop() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (front_ == back_) return free_list_npos;
    return ring_[front_++ & mask_];
  }

  void push(std::uint32_t index) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ring_[back_++ & mask_] = index;
  }

  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::uint32_t i = 0; i < count; ++i) ring_[back_++ & mask_] = first + i;
  }

  /// Pops up to `n` indices under one lock; returns how many.
  [[nodiscard]] std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint32_t k = 0;
    while (k < n && front_ != back_) out[k++] = ring_[front_++ & mask_];
    return k;
  }

  /// Pushes `n` indices under one lock.
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::uint32_t k = 0; k < n; ++k) ring_[back_++ & mask_] = in[k];
  }

 private:
  std::mutex mutex_;
  std::uint64_t front_ = 0;  // next to pop; monotone, so front_ == back_ means empty
  std::uint64_t back_ = 0;   // next free slot
  std::uint64_t mask_;
  std::unique_ptr<std::uint32_t[]> ring_;
};
static_assert(free_list_policy<mutex_fifo_policy>);

/// Unsynchronised LIFO free list for pools used by one thread at a time. Not thread-safe.
class single_thread_policy {
 public:
  static constexpr bool thread_safe = false;

  explicit single_thread_policy(std::uint32_t max_capacity)
      : next_(std::make_unique<std::uint32_t[]>(max_capacity)) {}

  [[nodiscard]] std::uint32_t pop() noexcept {
    const std::uint32_t top = head_;
    if (top != free_list_npos) head_ = next_[top];
    return top;
  }

  void push(std::uint32_t index) noexcept {
    next_[index] = head_;
    head_ = index;
  }

  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    for (std::uint32_t i = count; i > 0; --i) push(first + i - 1);
  }

 private:
  std::uint32_t head_ = free_list_npos;
  std::unique_ptr<std::uint32_t[]> next_;
};
static_assert(free_list_policy<single_thread_policy>);

}  // namespace xlamem
