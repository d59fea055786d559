// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/alloc_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <memory>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <vector>

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

namespace xlamem::test::alloc_helpers {
#if defined(__linux__)

#endif


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



// lock_free_policy on its own: stripe counts, every index back exactly once from any mix of
// push/pop members, exact LIFO with one stripe. The stripe count is forced so that several
// stripes are exercised whatever the machine's core count.


template <class L>
concept has_owner_bias = requires(L& l) { l.owner_bias_state(); l.revoke_owner_bias(); };

template <class P>
concept can_revoke_bias = requires(P& p) { p.revoke_owner_bias(); };

// Pops until empty; checks each index is in range and seen once, and that the list stays empty.
template <class F>
inline std::vector<std::uint32_t> drain(F& list, std::uint32_t capacity) {
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


// Stress: each holder writes its own id into the block and checks it before release, so a
// block handed to two holders at once is caught. Counts: 1'000'000 acquire/release pairs for
// the default pool (per_cpu_cache + fail) over 2 and 4 threads, 100'000 for every other
// thread-safe combination; pools are small (threads + 1 blocks, each thread holds up to 2) so
// exhaustion, waiting, growth and fallback all happen under contention.


template <class Pool>
inline std::uint64_t stress(Pool& pool, int threads, std::uint64_t pairs_per_thread) {
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
inline void stress_combination(std::uint64_t total_pairs) {
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

}  // namespace xlamem::test::alloc_helpers
