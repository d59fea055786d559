// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/fault_injection_adaptor.hpp: the Nth allocation, a byte budget
// and a seeded probability, how the triggers combine, and what is counted.
#include <doctest/doctest.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/adaptors") {
  using namespace xlamem::test::alloc_helpers;

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
}

TEST_SUITE("alloc/fault_injection_adaptor") {
  using namespace xlamem::test::alloc_helpers;

  // Which of `count` allocations of `bytes` fail (each success freed at once).
  template <class F>
  std::vector<bool> failures(F& f, int count, std::size_t bytes = 8) {
    std::vector<bool> out;
    for (int i = 0; i < count; ++i) {
      auto r = f.try_allocate(bytes, 8);
      out.push_back(!r.has_value());
      if (r.has_value()) f.deallocate(*r, bytes, 8);
    }
    return out;
  }

  TEST_CASE("default options inject nothing; probability 1 fails everything") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> none(borrow(heap), {});
    CHECK(failures(none, 1000) == std::vector<bool>(1000, false));
    CHECK(none.injected() == 0);
    CHECK(none.attempts() == 1000);
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> all(borrow(heap), {.probability = 1.0});
    CHECK(failures(all, 50) == std::vector<bool>(50, true));
    CHECK(all.injected() == 50);
    auto r = all.try_allocate(16, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() == "fault_injection_adaptor: injected failure of allocation #51 (16 bytes, by the probability)");
  }

  TEST_CASE("keep_failing fails from the Nth on; without it, only the Nth") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> once(borrow(heap), {.fail_nth = 1});
    CHECK(failures(once, 4) == std::vector<bool>{true, false, false, false});
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> from(borrow(heap), {.fail_nth = 3, .keep_failing = true});
    CHECK(failures(from, 6) == std::vector<bool>{false, false, true, true, true, true});
    CHECK(from.injected() == 4);
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> never(borrow(heap), {.fail_nth = 0, .keep_failing = true});
    CHECK(failures(never, 5) == std::vector<bool>(5, false));  // 0: never, keep_failing or not
  }

  TEST_CASE("the byte budget: a running total of successes, exact at the edge; the number wins in the message") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(borrow(heap), {.fail_after_bytes = 64});
    CHECK(failures(f, 1, 65) == std::vector<bool>{true});  // larger than the whole budget
    CHECK(failures(f, 4, 16) == std::vector<bool>{false, false, false, false});  // exactly 64
    auto r = f.try_allocate(1, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "fault_injection_adaptor: injected failure of allocation #6 (1 bytes, by the byte budget)");
    void* z = f.allocate(0, 8);  // zero bytes still fit
    f.deallocate(z, 0, 8);

    fault_injection_adaptor<resource_ref<aligned_heap_memory>> both(borrow(heap),
                                                                    {.fail_nth = 1, .fail_after_bytes = 0});
    auto first = both.try_allocate(8, 8);  // both triggers fire: the message names the number
    REQUIRE_FALSE(first.has_value());
    CHECK(first.error().message().find("by its number") != std::string::npos);
    auto second = both.try_allocate(8, 8);
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().message().find("by the byte budget") != std::string::npos);
  }

  TEST_CASE("an upstream failure is counted as an attempt, not an injection, and spends no budget") {
    aligned_heap_memory heap;
    limiting_adaptor<resource_ref<aligned_heap_memory>> cap(borrow(heap), 50);
    fault_injection_adaptor<resource_ref<decltype(cap)>> f(borrow(cap), {.fail_after_bytes = 100});
    auto big = f.try_allocate(60, 8);  // within the budget, refused by the cap below
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().message().find("limiting_adaptor:") == 0);
    CHECK(f.injected() == 0);
    CHECK(f.attempts() == 1);
    CHECK(failures(f, 2, 50) == std::vector<bool>{false, false});  // 100: the refused 60 was given back
    CHECK(failures(f, 1, 1) == std::vector<bool>{true});
    CHECK(f.injected() == 1);
    CHECK(f.attempts() == 4);
  }

  TEST_CASE("the probability: the same seed gives the same failures, and the rate is close to p") {
    aligned_heap_memory heap;
    const auto run = [&](double p, std::uint64_t seed) {
      fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(borrow(heap), {.probability = p, .seed = seed});
      return failures(f, 20'000);
    };
    const auto tenth = run(0.1, 7);
    CHECK(tenth == run(0.1, 7));
    const auto rate = static_cast<double>(std::count(tenth.begin(), tenth.end(), true)) / 20'000.0;
    CHECK(rate > 0.09);
    CHECK(rate < 0.11);
    // A higher p with the same seed fails a superset: each draw is compared with p.
    const auto half = run(0.5, 7);
    bool superset = true;
    for (std::size_t k = 0; k < half.size(); ++k) superset = superset && (!tenth[k] || half[k]);
    CHECK(superset);
  }

  TEST_CASE("throws out_of_memory from allocate; forwards properties; equal only to itself") {
    aligned_heap_memory heap;
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> f(borrow(heap), {.fail_nth = 1});
    try {
      (void)f.allocate(32, 16);
      FAIL("the injected failure did not throw");
    } catch (const std::bad_alloc& e) {
      CHECK(std::string(e.what()) ==
            "out_of_memory: fault_injection_adaptor: injected failure of allocation #1 (32 bytes, by its number)");
    }
    void* p = f.allocate(32, 16);
    CHECK(is_aligned(p, 16));
    f.deallocate(p, 32, 16);
    static_assert(has_property<decltype(f), host_accessible>);
    static_assert(!has_property<decltype(f), executable>);
    fault_injection_adaptor<resource_ref<aligned_heap_memory>> g(borrow(heap), {});
    const auto& same = f;
    CHECK(f == same);
    CHECK_FALSE(f == g);
    CHECK(&f.upstream().get() == &heap);
  }
}
