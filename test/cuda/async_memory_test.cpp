// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/async_memory.hpp: cuda_async_memory over the fake driver (pool,
// stream and release threshold, watermarks and trim, stream-ordered calls, errors and cleanup)
// and, in "cuda/gpu", the stream-ordered pool on the real device.
#include "xlamem/cuda/async_memory.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::check_round_trip;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::real_driver;
using xlamem::test::recording_log;
using xlamem::test::run_in_child;

TEST_SUITE("cuda/async") {
  TEST_CASE("a pool with a release threshold, its own stream, and watermarks") {
    auto d = fake_driver();
    fake_gpu& f = fake_gpu::get();
    {
      auto mem = cuda_async_memory<>::create(d, 0);
      REQUIRE(mem.has_value());
      CHECK(f.pools_live == 1);
      CHECK(f.streams_live == 1);
      CHECK(f.release_threshold == UINT64_MAX);
      void* a = mem->allocate(1000);
      void* b = mem->allocate(3000);
      CHECK(f.stream_syncs == 2);  // allocate() is ready for every stream when it returns
      mem->deallocate(a, 1000);
      auto u = mem->usage();
      REQUIRE(u.has_value());
      CHECK(u->used_current == 3000);
      CHECK(u->used_high == 4000);
      CHECK(u->reserved_high == 4000);
      REQUIRE(mem->reset_high_watermarks().has_value());
      CHECK(mem->usage()->used_high == 3000);
      mem->deallocate(b, 3000);
      REQUIRE(mem->trim_to(0).has_value());
      CHECK(mem->usage()->reserved_current == 0);

      auto s = mem->try_allocate_async(64, mem->stream());
      REQUIRE(s.has_value());
      mem->deallocate_async(*s, 64, mem->stream());
      CHECK(fake_gpu::current() == nullptr);
      auto copy = *mem;
      CHECK(copy == *mem);
    }
    CHECK(f.pools_live == 0);
    CHECK(f.streams_live == 0);
  }

  TEST_CASE("over-alignment is refused; a user stream is not destroyed") {
    auto d = fake_driver();
    cuda_async_options o;
    o.stream = reinterpret_cast<CUstream>(&fake_gpu::get().stream_storage[1]);
    o.release_threshold = 1 << 20;
    {
      auto mem = cuda_async_memory<>::create(d, 0, o);
      REQUIRE(mem.has_value());
      CHECK(mem->stream() == o.stream);
      CHECK(fake_gpu::get().release_threshold == (1u << 20));
      auto r = mem->try_allocate(64, 512);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::invalid_argument);
      CHECK(contains(r.error().message(), "256"));
    }
    CHECK(fake_gpu::get().streams_live == 0);  // never created, never destroyed
  }

  TEST_CASE("no pool support is unimplemented; pool failures name the call") {
    auto d = fake_driver();
    fake_gpu::get().pools_supported = false;
    CHECK(cuda_async_memory<>::create(d, 0).error().code() == errc::unimplemented);
    fake_gpu::get().pools_supported = true;
    auto mem = cuda_async_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    fake_gpu::get().fail_next["cuMemAllocFromPoolAsync"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto r = mem->try_allocate(64);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(contains(r.error().message(), "cuMemAllocFromPoolAsync"));
  }

  TEST_CASE("a failing cuStreamSynchronize in allocate frees the memory again and reports it") {
    auto d = fake_driver();
    auto mem = cuda_async_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    fake_gpu& f = fake_gpu::get();
    f.fail_next["cuStreamSynchronize"] = CUDA_ERROR_LAUNCH_FAILED;
    auto r = mem->try_allocate(100);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(contains(r.error().message(),
                   "cuda_async_memory: cuStreamSynchronize(100 bytes) on device 0: "
                   "CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(f.pool_allocations.empty());
    CHECK(f.pool_used == 0);
    const recording_log& log = mem->log();
    REQUIRE(log.kinds.size() == 3);
    CHECK(log.kinds[0] == cuda_allocation_event_kind::allocate);
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free);
    CHECK(log.pointers[1] == log.pointers[0]);
    CHECK(log.kinds[2] == cuda_allocation_event_kind::allocate_failed);
    CHECK(log.messages[2] == r.error().message());
  }

  TEST_CASE("stream-ordered calls: zero bytes take one, no synchronisation; synchronize()") {
    auto d = fake_driver();
    auto mem = cuda_async_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    fake_gpu& f = fake_gpu::get();
    CUstream other = reinterpret_cast<CUstream>(&f.stream_storage[2]);
    auto p = mem->try_allocate_async(0, other);
    REQUIRE(p.has_value());
    CHECK(f.pool_allocations.begin()->second == 1);
    CHECK(f.stream_syncs == 0);  // valid in stream order: nothing waited for
    CHECK(mem->log().sizes.back() == 0);
    CHECK(mem->log().reserved.back() == 1);
    mem->deallocate_async(*p, 0, other);
    CHECK(f.pool_allocations.empty());
    mem->deallocate_async(nullptr, 16, other);  // null: nothing, not even a log event
    CHECK(mem->log().kinds.size() == 2);

    REQUIRE(mem->synchronize().has_value());
    CHECK(f.stream_syncs == 1);
    f.fail_next["cuStreamSynchronize"] = CUDA_ERROR_LAUNCH_FAILED;
    auto s = mem->synchronize();
    REQUIRE_FALSE(s.has_value());
    CHECK(contains(s.error().message(),
                   "cuda_async_memory: cuStreamSynchronize: "
                   "CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(mem->try_allocate_async(8, other, 3).error().code() == errc::invalid_argument);
    CHECK(mem->options().release_threshold == UINT64_MAX);
    CHECK(mem->device_ordinal() == 0);
    CHECK(mem->pool() != nullptr);
  }

  TEST_CASE("create: a missing entry point is unavailable; a failing step releases the rest") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_free_async = nullptr;
    auto old_driver = cuda_driver::from_api(api, "fake driver");
    REQUIRE(old_driver.has_value());
    auto none = cuda_async_memory<>::create(*old_driver, 0);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code() == errc::unavailable);
    CHECK(contains(none.error().message(), "cuMemFreeAsync is not available"));

    auto d = fake_driver();
    fake_gpu& f = fake_gpu::get();
    f.fail_next["cuMemPoolCreate"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto failed = cuda_async_memory<>::create(d, 0);
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code() == errc::out_of_memory);
    CHECK(failed.error().message() ==
          "cuMemPoolCreate(device 0): CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    CHECK(f.pools_live == 0);
    CHECK(f.streams_live == 0);
    CHECK(f.retained[0] == 0);
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("a pointer cuMemFreeAsync refuses is misuse (abort)") {
    auto d = fake_driver();
    auto mem = cuda_async_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    int not_pool_memory = 0;
    auto out = run_in_child([&] { mem->deallocate(&not_pool_memory, 4); });
    CHECK(out.aborted());
    CHECK(contains(out.stderr_text,
                   "xlamem: misuse: cuda_async_memory: cuMemFreeAsync refused a pointer "
                   "(CUDA_ERROR_INVALID_VALUE): not from a memory pool, or freed twice"));
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
  TEST_CASE("stream-ordered pool: allocate, round trip, watermarks, trim") {
    auto d = real_driver();
    auto mem = cuda_async_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    REQUIRE(mem->reset_high_watermarks().has_value());
    std::vector<void*> ps;
    for (std::size_t bytes : {std::size_t(256), std::size_t(64) << 10, std::size_t(16) << 20}) {
      void* p = mem->allocate(bytes);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
      check_round_trip(mem->context(), p, bytes);
      ps.push_back(p);
    }
    auto u = mem->usage();
    REQUIRE(u.has_value());
    MESSAGE("pool usage: used " << u->used_current << " (high " << u->used_high << "), reserved "
                                << u->reserved_current << " (high " << u->reserved_high << ")");
    CHECK(u->used_current >= 256 + (64 << 10) + (16 << 20));
    CHECK(u->used_high >= u->used_current);
    CHECK(u->reserved_current >= u->used_current);
    mem->deallocate(ps[0], 256);
    mem->deallocate(ps[1], 64 << 10);
    mem->deallocate(ps[2], 16 << 20);
    REQUIRE(mem->synchronize().has_value());
    CHECK(mem->usage()->used_current == 0);
    const auto before = mem->usage()->reserved_current;
    REQUIRE(mem->trim_to(0).has_value());
    const auto after = mem->usage()->reserved_current;
    MESSAGE("pool usage: reserved " << before << " before cuMemPoolTrimTo(0), " << after
                                    << " after");
    CHECK(after <= before);
    CHECK(after < std::uint64_t(16) << 20);  // the 16 MiB block at least went back
  }
}
