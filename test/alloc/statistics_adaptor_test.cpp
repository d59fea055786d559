// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/statistics_adaptor.hpp: exact current, peak and total figures,
// nested scopes folded into their parent, reset, failures not counted, and stacking over a pool.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/adaptors") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("statistics_adaptor: exact current, peak and totals; scopes; reset") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    void* a = stats.allocate(100, 8);
    void* b = stats.allocate(50, 8);
    stats.deallocate(a, 100, 8);
    void* c = stats.allocate(30, 8);
    auto s = stats.statistics();
    CHECK(s.current_bytes == 80);
    CHECK(s.peak_bytes == 150);
    CHECK(s.total_bytes == 180);
    CHECK(s.current_count == 2);
    CHECK(s.peak_count == 2);
    CHECK(s.total_count == 3);
    {
      auto scope = stats.make_scope();
      void* d = stats.allocate(1000, 8);
      stats.deallocate(b, 50, 8);  // allocated before the scope: negative within it
      auto inner = scope.statistics();
      CHECK(inner.current_bytes == 950);
      CHECK(inner.peak_bytes == 1000);
      CHECK(inner.total_count == 1);
      stats.deallocate(d, 1000, 8);
      const auto popped = scope.pop();
      CHECK(popped.current_bytes == -50);
      CHECK(popped.peak_bytes == 1000);
    }
    s = stats.statistics();
    CHECK(s.current_bytes == 30);
    CHECK(s.peak_bytes == 1080);  // 80 outside + 1000 at the scope's peak
    CHECK(s.total_bytes == 1180);
    CHECK(s.total_count == 4);
    stats.reset();
    s = stats.statistics();
    CHECK(s == allocation_statistics{30, 30, 0, 1, 1, 0});
    stats.deallocate(c, 30, 8);
    CHECK_THROWS_AS((void)stats.pop_scope(), xlamem::exception);
  }

  TEST_CASE("adaptors stack over a pool and over each other") {
    fixed_block_pool<aligned_heap_memory> pool(
        aligned_heap_memory{}, pool_options{.block_count = 2, .block_size = 64, .alignment = 64});
    statistics_adaptor<resource_ref<decltype(pool)>> stats(borrow(pool));
    fault_injection_adaptor<resource_ref<decltype(stats)>> faults(borrow(stats), {.fail_nth = 2});
    void* a = faults.allocate(64, 64);
    CHECK_THROWS_AS((void)faults.allocate(64, 64), xlamem::out_of_memory);
    void* b = faults.allocate(64, 64);
    CHECK_THROWS_AS((void)faults.allocate(64, 64), xlamem::out_of_memory);  // pool exhausted
    CHECK(stats.statistics().current_count == 2);
    faults.deallocate(a, 64, 64);
    faults.deallocate(b, 64, 64);
    CHECK(stats.statistics().peak_bytes == 128);
  }
}

TEST_SUITE("alloc/statistics_adaptor") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("nested scopes: each counts its own region, and popping folds it into the parent") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    void* base = stats.allocate(10, 8);
    stats.push_scope();
    void* x = stats.allocate(100, 8);
    stats.push_scope();
    void* y = stats.allocate(200, 8);
    void* z = stats.allocate(300, 8);
    stats.deallocate(z, 300, 8);
    CHECK(stats.statistics() == allocation_statistics{200, 500, 500, 1, 2, 2});
    const auto inner = stats.pop_scope();
    CHECK(inner == allocation_statistics{200, 500, 500, 1, 2, 2});
    // The middle scope: its 100 bytes, then the inner peak on top of them.
    CHECK(stats.statistics() == allocation_statistics{300, 600, 600, 2, 3, 3});
    stats.deallocate(x, 100, 8);
    stats.deallocate(y, 200, 8);
    const auto middle = stats.pop_scope();
    CHECK(middle == allocation_statistics{0, 600, 600, 0, 3, 3});
    // The whole lifetime: 10 bytes before, the middle peak on top.
    CHECK(stats.statistics() == allocation_statistics{10, 610, 610, 1, 4, 4});
    stats.deallocate(base, 10, 8);
    CHECK(stats.statistics().current_bytes == 0);
    CHECK(stats.statistics().current_count == 0);
  }

  TEST_CASE("pop_scope without a scope: failed_precondition, and the figures are kept") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    void* p = stats.allocate(64, 16);
    try {
      (void)stats.pop_scope();
      FAIL("pop_scope without push_scope returned");
    } catch (const xlamem::exception& e) {
      CHECK(e.get().code() == errc::failed_precondition);
      CHECK(e.get().message() == "statistics_adaptor: pop_scope without push_scope");
    }
    CHECK(stats.statistics().current_bytes == 64);
    {
      auto scope = stats.make_scope();  // the RAII scope pops itself at the end
      stats.deallocate(p, 64, 16);
      CHECK(scope.statistics().current_bytes == -64);
    }
    CHECK(stats.statistics() == allocation_statistics{0, 64, 64, 0, 1, 1});
  }

  TEST_CASE("a failed allocation counts nothing; try_allocate counts like allocate") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> faults(borrow(heap),
                                                                      {.fail_nth = 2, .keep_failing = true});
    statistics_adaptor<resource_ref<decltype(faults)>> stats(borrow(faults));
    auto first = stats.try_allocate(40, 8);
    REQUIRE(first.has_value());
    auto second = stats.try_allocate(40, 8);  // injected failure
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().code() == errc::out_of_memory);
    CHECK_THROWS_AS((void)stats.allocate(8, 8), xlamem::out_of_memory);  // and every one after
    CHECK(stats.statistics() == allocation_statistics{40, 40, 40, 1, 1, 1});
    stats.deallocate(*first, 40, 8);
    CHECK(stats.statistics() == allocation_statistics{0, 40, 40, 0, 1, 1});
    CHECK(faults.attempts() == 3);
  }

  TEST_CASE("reset inside a scope starts over there only; properties and identity") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    void* a = stats.allocate(100, 8);
    stats.deallocate(a, 100, 8);
    stats.push_scope();
    void* b = stats.allocate(20, 8);
    stats.reset();
    CHECK(stats.statistics() == allocation_statistics{20, 20, 0, 1, 1, 0});
    stats.deallocate(b, 20, 8);
    (void)stats.pop_scope();
    CHECK(stats.statistics() == allocation_statistics{0, 100, 100, 0, 1, 1});

    statistics_adaptor<aligned_heap_memory> other{aligned_heap_memory{}};
    const auto& same = stats;
    CHECK(stats == same);
    CHECK_FALSE(stats == other);  // equal only to itself
    static_assert(has_property<statistics_adaptor<aligned_heap_memory>, host_accessible>);
    static_assert(!has_property<statistics_adaptor<aligned_heap_memory>, pinned>);
    static_assert(try_allocating_resource<statistics_adaptor<aligned_heap_memory>>);
    CHECK(stats.upstream() == aligned_heap_memory{});
  }
}
