// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/limiting_adaptor.hpp: a byte cap on what is outstanding, its
// message, requests larger than the cap, and an upstream failure giving its bytes back.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/adaptors") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("limiting_adaptor: a byte cap, then out_of_memory") {
    limiting_adaptor<aligned_heap_memory> cap(aligned_heap_memory{}, 100);
    void* a = cap.allocate(60, 8);
    void* b = cap.allocate(40, 8);
    CHECK(cap.used() == 100);
    auto r = cap.try_allocate(1, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() ==
          "limiting_adaptor: 1 more bytes would pass the limit of 100 bytes (100 in use)");
    CHECK_THROWS_AS((void)cap.allocate(1, 8), xlamem::out_of_memory);
    cap.deallocate(b, 40, 8);
    void* c = cap.allocate(40, 8);
    CHECK(cap.used() == 100);
    cap.deallocate(a, 60, 8);
    cap.deallocate(c, 40, 8);
    CHECK(cap.used() == 0);
    CHECK_FALSE(cap.try_allocate(101, 8).has_value());
  }
}

TEST_SUITE("alloc/limiting_adaptor") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("a request over the whole cap fails even when nothing is in use; the cap itself fits") {
    limiting_adaptor<aligned_heap_memory> cap(aligned_heap_memory{}, 4096);
    CHECK(cap.limit() == 4096);
    auto r = cap.try_allocate(4097, 64);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "limiting_adaptor: 4097 more bytes would pass the limit of 4096 bytes (0 in use)");
    try {
      (void)cap.allocate(SIZE_MAX, 8);  // no overflow in the check
      FAIL("allocate past the cap returned");
    } catch (const xlamem::out_of_memory& e) {
      CHECK(std::string(e.what()).find("would pass the limit of 4096 bytes") != std::string::npos);
    }
    void* all = cap.allocate(4096, 64);
    CHECK(is_aligned(all, 64));
    CHECK(cap.used() == 4096);
    auto none = cap.try_allocate(1, 1);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message() == "limiting_adaptor: 1 more bytes would pass the limit of 4096 bytes (4096 in use)");
    cap.deallocate(all, 4096, 64);
    CHECK(cap.used() == 0);
  }

  TEST_CASE("a cap of zero refuses everything but zero bytes") {
    limiting_adaptor<aligned_heap_memory> cap(aligned_heap_memory{}, 0);
    CHECK_FALSE(cap.try_allocate(1, 8).has_value());
    void* p = cap.allocate(0, 8);  // counted as requested: zero bytes fit
    CHECK(p != nullptr);
    CHECK(cap.used() == 0);
    cap.deallocate(p, 0, 8);
  }

  TEST_CASE("an upstream failure is passed on unchanged and its bytes are given back") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> faults(borrow(heap), {.fail_nth = 2});
    limiting_adaptor<resource_ref<decltype(faults)>> cap(borrow(faults), 100);
    void* a = cap.allocate(50, 8);
    auto r = cap.try_allocate(50, 8);  // the upstream's injected failure, not the cap's
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() ==
          "fault_injection_adaptor: injected failure of allocation #2 (50 bytes, by its number)");
    CHECK(cap.used() == 50);  // the 50 reserved for the failed request came back
    void* b = cap.allocate(50, 8);
    CHECK(cap.used() == 100);
    cap.deallocate(a, 50, 8);
    cap.deallocate(b, 50, 8);
    CHECK(cap.used() == 0);
    CHECK(faults.attempts() == 3);
  }

  TEST_CASE("caps nest: the smaller one decides, and each counts what passed it") {
    limiting_adaptor<aligned_heap_memory> outer(aligned_heap_memory{}, 1000);
    limiting_adaptor<resource_ref<decltype(outer)>> inner(borrow(outer), 300);
    void* a = inner.allocate(300, 8);
    CHECK(inner.used() == 300);
    CHECK(outer.used() == 300);
    auto r = inner.try_allocate(1, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("limit of 300 bytes") != std::string::npos);
    void* b = outer.allocate(700, 8);  // beside the inner cap
    CHECK(outer.used() == 1000);
    inner.deallocate(a, 300, 8);
    CHECK(outer.used() == 700);
    outer.deallocate(b, 700, 8);
    CHECK(outer.used() == 0);
    static_assert(has_property<decltype(inner), host_accessible>);
    const auto& same = inner;
    CHECK(inner == same);
    CHECK(&inner.upstream().get() == &outer);
  }
}
