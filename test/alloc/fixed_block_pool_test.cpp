// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/fixed_block_pool.hpp.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/pool") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE_TEMPLATE(
      "pool policies: one upstream allocation, alignment, exhaustion, handles", P,
      counted_pool<per_cpu_cache_policy, fail_policy>, counted_pool<per_cpu_cache_policy, wait_policy>,
      counted_pool<per_cpu_cache_policy, grow_policy>,
      counted_pool<per_cpu_cache_policy, fallback_policy>,
      counted_pool<lock_free_policy, fail_policy>, counted_pool<lock_free_policy, wait_policy>,
      counted_pool<lock_free_policy, grow_policy>, counted_pool<lock_free_policy, fallback_policy>,
      counted_pool<mutex_fifo_policy, fail_policy>, counted_pool<mutex_fifo_policy, wait_policy>,
      counted_pool<mutex_fifo_policy, grow_policy>,
      counted_pool<mutex_fifo_policy, fallback_policy>,
      counted_pool<single_thread_policy, fail_policy>,
      counted_pool<single_thread_policy, grow_policy>,
      counted_pool<single_thread_policy, fallback_policy>) {
    using E = typename P::exhaustion_type;
    counted_heap heap{aligned_heap_memory{}};
    constexpr std::uint32_t n = 4;
    constexpr std::size_t b = 24;
    constexpr std::size_t a = 32;
    {
      P pool(borrow(heap),
             pool_options{.block_count = n, .block_size = b, .alignment = a, .name = "staging"},
             test_policy<E>());
      // N blocks of B at A come from ONE upstream allocation of N * align_up(B, A) bytes.
      CHECK(heap.statistics().total_count == 1);
      CHECK(heap.statistics().current_bytes == static_cast<std::int64_t>(n * 32));
      CHECK(pool.block_count() == n);
      CHECK(pool.block_size() == b);
      CHECK(pool.stride() == 32);
      CHECK(pool.capacity() == n);

      std::vector<typename P::handle> held;
      std::set<void*> distinct;
      for (std::uint32_t i = 0; i < n; ++i) {
        auto h = pool.try_acquire();
        REQUIRE(h.has_value());
        CHECK(is_aligned(h->data(), a));
        CHECK(h->size() == b);
        CHECK(pool.owns(h->data()));
        CHECK_FALSE(h->from_upstream());
        distinct.insert(h->data());
        held.push_back(std::move(*h));
      }
      CHECK(distinct.size() == n);

      // Exhaustion, per policy.
      auto extra = pool.try_acquire();
      if constexpr (E::action == exhaustion_action::fail || E::action == exhaustion_action::wait) {
        REQUIRE_FALSE(extra.has_value());
        CHECK(extra.error().code() == errc::resource_exhausted);
        CHECK(extra.error().message().find("'staging'") != std::string::npos);
        CHECK(extra.error().message().find("all 4 blocks of 24 bytes") != std::string::npos);
        if constexpr (E::action == exhaustion_action::wait) {
          CHECK(extra.error().message().find("waited 20 ms") != std::string::npos);
        }
        CHECK_THROWS_AS((void)pool.acquire(), xlamem::out_of_memory);
      } else if constexpr (E::action == exhaustion_action::grow) {
        REQUIRE(extra.has_value());
        CHECK(pool.chunk_count() == 2);
        CHECK(pool.capacity() == 2 * n);
        CHECK(heap.statistics().total_count == 2);
        CHECK(pool.owns(extra->data()));
        for (std::uint32_t i = 1; i < 2 * n; ++i)
          held.push_back(pool.acquire());  // fills chunk 2 and 3
        CHECK(pool.chunk_count() == 3);
        auto over = pool.try_acquire();
        REQUIRE_FALSE(over.has_value());
        CHECK(over.error().code() == errc::resource_exhausted);
        CHECK(over.error().message().find("limit of 3 chunks") != std::string::npos);
        CHECK(over.error().message().find("all 12 blocks of 24 bytes") != std::string::npos);
      } else {
        REQUIRE(extra.has_value());
        CHECK(extra->from_upstream());
        CHECK(extra->index() == P::upstream_index);
        CHECK_FALSE(pool.owns(extra->data()));
        CHECK(is_aligned(extra->data(), a));
        CHECK(heap.statistics().current_count == 2);
        extra->reset();
        CHECK(heap.statistics().current_count == 1);  // went back to the upstream
      }
      held.clear();
      if (extra.has_value()) extra->reset();

      // Reuse order: FIFO for mutex_fifo (XLA), LIFO otherwise. lock_free is LIFO per CPU
      // stripe: a thread that migrated between the releases and the acquire may be served
      // from another stripe, so only ownership is certain there (exact LIFO of one stripe is
      // checked in "alloc/free_list").
      auto h0 = pool.acquire();
      auto h1 = pool.acquire();
      void* p0 = h0.data();
      void* p1 = h1.data();
      h1.reset();
      h0.reset();
      auto again = pool.acquire();
      if constexpr (std::is_same_v<typename P::free_list_type, mutex_fifo_policy>) {
        CHECK(again.data() != p0);  // older free blocks come first
      } else if constexpr (std::is_same_v<typename P::free_list_type, lock_free_policy> ||
                           std::is_same_v<typename P::free_list_type, per_cpu_cache_policy>) {
        CHECK(pool.owns(again.data()));
      } else {
        CHECK(again.data() == p0);
      }
      (void)p1;
      again.reset();

      // Handle semantics: move nulls the source; move-assign releases its own block first.
      {
        std::vector<typename P::handle> hs;
        for (std::uint32_t i = 0; i < n; ++i) hs.push_back(pool.acquire());
        typename P::handle moved(std::move(hs[0]));
        CHECK_FALSE(hs[0]);
        CHECK(hs[0].data() == nullptr);
        CHECK(moved);
        void* kept = hs[2].data();
        hs[1] = std::move(hs[2]);  // hs[1]'s block goes back first
        CHECK(hs[1].data() == kept);
        auto one_more = pool.try_acquire();  // the released one is free again
        CHECK(one_more.has_value());
        if (one_more.has_value()) CHECK_FALSE(one_more->from_upstream());
      }

      // Typed access refuses a T that does not fit.
      auto h = pool.acquire();
      *h.template get<std::uint64_t>() = 42;
      CHECK(*h.template get<std::uint64_t>() == 42);
      struct too_big {
        char bytes[25];
      };
      struct too_aligned {
        alignas(64) char c;
      };
      CHECK_THROWS_AS((void)h.template get<too_big>(), xlamem::exception);
      auto e = h.template try_get<too_aligned>();
      REQUIRE_FALSE(e.has_value());
      CHECK(e.error().code() == errc::invalid_argument);
      CHECK(e.error().message().find("'staging'") != std::string::npos);
      typename P::handle empty;
      CHECK_FALSE(empty.template try_get<int>().has_value());
      CHECK(empty.size() == 0);
    }
    CHECK(heap.statistics().current_bytes == 0);  // every chunk went back
  }

  TEST_CASE("pool options are validated and upstream failures reported") {
    using pool_t = fixed_block_pool<aligned_heap_memory>;
    auto zero = pool_t::create(aligned_heap_memory{}, pool_options{.block_count = 0, .name = "z"});
    REQUIRE_FALSE(zero.has_value());
    CHECK(zero.error().code() == errc::invalid_argument);
    CHECK(zero.error().message() == "fixed_block_pool 'z': block_count must be at least 1");
    auto align = pool_t::create(aligned_heap_memory{}, pool_options{.alignment = 48});
    REQUIRE_FALSE(align.has_value());
    CHECK(align.error().message().find("alignment 48 is not a power of two") != std::string::npos);
    auto size = pool_t::create(aligned_heap_memory{}, pool_options{.block_size = 0});
    CHECK_FALSE(size.has_value());
    CHECK_THROWS_AS(pool_t(aligned_heap_memory{}, pool_options{.block_size = 0}),
                    xlamem::exception);
    auto huge = pool_t::create(aligned_heap_memory{},
                               pool_options{.block_count = 1u << 30, .block_size = SIZE_MAX / 4});
    REQUIRE_FALSE(huge.has_value());
    CHECK(huge.error().message().find("overflows") != std::string::npos);

    using limited = limiting_adaptor<aligned_heap_memory>;
    limited cap(aligned_heap_memory{}, 100);
    auto small = fixed_block_pool<resource_ref<limited>>::create(
        borrow(cap), pool_options{.block_count = 8, .block_size = 16, .alignment = 16});
    REQUIRE_FALSE(small.has_value());
    CHECK(small.error().code() == errc::out_of_memory);
    CHECK(small.error().message() ==
          "fixed_block_pool 'fixed_block_pool': taking 8 blocks of 16 bytes: limiting_adaptor: 128 "
          "more bytes would pass the limit of 100 bytes (0 in use)");
    auto ok = pool_t::create(aligned_heap_memory{}, pool_options{});
    REQUIRE(ok.has_value());
    CHECK((*ok)->block_count() == 128);  // XLA's size

    // Growing past the upstream's limit is an out_of_memory naming the pool.
    limited cap2(aligned_heap_memory{}, 64);
    fixed_block_pool<resource_ref<limited>, lock_free_policy, grow_policy> g(
        borrow(cap2),
        pool_options{.block_count = 2, .block_size = 32, .alignment = 32, .name = "g"},
        grow_policy{4});
    auto a = g.acquire();
    auto b = g.acquire();
    auto c = g.try_acquire();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().code() == errc::out_of_memory);
    CHECK(c.error().message().find("fixed_block_pool 'g': growing") != std::string::npos);
  }

  TEST_CASE("the pool as a resource refuses what does not fit, unless it falls back") {
    fixed_block_pool<aligned_heap_memory> pool(
        aligned_heap_memory{}, pool_options{.block_count = 2, .block_size = 16, .alignment = 16});
    auto r = pool.try_allocate(17, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() ==
          "fixed_block_pool 'fixed_block_pool': a request of 17 bytes at alignment 8 does not fit "
          "its blocks of 16 bytes at alignment 16");
    CHECK_THROWS_AS((void)pool.allocate(8, 32), xlamem::out_of_memory);

    counted_heap heap{aligned_heap_memory{}};
    fixed_block_pool<resource_ref<counted_heap>, lock_free_policy, fallback_policy> fb(
        borrow(heap), pool_options{.block_count = 2, .block_size = 16, .alignment = 16});
    void* big = fb.allocate(100, 64);
    CHECK(is_aligned(big, 64));
    CHECK(heap.statistics().current_count == 2);
    fb.deallocate(big, 100, 64);
    CHECK(heap.statistics().current_count == 1);
  }

  TEST_CASE_TEMPLATE("bulk acquire/release and local_cache", F, per_cpu_cache_policy,
                     lock_free_policy, mutex_fifo_policy, single_thread_policy) {
    using pool_t = fixed_block_pool<aligned_heap_memory, F>;
    pool_t pool(aligned_heap_memory{},
                pool_options{.block_count = 8, .block_size = 24, .alignment = 8, .name = "bulk"});
    CHECK(pool.stride() == 24);  // not a power of two: the raw path divides
    {
      typename pool_t::handle hs[5];
      REQUIRE(pool.try_acquire_many(hs).has_value());
      std::set<void*> distinct;
      for (auto& h : hs) {
        CHECK(h);
        CHECK(pool.owns(h.data()));
        distinct.insert(h.data());
      }
      CHECK(distinct.size() == 5);
      typename pool_t::handle more[4];
      auto r = pool.try_acquire_many(more);  // only 3 left: all or nothing
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::resource_exhausted);
      CHECK(std::none_of(std::begin(more), std::end(more),
                         [](const auto& h) { return static_cast<bool>(h); }));
      typename pool_t::handle three[3];
      CHECK(pool.try_acquire_many(three).has_value());
      pool.release_many(hs);
      CHECK(std::none_of(std::begin(hs), std::end(hs),
                         [](const auto& h) { return static_cast<bool>(h); }));
      pool.release_many(three);
    }
    // Raw pointers map back to blocks through the division path too.
    void* p = pool.allocate(24, 8);
    CHECK(pool.owns(p));
    CHECK_FALSE(pool.owns(static_cast<char*>(p) + 1));
    pool.deallocate(p, 24, 8);

    {
      typename pool_t::local_cache cache(pool, 4);
      auto a = cache.acquire();  // refills 2 from the pool, hands out 1
      CHECK(cache.cached() == 1);
      CHECK(a.size() == 24);
      *a.template get<std::uint64_t>() = 7;
      auto b = cache.acquire();
      auto c = cache.acquire();  // refills again
      CHECK(cache.cached() == 1);
      std::vector<typename pool_t::handle> rest;
      while (true) {
        auto h = pool.try_acquire();
        if (!h.has_value()) break;
        rest.push_back(std::move(*h));
      }
      CHECK(rest.size() == 4);  // 8 - 3 held - 1 cached
      a.reset();
      b.reset();
      c.reset();
      CHECK(cache.cached() == 4);
      auto d = cache.acquire();
      CHECK(cache.cached() == 3);
      rest.clear();
      d.reset();
    }
    // The cache gave everything back.
    typename pool_t::handle all[8];
    CHECK(pool.try_acquire_many(all).has_value());
  }

  TEST_CASE("local_cache flushes half its capacity when full and falls back to the policy") {
    using pool_t = fixed_block_pool<aligned_heap_memory, lock_free_policy, fallback_policy>;
    pool_t pool(aligned_heap_memory{},
                pool_options{.block_count = 8, .block_size = 16, .alignment = 16});
    pool_t::local_cache cache(pool, 4);
    std::vector<pool_t::local_cache::handle> hs;
    for (int i = 0; i < 10; ++i) hs.push_back(cache.acquire());  // 8 from the pool, 2 from upstream
    CHECK(std::count_if(hs.begin(), hs.end(), [](const auto& h) { return h.from_upstream(); }) ==
          2);
    hs.clear();  // 2 go upstream, 8 into the cache, which flushes 2 at a time when full
    CHECK(cache.cached() <= 4);
    CHECK(cache.cached() >= 2);
  }

  TEST_CASE("debug checks: double release, foreign pointers, poisoning, leaks") {
    using checked_fifo = fixed_block_pool<aligned_heap_memory, mutex_fifo_policy, fail_policy,
                                          debug_checks>;
    misuse_log log;
    {
      checked_fifo pool(
          aligned_heap_memory{}, pool_options{.block_count = 4,
                                              .block_size = 32,
                                              .alignment = 16,
                                              .name = "dbg",
                                              .on_misuse = log.handler()});
      void* p = pool.allocate(32, 16);
      CHECK(pool.held() == 1);
      std::memset(p, 7, 32);
      pool.deallocate(p, 32, 16);
      // Released blocks are poisoned.
      const auto* bytes = static_cast<const unsigned char*>(p);
      CHECK(std::all_of(bytes, bytes + 32, [](unsigned char c) { return c == poison_byte; }));
      CHECK(log.messages.empty());

      pool.deallocate(p, 32, 16);
      CHECK(log.saw("fixed_block_pool 'dbg': double release of block 0"));
      CHECK(pool.held() == 0);  // the second release was ignored

      int local = 0;
      pool.deallocate(&local, 4, 4);
      CHECK(log.saw("fixed_block_pool 'dbg': deallocate of a pointer it did not hand out"));
      pool.deallocate(static_cast<char*>(p) + 8, 32, 16);  // inside a block but not its start
      CHECK(log.messages.size() == 3);

      // A write after release is caught when the block is next handed out (FIFO: block 0
      // comes back after blocks 1..3).
      static_cast<unsigned char*>(p)[5] = 1;
      std::vector<checked_fifo::handle> hs;
      for (int i = 0; i < 4; ++i) hs.push_back(pool.acquire());
      CHECK(log.saw("block 0 was written after its release (byte 5)"));
      hs.pop_back();
      auto leaked = pool.acquire();
      (void)leaked.data();
      hs.clear();
      // `leaked` still holds a block when the pool dies below (declared after the pool, so it
      // is destroyed first): release it by hand to keep the test clean, then provoke the report
      // with a raw allocation instead.
      leaked.reset();
      (void)pool.allocate(8, 8);
    }
    CHECK(log.saw("fixed_block_pool 'dbg': destroyed while 1 block(s) are still held"));

    using checked = fixed_block_pool<aligned_heap_memory, lock_free_policy, fail_policy,
                                     debug_checks>;
    misuse_log log2;
    checked pool(
        aligned_heap_memory{},
        pool_options{.block_count = 4, .block_size = 8, .name = "c", .on_misuse = log2.handler()});
    {
      auto cache = std::make_unique<checked::local_cache>(pool);
      auto h = cache->acquire();
      cache.reset();  // destroyed while h still holds a block
      CHECK(log2.saw(
          "fixed_block_pool 'c': local_cache destroyed while 1 of its block(s) are still held"));
      // h would now release into a dead cache: hand its block back to the pool by hand.
      pool.deallocate(h.detach(), 8, 8);
    }
  }

  TEST_CASE("without debug checks (the default) the pool tracks nothing and reports nothing") {
    static_assert(std::is_same_v<fixed_block_pool<aligned_heap_memory>::checks_type,
                                 no_debug_checks>);
    misuse_log log;
    fixed_block_pool<aligned_heap_memory> pool(
        aligned_heap_memory{},
        pool_options{.block_count = 2, .block_size = 16, .name = "plain", .on_misuse = log.handler()});
    CHECK(pool.held() == -1);
    void* p = pool.allocate(16, 8);
    std::memset(p, 7, 16);
    pool.deallocate(p, 16, 8);
    // No poisoning: the bytes stay as they were written.
    const auto* bytes = static_cast<const unsigned char*>(p);
    CHECK(std::all_of(bytes, bytes + 16, [](unsigned char c) { return c == 7; }));
    int local = 0;
    pool.deallocate(&local, 4, 4);  // a foreign pointer is ignored, not reported
    CHECK(log.messages.empty());
  }
}
