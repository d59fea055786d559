// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/host_memory_allocator.hpp.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/host_allocator") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("host_memory_allocator over any resource: alignment, size 0, DMA hooks, NUMA hint") {
    counted_heap heap{aligned_heap_memory{}};
    dma_log log;
    host_memory_allocator alloc(
        borrow(heap),
        host_allocator_options{.alignment = 256, .dma = {&dma_log::map, &dma_log::unmap, &log}});
    CHECK(alloc.options().alignment == 256);
    {
      auto p = alloc.allocate(1000, host_allocate_options{.local_device = 2});
      REQUIRE(p != nullptr);
      CHECK(is_aligned(p.get(), 256));
      std::memset(p.get(), 1, 1000);
      CHECK(heap.statistics().current_count == 1);
      auto copy = alloc;  // copies share the state
      CHECK(copy == alloc);
      auto q = copy.allocate(10);
      CHECK(is_aligned(q.get(), 256));
    }
    CHECK(heap.statistics().current_bytes == 0);
    CHECK(log.events == std::vector<std::string>{"map 2 1000 aligned", "map -1 10 aligned",
                                                 "unmap -1", "unmap 2"});

    auto zero = alloc.try_allocate(0);
    REQUIRE(zero.has_value());
    CHECK(*zero == nullptr);

    log.fail_map = true;
    auto failed = alloc.try_allocate(64);
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code() == errc::unavailable);
    CHECK(failed.error().message().find("DMA map of 64 bytes") != std::string::npos);
    CHECK(heap.statistics().current_bytes == 0);  // the block went back

    int node = -7;
    host_memory_allocator numa(alloc_concept_test::numa_heap{&node});
    auto n0 = numa.allocate(16);
    CHECK(node == -7);  // no hint: plain allocate
    auto n1 = numa.allocate(16, host_allocate_options{.numa_node = 1});
    CHECK(node == 1);

    limiting_adaptor<aligned_heap_memory> cap(aligned_heap_memory{}, 100);
    host_memory_allocator small(borrow(cap));
    auto big = small.try_allocate(1000);
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().code() == errc::out_of_memory);
    CHECK(big.error().message().find("host_memory_allocator: allocating 1000 bytes") == 0);
    CHECK_THROWS_AS((void)small.allocate(1000), xlamem::out_of_memory);
    CHECK_THROWS_AS(
        host_memory_allocator(aligned_heap_memory{}, host_allocator_options{.alignment = 3}),
        xlamem::exception);
  }

  TEST_CASE("host_memory_allocator over a pinned-style pool") {
    fixed_block_pool<aligned_heap_memory> pool(
        aligned_heap_memory{}, pool_options{.block_count = 4, .block_size = 256, .alignment = 64});
    host_memory_allocator alloc(borrow(pool));
    auto p = alloc.allocate(100);
    CHECK(is_aligned(p.get(), 64));
    auto too_big = alloc.try_allocate(1000);  // does not fit a block
    CHECK_FALSE(too_big.has_value());
  }
}
