// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/adaptors.hpp.
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

  TEST_CASE("tracking_adaptor: outstanding list and an exact leak report with the tag") {
    std::string report;
    misuse_log misuse;
    {
      tracking_adaptor<aligned_heap_memory> t(
          aligned_heap_memory{}, tracking_options{.tag = "staging",
                                                  .on_leak = {[](void* ctx, const char* text) {
                                                                *static_cast<std::string*>(ctx) =
                                                                    text;
                                                              },
                                                              &report},
                                                  .on_misuse = {&misuse_log::record, &misuse}});
      void* a = t.allocate(64, 16);
      void* b = t.allocate(8, 8);
      void* c = t.allocate(32, 8);
      t.deallocate(b, 8, 8);
      CHECK(t.outstanding().size() == 2);
      CHECK(t.outstanding_bytes() == 96);
      CHECK(t.outstanding()[0].pointer == a);
      t.deallocate(c, 31, 8);  // wrong size: reported, not forwarded
      CHECK(misuse.saw("tracking_adaptor 'staging': deallocate of allocation #3 with 31 bytes"));
      int local = 0;
      t.deallocate(&local, 4, 4);
      CHECK(misuse.saw("did not hand out"));
      CHECK(t.leak_report() ==
            "tracking_adaptor 'staging': 2 allocation(s) leaked, 96 bytes\n"
            "  #1: 64 bytes at alignment 16\n"
            "  #3: 32 bytes at alignment 8\n");
      (void)a;
      // Leak a and c on purpose; free them through the upstream after the report is taken.
      t.upstream().deallocate(a, 64, 16);
      t.upstream().deallocate(c, 32, 8);
    }
    CHECK(report ==
          "tracking_adaptor 'staging': 2 allocation(s) leaked, 96 bytes\n"
          "  #1: 64 bytes at alignment 16\n"
          "  #3: 32 bytes at alignment 8\n");
    report.clear();
    {
      tracking_adaptor<aligned_heap_memory> clean(
          aligned_heap_memory{}, tracking_options{.tag = "clean",
                                                  .on_leak = {[](void* ctx, const char* text) {
                                                                *static_cast<std::string*>(ctx) =
                                                                    text;
                                                              },
                                                              &report}});
      clean.deallocate(clean.allocate(8, 8), 8, 8);
      CHECK(clean.leak_report().empty());
    }
    CHECK(report.empty());
  }

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

  TEST_CASE("fault_injection_adaptor: the Nth allocation, a byte budget, a seeded probability") {
    aligned_heap_memory heap;
    {
      fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(borrow(heap), {.fail_nth = 3});
      std::vector<bool> ok;
      for (int i = 0; i < 5; ++i) {
        auto r = f.try_allocate(8, 8);
        ok.push_back(r.has_value());
        if (r.has_value()) f.deallocate(*r, 8, 8);
        if (i == 2) {
          REQUIRE_FALSE(r.has_value());
          CHECK(r.error().message() ==
                "fault_injection_adaptor: injected failure of allocation #3 (8 bytes, by its "
                "number)");
        }
      }
      CHECK(ok == std::vector<bool>{true, true, false, true, true});
      CHECK(f.injected() == 1);
      CHECK(f.attempts() == 5);
    }
    {
      fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(
          borrow(heap), {.fail_nth = 2, .keep_failing = true});
      void* p = f.allocate(8, 8);
      CHECK_THROWS_AS((void)f.allocate(8, 8), xlamem::out_of_memory);
      CHECK_THROWS_AS((void)f.allocate(8, 8), xlamem::out_of_memory);
      f.deallocate(p, 8, 8);
    }
    {
      fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(borrow(heap),
                                                                   {.fail_after_bytes = 100});
      void* a = f.allocate(60, 8);
      f.deallocate(a, 60, 8);  // frees do not refill the budget
      void* b = f.allocate(40, 8);
      auto c = f.try_allocate(1, 8);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().message().find("by the byte budget") != std::string::npos);
      f.deallocate(b, 40, 8);
    }
    auto pattern = [&](std::uint64_t seed) {
      fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(
          borrow(heap), {.probability = 0.25, .seed = seed});
      std::vector<bool> fails;
      for (int i = 0; i < 400; ++i) {
        auto r = f.try_allocate(8, 8);
        fails.push_back(!r.has_value());
        if (r.has_value()) f.deallocate(*r, 8, 8);
      }
      return fails;
    };
    const auto p1 = pattern(42);
    CHECK(p1 == pattern(42));  // same seed, same failures
    CHECK(p1 != pattern(43));
    const auto n = std::count(p1.begin(), p1.end(), true);
    CHECK(n > 60);
    CHECK(n < 140);
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
