// SPDX-License-Identifier: Apache-2.0
/// @file
/// Free-list policies for `fixed_block_pool`: they hold the indices of free blocks.
/// - `lock_free_policy`: Treiber stacks over one shared array of next-indices, one stack per
///   stripe. Each stripe's head is one 64-bit word on its own cache line, packing the top index
///   (low 32 bits) with an ABA tag (high 32 bits) bumped by every push and pop, so a stale
///   compare-exchange fails instead of handing one block to two owners. The tag wraps after
///   2^32 operations on one stripe between a thread's load and its compare-exchange, which
///   would need a thread stalled for billions of operations.
///   Why stripes: with one head, two threads on two cores bounce its cache line on every
///   acquire and release (measured 8x slower per pair than one thread). There is one stripe per
///   hardware thread (a power of two, at most 64, never more than the capacity), and a thread
///   works on the stripe of the CPU it runs on, so threads on different CPUs touch different
///   lines. `pop` asks for the CPU (an inline read of the rseq area on glibc, ~0.3 ns) and
///   takes from that stripe, else steals from the first non-empty one in the order own ^ 1,
///   own ^ 2, ... (neighbours first; threads whose stripes got no blocks spread over those
///   that did, instead of all raiding one); it returns `free_list_npos` only when all stripes
///   were empty at one instant (a double collect, see `pop_slow`), so an exhaustion policy
///   never sees a pool empty that had a block free all along. `pop` records the popper's
///   stripe in the block's next entry (unused while the block is held), and `push` returns
///   the block there without asking again: one CPU read per acquire+release pair.
///   `push_many` uses the caller's CPU stripe; `push_range` spreads its indices over the
///   stripes in ascending runs. With one stripe (one hardware thread, or a capacity of 1) it
///   is a single Treiber stack.
/// - `mutex_fifo_policy`: `std::mutex` + a ring of indices, first released is first reused (the
///   behaviour of XLA's HostMemoryPool, without its per-push `std::queue` node allocations).
/// - `single_thread_policy`: a LIFO stack with no synchronisation at all.
///
/// Owner bias, opt in: `owner_biased<lock_free_policy>` and `owner_biased<mutex_fifo_policy>`
/// are the same lists carrying an `owner_bias` (owner_bias.hpp). While one thread alone has
/// used the list, that thread's pops and pushes use plain loads and stores:
/// `owner_biased<lock_free_policy>` works on the same tagged stripes (scanned from stripe 0, no
/// CPU read, no compare-exchange), `owner_biased<mutex_fifo_policy>` on the same ring without
/// the mutex. The first call from another thread revokes the bias for good (one `membarrier`
/// system call, an inter-processor interrupt to every CPU running the process) and from then
/// on every call takes the synchronised path described above. The data structure is the same
/// in both modes, so revoking moves nothing. `push_range` always takes the synchronised path
/// and never claims the bias: it runs while the pool is built, and when a pool grows, after
/// the growing thread's own `pop`.
/// Why opt in: the plain `lock_free_policy` and `mutex_fifo_policy` make no system call at
/// all, so they are safe under a seccomp filter, from a signal handler's point of view (as
/// safe as the synchronised path is) and with the hand-off pattern (acquire on one thread,
/// release on another), which revokes a bias at once. A pool that one thread uses is better
/// served by `single_thread_policy` or a `local_cache`; `owner_biased` is for a pool that one
/// thread usually has to itself but others may touch.
///
/// Contract the compiler cannot check: `push(i)` is called only for an index in
/// `[0, max_capacity)` that is not already in the list; `push_range(first, n)` makes
/// `first .. first+n-1` available: the next pops (absent concurrent pushes) return them in
/// ascending order from `mutex_fifo_policy` and `single_thread_policy`, and ascending within
/// each stripe's run from `lock_free_policy` (a thread that stays on one CPU gets its stripe's
/// run, then the other stripes' runs in that steal order); `pop()` returns `free_list_npos`
/// when empty. Optional batch members `pop_many(out, n) -> count` and `push_many(in, n)` let
/// the pool's bulk operations and `local_cache` move many indices in one synchronised step
/// (one per stripe visited). `pop` and `push` are O(1) except that `lock_free_policy`'s `pop`
/// is O(stripes) when it must steal or report empty; `push_range` is O(n). All are noexcept;
/// `thread_safe` says whether concurrent calls are allowed.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#if defined(__linux__)
#include <sched.h>  // sched_getcpu
#endif
// The thread's rseq area (glibc 2.35+), read inline by detail::cpu_hint_fast.
#if defined(__linux__) && defined(__GLIBC__) && defined(__has_include) && defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_builtin(__builtin_thread_pointer)
#include <sys/rseq.h>
#define XLAMEM_DETAIL_RSEQ_CPU_ID 1
#endif
#endif
#ifndef XLAMEM_DETAIL_RSEQ_CPU_ID
#define XLAMEM_DETAIL_RSEQ_CPU_ID 0
#endif

#include "xlamem/align.hpp"
#include "xlamem/alloc/owner_bias.hpp"
#include "xlamem/config.hpp"

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

namespace detail {

// The CPU the caller runs on, or a stable per-thread number where the platform cannot say;
// only a hint, as the thread may migrate right after. `sched_getcpu()` on Linux, else (or if
// it fails) a hash of the thread id. Out of line: the fast path is `cpu_hint_fast`.
[[gnu::noinline]] inline std::uint32_t current_cpu_hint() noexcept {
#if defined(__linux__)
  const int cpu = ::sched_getcpu();
  if (cpu >= 0) return static_cast<std::uint32_t>(cpu) & 0x7FFFFFFFu;
#endif
  const std::uint64_t h = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return static_cast<std::uint32_t>((h * 0x9E3779B97F4A7C15ull) >> 33);  // mix the high bits in
}

// The same hint, negative when it cannot be had cheaply (then call current_cpu_hint). On
// glibc 2.35+ it is the kernel's `cpu_id` in the thread's rseq area, read inline (two loads;
// what `sched_getcpu()` reads behind a call), negative when rseq is not registered there.
[[nodiscard]] inline std::int32_t cpu_hint_fast() noexcept {
#if XLAMEM_DETAIL_RSEQ_CPU_ID
  const auto* area = reinterpret_cast<const volatile struct rseq*>(
      static_cast<char*>(__builtin_thread_pointer()) + __rseq_offset);
  return static_cast<std::int32_t>(area->cpu_id);
#else
  return static_cast<std::int32_t>(current_cpu_hint());
#endif
}


// The bias of a list that has none: every operation takes the synchronised path. Empty, so
// `[[no_unique_address]]` makes it cost no byte.
struct no_owner_bias {
  template <class Plain, class Synchronised>
  decltype(auto) run(Plain&&, Synchronised&& synchronised) noexcept {
    return synchronised();
  }
};

template <bool Biased>
using owner_bias_for = std::conditional_t<Biased, owner_bias, no_owner_bias>;

/// Lock-free free list striped by CPU: one Treiber stack (LIFO) per stripe, each head a tagged
/// 64-bit word (ABA-safe) on its own cache line, over one shared array of next-indices.
/// Thread-safe. See the file comment for where each operation pushes and pops.
/// @tparam Biased whether it carries an owner bias (`owner_biased<lock_free_policy>`).
template <bool Biased>
class lock_free_list {
 public:
  static constexpr bool thread_safe = true;
  /// The most stripes a list has.
  static constexpr std::uint32_t max_stripes = 64;

  /// An empty list of indices in `[0, max_capacity)`. `stripes` 0 means one per hardware
  /// thread (`std::thread::hardware_concurrency()`); any count is rounded up to a power of two,
  /// capped at `max_stripes`, then halved until it is at most `max_capacity` (at least 1).
  /// Costs 64 bytes per stripe besides 4 bytes per index.
  explicit lock_free_list(std::uint32_t max_capacity, std::uint32_t stripes = 0)
      : mask_(stripe_count_for(max_capacity, stripes) - 1),
        stripes_(std::make_unique<stripe[]>(mask_ + 1)),
        next_(std::make_unique<std::atomic<std::uint32_t>[]>(max_capacity)) {}

  /// How many stripes (heads) the list has.
  [[nodiscard]] std::uint32_t stripe_count() const noexcept { return mask_ + 1; }

  /// Where the owner bias stands (see the file comment).
  [[nodiscard]] owner_bias::state_kind owner_bias_state() const noexcept requires Biased {
    return bias_.state();
  }
  /// Every call takes the synchronised path from now on (see `owner_bias::revoke`).
  void revoke_owner_bias() noexcept requires Biased { bias_.revoke(); }
  /// Whether the calling thread owns the list (see `owner_bias::held_by_caller`).
  [[nodiscard]] bool owned_by_caller() const noexcept requires Biased {
    return bias_.held_by_caller();
  }

  /// Pops from the caller's CPU stripe, else steals from the others (stripe `own ^ j` for
  /// j = 1, 2, ...); `free_list_npos` only if every stripe was empty at one instant (see
  /// `pop_slow`).
  [[nodiscard]] std::uint32_t pop() noexcept {
    return bias_.run([this] { return pop_owned(); }, [this] { return pop_shared(); });
  }

  /// Pushes onto the stripe of the CPU whose `pop` took `index` (recorded there; no CPU read).
  /// An index that `pop` did not hand out (from `pop_many`, or never popped, or popped by the
  /// bias owner) goes to whichever stripe its stale next entry names: always a valid stripe.
  /// The bias owner pushes onto stripe 0.
  void push(std::uint32_t index) noexcept {
    bias_.run(
        [&] { link<true>(0, index, index); },  // one thread: every block to stripe 0
        [&] { link<false>(next_[index].load(std::memory_order_relaxed) & mask_, index, index); });
  }

  /// Pops up to `n` indices, one compare-exchange per stripe visited (the caller's CPU stripe
  /// first, then the others); returns how many. It may return fewer than were free while other
  /// threads push and pop; `pop()` is the exact emptiness test.
  [[nodiscard]] std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    std::uint32_t k = 0;
    bias_.run(
        [&] {
          for (std::uint32_t s = 0; s <= mask_ && k < n; ++s)
            k += pop_many_from<true>(s, out + k, n - k);
        },
        [&] {
          const std::uint32_t own = own_stripe();
          for (std::uint32_t j = 0; j <= mask_ && k < n; ++j)
            k += pop_many_from<false>(own ^ j, out + k, n - k);
        });
    // No `record` here (a store per index, +25% on a 64-block batch): a block taken in bulk
    // and released by `push` goes to whatever stripe its stale next entry names, which is
    // still correct; bulk and `local_cache` releases use `push_many`, which needs no record.
    return k;
  }

  /// Pushes `n` indices onto the caller's CPU stripe with one compare-exchange (the bias
  /// owner's onto stripe 0: one thread, no CPU to spread over).
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    if (n == 0) return;
    for (std::uint32_t k = 0; k + 1 < n; ++k)
      next_[in[k]].store(in[k + 1], std::memory_order_relaxed);
    bias_.run([&] { link<true>(0, in[0], in[n - 1]); },
              [&] { link<false>(own_stripe(), in[0], in[n - 1]); });
  }

  /// Spreads `first .. first+count-1` over the stripes in ascending contiguous runs (stripe 0
  /// gets the lowest). Runs are a multiple of 16 indices long (the last may be shorter), so
  /// the stripes' first entries in the next-index array, where threads on different CPUs
  /// start, are on different cache lines; a short range therefore fills only the first few
  /// stripes, and threads on the other CPUs steal from them.
  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    if (count == 0) return;
    const std::uint64_t stripes = mask_ + 1;
    const std::uint64_t run = ((count + stripes - 1) / stripes + 15) & ~std::uint64_t{15};
    for (std::uint32_t s = 0; s <= mask_ && count != 0; ++s) {
      const auto n = static_cast<std::uint32_t>(count < run ? count : run);
      for (std::uint32_t i = first; i + 1 < first + n; ++i) {
        next_[i].store(i + 1, std::memory_order_relaxed);
      }
      link<false>(s, first, first + n - 1);
      first += n;
      count -= n;
    }
  }

 private:
  // One head per cache line: index of the top in the low 32 bits, ABA tag in the high 32.
  struct alignas(64) stripe {
    std::atomic<std::uint64_t> head{pack(0, free_list_npos)};
  };

  static constexpr std::uint64_t pack(std::uint64_t tag, std::uint32_t index) noexcept {
    return (tag << 32) | index;
  }
  static constexpr std::uint64_t tag(std::uint64_t head) noexcept { return head >> 32; }

  static std::uint32_t stripe_count_for(std::uint32_t max_capacity, std::uint32_t wanted) noexcept {
    if (wanted == 0) wanted = std::thread::hardware_concurrency();
    std::uint64_t n = next_power_of_two(wanted == 0 ? 1 : wanted);
    if (n > max_stripes) n = max_stripes;
    // Never more stripes than indices: a recorded stripe number (see `record`) must itself be
    // a valid index for a stale reader of the next-index array.
    while (n > 1 && n > max_capacity) n >>= 1;
    return static_cast<std::uint32_t>(n);
  }

  std::uint32_t own_stripe() const noexcept {
    const std::int32_t cpu = detail::cpu_hint_fast();
    return (cpu >= 0 ? static_cast<std::uint32_t>(cpu) : detail::current_cpu_hint()) & mask_;
  }

  // A popped index's next entry is dead until it is pushed again: keep the popper's stripe
  // there, so `push` returns the block to that stripe without asking for the CPU again. A
  // stale reader (a pop that lost its compare-exchange) may read it; it is below the stripe
  // count, hence a valid index, and that reader's compare-exchange fails on the tag.
  void record(std::uint32_t index, std::uint32_t own) noexcept {
    next_[index].store(own, std::memory_order_relaxed);
  }

  // Replaces a stripe head read as `expected` with `desired`: a compare-exchange, or with the
  // owner bias held (no other thread touches the list) a plain store.
  template <bool Owned>
  static bool replace_head(std::atomic<std::uint64_t>& head, std::uint64_t& expected,
                           std::uint64_t desired, std::memory_order success) noexcept {
    if constexpr (Owned) {
      head.store(desired, std::memory_order_relaxed);
      return true;
    } else {
      return head.compare_exchange_weak(expected, desired, success, std::memory_order_acquire);
    }
  }

  // Without the bias: one attempt on the caller's stripe inline; an unknown CPU, contention,
  // stealing and emptiness go out of line, so that the pool's acquire stays small enough to
  // inline.
  std::uint32_t pop_shared() noexcept {
    const std::int32_t cpu = detail::cpu_hint_fast();
    if (cpu >= 0) [[likely]] {
      const std::uint32_t own = static_cast<std::uint32_t>(cpu) & mask_;
      std::atomic<std::uint64_t>& head = stripes_[own].head;
      std::uint64_t h = head.load(std::memory_order_acquire);
      const auto top = static_cast<std::uint32_t>(h);
      if (top != free_list_npos) [[likely]] {
        // May read a stale next if another thread popped `top` meanwhile; the tag then
        // differs and the compare-exchange below fails.
        const std::uint32_t next = next_[top].load(std::memory_order_relaxed);
        if (head.compare_exchange_weak(h, pack(tag(h) + 1, next), std::memory_order_acquire,
                                       std::memory_order_relaxed)) [[likely]] {
          record(top, own);
          return top;
        }
      }
    }
    return pop_slow();
  }

  // With the owner bias held: the top of stripe 0, where the owner pushes, else of the first
  // non-empty stripe (exact: no other thread pushes or pops meanwhile). Nothing is recorded:
  // the owner pushes to stripe 0, and a block released after a revocation goes to the stripe
  // its stale next entry names, which is always valid (see `push`).
  std::uint32_t pop_owned() noexcept {
    std::atomic<std::uint64_t>& head = stripes_[0].head;
    const std::uint64_t h = head.load(std::memory_order_relaxed);
    const auto top = static_cast<std::uint32_t>(h);
    if (top == free_list_npos) [[unlikely]]
      return pop_owned_scan();
    head.store(pack(tag(h) + 1, next_[top].load(std::memory_order_relaxed)),
               std::memory_order_relaxed);
    return top;
  }

  [[gnu::noinline]] std::uint32_t pop_owned_scan() noexcept {
    for (std::uint32_t s = 1; s <= mask_; ++s) {
      std::uint64_t seen;
      const std::uint32_t i = pop_from<true>(s, seen);
      if (i != free_list_npos) return i;
    }
    return free_list_npos;
  }

  // Pops from stripe `s`; on empty returns npos with the empty head it saw in `seen`.
  template <bool Owned>
  std::uint32_t pop_from(std::uint32_t s, std::uint64_t& seen) noexcept {
    std::atomic<std::uint64_t>& head = stripes_[s].head;
    std::uint64_t h = head.load(std::memory_order_acquire);
    for (;;) {
      const auto top = static_cast<std::uint32_t>(h);
      if (top == free_list_npos) {
        seen = h;
        return free_list_npos;
      }
      // May read a stale next if another thread popped `top` meanwhile; the tag then differs
      // and the compare-exchange below fails.
      const std::uint32_t next = next_[top].load(std::memory_order_relaxed);
      if (replace_head<Owned>(head, h, pack(tag(h) + 1, next), std::memory_order_acquire)) {
        return top;
      }
    }
  }

  // The inline attempt found the caller's stripe empty or lost its compare-exchange: retry,
  // steal, or prove the whole list empty.
  //
  // Emptiness by double collect: pass 1 tries every stripe and, for each one found empty,
  // keeps the exact head word it saw; pass 2 re-reads every head. Every successful push or pop
  // bumps its stripe's tag, so a head that reads bit-identical in both passes had no push or
  // pop in between: that stripe was empty from its pass-1 read to its pass-2 read, an interval
  // that contains the end of pass 1. All stripes were therefore empty together at that
  // instant, and `free_list_npos` is a truthful answer (a block free the whole time is never
  // missed). If any head changed, another thread pushed or popped, so retrying keeps the list
  // lock-free.
  [[gnu::noinline]] std::uint32_t pop_slow() noexcept {
    const std::uint32_t own = own_stripe();
    std::uint64_t seen[max_stripes];
    for (;;) {
      for (std::uint32_t j = 0; j <= mask_; ++j) {
        const std::uint32_t i = pop_from<false>(own ^ j, seen[j]);
        if (i != free_list_npos) {
          record(i, own);
          return i;
        }
      }
      if (mask_ == 0) return free_list_npos;  // one stripe: its one load was the whole list
      bool unchanged = true;
      for (std::uint32_t j = 0; j <= mask_ && unchanged; ++j) {
        unchanged = stripes_[own ^ j].head.load(std::memory_order_acquire) == seen[j];
      }
      if (unchanged) return free_list_npos;
    }
  }

  // Pops up to `n` from stripe `s` with one compare-exchange (a store when owned); returns how
  // many.
  template <bool Owned>
  std::uint32_t pop_many_from(std::uint32_t s, std::uint32_t* out, std::uint32_t n) noexcept {
    std::atomic<std::uint64_t>& head = stripes_[s].head;
    std::uint64_t h = head.load(std::memory_order_acquire);
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
      if (replace_head<Owned>(head, h, pack(tag(h) + 1, cur), std::memory_order_acquire)) {
        return k;
      }
    }
  }

  // Pushes the chain first -> ... -> last (already linked) onto stripe `s` in one
  // compare-exchange (a store when owned).
  template <bool Owned>
  void link(std::uint32_t s, std::uint32_t first, std::uint32_t last) noexcept {
    std::atomic<std::uint64_t>& head = stripes_[s].head;
    std::uint64_t h = head.load(std::memory_order_relaxed);
    for (;;) {
      next_[last].store(static_cast<std::uint32_t>(h), std::memory_order_relaxed);
      // release: the block's contents and next_[last] become visible to the next popper.
      if (replace_head<Owned>(head, h, pack(tag(h) + 1, first), std::memory_order_release)) {
        return;
      }
    }
  }

  // The members are read-only after construction; the first is aligned so that nothing else
  // in the enclosing pool shares their cache line.
  alignas(64) std::uint32_t mask_;  // stripe count - 1 (a power of two minus one)
  std::unique_ptr<stripe[]> stripes_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> next_;
  XLAMEM_NO_UNIQUE_ADDRESS owner_bias_for<Biased> bias_;  // owner_bias: a line of its own
};

/// Mutex-guarded FIFO free list: the least recently released block is reused first, as in
/// XLA's HostMemoryPool. Thread-safe.
/// @tparam Biased whether it carries an owner bias (`owner_biased<mutex_fifo_policy>`).
template <bool Biased>
class mutex_fifo_list {
 public:
  static constexpr bool thread_safe = true;

  explicit mutex_fifo_list(std::uint32_t max_capacity)
      : mask_(next_power_of_two(max_capacity == 0 ? 1 : max_capacity) - 1),
        ring_(std::make_unique<std::uint32_t[]>(mask_ + 1)) {}

  /// Where the owner bias stands (see the file comment).
  [[nodiscard]] owner_bias::state_kind owner_bias_state() const noexcept requires Biased {
    return bias_.state();
  }
  /// Every call takes the mutex from now on (see `owner_bias::revoke`).
  void revoke_owner_bias() noexcept requires Biased { bias_.revoke(); }
  /// Whether the calling thread owns the list (see `owner_bias::held_by_caller`).
  [[nodiscard]] bool owned_by_caller() const noexcept requires Biased {
    return bias_.held_by_caller();
  }

  [[nodiscard]] std::uint32_t pop() noexcept {
    return exclusively(
        [this] { return front_ == back_ ? free_list_npos : ring_[front_++ & mask_]; });
  }

  void push(std::uint32_t index) noexcept {
    exclusively([this, index] { ring_[back_++ & mask_] = index; });
  }

  void push_range(std::uint32_t first, std::uint32_t count) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::uint32_t i = 0; i < count; ++i) ring_[back_++ & mask_] = first + i;
  }

  /// Pops up to `n` indices under one lock; returns how many.
  [[nodiscard]] std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    return exclusively([&] {
      std::uint32_t k = 0;
      while (k < n && front_ != back_) out[k++] = ring_[front_++ & mask_];
      return k;
    });
  }

  /// Pushes `n` indices under one lock.
  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    exclusively([&] {
      for (std::uint32_t k = 0; k < n; ++k) ring_[back_++ & mask_] = in[k];
    });
  }

 private:
  // Runs `f` with the ring to itself: under the owner bias (one thread uses the list, biased
  // lists only) with no lock, else under the mutex.
  template <class F>
  std::invoke_result_t<F&> exclusively(F&& f) noexcept {
    return bias_.run(f, [&] {
      std::lock_guard<std::mutex> lock(mutex_);
      return f();
    });
  }

  XLAMEM_NO_UNIQUE_ADDRESS owner_bias_for<Biased> bias_;
  std::mutex mutex_;
  std::uint64_t front_ = 0;  // next to pop; monotone, so front_ == back_ means empty
  std::uint64_t back_ = 0;   // next free slot
  std::uint64_t mask_;
  std::unique_ptr<std::uint32_t[]> ring_;
};

}  // namespace detail

/// The default thread-safe free list: lock-free, striped by CPU (see the file comment). Makes
/// no system call.
class lock_free_policy : public detail::lock_free_list<false> {
 public:
  using detail::lock_free_list<false>::lock_free_list;
};
static_assert(free_list_policy<lock_free_policy>);

/// The FIFO free list under a mutex, as XLA's HostMemoryPool (see the file comment).
class mutex_fifo_policy : public detail::mutex_fifo_list<false> {
 public:
  using detail::mutex_fifo_list<false>::mutex_fifo_list;
};
static_assert(free_list_policy<mutex_fifo_policy>);

/// `FreeList` with an owner bias (see the file comment and owner_bias.hpp): defined for
/// `lock_free_policy` and `mutex_fifo_policy`.
template <class FreeList>
class owner_biased {
  static_assert(sizeof(FreeList) == 0,
                "owner_biased<F>: F must be lock_free_policy or mutex_fifo_policy (the other "
                "policies have no synchronisation for a bias to skip)");
};

/// `lock_free_policy` whose first thread skips the compare-exchanges until a second arrives.
template <>
class owner_biased<lock_free_policy> : public detail::lock_free_list<true> {
 public:
  using detail::lock_free_list<true>::lock_free_list;
};
static_assert(free_list_policy<owner_biased<lock_free_policy>>);

/// `mutex_fifo_policy` whose first thread skips the mutex until a second arrives.
template <>
class owner_biased<mutex_fifo_policy> : public detail::mutex_fifo_list<true> {
 public:
  using detail::mutex_fifo_list<true>::mutex_fifo_list;
};
static_assert(free_list_policy<owner_biased<mutex_fifo_policy>>);

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
