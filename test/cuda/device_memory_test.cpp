// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/device_memory.hpp: cuda_device_memory over the fake driver
// (alignment, zero bytes, context restore, errors, logging, misuse on a refused free) and,
// in "cuda/gpu", cuMemAlloc on the real device.
#include "xlamem/cuda/device_memory.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::check_round_trip;
using xlamem::test::contains;
using xlamem::test::count_events;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::real_driver;
using xlamem::test::recording_log;
using xlamem::test::run_in_child;

TEST_SUITE("cuda/device_memory") {
  TEST_CASE("allocations are aligned, made in the device's context, and the context is restored") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    CHECK(fake_gpu::current() == nullptr);
    for (std::size_t align : {std::size_t(1), std::size_t(16), std::size_t(256), std::size_t(4096),
                              std::size_t(1) << 16}) {
      void* p = mem->allocate(1000, align);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % align == 0);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
      CHECK(fake_gpu::current() == nullptr);
      mem->deallocate(p, 1000, align);
    }
    CHECK(fake_gpu::get().device_allocations.empty());
    for (CUcontext c : fake_gpu::get().contexts_at_alloc) CHECK(c == mem->context().get());
  }

  TEST_CASE("zero bytes give a unique non-null pointer") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    void* a = mem->allocate(0);
    void* b = mem->allocate(0);
    CHECK(a != nullptr);
    CHECK(a != b);
    mem->deallocate(a, 0);
    mem->deallocate(b, 0);
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("out of device memory throws out_of_memory naming cuMemAlloc and the CUresult") {
    auto d = fake_driver();
    fake_gpu::get().memory_limit = 1 << 20;
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    bool thrown = false;
    try {
      (void)mem->allocate(2 << 20);
    } catch (const std::bad_alloc& e) {
      thrown = true;
      const std::string what = e.what();
      CHECK(contains(what, "cuMemAlloc(2097152 bytes) on device 0"));
      CHECK(contains(what, "CUDA_ERROR_OUT_OF_MEMORY"));
      CHECK(contains(what, "out of memory"));
    }
    CHECK(thrown);
    auto r = mem->try_allocate(2 << 20);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("a bad alignment is invalid_argument") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto r = mem->try_allocate(64, 24);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK_THROWS_AS((void)mem->allocate(64, 3), xlamem::exception);
  }

  TEST_CASE("the log policy sees allocate, free and failures with ordinal, size and pointer") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    void* p = mem->allocate(512);
    mem->deallocate(p, 512);
    fake_gpu::get().fail_next["cuMemAlloc"] = CUDA_ERROR_LAUNCH_FAILED;
    CHECK_FALSE(mem->try_allocate(64).has_value());
    void* q = mem->allocate(64);
    fake_gpu::get().fail_next["cuMemFree"] = CUDA_ERROR_LAUNCH_FAILED;
    mem->deallocate(q, 64);  // refused: logged, memory stays with the (fake) driver
    const recording_log& log = mem->log();
    REQUIRE(log.kinds.size() == 5);
    CHECK(log.kinds[0] == cuda_allocation_event_kind::allocate);
    CHECK(log.sizes[0] == 512);
    CHECK(log.pointers[0] == p);
    CHECK(log.ordinals[0] == 0);
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free);
    CHECK(log.pointers[1] == p);
    CHECK(log.kinds[2] == cuda_allocation_event_kind::allocate_failed);
    CHECK(contains(log.messages[2], "CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(log.kinds[4] == cuda_allocation_event_kind::free_failed);
    CHECK(contains(log.messages[4], "cuMemFree"));
  }

  TEST_CASE("callback and stream logs") {
    auto d = fake_driver();
    int events = 0;
    callback_allocation_log cb{&count_events, &events};
    auto mem = cuda_device_memory<callback_allocation_log>::create(d, 0, cb);
    REQUIRE(mem.has_value());
    mem->deallocate(mem->allocate(8), 8);
    CHECK(events == 2);

    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    auto logged = cuda_device_memory<stream_allocation_log>::create(d, 0, stream_allocation_log{f});
    REQUIRE(logged.has_value());
    logged->deallocate(logged->allocate(8), 8);
    std::rewind(f);
    char line[256] = {};
    REQUIRE(std::fgets(line, sizeof line, f) != nullptr);
    CHECK(contains(line, "cuda_device_memory: allocate 8 bytes"));
    CHECK(contains(line, "on device 0"));
    std::fclose(f);
  }

  TEST_CASE("a missing cuMemAlloc is unavailable at create") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_alloc = nullptr;
    auto d = cuda_driver::from_api(api);
    REQUIRE(d.has_value());
    auto mem = cuda_device_memory<>::create(*d, 0);
    REQUIRE_FALSE(mem.has_value());
    CHECK(mem.error().code() == errc::unavailable);
    CHECK(contains(mem.error().message(), "cuMemAlloc is not available"));
  }

  TEST_CASE("log events name the resource and the bytes reserved, alignment padding included") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    void* p = mem->allocate(1000, 4096);
    REQUIRE(fake_gpu::get().device_allocations.size() == 1);
    CHECK(fake_gpu::get().device_allocations.begin()->second == 1000 + 4096 - 256);
    mem->deallocate(p, 1000, 4096);
    mem->deallocate(mem->allocate(0), 0);
    const recording_log& log = mem->log();
    REQUIRE(log.kinds.size() == 4);
    CHECK(log.resources[0] == "cuda_device_memory");
    CHECK(log.sizes[0] == 1000);
    CHECK(log.reserved[0] == 1000 + 4096 - 256);
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free);
    CHECK(log.reserved[1] == 1000 + 4096 - 256);
    CHECK(log.pointers[1] == p);
    CHECK(log.sizes[2] == 0);
    CHECK(log.reserved[2] == 1);  // zero bytes take one
    CHECK(log.messages[0].empty());
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("a size that overflows with the alignment padding is out_of_memory, no driver call") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    auto r = mem->try_allocate(SIZE_MAX, 4096);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() == "cuda_device_memory: cuMemAlloc(" + std::to_string(SIZE_MAX) +
                                     " bytes) on device 0: the size overflows with alignment 4096");
    CHECK(fake_gpu::get().contexts_at_alloc.empty());
    REQUIRE(mem->log().kinds.size() == 1);
    CHECK(mem->log().kinds[0] == cuda_allocation_event_kind::allocate_failed);
    CHECK(mem->log().pointers[0] == nullptr);
    CHECK(mem->log().messages[0] == r.error().message());
  }

  TEST_CASE("without cuMemGetAddressRange only over-aligned requests are unavailable") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_get_address_range = nullptr;
    auto d = cuda_driver::from_api(api, "fake driver");
    REQUIRE(d.has_value());
    auto mem = cuda_device_memory<>::create(*d, 0);
    REQUIRE(mem.has_value());
    void* p = mem->allocate(64, 256);
    mem->deallocate(p, 64, 256);
    auto r = mem->try_allocate(64, 512);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(contains(r.error().message(), "cuMemGetAddressRange is not available"));
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("a context that cannot be made current fails allocate and free, naming the call") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<recording_log>::create(d, 0);
    REQUIRE(mem.has_value());
    fake_gpu::get().fail_next["cuCtxSetCurrent"] = CUDA_ERROR_INVALID_CONTEXT;
    auto r = mem->try_allocate(64);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::failed_precondition);
    CHECK(r.error().message() ==
          "cuda_device_memory: cuCtxSetCurrent: CUDA_ERROR_INVALID_CONTEXT (invalid device "
          "context)");
    CHECK(fake_gpu::get().device_allocations.empty());

    void* p = mem->allocate(64);
    fake_gpu::get().fail_next["cuCtxSetCurrent"] = CUDA_ERROR_INVALID_CONTEXT;
    mem->deallocate(p, 64);  // cannot free: logged, the memory stays with the driver
    CHECK(mem->log().kinds.back() == cuda_allocation_event_kind::free_failed);
    CHECK(mem->log().messages.back() ==
          "cuCtxSetCurrent: CUDA_ERROR_INVALID_CONTEXT (invalid device context)");
    CHECK(fake_gpu::get().device_allocations.size() == 1);
    mem->deallocate(p, 64);
    CHECK(mem->log().kinds.back() == cuda_allocation_event_kind::free);
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("equal for the same device and driver; copies share the context") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 2;
    auto a = cuda_device_memory<>::create(d, 0);
    auto b = cuda_device_memory<>::create(d, 0);
    auto c = cuda_device_memory<>::create(d, 1);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    REQUIRE(c.has_value());
    CHECK(*a == *b);
    CHECK_FALSE(*a == *c);
    CHECK(c->device_ordinal() == 1);
    const cuda_device_memory<> copy = *a;
    CHECK(copy == *a);
    CHECK(fake_gpu::get().retained[0] == 2);  // the copy shares a's retain
    void* p = c->allocate(16);
    CHECK(fake_gpu::get().contexts_at_alloc.back() == fake_gpu::get().context_of(1));
    c->deallocate(p, 16);
  }

  TEST_CASE("a pointer cuMemFree refuses is logged, then reported as misuse (abort)") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<stream_allocation_log>::create(d, 0);  // logs to stderr
    REQUIRE(mem.has_value());
    int not_device_memory = 0;
    auto foreign = run_in_child([&] { mem->deallocate(&not_device_memory, 4); });
    CHECK(foreign.aborted());
    CHECK(
        contains(foreign.stderr_text, "cuda_device_memory: free_failed 4 bytes (4 reserved) at "));
    CHECK(contains(foreign.stderr_text,
                   "cuMemFree(4 bytes) on device 0: CUDA_ERROR_INVALID_VALUE (invalid argument)"));
    CHECK(contains(foreign.stderr_text,
                   "xlamem: misuse: cuda_device_memory: cuMemFree refused a pointer "
                   "(CUDA_ERROR_INVALID_VALUE): not from this resource, or freed twice"));
    CHECK(foreign.stderr_text.find("free_failed") < foreign.stderr_text.find("misuse"));

    auto twice = run_in_child([&] {
      void* p = mem->allocate(64);
      mem->deallocate(p, 64);
      mem->deallocate(p, 64);
    });
    CHECK(twice.aborted());
    CHECK(contains(twice.stderr_text, "cuda_device_memory: free 64 bytes"));
    CHECK(contains(twice.stderr_text, "xlamem: misuse: cuda_device_memory: cuMemFree refused"));

    // Any other refusal is only logged (see "the log policy sees ..."): the child goes on.
    auto refused = run_in_child([&] {
      void* p = mem->allocate(64);
      fake_gpu::get().fail_next["cuMemFree"] = CUDA_ERROR_LAUNCH_FAILED;
      mem->deallocate(p, 64);
    });
    CHECK(refused.exited);
    CHECK(refused.exit_code == 0);
    CHECK(contains(refused.stderr_text, "free_failed 64 bytes"));
    CHECK_FALSE(contains(refused.stderr_text, "misuse"));
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
  TEST_CASE("cuMemAlloc: 1 B to 1 GiB, aligned to at least 256 B, round trip") {
    auto d = real_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    for (std::size_t bytes : {std::size_t(1), std::size_t(255), std::size_t(256), std::size_t(4097),
                              std::size_t(1) << 16, std::size_t(1) << 20, std::size_t(16) << 20,
                              std::size_t(256) << 20, std::size_t(1) << 30}) {
      CAPTURE(bytes);
      void* p = mem->allocate(bytes, 256);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
      check_round_trip(mem->context(), p, std::min<std::size_t>(bytes, std::size_t(64) << 20));
      mem->deallocate(p, bytes, 256);
    }
    for (std::size_t align : {std::size_t(512), std::size_t(4096), std::size_t(2) << 20}) {
      CAPTURE(align);
      void* p = mem->allocate(1000, align);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % align == 0);
      check_round_trip(mem->context(), p, 1000);
      mem->deallocate(p, 1000, align);
    }
  }

  TEST_CASE("cuMemAlloc beyond the device is out_of_memory naming the CUresult") {
    auto d = real_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto r = mem->try_allocate(std::size_t(1) << 50);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(contains(r.error().message(), "CUDA_ERROR_OUT_OF_MEMORY"));
  }
}
