// SPDX-License-Identifier: Apache-2.0
/// @file
/// `per_cpu_cache_policy`: `fixed_block_pool`'s default free list. A small stack of free block
/// indices per CPU in front of a shared `lock_free_policy` list, the way TCMalloc's per-CPU
/// caches sit in front of its central lists.
///
/// Fast path: an acquire pops from the stack of the CPU the thread runs on and a release
/// pushes onto it, each in one restartable sequence (restartable_sequences.hpp): plain loads
/// and stores on cache lines no other CPU uses, no atomic read-modify-write, no lock, no
/// system call. A stack holds at most `cache_limit()` blocks (at most 126, and at most
/// N / CPUs, the CPU's share of the pool; parked blocks are never lost, see exhaustion below).
/// Behind the stacks, the free blocks that are in none sit in one array under a spin lock (TCMalloc's transfer
/// cache): an empty stack refills with half a stack in one lock and one copy, a full one sends
/// half back the same way, so a block moved between levels costs a copied word, not the
/// pointer chase of a linked free list. Blocks acquired on one thread or CPU and released on
/// another are fine: a block belongs to no stack, it just lands on the releaser's.
///
/// Exhaustion is exact: `pop()` returns `free_list_npos` only after the shared array was found
/// empty and every CPU's stack was drained into it (the drain marks the stacks, aborts every
/// running restartable sequence with one `membarrier` call, moves their blocks and unmarks
/// them), so a pool's exhaustion policy (fail, wait, grow, fall back) never sees the pool
/// empty while blocks sit in a cache. The drain costs a system call and an interrupt to each
/// CPU running the process: it happens only when the shared list is empty.
///
/// Where restartable sequences cannot be used (not x86-64 Linux with glibc 2.35+, rseq not
/// registered, e.g. `GLIBC_TUNABLES=glibc.pthread.rseq=0`, the `membarrier` command refused,
/// a pool of fewer than 2 blocks per CPU), the policy is the shared `lock_free_policy` alone,
/// decided per pool at construction (`per_cpu()` says which); a thread without an rseq area
/// of its own (not started by glibc) uses the shared array. Never a crash, never a macro.
///
/// Caveat (as for any lock in a pool): a `fork()` while another thread holds the shared
/// array's lock or is inside a drain leaves that lock held in the child, whose next use of
/// that level then waits for ever; fork while the pool's other threads are quiet.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <cstring>
#include <mutex>
#include <thread>

#include "xlamem/alloc/free_list.hpp"
#include "xlamem/alloc/restartable_sequences.hpp"

namespace xlamem {

namespace detail {

/// A lock held for a few instructions: spin on a read, yield to the scheduler after a while
/// (a holder may be preempted on an oversubscribed machine).
class spin_lock {
 public:
  void lock() noexcept {
    for (unsigned spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins % 64 == 0) std::this_thread::yield();
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

/// The free blocks behind the CPU stacks: a LIFO array of indices under a spin lock, moved
/// in batches with one copy (see the file comment). Holds each index at most once, so
/// `max_capacity` entries are enough.
class shared_index_stack {
 public:
  explicit shared_index_stack(std::uint32_t max_capacity)
      : slots_(std::make_unique<std::uint32_t[]>(max_capacity)) {}

  /// Up to `n` from the top into `out`; how many.
  std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    std::lock_guard<spin_lock> hold(lock_);
    const std::uint32_t k = std::min(n, count_);
    count_ -= k;
    std::memcpy(out, slots_.get() + count_, sizeof(std::uint32_t) * k);
    return k;
  }
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    std::lock_guard<spin_lock> hold(lock_);
    std::memcpy(slots_.get() + count_, in, sizeof(std::uint32_t) * n);
    count_ += n;
  }
  /// `first .. first+n-1`, so that the next pops return them in ascending order.
  void push_range(std::uint32_t first, std::uint32_t n) noexcept {
    std::lock_guard<spin_lock> hold(lock_);
    for (std::uint32_t k = n; k > 0; --k) slots_[count_++] = first + k - 1;
  }

 private:
  alignas(64) spin_lock lock_;
  std::uint32_t count_ = 0;
  std::unique_ptr<std::uint32_t[]> slots_;
};

}  // namespace detail

/// A stack of free blocks per CPU over restartable sequences, in front of one shared array;
/// without restartable sequences, a `lock_free_policy` list. The default free list of
/// `fixed_block_pool` (see the file comment). Thread-safe.
class per_cpu_cache_policy {
  using cpu_stack = detail::cpu_stack;
  using outcome = detail::rseq_outcome;

 public:
  static constexpr bool thread_safe = true;

  /// Whether a list may use per-CPU stacks.
  enum class mode {
    automatic,    ///< where the platform allows (see the file comment)
    shared_only,  ///< never: a `lock_free_policy` list alone
  };

  /// An empty list of indices in `[0, max_capacity)`.
  explicit per_cpu_cache_policy(std::uint32_t max_capacity, mode m = mode::automatic)
      : cpus_(cpus_for(max_capacity, m)),
        shared_(cpus_ != 0 ? max_capacity : 0),
        fallback_(cpus_ != 0 ? 0 : max_capacity) {
    if (cpus_ == 0) return;
    limit_ = std::min<std::uint32_t>(cpu_stack::max_slots, max_capacity / cpus_);
    batch_ = std::max<std::uint32_t>(1, limit_ / 2);
    stacks_ = std::make_unique<cpu_stack[]>(cpus_);
  }

  /// Whether this list uses per-CPU stacks (else it is a `lock_free_policy` list).
  [[nodiscard]] bool per_cpu() const noexcept { return cpus_ != 0; }
  /// CPU stacks (0 without them).
  [[nodiscard]] std::uint32_t cpu_count() const noexcept { return cpus_; }
  /// The most blocks one CPU's stack holds (0 without stacks).
  [[nodiscard]] std::uint32_t cache_limit() const noexcept { return limit_; }
  /// Free blocks in the CPU stacks now (a snapshot while other threads work).
  [[nodiscard]] std::uint32_t cached() const noexcept {
    std::uint32_t n = 0;
    for (std::uint32_t c = 0; c < cpus_; ++c) {
      n += std::atomic_ref<std::uint32_t>(stacks_[c].count).load(std::memory_order_relaxed);
    }
    return n;
  }

  /// The caller's CPU stack, else (empty) half a stack from the shared array, else any block
  /// (the stacks drained); `free_list_npos` when all were empty.
  [[nodiscard]] std::uint32_t pop() noexcept {
    // Without stacks cpus_ is 0 and the section restarts at once.
    std::uint32_t index;
    const outcome r = detail::rseq_pop_local(rseq_offset_, stacks_.get(), cpus_, index);
    if (r == outcome::done) [[likely]] {
      detail::tsan_acquire(stacks_.get());
      return index;
    }
    return pop_slow();
  }

  /// Onto the caller's CPU stack (sending half of it to the shared array when full), else
  /// onto the shared array.
  void push(std::uint32_t index) noexcept {
    detail::tsan_release(stacks_.get());
    const outcome r = detail::rseq_push_local(rseq_offset_, stacks_.get(), cpus_, index, limit_);
    if (r == outcome::done) [[likely]]
      return;
    push_slow(index);
  }

  /// Up to `n` indices from the shared array, then from the caller's CPU stack; it may return
  /// fewer than are free (it never drains: `pop()` is the exact emptiness test).
  [[nodiscard]] std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    if (cpus_ == 0) return fallback_.pop_many(out, n);
    std::uint32_t k = shared_.pop_many(out, n);
    char* area = detail::rseq_area(rseq_offset_);
    const auto cpu = static_cast<std::uint32_t>(detail::rseq_cpu(area));
    if (k < n && cpu < cpus_) k += take_own(area, &stacks_[cpu], cpu, out + k, n - k);
    return k;
  }

  /// Onto the shared array in one lock (one compare-exchange without stacks).
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    if (cpus_ == 0) return fallback_.push_many(in, n);
    shared_.push_many(in, n);
  }

  /// Makes `first .. first+count-1` available.
  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    if (cpus_ == 0) return fallback_.push_range(first, count);
    shared_.push_range(first, count);
  }

  /// Moves every block in the CPU stacks to the shared array (what an exhausted `pop` does).
  /// Free when the stacks look empty: a pool whose blocks are all held fails or waits without
  /// a system call (a block parked the whole time shows in its stack's count throughout).
  void drain() noexcept {
    if (cached() == 0) return;
    std::lock_guard<std::mutex> lock(drain_mutex_);
    for (std::uint32_t c = 0; c < cpus_; ++c) blocked(c).store(1, std::memory_order_relaxed);
    // Without the fence a section that read the stack unblocked could still commit: leave the
    // stacks alone (rseq_usable() registered the process, so the kernel does not refuse).
    if (detail::rseq_fence()) {
      detail::tsan_acquire(stacks_.get());
      for (std::uint32_t c = 0; c < cpus_; ++c) {
        cpu_stack& s = stacks_[c];
        // Atomic (relaxed) like `cached()`'s reads, which other threads make without the lock.
        std::atomic_ref<std::uint32_t> count(s.count);
        const std::uint32_t n = count.load(std::memory_order_relaxed);
        if (n != 0) shared_.push_many(s.slots, n);
        count.store(0, std::memory_order_relaxed);
      }
    }
    for (std::uint32_t c = 0; c < cpus_; ++c) blocked(c).store(0, std::memory_order_release);
  }

 private:
  // The number of CPU stacks to keep: 0 (none) unless wanted and possible.
  static std::uint32_t cpus_for(std::uint32_t max_capacity, mode m) noexcept {
    const std::uint32_t cpus = detail::configured_cpus();
    if (m == mode::shared_only || cpus == 0 || max_capacity / 2 < cpus) return 0;
    return detail::rseq_usable() ? cpus : 0;
  }

  std::atomic_ref<std::uint32_t> blocked(std::uint32_t c) const noexcept {
    return std::atomic_ref<std::uint32_t>(stacks_[c].blocked);
  }

  // The fast section did not pop: the caller's stack is empty (refill it), or the section
  // restarted or has no stack for this thread (the shared array).
  [[gnu::noinline]] std::uint32_t pop_slow() noexcept {
    if (cpus_ == 0) return fallback_.pop();
    char* area = detail::rseq_area(rseq_offset_);
    const auto cpu = static_cast<std::uint32_t>(detail::rseq_cpu(area));
    if (cpu < cpus_) {
      cpu_stack* stack = &stacks_[cpu];
      std::uint32_t index;
      const outcome r = detail::rseq_pop(area, stack, cpu, index);
      if (r == outcome::done) {
        detail::tsan_acquire(stacks_.get());
        return index;
      }
      if (r == outcome::empty) return refill(area, stack, cpu);
    }
    return pop_elsewhere();
  }

  // The fast section did not push: the caller's stack is full (spill half), or the section
  // restarted or has no stack for this thread (the shared array).
  [[gnu::noinline]] void push_slow(std::uint32_t index) noexcept {
    if (cpus_ == 0) return fallback_.push(index);
    char* area = detail::rseq_area(rseq_offset_);
    const auto cpu = static_cast<std::uint32_t>(detail::rseq_cpu(area));
    if (cpu < cpus_) {
      cpu_stack* stack = &stacks_[cpu];
      const outcome r = detail::rseq_push(area, stack, cpu, index, limit_);
      if (r == outcome::done) return;
      if (r == outcome::full) return spill(area, stack, cpu, index);
    }
    shared_.push_many(&index, 1);
  }

  // The shared array (else every stack drained into it first).
  std::uint32_t pop_elsewhere() noexcept {
    std::uint32_t i;
    if (shared_.pop_many(&i, 1) == 1) return i;
    drain();
    return shared_.pop_many(&i, 1) == 1 ? i : free_list_npos;
  }

  // The caller's stack was empty: half a stack from the shared array (drained into first if
  // empty), keep the first, push the rest onto the stack in one section (else back).
  [[gnu::noinline]] std::uint32_t refill(char* area, cpu_stack* stack, std::uint32_t cpu) noexcept {
    std::uint32_t got[cpu_stack::max_slots];
    std::uint32_t n = shared_.pop_many(got, batch_);
    if (n == 0) {
      drain();
      n = shared_.pop_many(got, batch_);
      if (n == 0) return free_list_npos;
    }
    if (n > 1) {
      detail::tsan_release(stacks_.get());
      if (detail::rseq_push_many(area, stack, cpu, got + 1, n - 1, limit_) != outcome::done) {
        shared_.push_many(got + 1, n - 1);
      }
    }
    return got[0];
  }

  // The caller's stack was full: send `index` and half the stack to the shared array at once.
  [[gnu::noinline]] void spill(char* area, cpu_stack* stack, std::uint32_t cpu,
                               std::uint32_t index) noexcept {
    std::uint32_t out[cpu_stack::max_slots + 1];
    out[0] = index;
    const std::uint32_t n = 1 + take_own(area, stack, cpu, out + 1, batch_);
    shared_.push_many(out, n);
  }

  // Pops up to `n` from the caller's stack in one section; 0 when it is empty or restarted.
  std::uint32_t take_own(char* area, cpu_stack* stack, std::uint32_t cpu, std::uint32_t* out,
                         std::uint32_t n) noexcept {
    std::uint32_t k = 0;
    if (n == 0 || detail::rseq_pop_many(area, stack, cpu, out, n, k) != outcome::done) return 0;
    detail::tsan_acquire(stacks_.get());
    return k;
  }

  // Read-only after construction, together on the first line.
  std::unique_ptr<cpu_stack[]> stacks_;
  // glibc's rseq area: the fast sections store there even without stacks (and then restart
  // at once), so it is set whatever the mode (glibc keeps the area when rseq is off).
  std::ptrdiff_t rseq_offset_ = detail::rseq_offset();
  std::uint32_t cpus_;  // CPU stacks; 0: the lock-free fallback list is the whole list
  std::uint32_t limit_ = 0;
  std::uint32_t batch_ = 0;
  detail::shared_index_stack shared_;        // with stacks: every free block not in a stack
  detail::lock_free_list<false> fallback_;   // without stacks: every free block
  std::mutex drain_mutex_;
};
static_assert(free_list_policy<per_cpu_cache_policy>);

}  // namespace xlamem
