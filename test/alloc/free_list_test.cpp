// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/free_list.hpp.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/free_list") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("lock_free_policy stripe counts: powers of two, capped at 64 and at the capacity") {
    CHECK(lock_free_policy(100, 1).stripe_count() == 1);
    CHECK(lock_free_policy(100, 5).stripe_count() == 8);
    CHECK(lock_free_policy(100, 64).stripe_count() == 64);
    CHECK(lock_free_policy(1000, 1000).stripe_count() == 64);
    CHECK(lock_free_policy(3, 8).stripe_count() == 2);
    CHECK(lock_free_policy(1, 8).stripe_count() == 1);
    CHECK(lock_free_policy(0, 8).stripe_count() == 1);
    const std::uint32_t automatic = lock_free_policy(1u << 20).stripe_count();
    CHECK(is_power_of_two(automatic));
    CHECK(automatic <= lock_free_policy::max_stripes);
    CHECK(lock_free_policy(2).stripe_count() <= 2);
  }

  TEST_CASE_TEMPLATE("lock_free_policy with one stripe is an exact LIFO, owned or shared", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    {
      L list(8, 1);
      list.push_range(0, 8);
      for (std::uint32_t i = 0; i < 3; ++i) CHECK(list.pop() == i);  // range order
      list.push(1);
      list.push(0);
      CHECK(list.pop() == 0);
      CHECK(list.pop() == 1);
      const std::uint32_t two[] = {1, 0};
      list.push_many(two, 2);
      std::uint32_t out[3];
      REQUIRE(list.pop_many(out, 3) == 3);
      CHECK(out[0] == 1);
      CHECK(out[1] == 0);
      CHECK(out[2] == 3);
      CHECK(drain(list, 8).size() == 4);  // 4 .. 7
    }
  }

  TEST_CASE_TEMPLATE("lock_free_policy returns every index exactly once over any stripe count", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    {
      for (std::uint32_t stripes : {1u, 2u, 4u, 8u, 64u}) {
        for (std::uint32_t n : {1u, 7u, 16u, 100u, 1000u}) {
          CAPTURE(stripes);
          CAPTURE(n);
          L list(n, stripes);
          CHECK(list.pop() == free_list_npos);  // empty at first
          // Two ranges, as a pool that grew: the first index of the second is handed out
          // directly, never pushed.
          const std::uint32_t half = n / 2;
          list.push_range(0, half);
          list.push_range(half + 1, n - half - 1);  // may be empty
          auto got = drain(list, n);
          CHECK(got.size() == n - 1);
          // Back one by one, then all out again.
          for (std::uint32_t i : got) list.push(i);
          list.push(half);  // the directly handed-out one
          CHECK(drain(list, n).size() == n);
          // Back in batches of up to 5, out through pop_many (7 at a time) until it finds none.
          std::vector<std::uint32_t> all(n);
          for (std::uint32_t i = 0; i < n; ++i) all[i] = n - 1 - i;
          for (std::uint32_t i = 0; i < n; i += 5)
            list.push_many(all.data() + i, std::min<std::uint32_t>(5, n - i));
          std::vector<std::uint32_t> out(n + 3);
          std::vector<char> seen(n, 0);
          std::uint32_t total = 0;
          for (;;) {
            const std::uint32_t k = list.pop_many(out.data() + total, 7);
            for (std::uint32_t j = total; j < total + k; ++j) {
              REQUIRE(out[j] < n);
              CHECK(seen[out[j]] == 0);
              seen[out[j]] = 1;
            }
            total += k;
            REQUIRE(total <= n);
            if (k == 0) break;
          }
          CHECK(total == n);
          CHECK(list.pop() == free_list_npos);
        }
      }
    }
  }

  TEST_CASE_TEMPLATE("lock_free_policy spreads a range over the stripes in ascending runs", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    // 128 indices over 4 stripes: runs of 32. Whatever stripe the caller's CPU picks, each
    // run comes out ascending and whole, one run after another, as long as the thread stays
    // on one CPU; with migrations the runs may interleave, so only per-run order is checked.
    {
      L list(128, 4);
      list.push_range(0, 128);
      auto got = drain(list, 128);
      REQUIRE(got.size() == 128);
      std::uint32_t last[4] = {0, 0, 0, 0};
      bool started[4] = {false, false, false, false};
      for (std::uint32_t i : got) {
        const std::uint32_t run = i / 32;
        if (started[run]) CHECK(i == last[run] + 1);
        if (!started[run]) CHECK(i == run * 32);
        started[run] = true;
        last[run] = i;
      }
    }
  }

  TEST_CASE_TEMPLATE("owner bias: the first thread owns the list, a second revokes it for good", F,
                     owner_biased<lock_free_policy>, owner_biased<mutex_fifo_policy>) {
    using state = owner_bias::state_kind;
    const bool can_bias = owner_bias::available();
    if (!can_bias) MESSAGE("this process cannot have membarrier: lists start shared");
    const state owned = can_bias ? state::owned : state::shared;
    F list(16);
    CHECK(list.owner_bias_state() == (can_bias ? state::unowned : state::shared));
    list.push_range(0, 16);  // never claims: it runs while a pool is built
    CHECK(list.owner_bias_state() == (can_bias ? state::unowned : state::shared));
    const std::uint32_t a = list.pop();  // claims
    CHECK(list.owner_bias_state() == owned);
    const std::uint32_t b = list.pop();
    list.push(a);
    CHECK(list.owner_bias_state() == owned);
    std::uint32_t c = free_list_npos;
    std::thread([&] {
      c = list.pop();  // revokes
      list.push(c);
    }).join();
    CHECK(list.owner_bias_state() == state::shared);
    CHECK(c < 16);
    CHECK(c != b);
    list.push(b);  // the former owner now synchronises too
    CHECK(list.owner_bias_state() == state::shared);
    CHECK(drain(list, 16).size() == 16);

    // An owner that exits: the next thread revokes and finds every index.
    F orphan(8);
    orphan.push_range(0, 8);
    std::thread([&] {
      const std::uint32_t i = orphan.pop();
      const std::uint32_t j = orphan.pop();
      orphan.push(j);
      orphan.push(i);
    }).join();
    CHECK(orphan.owner_bias_state() == owned);
    CHECK(drain(orphan, 8).size() == 8);
    CHECK(orphan.owner_bias_state() == state::shared);

    // Revoked up front: no thread ever owns it.
    F up_front(4);
    up_front.revoke_owner_bias();
    up_front.push_range(0, 4);
    CHECK(drain(up_front, 4).size() == 4);
    CHECK(up_front.owner_bias_state() == state::shared);
  }

  TEST_CASE("the default thread-safe lists carry no owner bias") {
    static_assert(!has_owner_bias<lock_free_policy>);
    static_assert(!has_owner_bias<mutex_fifo_policy>);
    static_assert(has_owner_bias<owner_biased<lock_free_policy>>);
    static_assert(has_owner_bias<owner_biased<mutex_fifo_policy>>);
    // The bias is the only difference in size: none for the default lists.
    static_assert(sizeof(lock_free_policy) < sizeof(owner_biased<lock_free_policy>));
    static_assert(sizeof(mutex_fifo_policy) < sizeof(owner_biased<mutex_fifo_policy>));
    static_assert(!can_revoke_bias<fixed_block_pool<aligned_heap_memory>>);
    static_assert(
        can_revoke_bias<fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>>);
    CHECK(lock_free_policy(4, 1).stripe_count() == 1);
  }

  TEST_CASE_TEMPLATE("mutex_fifo_policy is first-in first-out, owned or shared", L,
                     mutex_fifo_policy, owner_biased<mutex_fifo_policy>) {
    {
      L list(8);
      list.push_range(0, 4);
      CHECK(list.pop() == 0);
      list.push(7);
      CHECK(list.pop() == 1);
      std::uint32_t out[8];
      REQUIRE(list.pop_many(out, 8) == 3);
      CHECK(out[0] == 2);
      CHECK(out[1] == 3);
      CHECK(out[2] == 7);
      const std::uint32_t back[] = {5, 0};
      list.push_many(back, 2);
      CHECK(list.pop() == 5);
      CHECK(list.pop() == 0);
      CHECK(list.pop() == free_list_npos);
    }
  }
}
