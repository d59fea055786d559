// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/pinned_host_memory.hpp over the fake driver: cuMemHostAlloc
// flags, alignment and errors, host registration of upstream memory, registered ranges, and
// misuse on a refused free; in "cuda/gpu", pinned memory and registration on the real device.
#include "xlamem/cuda/pinned_host_memory.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/alloc/heap_memory.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/alloc/tracking_adaptor.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::real_driver;
using xlamem::test::recording_log;
using xlamem::test::run_in_child;

static_assert(has_property<cuda_host_registration<aligned_heap_memory>, pinned>);

TEST_SUITE("cuda/pinned") {
  TEST_CASE("cuMemHostAlloc with flags, page alignment, host access") {
    auto d = fake_driver();
    cuda_host_alloc_flags flags;
    flags.device_map = true;
    flags.write_combined = true;
    CHECK(flags.value() ==
          (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED));
    CHECK(cuda_host_alloc_flags{}.value() == CU_MEMHOSTALLOC_PORTABLE);
    auto mem = cuda_pinned_host_memory<>::create(d, 0, flags);
    REQUIRE(mem.has_value());
    auto* p = static_cast<unsigned char*>(mem->allocate(10000, 4096));
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 4096 == 0);
    std::memset(p, 0xAB, 10000);  // host-accessible
    CHECK(fake_gpu::get().host_alloc_flags.back() == flags.value());
    CHECK(*mem->device_pointer(p) == reinterpret_cast<std::uintptr_t>(p));
    mem->deallocate(p, 10000, 4096);
    CHECK(fake_gpu::get().host_allocations.empty());
    CHECK(mem->try_allocate(16, 8192).error().code() == errc::invalid_argument);
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("host registration pins upstream memory and unpins before returning it") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    tracking_adaptor<aligned_heap_memory> heap(aligned_heap_memory{});
    cuda_host_registration<resource_ref<tracking_adaptor<aligned_heap_memory>>> reg(*ctx,
                                                                                    borrow(heap));
    void* p = reg.allocate(8192, 64);
    CHECK(fake_gpu::get().registrations.size() == 1);
    CHECK(heap.outstanding().size() == 1);
    reg.deallocate(p, 8192, 64);
    CHECK(fake_gpu::get().registrations.empty());
    CHECK(heap.outstanding().empty());

    // A failing registration returns the upstream memory and reports the driver's error.
    fake_gpu::get().fail_next["cuMemHostRegister"] = CUDA_ERROR_NOT_PERMITTED;
    auto r = reg.try_allocate(100);
    REQUIRE_FALSE(r.has_value());
    CHECK(contains(r.error().message(), "cuMemHostRegister(100 bytes) on device 0"));
    CHECK(contains(r.error().message(), "CUDA_ERROR_NOT_PERMITTED"));
    CHECK(heap.outstanding().empty());
  }

  TEST_CASE("registered ranges pin existing buffers; pinning twice is already_exists") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    std::vector<char> buffer(1 << 16);
    {
      auto pin = cuda_registered_range::pin(*ctx, buffer.data(), buffer.size());
      REQUIRE(pin.has_value());
      CHECK(pin->size() == buffer.size());
      auto again = cuda_registered_range::pin(*ctx, buffer.data() + 100, 10);
      REQUIRE_FALSE(again.has_value());
      CHECK(again.error().code() == errc::already_exists);
      CHECK(contains(again.error().message(), "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"));
    }
    CHECK(fake_gpu::get().registrations.empty());
    CHECK(cuda_registered_range::pin(*ctx, nullptr, 10).error().code() == errc::invalid_argument);
  }

  TEST_CASE("cuMemHostAlloc: failures logged and named, zero bytes pin one, flags kept") {
    auto d = fake_driver();
    auto mem = cuda_pinned_host_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    CHECK(mem->flags().value() == CU_MEMHOSTALLOC_PORTABLE);
    void* z = mem->allocate(0);
    REQUIRE(fake_gpu::get().host_allocations.size() == 1);
    CHECK(fake_gpu::get().host_allocations.begin()->second == 1);
    mem->deallocate(z, 0);
    CHECK(fake_gpu::get().host_allocations.empty());
    const recording_log& log = mem->log();
    REQUIRE(log.kinds.size() == 2);
    CHECK(log.resources[0] == "cuda_pinned_host_memory");
    CHECK(log.reserved[0] == 1);
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free);

    fake_gpu::get().fail_next["cuMemHostAlloc"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto r = mem->try_allocate(100);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() ==
          "cuda_pinned_host_memory: cuMemHostAlloc(100 bytes) on device 0: "
          "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    CHECK(log.kinds.back() == cuda_allocation_event_kind::allocate_failed);

    auto big = mem->try_allocate(16, 8192);
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().message() ==
          "cuda_pinned_host_memory: alignment 8192 exceeds the page alignment (4096) "
          "cuMemHostAlloc gives");
    CHECK_THROWS_AS((void)mem->allocate(16, 3), xlamem::exception);
    CHECK(fake_gpu::get().host_allocations.empty());
  }

  TEST_CASE("host registration: zero bytes are not pinned; a refused unpin is logged") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    tracking_adaptor<aligned_heap_memory> heap(aligned_heap_memory{});
    cuda_host_registration<resource_ref<tracking_adaptor<aligned_heap_memory>>, recording_log> reg(
        *ctx, borrow(heap));
    CHECK(reg.flags() == cuda_registered_range::default_flags);
    void* z = reg.allocate(0);
    CHECK(fake_gpu::get().registrations.empty());
    reg.deallocate(z, 0);
    CHECK(reg.log().kinds.empty());  // nothing pinned, nothing logged

    void* p = reg.allocate(256);
    CHECK(fake_gpu::get().registrations.count(reinterpret_cast<std::uintptr_t>(p)) == 1);
    CHECK(reg.log().kinds.back() == cuda_allocation_event_kind::allocate);
    CHECK(reg.log().resources.back() == "cuda_host_registration");
    fake_gpu::get().registrations.clear();  // unpinned behind the resource's back
    reg.deallocate(p, 256);
    CHECK(reg.log().kinds.back() == cuda_allocation_event_kind::free_failed);
    CHECK(reg.log().messages.back() ==
          "cuda_host_registration: cuMemHostUnregister(256 bytes) on device 0: "
          "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED (pointer does not correspond to a registered memory region)");
    CHECK(heap.outstanding().empty());  // not registered: nothing pinned, the memory went back
  }

  TEST_CASE("host registration: memory the driver would not unpin is kept, never handed back pinned") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_host_unregister = [](void*) -> CUresult { return CUDA_ERROR_UNKNOWN; };
    auto d = cuda_driver::from_api(api, "fake driver");
    REQUIRE(d.has_value());
    auto ctx = cuda_primary_context::retain(*d, 0);
    REQUIRE(ctx.has_value());
    tracking_adaptor<aligned_heap_memory> heap(aligned_heap_memory{});
    cuda_host_registration<resource_ref<tracking_adaptor<aligned_heap_memory>>, recording_log> reg(
        *ctx, borrow(heap));
    void* p = reg.allocate(512);
    reg.deallocate(p, 512);
    CHECK(reg.log().kinds.back() == cuda_allocation_event_kind::free_failed);
    CHECK(contains(reg.log().messages.back(), "cuMemHostUnregister(512 bytes) on device 0: CUDA_ERROR_UNKNOWN"));
    CHECK(heap.outstanding().size() == 1);  // kept: the upstream would hand it out still pinned
    heap.deallocate(p, 512, heap.outstanding().front().alignment);  // the test frees what it kept
  }

  TEST_CASE("registered ranges: move, reset, empty ranges, a driver without unregister") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    std::vector<char> buffer(4096);
    auto pin = cuda_registered_range::pin(*ctx, buffer.data(), buffer.size());
    REQUIRE(pin.has_value());
    cuda_registered_range moved(std::move(*pin));
    CHECK(pin->data() == nullptr);
    CHECK(pin->size() == 0);
    CHECK(moved.data() == buffer.data());
    CHECK(moved.size() == 4096);
    CHECK(fake_gpu::get().registrations.size() == 1);
    moved.reset();
    CHECK(moved.data() == nullptr);
    CHECK(moved.size() == 0);
    CHECK(fake_gpu::get().registrations.empty());
    moved.reset();  // a second reset does nothing

    auto empty = cuda_registered_range::pin(*ctx, buffer.data(), 0);
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().code() == errc::invalid_argument);
    CHECK(empty.error().message() == "cuda_registered_range::pin: the range is null or empty");

    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_host_unregister = nullptr;
    auto old_driver = cuda_driver::from_api(api, "fake driver");
    REQUIRE(old_driver.has_value());
    auto old_ctx = cuda_primary_context::retain(*old_driver, 0);
    REQUIRE(old_ctx.has_value());
    auto refused = cuda_registered_range::pin(*old_ctx, buffer.data(), buffer.size());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == errc::unavailable);
    CHECK(contains(refused.error().message(), "cuMemHostUnregister is not available"));
    CHECK(fake_gpu::get().registrations.empty());  // not pinned when it could not be unpinned
  }

  TEST_CASE("a pointer cuMemFreeHost refuses is misuse (abort)") {
    auto d = fake_driver();
    auto mem = cuda_pinned_host_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    int not_pinned = 0;
    auto out = run_in_child([&] { mem->deallocate(&not_pinned, 4); });
    CHECK(out.aborted());
    CHECK(contains(out.stderr_text,
                   "xlamem: misuse: cuda_pinned_host_memory: cuMemFreeHost refused a pointer "
                   "(CUDA_ERROR_INVALID_VALUE): not from cuMemHostAlloc, or freed twice"));
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
  TEST_CASE("pinned host memory: flags, host writes, copies both ways") {
    auto d = real_driver();
    for (const cuda_host_alloc_flags flags :
         {cuda_host_alloc_flags{}, cuda_host_alloc_flags{true, true, false},
          cuda_host_alloc_flags{true, false, true}}) {
      CAPTURE(flags.value());
      auto pinned_mem = cuda_pinned_host_memory<>::create(d, 0, flags);
      REQUIRE(pinned_mem.has_value());
      auto dev = cuda_device_memory<>::create(d, 0);
      REQUIRE(dev.has_value());
      const std::size_t n = 1 << 20;
      auto* h = static_cast<unsigned char*>(pinned_mem->allocate(n));
      CHECK(reinterpret_cast<std::uintptr_t>(h) % 4096 == 0);
      for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>(i % 251);
      void* p = dev->allocate(n);
      const cuda_driver& drv = *d;
      {
        auto scope = dev->context().make_current();
        REQUIRE(scope.has_value());
        REQUIRE(
            drv.check(drv.api().memcpy_htod(detail::to_deviceptr(p), h, n), "HtoD").has_value());
        std::memset(h, 0, n);
        REQUIRE(
            drv.check(drv.api().memcpy_dtoh(h, detail::to_deviceptr(p), n), "DtoH").has_value());
      }
      bool same = true;
      for (std::size_t i = 0; i < n; ++i)
        same = same && h[i] == static_cast<unsigned char>(i % 251);
      CHECK(same);
      auto dp = pinned_mem->device_pointer(h);
      if (flags.device_map) {
        CHECK(dp.has_value());
      } else {
        MESSAGE("cuMemHostGetDevicePointer without DEVICEMAP: " << (dp ? std::string("ok")
                                                                       : dp.error().to_string()));
      }
      dev->deallocate(p, n);
      pinned_mem->deallocate(h, n);
    }
  }

  TEST_CASE("host registration and registered ranges on the real driver") {
    auto d = real_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    cuda_host_registration<aligned_heap_memory> reg(*ctx, aligned_heap_memory{});
    const std::size_t n = 1 << 20;
    auto* p = static_cast<unsigned char*>(reg.allocate(n, 4096));
    auto dev = cuda_device_memory<>::create(d, 0);
    REQUIRE(dev.has_value());
    void* q = dev->allocate(n);
    {
      // Through the registered (pinned) buffer both ways.
      auto scope = ctx->make_current();
      REQUIRE(scope.has_value());
      for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i % 253);
      REQUIRE(d->check(d->api().memcpy_htod(detail::to_deviceptr(q), p, n), "HtoD").has_value());
      std::memset(p, 0, n);
      REQUIRE(d->check(d->api().memcpy_dtoh(p, detail::to_deviceptr(q), n), "DtoH").has_value());
      bool same = true;
      for (std::size_t i = 0; i < n; ++i)
        same = same && p[i] == static_cast<unsigned char>(i % 253);
      CHECK(same);
    }
    dev->deallocate(q, n);
    reg.deallocate(p, n, 4096);

    std::vector<char> buffer(1 << 20);
    auto pin = cuda_registered_range::pin(*ctx, buffer.data(), buffer.size());
    REQUIRE(pin.has_value());
    auto twice = cuda_registered_range::pin(*ctx, buffer.data(), buffer.size());
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().code() == errc::already_exists);
  }
}
