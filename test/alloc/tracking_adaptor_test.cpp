// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/tracking_adaptor.hpp: the outstanding list, the leak report and
// where it goes, and misuse (a foreign pointer, a wrong size or alignment) reported, not forwarded.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "support/alloc_helpers.hpp"
#include "support/child_process.hpp"

TEST_SUITE("alloc/adaptors") {
  using namespace xlamem::test::alloc_helpers;

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
}

TEST_SUITE("alloc/tracking_adaptor") {
  using namespace xlamem::test::alloc_helpers;

  using xlamem::test::run_in_child;

  TEST_CASE("misuse messages name the tag, the allocation and both sizes and alignments") {
    misuse_log misuse;
    tracking_adaptor<aligned_heap_memory> t(aligned_heap_memory{},
                                            tracking_options{.tag = "kv", .on_misuse = {&misuse_log::record, &misuse}});
    void* p = t.allocate(16, 16);
    t.deallocate(p, 16, 8);  // right size, wrong alignment
    int local = 0;
    t.deallocate(&local, 4, 4);
    REQUIRE(misuse.messages.size() == 2);
    CHECK(misuse.messages[0] ==
          "tracking_adaptor 'kv': deallocate of allocation #1 with 16 bytes at alignment 8; it was "
          "allocated with 16 bytes at alignment 16");
    CHECK(misuse.messages[1] == "tracking_adaptor 'kv': deallocate of a pointer it did not hand out (4 bytes)");
    // Neither was forwarded: the allocation is still tracked and is freed properly now.
    REQUIRE(t.outstanding().size() == 1);
    CHECK(t.outstanding()[0].pointer == p);
    t.deallocate(p, 16, 16);
    CHECK(t.outstanding().empty());
    CHECK(misuse.messages.size() == 2);
    t.deallocate(p, 16, 16);  // a second release of the same pointer is foreign now
    CHECK(misuse.messages.size() == 3);
    CHECK(misuse.saw("did not hand out (16 bytes)"));
  }

  TEST_CASE("serials count successful allocations only; try_allocate is tracked like allocate") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> faults(borrow(heap), {.fail_nth = 2});
    tracking_adaptor<resource_ref<decltype(faults)>> t(borrow(faults));
    CHECK(t.tag() == "tracking_adaptor");  // the default tag
    auto a = t.try_allocate(10, 8);
    REQUIRE(a.has_value());
    auto failed = t.try_allocate(20, 8);  // injected: not tracked, no serial used
    REQUIRE_FALSE(failed.has_value());
    void* b = t.allocate(30, 32);
    const auto out = t.outstanding();
    REQUIRE(out.size() == 2);
    CHECK(out[0].pointer == *a);
    CHECK(out[0].bytes == 10);
    CHECK(out[0].alignment == 8);
    CHECK(out[0].serial == 1);
    CHECK(out[1].pointer == b);
    CHECK(out[1].bytes == 30);
    CHECK(out[1].alignment == 32);
    CHECK(out[1].serial == 2);
    CHECK(t.outstanding_bytes() == 40);
    t.deallocate(*a, 10, 8);
    t.deallocate(b, 30, 32);
    CHECK(t.outstanding_bytes() == 0);
    CHECK(t.leak_report().empty());
  }

  TEST_CASE("the outstanding list is oldest first, whatever the order of frees") {
    tracking_adaptor<aligned_heap_memory> t(aligned_heap_memory{});
    std::vector<void*> ps;
    for (std::size_t k = 1; k <= 8; ++k) ps.push_back(t.allocate(k * 8, 8));
    for (std::size_t k : {1u, 4u, 6u}) t.deallocate(ps[k], (k + 1) * 8, 8);
    const auto out = t.outstanding();
    std::vector<std::uint64_t> serials;
    for (const auto& a : out) serials.push_back(a.serial);
    CHECK(serials == std::vector<std::uint64_t>{1, 3, 4, 6, 8});
    CHECK(t.outstanding_bytes() == 8 + 24 + 32 + 48 + 64);
    for (const auto& a : out) t.deallocate(a.pointer, a.bytes, a.alignment);
    CHECK(t.outstanding().empty());
  }

  TEST_CASE("without handlers: the leak report goes to stderr, and misuse aborts through XLAMEM_MISUSE") {
    const auto [leak_status, leak_text] = run_in_child([] {
      aligned_heap_memory heap;
      tracking_adaptor<resource_ref<aligned_heap_memory>> t(borrow(heap), tracking_options{.tag = "leaky"});
      (void)t.allocate(24, 8);  // leaked on purpose (the child exits at once)
    });
    CHECK(WIFEXITED(leak_status));
    CHECK(leak_text == "tracking_adaptor 'leaky': 1 allocation(s) leaked, 24 bytes\n  #1: 24 bytes at alignment 8\n");

    const auto [misuse_status, misuse_text] = run_in_child([] {
      tracking_adaptor<aligned_heap_memory> t(aligned_heap_memory{}, tracking_options{.tag = "strict"});
      int local = 0;
      t.deallocate(&local, 4, 4);
    });
    CHECK(WIFSIGNALED(misuse_status));
    if (WIFSIGNALED(misuse_status)) CHECK(WTERMSIG(misuse_status) == SIGABRT);
    CHECK(misuse_text == "xlamem: misuse: tracking_adaptor 'strict': deallocate of a pointer it did not hand out (4 bytes)\n");
  }

  TEST_CASE("properties come from the upstream; an adaptor equals only itself") {
    static_assert(has_property<tracking_adaptor<aligned_heap_memory>, host_accessible>);
    static_assert(!has_property<tracking_adaptor<aligned_heap_memory>, device_accessible>);
    static_assert(has_property<tracking_adaptor<resource_ref<alloc_concept_test::good_resource>>, pinned>);
    tracking_adaptor<aligned_heap_memory> a(aligned_heap_memory{});
    tracking_adaptor<aligned_heap_memory> b(aligned_heap_memory{});
    const auto& same = a;
    CHECK(a == same);
    CHECK_FALSE(a == b);
  }
}
