// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/resource.hpp.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/resources") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE_TEMPLATE(
      "conformance: alignment, sizes, reuse, errors", R, aligned_heap_memory, mapped_memory,
      statistics_adaptor<aligned_heap_memory>, tracking_adaptor<aligned_heap_memory>,
      limiting_adaptor<aligned_heap_memory>, fault_injection_adaptor<aligned_heap_memory>,
      heap_pool<lock_free_policy, fail_policy>, heap_pool<lock_free_policy, wait_policy>,
      heap_pool<lock_free_policy, grow_policy>, heap_pool<lock_free_policy, fallback_policy>,
      heap_pool<mutex_fifo_policy, fail_policy>, heap_pool<mutex_fifo_policy, wait_policy>,
      heap_pool<mutex_fifo_policy, grow_policy>, heap_pool<mutex_fifo_policy, fallback_policy>,
      heap_pool<single_thread_policy, fail_policy>, heap_pool<single_thread_policy, grow_policy>,
      heap_pool<single_thread_policy, fallback_policy>) {
    static_assert(memory_resource<R>);
    static_assert(try_allocating_resource<R>);
    static_assert(has_property<R, host_accessible>);
    auto r = make_resource<R>::make();
    CHECK(*r == *r);

    struct live {
      void* p;
      std::size_t bytes, alignment;
    };
    std::vector<live> all;
    for (std::size_t bytes : {std::size_t{1}, std::size_t{8}, std::size_t{100}, max_request}) {
      for (std::size_t alignment :
           {std::size_t{1}, std::size_t{8}, std::size_t{16}, max_alignment}) {
        void* p = r->allocate(bytes, alignment);
        REQUIRE(p != nullptr);
        CHECK(is_aligned(p, alignment));
        std::memset(p, static_cast<int>(all.size()), bytes);  // writable, whole size
        all.push_back({p, bytes, alignment});
      }
    }
    // No two live allocations overlap, and each kept its contents.
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto* b = static_cast<const unsigned char*>(all[i].p);
      CHECK(std::all_of(b, b + all[i].bytes,
                        [&](unsigned char c) { return c == static_cast<unsigned char>(i); }));
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        const auto a0 = reinterpret_cast<std::uintptr_t>(all[i].p);
        const auto b0 = reinterpret_cast<std::uintptr_t>(all[j].p);
        CHECK((a0 + all[i].bytes <= b0 || b0 + all[j].bytes <= a0));
      }
    }
    for (const auto& a : all) r->deallocate(a.p, a.bytes, a.alignment);

    // Reuse: a freed block can be had again (and a pool hands back the same block).
    void* p1 = r->allocate(64, 16);
    r->deallocate(p1, 64, 16);
    void* p2 = r->allocate(64, 16);
    CHECK(p2 != nullptr);
    r->deallocate(p2, 64, 16);

    // try_allocate agrees with allocate, and a bad alignment is an error, not a crash.
    auto t = xlamem::try_allocate(*r, 32, 32);
    REQUIRE(t.has_value());
    CHECK(is_aligned(*t, 32));
    r->deallocate(*t, 32, 32);
    auto bad = xlamem::try_allocate(*r, 32, 3);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::invalid_argument);
    CHECK_THROWS_AS((void)r->allocate(32, 3), xlamem::exception);
  }

  TEST_CASE("resource_ref borrows, compares by referent and forwards properties") {
    aligned_heap_memory heap;
    auto a = borrow(heap);
    auto b = borrow(heap);
    CHECK(a == b);
    void* p = a.allocate(16, 16);
    b.deallocate(p, 16, 16);
    CHECK(&a.get() == &heap);
  }
}
