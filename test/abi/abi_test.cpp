// SPDX-License-Identifier: Apache-2.0
// Two translation units of one program, one built with NDEBUG and one without, share pools:
// a block acquired in one is released in the other, and both see the same layout, the same
// debug bookkeeping and the same misuse reports.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include "shared_pool.hpp"

namespace {

using namespace abi;

xlamem::pool_options options(const char* name, misuse_log& log) {
  return xlamem::pool_options{.block_count = 4,
                              .block_size = 32,
                              .alignment = 16,
                              .name = name,
                              .on_misuse = {&misuse_log::record, &log}};
}

bool poisoned(const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  return std::all_of(b, b + n, [](unsigned char c) { return c == xlamem::poison_byte; });
}

}  // namespace

TEST_SUITE("abi/ndebug") {
  TEST_CASE("both translation units see one layout, and only one of them has NDEBUG") {
    const tu_view a = with_ndebug::view();
    const tu_view b = without_ndebug::view();
    REQUIRE(a.ndebug);        // the build really did split the flag
    REQUIRE_FALSE(b.ndebug);
    CHECK(a.checked_size == b.checked_size);
    CHECK(a.plain_size == b.plain_size);
    CHECK(a.biased_size == b.biased_size);
    CHECK(a.handle_size == b.handle_size);
    CHECK(a.cache_size == b.cache_size);
    CHECK(a.checked_size == sizeof(checked_pool));
    // XLAMEM_ASSERT's default does not follow NDEBUG either.
    CHECK(a.assert_evaluations == 1);
    CHECK(b.assert_evaluations == 1);
  }

  TEST_CASE("a checked pool: acquire in one, release in the other, the same bookkeeping") {
    misuse_log log;
    checked_pool pool(xlamem::aligned_heap_memory{}, options("shared", log));
    auto h = with_ndebug::acquire(pool);
    REQUIRE(h);
    CHECK(with_ndebug::held(pool) == 1);
    CHECK(without_ndebug::held(pool) == 1);
    void* p = h.data();
    without_ndebug::release(h);
    CHECK_FALSE(h);
    CHECK(with_ndebug::held(pool) == 0);
    CHECK(without_ndebug::held(pool) == 0);
    CHECK(poisoned(p, 32));  // poisoned by the release in the TU without NDEBUG...

    auto g = without_ndebug::acquire(pool);
    std::fill_n(static_cast<unsigned char*>(g.data()), 32, 1);
    void* q = g.data();
    with_ndebug::release(g);
    CHECK(poisoned(q, 32));  // ... and by the one with it
    CHECK(log.messages.empty());

    // Misuse is reported the same way from either side.
    void* r = with_ndebug::raw_allocate(pool);
    without_ndebug::raw_deallocate(pool, r);
    with_ndebug::raw_deallocate(pool, r);
    REQUIRE(log.messages.size() == 1);
    CHECK(log.messages[0].find("'shared': double release of block") != std::string::npos);
    without_ndebug::raw_deallocate(pool, r);
    REQUIRE(log.messages.size() == 2);
    CHECK(log.messages[1] == log.messages[0]);
    int local = 0;
    with_ndebug::raw_deallocate(pool, &local);
    without_ndebug::raw_deallocate(pool, &local);
    REQUIRE(log.messages.size() == 4);
    CHECK(log.messages[2] == log.messages[3]);
    CHECK(log.messages[2].find("did not hand out") != std::string::npos);
    CHECK(with_ndebug::held(pool) == 0);
  }

  TEST_CASE("a local_cache built in one translation unit, used from the other") {
    misuse_log log;
    checked_pool pool(xlamem::aligned_heap_memory{}, options("cached", log));
    {
      checked_pool::local_cache cache(pool, 2);
      auto h = with_ndebug::acquire_cached(cache);
      auto g = without_ndebug::acquire_cached(cache);
      CHECK(h);
      CHECK(g);
      CHECK(h.data() != g.data());
      CHECK(without_ndebug::held(pool) == 2);
    }
    CHECK(with_ndebug::held(pool) == 0);
    CHECK(log.messages.empty());
  }

  TEST_CASE("a pool without checks: no bookkeeping on either side") {
    misuse_log log;
    plain_pool pool(xlamem::aligned_heap_memory{}, options("plain", log));
    auto h = without_ndebug::acquire_plain(pool);
    CHECK(with_ndebug::held_plain(pool) == -1);
    CHECK(without_ndebug::held_plain(pool) == -1);
    with_ndebug::release_plain(h);
    plain_pool::handle all[4];
    for (auto& x : all) x = with_ndebug::acquire_plain(pool);
    CHECK(std::all_of(std::begin(all), std::end(all), [](const auto& x) { return bool(x); }));
    for (auto& x : all) without_ndebug::release_plain(x);
    CHECK(log.messages.empty());
  }

  TEST_CASE("an owner-biased pool handed between threads and translation units") {
    misuse_log log;
    biased_pool pool(xlamem::aligned_heap_memory{}, options("biased", log));
    auto h = with_ndebug::acquire_biased(pool);  // this thread owns the list
    std::thread([&] {
      without_ndebug::release_biased(h);  // another thread and TU: revokes, then releases
      auto g = without_ndebug::acquire_biased(pool);
      with_ndebug::release_biased(g);
    }).join();
    CHECK(pool.free_list().owner_bias_state() == xlamem::owner_bias::state_kind::shared);
    biased_pool::handle all[4];
    for (auto& x : all) x = without_ndebug::acquire_biased(pool);
    CHECK(std::all_of(std::begin(all), std::end(all), [](const auto& x) { return bool(x); }));
    CHECK_FALSE(pool.try_acquire().has_value());
  }
}
