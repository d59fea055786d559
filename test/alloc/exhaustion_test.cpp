// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/exhaustion.hpp: the exhaustion_policy concept and its four
// policies, their defaults, and policies of the user's own driving a pool.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "support/alloc_helpers.hpp"

namespace xlamem::test::exhaustion_test {
using namespace xlamem;

// A user's own policies: any type naming an action and carrying what it needs models the concept.
struct short_wait {
  static constexpr exhaustion_action action = exhaustion_action::wait;
  std::chrono::milliseconds timeout{40};
};
struct two_chunks {
  static constexpr exhaustion_action action = exhaustion_action::grow;
  std::uint16_t max_chunks = 2;  // any type convertible to uint32
};
struct give_up {
  static constexpr exhaustion_action action = exhaustion_action::fail;
  int unrelated_parameter = 0;  // extra members are allowed
};

// Near-misses: each breaks one requirement.
struct wait_timeout_text {
  static constexpr exhaustion_action action = exhaustion_action::wait;
  std::string timeout = "1s";  // not a duration
};
struct grow_without_limit {
  static constexpr exhaustion_action action = exhaustion_action::grow;
};
struct action_as_int {
  static constexpr int action = 0;  // not convertible to exhaustion_action
};
struct not_copyable {
  static constexpr exhaustion_action action = exhaustion_action::fail;
  not_copyable() = default;
  not_copyable(const not_copyable&) = delete;
};
struct fail_with_timeout {  // a timeout on a policy that does not wait is harmless
  static constexpr exhaustion_action action = exhaustion_action::fail;
  std::string timeout;
};

}  // namespace xlamem::test::exhaustion_test

TEST_SUITE("alloc/exhaustion") {
  using namespace xlamem::test::alloc_helpers;
  using namespace xlamem::test::exhaustion_test;

  TEST_CASE("the four policies name their action and carry their defaults") {
    static_assert(fail_policy::action == exhaustion_action::fail);
    static_assert(wait_policy::action == exhaustion_action::wait);
    static_assert(grow_policy::action == exhaustion_action::grow);
    static_assert(fallback_policy::action == exhaustion_action::fallback);
    CHECK(wait_policy{}.timeout == std::chrono::seconds(1));
    CHECK(grow_policy{}.max_chunks == 64);
    CHECK(wait_policy{std::chrono::milliseconds(5)}.timeout == std::chrono::milliseconds(5));
    CHECK(grow_policy{3}.max_chunks == 3);
    static_assert(std::is_empty_v<fail_policy> && std::is_empty_v<fallback_policy>);
  }

  TEST_CASE("exhaustion_policy: what a wait or grow policy must carry, and nothing more") {
    static_assert(exhaustion_policy<short_wait>);
    static_assert(exhaustion_policy<two_chunks>);
    static_assert(exhaustion_policy<give_up>);
    static_assert(exhaustion_policy<fail_with_timeout>);
    static_assert(!exhaustion_policy<wait_timeout_text>);
    static_assert(!exhaustion_policy<grow_without_limit>);
    static_assert(!exhaustion_policy<action_as_int>);
    static_assert(!exhaustion_policy<not_copyable>);
    static_assert(!exhaustion_policy<int>);
    CHECK(exhaustion_policy<short_wait>);
  }

  TEST_CASE("fail: resource_exhausted at once, naming the pool, the count and the block size") {
    fixed_block_pool<aligned_heap_memory, lock_free_policy, give_up> pool(
        aligned_heap_memory{}, pool_options{.block_count = 2, .block_size = 16, .name = "f"});
    auto a = pool.acquire();
    auto b = pool.acquire();
    const auto start = std::chrono::steady_clock::now();
    auto r = pool.try_acquire();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(r.error().message() == "fixed_block_pool 'f': all 2 blocks of 16 bytes are in use");
    b.reset();
    CHECK(pool.try_acquire().has_value());  // one back: served again
  }

  TEST_CASE("wait: gives up after its timeout, and says how long it waited") {
    fixed_block_pool<aligned_heap_memory, mutex_fifo_policy, short_wait> pool(
        aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8, .name = "w"});
    CHECK(pool.exhaustion().timeout == std::chrono::milliseconds(40));
    auto held = pool.acquire();
    const auto start = std::chrono::steady_clock::now();
    auto r = pool.try_acquire();
    const auto waited = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r.has_value());
    CHECK(waited >= std::chrono::milliseconds(40));
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(r.error().message() == "fixed_block_pool 'w': all 1 blocks of 8 bytes are in use (waited 40 ms)");

    fixed_block_pool<aligned_heap_memory, lock_free_policy, wait_policy> none(
        aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8, .name = "z"},
        wait_policy{std::chrono::nanoseconds(0)});
    auto only = none.acquire();
    auto z = none.try_acquire();  // a zero timeout: one more look, then the error
    REQUIRE_FALSE(z.has_value());
    CHECK(z.error().message() == "fixed_block_pool 'z': all 1 blocks of 8 bytes are in use (waited 0 ms)");
  }

  TEST_CASE("grow: one more chunk at a time up to max_chunks, the first included") {
    counted_heap heap{aligned_heap_memory{}};
    fixed_block_pool<resource_ref<counted_heap>, lock_free_policy, two_chunks> pool(
        borrow(heap), pool_options{.block_count = 2, .block_size = 8, .alignment = 8, .name = "g"});
    CHECK(heap.statistics().total_count == 1);
    std::vector<decltype(pool)::handle> held;
    for (int k = 0; k < 4; ++k) held.push_back(pool.acquire());
    CHECK(heap.statistics().total_count == 2);  // grown once
    CHECK(pool.chunk_count() == 2);
    auto r = pool.try_acquire();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() ==
          "fixed_block_pool 'g': all 4 blocks of 8 bytes are in use (N = 2 per chunk) (grown to its limit of 2 chunks)");
    held.clear();
    CHECK(heap.statistics().current_count == 2);  // chunks stay until the pool goes

    fixed_block_pool<aligned_heap_memory, lock_free_policy, grow_policy> one(
        aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8, .name = "one"}, grow_policy{1});
    auto only = one.acquire();
    auto no = one.try_acquire();
    REQUIRE_FALSE(no.has_value());
    CHECK(no.error().message() == "fixed_block_pool 'one': all 1 blocks of 8 bytes are in use (grown to its limit of 1 chunks)");

    using zero_pool = fixed_block_pool<aligned_heap_memory, lock_free_policy, grow_policy>;
    try {
      zero_pool bad(aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8, .name = "zero"},
                    grow_policy{0});
      FAIL("a grow policy of 0 chunks was accepted");
    } catch (const xlamem::exception& e) {
      CHECK(e.get().code() == errc::invalid_argument);
      CHECK(e.get().message() == "fixed_block_pool 'zero': grow_policy::max_chunks must be at least 1");
    }
  }

  TEST_CASE("fallback: past the pool, each block comes from the upstream and goes back to it") {
    counted_heap heap{aligned_heap_memory{}};
    fixed_block_pool<resource_ref<counted_heap>, lock_free_policy, fallback_policy> pool(
        borrow(heap), pool_options{.block_count = 1, .block_size = 48, .alignment = 16, .name = "fb"});
    auto in_pool = pool.acquire();
    CHECK_FALSE(in_pool.from_upstream());
    auto extra1 = pool.acquire();
    auto extra2 = pool.acquire();
    CHECK(extra1.from_upstream());
    CHECK(extra2.from_upstream());
    CHECK(extra1.data() != extra2.data());
    CHECK(is_aligned(extra1.data(), 16));
    CHECK(heap.statistics().current_count == 3);  // the chunk and two blocks
    CHECK(heap.statistics().current_bytes == 48 + 2 * 48);
    extra1.reset();
    extra2.reset();
    CHECK(heap.statistics().current_count == 1);
  }
}
