// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exhaustion policies for `fixed_block_pool`: what `acquire` does when every block is in use.
/// - `fail_policy`: report `resource_exhausted` at once (XLA's HostMemoryPool).
/// - `wait_policy`: block until a block is released or `timeout` passes, then report
///   `resource_exhausted`. Needs a thread-safe free list.
/// - `grow_policy`: take one more chunk of N blocks from the upstream, up to `max_chunks`
///   chunks in all; chunks go back to the upstream only when the pool is destroyed.
/// - `fallback_policy`: serve the block straight from the upstream (`allocate(B, A)`); it goes
///   back to the upstream on release.
///
/// The pool implements the four behaviours; a policy is a small value naming one of them and
/// carrying its parameters, so a user picks and tunes behaviour without writing pool code.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>

namespace xlamem {

/// The four behaviours a pool can have when exhausted.
enum class exhaustion_action { fail, wait, grow, fallback };

/// A value that names an `exhaustion_action` (`static constexpr action`) and carries what that
/// action needs: `timeout` for wait, `max_chunks` for grow.
template <class E>
concept exhaustion_policy = std::copy_constructible<E> && requires {
  { E::action } -> std::convertible_to<exhaustion_action>;
} &&(E::action != exhaustion_action::wait ||
     requires(const E& e) {
       { e.timeout } -> std::convertible_to<std::chrono::nanoseconds>;
     }) &&
    (E::action != exhaustion_action::grow || requires(const E& e) {
      { e.max_chunks } -> std::convertible_to<std::uint32_t>;
    });

/// Fail at once with `resource_exhausted`.
struct fail_policy {
  static constexpr exhaustion_action action = exhaustion_action::fail;
};
static_assert(exhaustion_policy<fail_policy>);

/// Block until a block is released, for at most `timeout`.
struct wait_policy {
  static constexpr exhaustion_action action = exhaustion_action::wait;
  std::chrono::nanoseconds timeout = std::chrono::seconds(1);
};
static_assert(exhaustion_policy<wait_policy>);

/// Add a chunk of N blocks from the upstream, up to `max_chunks` chunks (the first included).
struct grow_policy {
  static constexpr exhaustion_action action = exhaustion_action::grow;
  std::uint32_t max_chunks = 64;
};
static_assert(exhaustion_policy<grow_policy>);

/// Serve the request from the upstream directly.
struct fallback_policy {
  static constexpr exhaustion_action action = exhaustion_action::fallback;
};
static_assert(exhaustion_policy<fallback_policy>);

}  // namespace xlamem
