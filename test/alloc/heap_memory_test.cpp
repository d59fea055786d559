// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/heap_memory.hpp: aligned_heap_memory's alignments up to pages and
// beyond, zero-byte requests, bad alignments and refusals as errors or exceptions, equality.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

// Sanitizers that replace the allocator abort on an impossible size instead of refusing it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define XLAMEM_TEST_HEAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define XLAMEM_TEST_HEAP_SANITIZED 1
#endif
#endif
#ifndef XLAMEM_TEST_HEAP_SANITIZED
#define XLAMEM_TEST_HEAP_SANITIZED 0
#endif

TEST_SUITE("alloc/heap_memory") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("every power-of-two alignment from 1 to 64 KiB, the whole size writable") {
    aligned_heap_memory heap;
    std::vector<std::pair<void*, std::size_t>> live;
    for (std::size_t alignment = 1; alignment <= (std::size_t{1} << 16); alignment *= 2) {
      for (const std::size_t bytes : {std::size_t{1}, alignment, 3 * alignment + 1}) {
        void* p = heap.allocate(bytes, alignment);
        REQUIRE(p != nullptr);
        CHECK(is_aligned(p, alignment));
        std::memset(p, 0x5A, bytes);
        live.emplace_back(p, alignment);
        auto t = heap.try_allocate(bytes, alignment);
        REQUIRE(t.has_value());
        CHECK(is_aligned(*t, alignment));
        heap.deallocate(*t, bytes, alignment);
      }
    }
    std::size_t k = 0;
    for (std::size_t alignment = 1; alignment <= (std::size_t{1} << 16); alignment *= 2) {
      for (const std::size_t bytes : {std::size_t{1}, alignment, 3 * alignment + 1}) {
        heap.deallocate(live[k++].first, bytes, alignment);
      }
    }
    CHECK(k == live.size());
  }

  TEST_CASE("the default alignment is max_align_t's; zero bytes give distinct non-null pointers") {
    static_assert(default_alignment == alignof(std::max_align_t));
    aligned_heap_memory heap;
    void* d = heap.allocate(24);
    CHECK(is_aligned(d, default_alignment));
    heap.deallocate(d, 24);
    void* a = heap.allocate(0, 8);
    void* b = heap.allocate(0, 8);
    CHECK(a != nullptr);
    CHECK(b != nullptr);
    CHECK(a != b);
    heap.deallocate(a, 0, 8);
    heap.deallocate(b, 0, 8);
  }

  TEST_CASE("an alignment that is not a power of two: invalid_argument, naming the resource") {
    aligned_heap_memory heap;
    for (const std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{24}, std::size_t{4097}}) {
      auto r = heap.try_allocate(16, bad);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::invalid_argument);
      CHECK(r.error().message() == "aligned_heap_memory: alignment " + std::to_string(bad) + " is not a power of two");
    }
    try {
      (void)heap.allocate(16, 12);
      FAIL("allocate with alignment 12 returned");
    } catch (const xlamem::exception& e) {
      CHECK(e.get().code() == errc::invalid_argument);
      CHECK(std::string(e.what()) == "invalid_argument: aligned_heap_memory: alignment 12 is not a power of two");
    }
  }

#if !XLAMEM_TEST_HEAP_SANITIZED
  TEST_CASE("a request the heap cannot meet: out_of_memory with the size and alignment") {
    aligned_heap_memory heap;
    const std::size_t huge = SIZE_MAX / 2;
    auto r = heap.try_allocate(huge, 64);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() ==
          "aligned_heap_memory: cannot allocate " + std::to_string(huge) + " bytes at alignment 64");
    try {
      (void)heap.allocate(huge, 8);
      FAIL("allocate of SIZE_MAX / 2 bytes returned");
    } catch (const xlamem::out_of_memory& e) {
      CHECK(std::string(e.what()) ==
            "aligned_heap_memory: cannot allocate " + std::to_string(huge) + " bytes at alignment 8");
    }
  }
#endif

  TEST_CASE("stateless: every instance equals every other and frees what another allocated") {
    aligned_heap_memory a;
    aligned_heap_memory b;
    CHECK(a == b);
    static_assert(std::is_empty_v<aligned_heap_memory>);
    void* p = a.allocate(128, 128);
    b.deallocate(p, 128, 128);
    static_assert(has_property<aligned_heap_memory, host_accessible>);
    static_assert(!has_property<aligned_heap_memory, pinned>);
    static_assert(!has_property<aligned_heap_memory, executable>);
    // Through the free function and a borrowed reference alike.
    auto r = xlamem::try_allocate(a, 40, 32);
    REQUIRE(r.has_value());
    borrow(b).deallocate(*r, 40, 32);
  }
}

#undef XLAMEM_TEST_HEAP_SANITIZED
