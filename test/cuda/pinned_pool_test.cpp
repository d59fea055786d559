// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/pinned_pool.hpp over the fake driver: cuda_pinned_scalar_pool
// (typed handles, exhaustion, threads, create errors) and pools over device memory; in
// "cuda/gpu", the scalar pool and pools over device and pinned memory on the real device.
#include "xlamem/cuda/pinned_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/alloc/tracking_adaptor.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/cuda/pinned_host_memory.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::check_round_trip;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::real_driver;

static_assert(has_property<cuda_pinned_scalar_pool<int>::pool_type, pinned>);

namespace {
// A trivially copyable value with two members, read through handle::operator->.
struct predicate_pair {
  std::int32_t index;
  float weight;
};
static_assert(std::is_trivially_copyable_v<predicate_pair>);
}  // namespace

TEST_SUITE("cuda/pool") {
  TEST_CASE("the pinned scalar pool: typed handles, 128 values, then resource_exhausted") {
    auto d = fake_driver();
    auto pool = cuda_pinned_scalar_pool<std::int32_t>::create(d, 0);
    REQUIRE(pool.has_value());
    CHECK(pool->count() == 128);
    CHECK(fake_gpu::get().host_allocations.size() == 1);  // one cuMemHostAlloc for all values
    CHECK(fake_gpu::get().host_allocations.begin()->second == 128 * sizeof(std::int32_t));
    std::vector<cuda_pinned_scalar_pool<std::int32_t>::handle> held;
    for (int i = 0; i < 128; ++i) {
      auto h = pool->try_acquire();
      REQUIRE(h.has_value());
      **h = i;
      held.push_back(std::move(*h));
    }
    auto none = pool->try_acquire();
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code() == errc::resource_exhausted);
    CHECK(contains(none.error().message(), "128"));
    CHECK_THROWS_AS((void)pool->acquire(), std::bad_alloc);
    for (int i = 0; i < 128; ++i) CHECK(*held[static_cast<std::size_t>(i)] == i);
    held.clear();
    CHECK(pool->try_acquire().has_value());
  }

  TEST_CASE("the pinned pool from 8 threads (fake driver)") {
    auto d = fake_driver();
    auto pool = cuda_pinned_scalar_pool<std::uint64_t>::create(d, 0, 64);
    REQUIRE(pool.has_value());
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 2000; ++i) {
          auto h = pool->try_acquire();
          if (!h) {
            ++failures;
            continue;
          }
          const std::uint64_t v = (std::uint64_t(t) << 32) | std::uint64_t(i);
          **h = v;
          if (**h != v) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(failures.load() == 0);  // 8 holders at most, 64 values
  }

  TEST_CASE("a device pool over tracked device memory is leak-free") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    tracking_adaptor<cuda_device_memory<>> tracked(*mem, tracking_options{"cuda device pool"});
    {
      pool_options o;
      o.block_count = 16;
      o.block_size = 64 << 10;
      o.alignment = 256;
      fixed_block_pool<resource_ref<tracking_adaptor<cuda_device_memory<>>>> pool(borrow(tracked),
                                                                                  o);
      CHECK(tracked.outstanding().size() == 1);
      std::vector<void*> blocks;
      for (int i = 0; i < 16; ++i) blocks.push_back(pool.allocate(64 << 10, 256));
      for (void* b : blocks) {
        CHECK(reinterpret_cast<std::uintptr_t>(b) % 256 == 0);
        pool.deallocate(b, 64 << 10, 256);
      }
    }
    CHECK(tracked.outstanding().empty());
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("the scalar pool: values in one pinned block; empty handles; reset returns a value") {
    auto d = fake_driver();
    auto pool = cuda_pinned_scalar_pool<predicate_pair>::create(d, 0, 4, "predicates");
    REQUIRE(pool.has_value());
    CHECK(pool->count() == 4);
    REQUIRE(fake_gpu::get().host_allocations.size() == 1);
    const auto [base, bytes] = *fake_gpu::get().host_allocations.begin();
    CHECK(bytes == 4 * sizeof(predicate_pair));
    std::vector<cuda_pinned_scalar_pool<predicate_pair>::handle> held;
    std::set<std::uintptr_t> addresses;
    for (int i = 0; i < 4; ++i) {
      held.push_back(pool->acquire());
      const auto a = reinterpret_cast<std::uintptr_t>(held.back().get());
      CHECK(a >= base);
      CHECK(a + sizeof(predicate_pair) <= base + bytes);
      CHECK(a % alignof(predicate_pair) == 0);
      addresses.insert(a);
      held.back()->index = i;
      held.back()->weight = 0.5f * static_cast<float>(i);
    }
    CHECK(addresses.size() == 4);
    CHECK(held[3]->index == 3);
    CHECK((*held[2]).weight == 1.0f);
    auto none = pool->try_acquire();
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code() == errc::resource_exhausted);
    CHECK(none.error().message() ==
          "fixed_block_pool 'predicates': all 4 blocks of 8 bytes are in use");

    held[1].reset();
    CHECK_FALSE(held[1]);
    CHECK(held[1].get() == nullptr);
    auto again = pool->try_acquire();
    REQUIRE(again.has_value());
    CHECK(addresses.count(reinterpret_cast<std::uintptr_t>(again->get())) == 1);
    cuda_pinned_scalar_pool<predicate_pair>::handle moved(std::move(*again));
    CHECK(moved);
    CHECK_FALSE(*again);
    const cuda_pinned_scalar_pool<predicate_pair>::handle empty;
    CHECK_FALSE(empty);
    CHECK(empty.get() == nullptr);
  }

  TEST_CASE("the scalar pool's create errors carry its name and the driver's error") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 0;
    auto no_device = cuda_pinned_scalar_pool<std::int32_t>::create(d, 0, 8, "loop predicates");
    REQUIRE_FALSE(no_device.has_value());
    CHECK(no_device.error().code() == errc::unavailable);
    CHECK(contains(no_device.error().message(),
                   "loop predicates: cuda_pinned_host_memory::create: no CUDA device"));

    fake_gpu::get().device_count = 1;
    fake_gpu::get().fail_next["cuMemHostAlloc"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto no_memory = cuda_pinned_scalar_pool<std::int32_t>::create(d, 0, 8, "loop predicates");
    REQUIRE_FALSE(no_memory.has_value());
    CHECK(no_memory.error().code() == errc::out_of_memory);
    CHECK(contains(no_memory.error().message(), "loop predicates"));
    CHECK(contains(no_memory.error().message(), "cuMemHostAlloc"));
    CHECK(contains(no_memory.error().message(), "CUDA_ERROR_OUT_OF_MEMORY"));
    CHECK(fake_gpu::get().host_allocations.empty());
    CHECK(fake_gpu::get().retained[0] == 0);
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
  TEST_CASE("pinned scalar pool: 8 threads read device scalars concurrently") {
    auto d = real_driver();
    auto pool = cuda_pinned_scalar_pool<std::int32_t>::create(d, 0);
    REQUIRE(pool.has_value());
    auto dev = cuda_device_memory<>::create(d, 0);
    REQUIRE(dev.has_value());
    // One device int per thread, holding the thread's number.
    void* values = dev->allocate(8 * sizeof(std::int32_t));
    {
      auto scope = dev->context().make_current();
      REQUIRE(scope.has_value());
      std::int32_t init[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      REQUIRE(
          d->check(d->api().memcpy_htod(detail::to_deviceptr(values), init, sizeof init), "HtoD")
              .has_value());
    }
    std::atomic<int> wrong{0};
    std::atomic<int> exhausted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        auto scope = dev->context().make_current();
        if (!scope) {
          ++wrong;
          return;
        }
        for (int i = 0; i < 200; ++i) {
          auto h = pool->try_acquire();
          if (!h) {
            ++exhausted;
            continue;
          }
          **h = -1;
          const CUdeviceptr src =
              detail::to_deviceptr(values) + sizeof(std::int32_t) * static_cast<unsigned>(t);
          if (d->api().memcpy_dtoh(h->get(), src, sizeof(std::int32_t)) != CUDA_SUCCESS || **h != t)
            ++wrong;
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong.load() == 0);
    CHECK(exhausted.load() == 0);
    dev->deallocate(values, 8 * sizeof(std::int32_t));
  }

  TEST_CASE("leak-free under the tracking adaptor: pools over device and pinned memory") {
    auto d = real_driver();
    auto dev = cuda_device_memory<>::create(d, 0);
    REQUIRE(dev.has_value());
    auto host = cuda_pinned_host_memory<>::create(d, 0);
    REQUIRE(host.has_value());
    tracking_adaptor<cuda_device_memory<>> tracked_dev(*dev, tracking_options{"gpu device"});
    tracking_adaptor<cuda_pinned_host_memory<>> tracked_host(*host, tracking_options{"gpu pinned"});
    {
      pool_options o;
      o.block_count = 64;
      o.block_size = 64 << 10;
      o.alignment = 256;
      fixed_block_pool<resource_ref<tracking_adaptor<cuda_device_memory<>>>> dpool(
          borrow(tracked_dev), o);
      fixed_block_pool<resource_ref<tracking_adaptor<cuda_pinned_host_memory<>>>> hpool(
          borrow(tracked_host), o);
      std::vector<decltype(dpool)::handle> dh;
      std::vector<decltype(hpool)::handle> hh;
      for (int i = 0; i < 64; ++i) {
        dh.push_back(dpool.acquire());
        hh.push_back(hpool.acquire());
      }
      check_round_trip(dev->context(), dh.back().data(), 64 << 10);
      void* direct = tracked_dev.allocate(1 << 20, 256);
      tracked_dev.deallocate(direct, 1 << 20, 256);
    }
    CHECK(tracked_dev.outstanding().empty());
    CHECK(tracked_host.outstanding().empty());
  }
}
