// SPDX-License-Identifier: Apache-2.0
// Tests for xlamem/alloc: concepts (positive and near-miss models), one conformance suite over
// every resource, pool policy combination and adaptor, pool handle semantics and exhaustion
// behaviour per policy, debug checks, exact adaptor figures, the host allocator, and the
// multithreaded stress in "alloc/concurrency" (CI runs that suite under ThreadSanitizer).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#endif

#include "xlamem/alloc/exhaustion.hpp"
#include "xlamem/alloc/fault_injection_adaptor.hpp"
#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/free_list.hpp"
#include "xlamem/alloc/heap_memory.hpp"
#include "xlamem/alloc/host_memory_allocator.hpp"
#include "xlamem/alloc/limiting_adaptor.hpp"
#include "xlamem/alloc/mapped_memory.hpp"
#include "xlamem/alloc/owner_bias.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/alloc/statistics_adaptor.hpp"
#include "xlamem/alloc/tracking_adaptor.hpp"

using namespace xlamem;

// Concept near-misses: each differs from a model in one way. (A named namespace: declared-only
// members of internal-linkage types would draw clang's unneeded-declaration warning.)
namespace alloc_concept_test {

struct good_resource {
  void* allocate(std::size_t, std::size_t);
  void deallocate(void*, std::size_t, std::size_t) noexcept;
  friend bool operator==(const good_resource&, const good_resource&) noexcept;
  friend void get_property(const good_resource&, pinned) noexcept;
  friend void get_property(const good_resource&, host_accessible) noexcept;
};
struct throwing_deallocate {
  void* allocate(std::size_t, std::size_t);
  void deallocate(void*, std::size_t, std::size_t);  // not noexcept
  friend bool operator==(const throwing_deallocate&, const throwing_deallocate&) noexcept;
};
struct typed_allocate {
  int* allocate(std::size_t, std::size_t);  // not void*
  void deallocate(void*, std::size_t, std::size_t) noexcept;
  friend bool operator==(const typed_allocate&, const typed_allocate&) noexcept;
};
struct no_alignment {
  void* allocate(std::size_t);  // no alignment parameter
  void deallocate(void*, std::size_t) noexcept;
  friend bool operator==(const no_alignment&, const no_alignment&) noexcept;
};
struct not_comparable {
  void* allocate(std::size_t, std::size_t);
  void deallocate(void*, std::size_t, std::size_t) noexcept;
};
struct throwing_try : good_resource {
  result<void*> try_allocate(std::size_t, std::size_t);  // not noexcept
};
struct null_try : good_resource {
  void* try_allocate(std::size_t, std::size_t) noexcept;  // returns null, not a result
};
struct forwarding : forward_properties<forwarding, good_resource> {};

static_assert(memory_resource<good_resource>);
static_assert(!memory_resource<throwing_deallocate>);
static_assert(!memory_resource<typed_allocate>);
static_assert(!memory_resource<no_alignment>);
static_assert(!memory_resource<not_comparable>);
static_assert(!try_allocating_resource<good_resource>);
static_assert(!try_allocating_resource<throwing_try>);
static_assert(!try_allocating_resource<null_try>);
static_assert(has_property<good_resource, pinned>);
static_assert(has_property<good_resource, host_accessible>);
static_assert(!has_property<good_resource, device_accessible>);
static_assert(!has_property<good_resource, executable>);
static_assert(has_property<forwarding, pinned>);
static_assert(!has_property<forwarding, executable>);
static_assert(has_property<statistics_adaptor<resource_ref<good_resource>>, pinned>);
static_assert(has_property<fixed_block_pool<good_resource>, pinned>);
static_assert(!has_property<fixed_block_pool<aligned_heap_memory>, pinned>);
static_assert(has_property<mapped_memory, host_accessible>);

struct list_without_flag {
  explicit list_without_flag(std::uint32_t);
  std::uint32_t pop() noexcept;
  void push(std::uint32_t) noexcept;
  void push_range(std::uint32_t, std::uint32_t) noexcept;
};
struct list_throwing_pop {
  static constexpr bool thread_safe = true;
  explicit list_throwing_pop(std::uint32_t);
  std::uint32_t pop();
  void push(std::uint32_t) noexcept;
  void push_range(std::uint32_t, std::uint32_t) noexcept;
};
static_assert(free_list_policy<lock_free_policy>);
static_assert(free_list_policy<mutex_fifo_policy>);
static_assert(free_list_policy<single_thread_policy>);
static_assert(!free_list_policy<list_without_flag>);
static_assert(!free_list_policy<list_throwing_pop>);

struct wait_without_timeout {
  static constexpr exhaustion_action action = exhaustion_action::wait;
};
struct grow_without_limit {
  static constexpr exhaustion_action action = exhaustion_action::grow;
};
struct no_action {};
static_assert(!exhaustion_policy<wait_without_timeout>);
static_assert(!exhaustion_policy<grow_without_limit>);
static_assert(!exhaustion_policy<no_action>);

}  // namespace alloc_concept_test

namespace {

// ---------------------------------------------------------------------------------------------
// Factories for the conformance suite: every resource under test, made on the heap (pools and
// adaptors are not movable). Pools serve blocks of 256 bytes at alignment 64.

constexpr std::size_t max_request = 256;
constexpr std::size_t max_alignment = 64;

template <class R>
struct make_resource;

template <>
struct make_resource<aligned_heap_memory> {
  static std::unique_ptr<aligned_heap_memory> make() {
    return std::make_unique<aligned_heap_memory>();
  }
};
template <>
struct make_resource<mapped_memory> {
  static std::unique_ptr<mapped_memory> make() {
    return std::make_unique<mapped_memory>(mapped_memory_options{.huge_page_hint = true});
  }
};
template <class F, class E>
struct make_resource<fixed_block_pool<aligned_heap_memory, F, E>> {
  static auto make() {
    return std::make_unique<fixed_block_pool<aligned_heap_memory, F, E>>(
        aligned_heap_memory{}, pool_options{.block_count = 64,
                                            .block_size = max_request,
                                            .alignment = max_alignment,
                                            .name = "conformance"});
  }
};
template <>
struct make_resource<statistics_adaptor<aligned_heap_memory>> {
  static auto make() {
    return std::make_unique<statistics_adaptor<aligned_heap_memory>>(aligned_heap_memory{});
  }
};
template <>
struct make_resource<tracking_adaptor<aligned_heap_memory>> {
  static auto make() {
    return std::make_unique<tracking_adaptor<aligned_heap_memory>>(aligned_heap_memory{});
  }
};
template <>
struct make_resource<limiting_adaptor<aligned_heap_memory>> {
  static auto make() {
    return std::make_unique<limiting_adaptor<aligned_heap_memory>>(aligned_heap_memory{}, 1u << 20);
  }
};
template <>
struct make_resource<fault_injection_adaptor<aligned_heap_memory>> {
  static auto make() {
    return std::make_unique<fault_injection_adaptor<aligned_heap_memory>>(
        aligned_heap_memory{}, fault_injection_options{});
  }
};

template <class F, class E>
using heap_pool = fixed_block_pool<aligned_heap_memory, F, E>;

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_SUITE("alloc/resources") {
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

  TEST_CASE("aligned_heap_memory and mapped_memory honour large alignments") {
    aligned_heap_memory heap;
    void* p = heap.allocate(10, 4096);
    CHECK(is_aligned(p, 4096));
    heap.deallocate(p, 10, 4096);

    mapped_memory pages;
    const std::size_t page = mapped_memory::page_size();
    void* q = pages.allocate(3 * page + 1, 1u << 21);  // 2 MiB: over-map and trim
    CHECK(is_aligned(q, 1u << 21));
    std::memset(q, 1, 3 * page + 1);
    pages.deallocate(q, 3 * page + 1, 1u << 21);
    void* z = pages.allocate(0, 8);  // a zero-byte request still gets a (page) mapping
    CHECK(z != nullptr);
    pages.deallocate(z, 0, 8);
  }

  TEST_CASE("mapped_memory reports an impossible request as out_of_memory") {
    mapped_memory pages;
    auto r = pages.try_allocate(SIZE_MAX - 10, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message().find("mapped_memory") != std::string::npos);
    CHECK_THROWS_AS((void)pages.allocate(SIZE_MAX / 2, 8), xlamem::out_of_memory);
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

// ---------------------------------------------------------------------------------------------

namespace {

struct misuse_log {
  std::vector<std::string> messages;
  static void record(void* self, const char* message) {
    static_cast<misuse_log*>(self)->messages.emplace_back(message);
  }
  misuse_handler handler() { return {&misuse_log::record, this}; }
  [[nodiscard]] bool saw(const std::string& needle) const {
    return std::any_of(messages.begin(), messages.end(),
                       [&](const std::string& m) { return m.find(needle) != std::string::npos; });
  }
};

using counted_heap = statistics_adaptor<aligned_heap_memory>;

template <class F, class E>
using counted_pool = fixed_block_pool<resource_ref<counted_heap>, F, E>;

template <class E>
E test_policy() {
  if constexpr (E::action == exhaustion_action::wait) {
    return E{std::chrono::milliseconds(20)};
  } else if constexpr (E::action == exhaustion_action::grow) {
    return E{3};
  } else {
    return E{};
  }
}

}  // namespace

TEST_SUITE("alloc/pool") {
  TEST_CASE_TEMPLATE(
      "pool policies: one upstream allocation, alignment, exhaustion, handles", P,
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
      } else if constexpr (std::is_same_v<typename P::free_list_type, lock_free_policy>) {
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

  TEST_CASE_TEMPLATE("bulk acquire/release and local_cache", F, lock_free_policy, mutex_fifo_policy,
                     single_thread_policy) {
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

// ---------------------------------------------------------------------------------------------
// lock_free_policy on its own: stripe counts, every index back exactly once from any mix of
// push/pop members, exact LIFO with one stripe. The stripe count is forced so that several
// stripes are exercised whatever the machine's core count.

namespace {

template <class L>
concept has_owner_bias = requires(L& l) { l.owner_bias_state(); l.revoke_owner_bias(); };

template <class P>
concept can_revoke_bias = requires(P& p) { p.revoke_owner_bias(); };

// Pops until empty; checks each index is in range and seen once, and that the list stays empty.
template <class F>
std::vector<std::uint32_t> drain(F& list, std::uint32_t capacity) {
  std::vector<std::uint32_t> got;
  std::vector<char> seen(capacity, 0);
  for (std::uint32_t i = list.pop(); i != free_list_npos; i = list.pop()) {
    REQUIRE(i < capacity);
    CHECK(seen[i] == 0);
    seen[i] = 1;
    got.push_back(i);
    REQUIRE(got.size() <= capacity);
  }
  CHECK(list.pop() == free_list_npos);
  return got;
}

}  // namespace

TEST_SUITE("alloc/free_list") {
  TEST_CASE("lock_free_policy stripe counts: powers of two, capped at 64 and at the capacity") {
    CHECK(lock_free_policy(100, 1).stripe_count() == 1);
    CHECK(lock_free_policy(100, 5).stripe_count() == 8);
    CHECK(lock_free_policy(100, 64).stripe_count() == 64);
    CHECK(lock_free_policy(1000, 1000).stripe_count() == 64);
    CHECK(lock_free_policy(3, 8).stripe_count() == 2);
    CHECK(lock_free_policy(1, 8).stripe_count() == 1);
    CHECK(lock_free_policy(0, 8).stripe_count() == 1);
    const std::uint32_t automatic = lock_free_policy(1u << 20).stripe_count();
    CHECK(is_power_of_two(automatic));
    CHECK(automatic <= lock_free_policy::max_stripes);
    CHECK(lock_free_policy(2).stripe_count() <= 2);
  }

  TEST_CASE_TEMPLATE("lock_free_policy with one stripe is an exact LIFO, owned or shared", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    {
      L list(8, 1);
      list.push_range(0, 8);
      for (std::uint32_t i = 0; i < 3; ++i) CHECK(list.pop() == i);  // range order
      list.push(1);
      list.push(0);
      CHECK(list.pop() == 0);
      CHECK(list.pop() == 1);
      const std::uint32_t two[] = {1, 0};
      list.push_many(two, 2);
      std::uint32_t out[3];
      REQUIRE(list.pop_many(out, 3) == 3);
      CHECK(out[0] == 1);
      CHECK(out[1] == 0);
      CHECK(out[2] == 3);
      CHECK(drain(list, 8).size() == 4);  // 4 .. 7
    }
  }

  TEST_CASE_TEMPLATE("lock_free_policy returns every index exactly once over any stripe count", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    {
      for (std::uint32_t stripes : {1u, 2u, 4u, 8u, 64u}) {
        for (std::uint32_t n : {1u, 7u, 16u, 100u, 1000u}) {
          CAPTURE(stripes);
          CAPTURE(n);
          L list(n, stripes);
          CHECK(list.pop() == free_list_npos);  // empty at first
          // Two ranges, as a pool that grew: the first index of the second is handed out
          // directly, never pushed.
          const std::uint32_t half = n / 2;
          list.push_range(0, half);
          list.push_range(half + 1, n - half - 1);  // may be empty
          auto got = drain(list, n);
          CHECK(got.size() == n - 1);
          // Back one by one, then all out again.
          for (std::uint32_t i : got) list.push(i);
          list.push(half);  // the directly handed-out one
          CHECK(drain(list, n).size() == n);
          // Back in batches of up to 5, out through pop_many (7 at a time) until it finds none.
          std::vector<std::uint32_t> all(n);
          for (std::uint32_t i = 0; i < n; ++i) all[i] = n - 1 - i;
          for (std::uint32_t i = 0; i < n; i += 5)
            list.push_many(all.data() + i, std::min<std::uint32_t>(5, n - i));
          std::vector<std::uint32_t> out(n + 3);
          std::vector<char> seen(n, 0);
          std::uint32_t total = 0;
          for (;;) {
            const std::uint32_t k = list.pop_many(out.data() + total, 7);
            for (std::uint32_t j = total; j < total + k; ++j) {
              REQUIRE(out[j] < n);
              CHECK(seen[out[j]] == 0);
              seen[out[j]] = 1;
            }
            total += k;
            REQUIRE(total <= n);
            if (k == 0) break;
          }
          CHECK(total == n);
          CHECK(list.pop() == free_list_npos);
        }
      }
    }
  }

  TEST_CASE_TEMPLATE("lock_free_policy spreads a range over the stripes in ascending runs", L,
                     lock_free_policy, owner_biased<lock_free_policy>) {
    // 128 indices over 4 stripes: runs of 32. Whatever stripe the caller's CPU picks, each
    // run comes out ascending and whole, one run after another, as long as the thread stays
    // on one CPU; with migrations the runs may interleave, so only per-run order is checked.
    {
      L list(128, 4);
      list.push_range(0, 128);
      auto got = drain(list, 128);
      REQUIRE(got.size() == 128);
      std::uint32_t last[4] = {0, 0, 0, 0};
      bool started[4] = {false, false, false, false};
      for (std::uint32_t i : got) {
        const std::uint32_t run = i / 32;
        if (started[run]) CHECK(i == last[run] + 1);
        if (!started[run]) CHECK(i == run * 32);
        started[run] = true;
        last[run] = i;
      }
    }
  }

  TEST_CASE_TEMPLATE("owner bias: the first thread owns the list, a second revokes it for good", F,
                     owner_biased<lock_free_policy>, owner_biased<mutex_fifo_policy>) {
    using state = owner_bias::state_kind;
    const bool can_bias = owner_bias::available();
    if (!can_bias) MESSAGE("this process cannot have membarrier: lists start shared");
    const state owned = can_bias ? state::owned : state::shared;
    F list(16);
    CHECK(list.owner_bias_state() == (can_bias ? state::unowned : state::shared));
    list.push_range(0, 16);  // never claims: it runs while a pool is built
    CHECK(list.owner_bias_state() == (can_bias ? state::unowned : state::shared));
    const std::uint32_t a = list.pop();  // claims
    CHECK(list.owner_bias_state() == owned);
    const std::uint32_t b = list.pop();
    list.push(a);
    CHECK(list.owner_bias_state() == owned);
    std::uint32_t c = free_list_npos;
    std::thread([&] {
      c = list.pop();  // revokes
      list.push(c);
    }).join();
    CHECK(list.owner_bias_state() == state::shared);
    CHECK(c < 16);
    CHECK(c != b);
    list.push(b);  // the former owner now synchronises too
    CHECK(list.owner_bias_state() == state::shared);
    CHECK(drain(list, 16).size() == 16);

    // An owner that exits: the next thread revokes and finds every index.
    F orphan(8);
    orphan.push_range(0, 8);
    std::thread([&] {
      const std::uint32_t i = orphan.pop();
      const std::uint32_t j = orphan.pop();
      orphan.push(j);
      orphan.push(i);
    }).join();
    CHECK(orphan.owner_bias_state() == owned);
    CHECK(drain(orphan, 8).size() == 8);
    CHECK(orphan.owner_bias_state() == state::shared);

    // Revoked up front: no thread ever owns it.
    F up_front(4);
    up_front.revoke_owner_bias();
    up_front.push_range(0, 4);
    CHECK(drain(up_front, 4).size() == 4);
    CHECK(up_front.owner_bias_state() == state::shared);
  }

  TEST_CASE("the default thread-safe lists carry no owner bias") {
    static_assert(!has_owner_bias<lock_free_policy>);
    static_assert(!has_owner_bias<mutex_fifo_policy>);
    static_assert(has_owner_bias<owner_biased<lock_free_policy>>);
    static_assert(has_owner_bias<owner_biased<mutex_fifo_policy>>);
    // The bias is the only difference in size: none for the default lists.
    static_assert(sizeof(lock_free_policy) < sizeof(owner_biased<lock_free_policy>));
    static_assert(sizeof(mutex_fifo_policy) < sizeof(owner_biased<mutex_fifo_policy>));
    static_assert(!can_revoke_bias<fixed_block_pool<aligned_heap_memory>>);
    static_assert(
        can_revoke_bias<fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>>);
    CHECK(lock_free_policy(4, 1).stripe_count() == 1);
  }

  TEST_CASE_TEMPLATE("mutex_fifo_policy is first-in first-out, owned or shared", L,
                     mutex_fifo_policy, owner_biased<mutex_fifo_policy>) {
    {
      L list(8);
      list.push_range(0, 4);
      CHECK(list.pop() == 0);
      list.push(7);
      CHECK(list.pop() == 1);
      std::uint32_t out[8];
      REQUIRE(list.pop_many(out, 8) == 3);
      CHECK(out[0] == 2);
      CHECK(out[1] == 3);
      CHECK(out[2] == 7);
      const std::uint32_t back[] = {5, 0};
      list.push_many(back, 2);
      CHECK(list.pop() == 5);
      CHECK(list.pop() == 0);
      CHECK(list.pop() == free_list_npos);
    }
  }
}

// ---------------------------------------------------------------------------------------------

TEST_SUITE("alloc/adaptors") {
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

// ---------------------------------------------------------------------------------------------

namespace {

struct dma_log {
  std::vector<std::string> events;
  bool fail_map = false;
  static result<void> map(void* ctx, std::optional<int> device, void* p, std::size_t bytes) {
    auto* self = static_cast<dma_log*>(ctx);
    if (self->fail_map) return error(errc::unavailable, "device 3 refused the mapping");
    self->events.push_back("map " + std::to_string(device.value_or(-1)) + " " +
                           std::to_string(bytes) +
                           (is_aligned(p, 256) ? " aligned" : " unaligned"));
    return {};
  }
  static result<void> unmap(void* ctx, std::optional<int> device, void*) {
    static_cast<dma_log*>(ctx)->events.push_back("unmap " + std::to_string(device.value_or(-1)));
    return {};
  }
};

}  // namespace

namespace alloc_concept_test {

// A resource that records the NUMA node it was asked for.
struct numa_heap {
  int* last_node;
  void* allocate(std::size_t bytes, std::size_t alignment) {
    return aligned_heap_memory{}.allocate(bytes, alignment);
  }
  void* allocate_on_node(std::size_t bytes, std::size_t alignment, int node) {
    *last_node = node;
    return allocate(bytes, alignment);
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    aligned_heap_memory{}.deallocate(p, bytes, alignment);
  }
  friend bool operator==(const numa_heap&, const numa_heap&) noexcept { return true; }
  friend void get_property(const numa_heap&, host_accessible) noexcept {}
};
static_assert(numa_aware_resource<numa_heap>);
static_assert(!numa_aware_resource<aligned_heap_memory>);

}  // namespace alloc_concept_test

TEST_SUITE("alloc/host_allocator") {
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

// ---------------------------------------------------------------------------------------------
// Stress: each holder writes its own id into the block and checks it before release, so a
// block handed to two holders at once is caught. Counts: 1'000'000 acquire/release pairs for
// the default pool (lock_free + fail) over 2 and 4 threads, 100'000 for every other
// thread-safe combination; pools are small (threads + 1 blocks, each thread holds up to 2) so
// exhaustion, waiting, growth and fallback all happen under contention.

namespace {

template <class Pool>
std::uint64_t stress(Pool& pool, int threads, std::uint64_t pairs_per_thread) {
  std::atomic<std::uint64_t> corrupt{0};
  std::atomic<std::uint64_t> done{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      typename Pool::handle slots[2];
      std::uint64_t ids[2] = {0, 0};
      std::uint64_t pairs = 0;
      std::uint64_t bad = 0;
      for (std::uint64_t k = 0; pairs < pairs_per_thread; ++k) {
        auto& slot = slots[k & 1];
        if (slot) {
          if (*slot.template get<std::uint64_t>() != ids[k & 1]) ++bad;
          slot.reset();
          ++pairs;
          continue;
        }
        auto h = pool.try_acquire();
        if (!h.has_value()) {
          std::this_thread::yield();  // exhausted (fail policy): try again later
          continue;
        }
        const std::uint64_t id = (static_cast<std::uint64_t>(t + 1) << 40) | k;
        *h->template get<std::uint64_t>() = id;
        ids[k & 1] = id;
        slot = std::move(*h);
      }
      corrupt.fetch_add(bad);
      done.fetch_add(pairs);
    });
  }
  for (auto& th : ts) th.join();
  CHECK(corrupt.load() == 0);
  return done.load();
}

template <class F, class E, class C = no_debug_checks>
void stress_combination(std::uint64_t total_pairs) {
  std::uint64_t done = 0;
  for (int threads : {2, 4}) {
    E policy{};
    if constexpr (E::action == exhaustion_action::grow) policy.max_chunks = 8;
    fixed_block_pool<aligned_heap_memory, F, E, C> pool(
        aligned_heap_memory{},
        pool_options{.block_count = static_cast<std::uint32_t>(threads + 1),
                     .block_size = 64,
                     .alignment = 64,
                     .name = "stress"},
        policy);
    done += stress(pool, threads, total_pairs / 2 / static_cast<std::uint64_t>(threads));
    if constexpr (C::enabled) CHECK(pool.held() == 0);
  }
  CHECK(done == total_pairs);
}

}  // namespace

TEST_SUITE("alloc/concurrency") {
  TEST_CASE("lock_free + fail: 10^6 pairs over 2 and 4 threads") {
    stress_combination<lock_free_policy, fail_policy>(1'000'000);
  }
  TEST_CASE("lock_free + wait") { stress_combination<lock_free_policy, wait_policy>(100'000); }
  TEST_CASE("lock_free + grow") { stress_combination<lock_free_policy, grow_policy>(100'000); }
  TEST_CASE("lock_free + fallback") {
    stress_combination<lock_free_policy, fallback_policy>(100'000);
  }
  TEST_CASE("mutex_fifo + fail") { stress_combination<mutex_fifo_policy, fail_policy>(100'000); }
  TEST_CASE("mutex_fifo + wait") { stress_combination<mutex_fifo_policy, wait_policy>(100'000); }
  TEST_CASE("mutex_fifo + grow") { stress_combination<mutex_fifo_policy, grow_policy>(100'000); }
  TEST_CASE("mutex_fifo + fallback") {
    stress_combination<mutex_fifo_policy, fallback_policy>(100'000);
  }
  TEST_CASE("lock_free + fail with debug checks") {
    stress_combination<lock_free_policy, fail_policy, debug_checks>(100'000);
  }
  TEST_CASE("mutex_fifo + wait with debug checks") {
    stress_combination<mutex_fifo_policy, wait_policy, debug_checks>(100'000);
  }
  TEST_CASE("owner_biased lock_free + fail") {
    stress_combination<owner_biased<lock_free_policy>, fail_policy>(100'000);
  }
  TEST_CASE("owner_biased mutex_fifo + wait") {
    stress_combination<owner_biased<mutex_fifo_policy>, wait_policy>(100'000);
  }

  TEST_CASE_TEMPLATE("local_cache per thread over a shared pool", F, lock_free_policy,
                     mutex_fifo_policy) {
    for (int threads : {2, 4}) {
      using pool_t = fixed_block_pool<aligned_heap_memory, F>;
      pool_t pool(aligned_heap_memory{},
                  pool_options{.block_count = static_cast<std::uint32_t>(3 * threads),
                               .block_size = 64,
                               .alignment = 64,
                               .name = "cached"});
      std::atomic<std::uint64_t> corrupt{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
          typename pool_t::local_cache cache(pool, 4);
          std::uint64_t bad = 0;
          for (std::uint64_t k = 0; k < 50'000 / static_cast<std::uint64_t>(threads);) {
            auto h = cache.try_acquire();
            if (!h.has_value()) {
              std::this_thread::yield();
              continue;
            }
            const std::uint64_t id = (static_cast<std::uint64_t>(t + 1) << 40) | k;
            *h->template get<std::uint64_t>() = id;
            std::this_thread::yield();
            if (*h->template get<std::uint64_t>() != id) ++bad;
            ++k;
          }
          corrupt.fetch_add(bad);
        });
      }
      for (auto& th : ts) th.join();
      CHECK(corrupt.load() == 0);
      typename pool_t::handle all[12];
      CHECK(
          pool.try_acquire_many(std::span(all, static_cast<std::size_t>(3 * threads))).has_value());
    }
  }

  // The owner works without synchronisation until a second thread arrives at a varying point
  // of its run; ids written into the blocks catch a block held twice across the revocation.
  // With wait_policy the owner's owned releases skip the waiter wake-up: a thread that would
  // wait has revoked first, so it must still see every block the owner released.
  TEST_CASE_TEMPLATE("owner bias revoked while the owner works", pool_t,
                     fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<mutex_fifo_policy>>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>,
                                      wait_policy>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<mutex_fifo_policy>,
                                      wait_policy>) {
    std::uint64_t corrupt_total = 0;
    for (std::uint64_t round = 0; round < 100; ++round) {
      pool_t pool(aligned_heap_memory{},
                  pool_options{.block_count = 3, .block_size = 64, .alignment = 64});
      std::atomic<std::uint64_t> owner_ops{0};
      std::atomic<bool> stop{false};
      std::atomic<std::uint64_t> corrupt{0};
      const auto work = [&](std::uint64_t who, std::uint64_t pairs, bool counts) {
        typename pool_t::handle held[2];
        std::uint64_t ids[2] = {0, 0};
        std::uint64_t bad = 0;
        for (std::uint64_t k = 0; counts ? !stop.load(std::memory_order_relaxed) : k < pairs; ++k) {
          auto& slot = held[k & 1];
          if (slot) {
            if (*slot.template get<std::uint64_t>() != ids[k & 1]) ++bad;
            slot.reset();
          } else if (auto h = pool.try_acquire(); h.has_value()) {
            ids[k & 1] = (who << 48) | k;
            *h->template get<std::uint64_t>() = ids[k & 1];
            slot = std::move(*h);
          }
          if (counts) owner_ops.store(k + 1, std::memory_order_relaxed);
        }
        corrupt.fetch_add(bad);
      };
      std::thread owner([&] { work(1, 0, true); });
      std::thread joiner([&] {
        while (owner_ops.load(std::memory_order_relaxed) < 1 + (round * 37) % 500) {
        }
        work(2, 2'000, false);
        stop.store(true);
      });
      joiner.join();
      owner.join();
      corrupt_total += corrupt.load();
      CHECK(pool.free_list().owner_bias_state() == owner_bias::state_kind::shared);
      typename pool_t::handle all[3];
      CHECK(pool.try_acquire_many(all).has_value());  // every block came back
      if constexpr (pool_t::exhaustion_type::action == exhaustion_action::fail) {
        CHECK_FALSE(pool.try_acquire().has_value());  // and no block twice
      }
    }
    CHECK(corrupt_total == 0);
  }

#if defined(__linux__)
  // A seccomp filter that kills the process on `membarrier` (as a sandbox that allows only
  // known system calls would): pools with the default policies, shared by two threads in the
  // hand-off pattern, must run to the end under it; an owner-biased pool is killed, which shows
  // the filter bites.
  TEST_CASE("the default thread-safe pools make no membarrier system call") {
    const auto run_filtered = [](auto body) {
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        sock_filter code[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
          ::_exit(3);  // no filter: reported below as a failure, never as a pass
        }
        ::_exit(body());
      }
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      return status;
    };
    // Acquire on one thread, release on the other, both ways, then a local_cache on each.
    const auto hand_off = [](auto& pool) {
      using pool_t = std::remove_reference_t<decltype(pool)>;
      int bad = 0;
      for (int round = 0; round < 200; ++round) {
        typename pool_t::handle h = pool.acquire();
        *h.template get<int>() = round;
        std::thread([&] {
          if (*h.template get<int>() != round) ++bad;
          h.reset();
          auto mine = pool.acquire();
          h = std::move(mine);
        }).join();
        h.reset();
      }
      std::thread t([&] {
        typename pool_t::local_cache cache(pool, 4);
        for (int k = 0; k < 1000; ++k) (void)cache.acquire();
      });
      {
        typename pool_t::local_cache cache(pool, 4);
        for (int k = 0; k < 1000; ++k) (void)cache.acquire();
      }
      t.join();
      return bad;
    };
    const auto exercise = [&](auto pool_tag) {
      using pool_t = typename decltype(pool_tag)::type;
      return [&] {
        pool_t pool(aligned_heap_memory{},
                    pool_options{.block_count = 16, .block_size = 16, .name = "sandboxed"});
        return hand_off(pool);
      };
    };
    const auto exited_cleanly = [](int status) {
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    };
    using lf = fixed_block_pool<aligned_heap_memory, lock_free_policy>;
    using mf = fixed_block_pool<aligned_heap_memory, mutex_fifo_policy>;
    using lf_wait = fixed_block_pool<aligned_heap_memory, lock_free_policy, wait_policy>;
    using mf_grow = fixed_block_pool<aligned_heap_memory, mutex_fifo_policy, grow_policy>;
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<lf>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<mf>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<lf_wait>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<mf_grow>{}))));
    // The control: the opt-in owner bias registers for membarrier on first use.
    if (owner_bias::supported()) {
      using biased = fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>;
      const int status = run_filtered(exercise(std::type_identity<biased>{}));
      CHECK(WIFSIGNALED(status));
      if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSYS);
    }
  }
#endif

  TEST_CASE_TEMPLATE("bulk acquire/release under contention", F, lock_free_policy,
                     mutex_fifo_policy) {
    using pool_t = fixed_block_pool<aligned_heap_memory, F>;
    pool_t pool(aligned_heap_memory{},
                pool_options{.block_count = 7, .block_size = 64, .alignment = 64});
    std::atomic<std::uint64_t> corrupt{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&, t] {
        typename pool_t::handle hs[3];
        std::uint64_t bad = 0;
        for (std::uint64_t k = 0; k < 10'000;) {
          if (!pool.try_acquire_many(hs).has_value()) {
            std::this_thread::yield();
            continue;
          }
          for (std::size_t j = 0; j < 3; ++j)
            *hs[j].template get<std::uint64_t>() =
                (static_cast<std::uint64_t>(t) << 40) | (k * 3 + j);
          for (std::size_t j = 0; j < 3; ++j) {
            if (*hs[j].template get<std::uint64_t>() !=
                ((static_cast<std::uint64_t>(t) << 40) | (k * 3 + j)))
              ++bad;
          }
          pool.release_many(hs);
          ++k;
        }
        corrupt.fetch_add(bad);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(corrupt.load() == 0);
  }

  TEST_CASE("lock_free_policy: threads drain every index exactly once, then churn") {
    constexpr std::uint32_t n = 1000;
    constexpr int threads = 4;
    lock_free_policy list(n, 8);
    list.push_range(0, n);
    // Phase 1: all threads pop until the list is empty; every index lands exactly once.
    std::vector<std::atomic<int>> taken(n);
    std::vector<std::vector<std::uint32_t>> mine(threads);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (std::uint32_t i = list.pop(); i != free_list_npos; i = list.pop()) {
          if (i < n) taken[i].fetch_add(1, std::memory_order_relaxed);
          mine[t].push_back(i);
        }
      });
    }
    for (auto& th : ts) th.join();
    ts.clear();
    CHECK(std::all_of(taken.begin(), taken.end(), [](const auto& c) { return c.load() == 1; }));
    // Phase 2: each thread returns its share, then churns through pop/push and
    // pop_many/push_many, owning each index it holds exclusively (an owner table catches an
    // index handed to two threads at once).
    std::vector<std::atomic<int>> owner(n);
    std::atomic<std::uint64_t> errors{0};
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (std::uint32_t i : mine[t]) list.push(i);
        std::uint64_t bad = 0;
        std::uint32_t batch[6];
        for (int k = 0; k < 20'000; ++k) {
          std::uint32_t got = 0;
          if (k % 3 == 0) {
            got = list.pop_many(batch, 6);
          } else if ((batch[0] = list.pop()) != free_list_npos) {
            got = 1;
          }
          for (std::uint32_t j = 0; j < got; ++j) {
            int expected = 0;
            if (batch[j] >= n || !owner[batch[j]].compare_exchange_strong(expected, t + 1)) ++bad;
          }
          for (std::uint32_t j = 0; j < got; ++j) {
            if (batch[j] < n) owner[batch[j]].store(0);
          }
          if (got > 1 || k % 2 == 0) {
            list.push_many(batch, got);
          } else {
            for (std::uint32_t j = 0; j < got; ++j) list.push(batch[j]);
          }
        }
        errors.fetch_add(bad);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(errors.load() == 0);
    CHECK(drain(list, n).size() == n);  // nothing lost, nothing duplicated
  }

  TEST_CASE("lock_free_policy never reports empty while a block is free (double collect)") {
    // T threads share T indices and each holds at most one: while a thread is inside pop() it
    // holds none, so at least one index is free at every instant of that call, and pop() must
    // never return npos, although the free ones keep moving between stripes. (A single pass
    // over the stripes could miss a block moving from a stripe not yet visited to one already
    // visited; on a machine with few cores that window is rarely hit, so this is a smoke test
    // there and a sharper one on many cores.)
    for (int threads : {2, 4}) {
      const auto n = static_cast<std::uint32_t>(threads);
      lock_free_policy list(n, 64);  // as many stripes as indices
      CHECK(list.stripe_count() == n);
      list.push_range(0, n);
      std::atomic<std::uint64_t> empty{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&] {
          std::uint64_t misses = 0;
          for (int k = 0; k < 50'000; ++k) {
            const std::uint32_t i = list.pop();
            if (i == free_list_npos) {
              ++misses;
              continue;
            }
            // push() returns it to the stripe it was popped from, push_range() to stripe 0:
            // free indices keep moving between stripes whatever CPUs the threads run on.
            if (k % 2 == 0) {
              list.push(i);
            } else {
              list.push_range(i, 1);
            }
          }
          empty.fetch_add(misses);
        });
      }
      for (auto& th : ts) th.join();
      CAPTURE(threads);
      CHECK(empty.load() == 0);
      CHECK(drain(list, n).size() == n);
    }
  }

  TEST_CASE("wait_policy wakes up when another thread releases") {
    fixed_block_pool<aligned_heap_memory, lock_free_policy, wait_policy> pool(
        aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8},
        wait_policy{std::chrono::seconds(30)});
    auto held = pool.acquire();
    std::atomic<bool> got{false};
    std::thread waiter([&] {
      auto h = pool.acquire();  // blocks until the main thread releases
      got.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(got.load());
    held.reset();
    waiter.join();
    CHECK(got.load());
  }

  TEST_CASE("statistics, limiting and fault-injection adaptors stay exact under threads") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    limiting_adaptor<resource_ref<decltype(stats)>> cap(borrow(stats), 1u << 30);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < 5000; ++i) cap.deallocate(cap.allocate(16, 16), 16, 16);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(stats.statistics().total_count == 20000);
    CHECK(stats.statistics().current_bytes == 0);
    CHECK(cap.used() == 0);
  }
}
