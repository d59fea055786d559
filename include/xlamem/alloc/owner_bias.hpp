// SPDX-License-Identifier: Apache-2.0
/// @file
/// `owner_bias`: lets the one thread that uses a thread-safe structure skip its atomic
/// read-modify-writes and locks until a second thread arrives (biased ownership, as in the
/// JVM's biased locking). The opt-in free lists `owner_biased<lock_free_policy>` and
/// `owner_biased<mutex_fifo_policy>` (free_list.hpp) use it; a pool used by one thread then
/// costs plain loads and stores, and one that is shared costs what it did before, plus one
/// load. The default policies do not carry it and never make its system call.
///
/// States: unowned -> owned by the first thread that calls `enter` -> revoking -> shared. The
/// owner brackets each operation with `enter` / `leave` and inside it accesses the structure
/// with plain (relaxed, non-RMW) loads and stores; every other thread, and the owner outside
/// such a bracket, uses the structure's synchronised path. The first other thread to call
/// `enter` revokes the bias once, for good: it marks the state `revoking`, makes every running
/// thread of the process execute a full memory barrier (Linux `membarrier`, private expedited:
/// ~0.3 us), waits for the owner to leave the operation it may be in (a few instructions),
/// then publishes `shared`. Threads that arrive meanwhile wait for `shared` too.
///
/// Why that is safe (an asymmetric Dekker handshake): the owner stores `in_op = 1`, then loads
/// the state, with only a compiler barrier between; the revoker stores the state, then the
/// barrier, then loads `in_op`. The barrier puts a full fence somewhere in the owner's
/// instruction stream, so either the owner's load comes after it and sees `revoking` (and it
/// backs off), or its `in_op = 1` came before it and the revoker sees it and waits. The
/// owner's plain writes reach the other threads through `in_op = 0` (release) -> the revoker
/// (acquire) -> `shared` (release) -> their load of the state (acquire).
///
/// Where the process cannot have that barrier (not Linux, a kernel without `membarrier`, a
/// seccomp filter that refuses it), the state starts `shared` and `enter` is one load and two
/// compares that return false. (Whether the platform can is decided from the target's system
/// headers, never from a macro a translation unit sets.)
///
/// Caveats, documented in docs/alloc.md: the bias does not come back once revoked (a pool
/// handed between threads stays on the synchronised path); the revoking thread waits while
/// the owner is inside one operation (if the owner is descheduled right there, until it runs
/// again); and an owner's operation is not async-signal-safe (a signal handler on the owning
/// thread must not use the same structure).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "xlamem/config.hpp"

#if defined(__linux__) && defined(__has_include) && defined(__has_builtin)
#if __has_include(<linux/membarrier.h>) && __has_builtin(__builtin_thread_pointer)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_membarrier)
#define XLAMEM_DETAIL_OWNER_BIAS 1
#endif
#endif
#endif
#ifndef XLAMEM_DETAIL_OWNER_BIAS
#define XLAMEM_DETAIL_OWNER_BIAS 0
#endif

namespace xlamem {

/// Biased ownership of a thread-safe structure: see the file comment. Not copyable or movable
/// (threads hold its address).
class owner_bias {
 public:
  /// Where the bias stands.
  enum class state_kind {
    unowned,   ///< no thread has entered yet
    owned,     ///< one thread uses plain accesses
    revoking,  ///< a second thread is taking the bias away
    shared,    ///< every thread uses the synchronised path (terminal)
  };

  owner_bias() noexcept = default;
  owner_bias(const owner_bias&) = delete;
  owner_bias& operator=(const owner_bias&) = delete;

  /// True: the caller owns the structure and may use plain accesses until `leave()`. False:
  /// use the synchronised path (the bias, if another thread held it, has been revoked).
  [[nodiscard]] bool enter() noexcept {
    const std::uintptr_t s = state_.load(std::memory_order_acquire);
    if (s == shared_state) [[likely]]
      return false;
    if (s != thread_token()) [[unlikely]]
      return enter_slow();
    return enter_owned(s);
  }

  /// Ends an operation that `enter()` let the owner run with plain accesses.
  void leave() noexcept { in_op_.store(0, std::memory_order_release); }

  /// Runs `plain()` when the caller owns the structure, else `synchronised()`; returns its
  /// result.
  template <class Plain, class Synchronised>
  decltype(auto) run(Plain&& plain, Synchronised&& synchronised) noexcept {
    if (enter()) {
      struct leaver {
        owner_bias& b;
        ~leaver() { b.leave(); }
      } guard{*this};
      return plain();
    }
    return synchronised();
  }

  /// Moves to `shared` for good, revoking the bias if a thread holds it (the caller must not be
  /// inside its own `enter` / `leave`). For a structure that will be shared from the start:
  /// the first cross-thread call then pays nothing. Idempotent.
  void revoke() noexcept {
    const std::uintptr_t me = thread_token();
    for (unsigned spins = 0;; ++spins) {
      std::uintptr_t s = state_.load(std::memory_order_acquire);
      if (s == shared_state) return;
      if (s == revoking_state) {
        if (spins > 64) std::this_thread::yield();
        continue;
      }
      if (s == unowned_state || s == me) {
        // Nobody is inside an owned operation: no handshake needed.
        if (state_.compare_exchange_strong(s, shared_state, std::memory_order_acq_rel)) return;
        continue;
      }
      if (revoke_from(s)) return;
    }
  }

  /// Whether the calling thread holds the bias. States only move forward, so if this is true
  /// after an operation, that operation ran owned (and no other thread can have been waiting
  /// for its effect: a thread that waits has revoked first).
  [[nodiscard]] bool held_by_caller() const noexcept {
    if (XLAMEM_DETAIL_OWNER_BIAS == 0) return false;  // the state is shared for good: nobody holds it
    return state_.load(std::memory_order_relaxed) == thread_token();
  }

  /// The current state (a snapshot; another thread may change it right after).
  [[nodiscard]] state_kind state() const noexcept {
    const std::uintptr_t s = state_.load(std::memory_order_acquire);
    if (s == unowned_state) return state_kind::unowned;
    if (s == revoking_state) return state_kind::revoking;
    if (s == shared_state) return state_kind::shared;
    return state_kind::owned;
  }

  /// Whether this platform and build can bias at all (else every instance starts shared).
  [[nodiscard]] static constexpr bool supported() noexcept { return XLAMEM_DETAIL_OWNER_BIAS != 0; }

  /// Whether this process can bias now: supported, and the kernel grants the process-wide
  /// barrier (registering for it, which is idempotent). When false, the first `enter` makes
  /// the state `shared`.
  [[nodiscard]] static bool available() noexcept { return register_barrier(); }

 private:
  // Special state words; a thread token is a thread pointer, never this small.
  static constexpr std::uintptr_t unowned_state = 0;
  static constexpr std::uintptr_t revoking_state = 1;
  static constexpr std::uintptr_t shared_state = 2;

  // The calling thread's identity among live threads: its thread pointer (one register read).
  static std::uintptr_t thread_token() noexcept {
#if XLAMEM_DETAIL_OWNER_BIAS
    return reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
#else
    return shared_state;  // the state starts shared and stays so (held_by_caller says false)
#endif
  }

  // The Dekker half of the owner: announce the operation, then check the bias still stands.
  bool enter_owned(std::uintptr_t me) noexcept {
    in_op_.store(1, std::memory_order_relaxed);
    // Only the compiler must keep the store before the load; the revoker's barrier does the
    // rest (see the file comment).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (state_.load(std::memory_order_relaxed) == me) [[likely]]
      return true;
    in_op_.store(0, std::memory_order_release);
    return false;
  }

#if XLAMEM_DETAIL_OWNER_BIAS
  static bool register_barrier() noexcept {
    return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }
  // A full memory barrier on every running thread of this process.
  static bool process_barrier() noexcept {
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return true;
    // Registration is per process image: a child after fork() must register again.
    return register_barrier() &&
           ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
  }
#else
  static bool register_barrier() noexcept { return false; }
  static bool process_barrier() noexcept { return false; }
#endif

  // Claims an unowned structure, revokes another thread's bias, or waits out a revocation.
  [[gnu::noinline]] bool enter_slow() noexcept {
    const std::uintptr_t me = thread_token();
    for (unsigned spins = 0;; ++spins) {
      std::uintptr_t s = state_.load(std::memory_order_acquire);
      if (s == shared_state) return false;
      if (s == me) return enter_owned(me);
      if (s == revoking_state) {
        if (spins > 64) std::this_thread::yield();
        continue;
      }
      if (s == unowned_state) {
        // Registering first makes the barrier usable by whichever thread later revokes; a
        // process that cannot have it never biases.
        const std::uintptr_t next = register_barrier() ? me : shared_state;
        if (state_.compare_exchange_strong(s, next, std::memory_order_acq_rel)) {
          return next == me && enter_owned(me);
        }
        continue;
      }
      if (revoke_from(s)) return false;
    }
  }

  // Takes the bias from the thread `owner` (not the caller): false if the state moved on
  // first. Losers of a race wait for `shared` in their caller's loop.
  bool revoke_from(std::uintptr_t owner) noexcept {
    if (!state_.compare_exchange_strong(owner, revoking_state, std::memory_order_acq_rel)) {
      return false;
    }
    if (!process_barrier()) {
      // Cannot happen once registration succeeded (the kernel keeps it for the process);
      // going on without the barrier could hand one block to two threads.
      XLAMEM_MISUSE("owner_bias: membarrier failed after registration succeeded");
    }
    for (unsigned w = 0; in_op_.load(std::memory_order_acquire) != 0; ++w) {
      if (w > 64) std::this_thread::yield();  // the owner was descheduled mid-operation
    }
    state_.store(shared_state, std::memory_order_release);
    return true;
  }

  // Read by every operation, written at most three times: its line stays shared in every
  // core's cache. `in_op_` is written by the owner only while the bias stands.
  alignas(64) std::atomic<std::uintptr_t> state_{XLAMEM_DETAIL_OWNER_BIAS ? unowned_state
                                                                          : shared_state};
  std::atomic<std::uint32_t> in_op_{0};
};

}  // namespace xlamem
