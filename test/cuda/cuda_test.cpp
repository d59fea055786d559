// SPDX-License-Identifier: Apache-2.0
// Tests for xlamem/cuda. Two halves in one file:
// - CPU suites ("cuda/driver", "cuda/context", "cuda/device_memory", ...): the run-time loader's
//   no-driver / stub-driver / no-device errors, and every resource's logic (context restore,
//   error messages, undoing partial work, logging, pools) over the fake driver of
//   fake_driver.hpp. They run everywhere.
// - GPU suites ("cuda/gpu"): the real driver and device. main.cpp runs them only with --gpu,
//   and exits 77 (skipped) with the reason when there is no driver or device; --fake-gpu runs
//   them over the fake driver instead (a smoke test of the suites themselves).
#include "xlamem/cuda/cuda.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_driver.hpp"
#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/heap_memory.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/alloc/tracking_adaptor.hpp"

using namespace xlamem;
using xlamem::test::fake_gpu;

namespace {

// A fresh fake GPU and a driver over it.
std::shared_ptr<const cuda_driver> fake_driver() {
  fake_gpu::reset();
  auto d = cuda_driver::from_api(test::fake_api(), "fake driver");
  REQUIRE(d.has_value());
  return *d;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Records every event a resource logs.
struct recording_log {
  std::vector<cuda_allocation_event_kind> kinds;
  std::vector<std::size_t> sizes;
  std::vector<const void*> pointers;
  std::vector<int> ordinals;
  std::vector<std::string> messages;
  void record(const cuda_allocation_event& e) noexcept {
    kinds.push_back(e.kind);
    sizes.push_back(e.size);
    pointers.push_back(e.pointer);
    ordinals.push_back(e.device_ordinal);
    messages.emplace_back(e.message);
  }
};
static_assert(cuda_allocation_log<recording_log>);

void count_events(void* context, const cuda_allocation_event&) { ++*static_cast<int*>(context); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Concepts: the models, and near misses that differ from a model in one way.
namespace {
struct log_that_may_throw {
  void record(const cuda_allocation_event&) {}
};
struct log_with_other_name {
  void write(const cuda_allocation_event&) noexcept {}
};
struct device_resource_without_driver {
  void* allocate(std::size_t, std::size_t);
  void deallocate(void*, std::size_t, std::size_t) noexcept;
  int device_ordinal() const;
  friend bool operator==(const device_resource_without_driver&,
                         const device_resource_without_driver&);
  friend void get_property(const device_resource_without_driver&, device_accessible) noexcept;
};
}  // namespace

static_assert(cuda_allocation_log<no_allocation_log>);
static_assert(cuda_allocation_log<recording_log>);
static_assert(!cuda_allocation_log<log_that_may_throw>);  // record must be noexcept
static_assert(!cuda_allocation_log<log_with_other_name>);
static_assert(cuda_device_resource<cuda_device_memory<>>);
static_assert(cuda_device_resource<cuda_vmm_device_memory<recording_log>>);
static_assert(cuda_device_resource<cuda_async_memory<>>);
static_assert(!cuda_device_resource<cuda_pinned_host_memory<>>);  // host memory
static_assert(!cuda_device_resource<aligned_heap_memory>);
static_assert(!cuda_device_resource<device_resource_without_driver>);
static_assert(!cuda_device_resource<cuda_device_pool<>>);  // a pool names no device
static_assert(has_property<cuda_host_registration<aligned_heap_memory>, pinned>);
static_assert(has_property<cuda_pinned_scalar_pool<int>::pool_type, pinned>);

// ---------------------------------------------------------------------------------------------
TEST_SUITE("cuda/driver") {
  TEST_CASE("a missing driver library is unavailable, naming the library") {
    auto d = cuda_driver::load("libxlamem-no-such-cuda-driver.so.1");
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == errc::unavailable);
    CHECK(contains(d.error().message(), "libxlamem-no-such-cuda-driver.so.1"));
    CHECK(contains(d.error().message(), "NVIDIA driver"));
  }

  TEST_CASE("the default load either works or is unavailable with a reason") {
    auto d = cuda_driver::load();
    if (d.has_value()) {
      CHECK((*d)->version() > 0);
      MESSAGE("a CUDA driver is installed here: " << (*d)->source() << " version "
                                                  << (*d)->version());
    } else {
      CHECK(d.error().code() == errc::unavailable);
      CHECK_FALSE(d.error().message().empty());
      MESSAGE("no usable CUDA driver here: " << d.error().to_string());
    }
  }

  TEST_CASE(
      "the toolkit's stub library is unavailable, naming cuInit and CUDA_ERROR_STUB_LIBRARY") {
    const char* candidates[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
    const char* stub = nullptr;
    for (const char* c : candidates) {
      if (std::FILE* f = std::fopen(c, "rb")) {
        std::fclose(f);
        stub = c;
        break;
      }
    }
    if (stub == nullptr) {
      MESSAGE("skipped: no CUDA toolkit stub library found");
      return;
    }
    auto d = cuda_driver::load(stub);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == errc::unavailable);
    CHECK(contains(d.error().message(), "cuInit"));
    CHECK(contains(d.error().message(), "CUDA_ERROR_STUB_LIBRARY"));
    CHECK(contains(d.error().message(), "stub"));
  }

  TEST_CASE("a library that is not a CUDA driver lacks the entry points") {
    auto d = cuda_driver::load("libm.so.6");
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == errc::unavailable);
    CHECK(contains(d.error().message(), "cuInit"));
    CHECK(contains(d.error().message(), "lacks required driver entry points"));
  }

  TEST_CASE("from_api checks the required entry points") {
    cuda_driver_api api = test::fake_api();
    api.init = nullptr;
    api.ctx_set_current = nullptr;
    auto d = cuda_driver::from_api(api, "broken table");
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == errc::invalid_argument);
    CHECK(contains(d.error().message(), "cuInit"));
    CHECK(contains(d.error().message(), "cuCtxSetCurrent"));
    CHECK(contains(d.error().message(), "broken table"));
  }

  TEST_CASE("cuInit failing with no device is unavailable with name and description") {
    fake_gpu::reset();
    fake_gpu::get().init_result = CUDA_ERROR_NO_DEVICE;
    auto d = cuda_driver::from_api(test::fake_api(), "fake driver");
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == errc::unavailable);
    CHECK(contains(d.error().message(), "cuInit"));
    CHECK(contains(d.error().message(), "CUDA_ERROR_NO_DEVICE"));
    CHECK(contains(d.error().message(), "no CUDA-capable device is detected"));
  }

  TEST_CASE("zero devices: device() is unavailable; a bad ordinal is out_of_range") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 0;
    auto dev = d->device(0);
    REQUIRE_FALSE(dev.has_value());
    CHECK(dev.error().code() == errc::unavailable);
    CHECK(contains(dev.error().message(), "no CUDA device"));
    CHECK(cuda_device_memory<>::create(d).error().code() == errc::unavailable);

    fake_gpu::get().device_count = 2;
    auto bad = d->device(2);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::out_of_range);
    CHECK(contains(bad.error().message(), "ordinal 2"));
    CHECK(d->device(-1).error().code() == errc::out_of_range);
    CHECK(d->device(1).has_value());
  }

  TEST_CASE("errors name the call, the CUresult name and its description") {
    auto d = fake_driver();
    const error e = d->make_error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(5 bytes) on device 0");
    CHECK(e.code() == errc::out_of_memory);
    CHECK(e.message() ==
          "cuMemAlloc(5 bytes) on device 0: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    CHECK(d->check(CUDA_SUCCESS, "x").has_value());
    CHECK(d->check(CUDA_ERROR_INVALID_VALUE, "x").error().code() == errc::invalid_argument);
  }

  TEST_CASE("without cuGetErrorName the built-in table names the result") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.get_error_name = nullptr;
    api.get_error_string = nullptr;
    auto d = cuda_driver::from_api(api);
    REQUIRE(d.has_value());
    CHECK((*d)->error_name(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) ==
          "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED");
    CHECK((*d)->error_name(static_cast<CUresult>(12345)) == "CUresult 12345");
    CHECK((*d)->error_description(static_cast<CUresult>(12345)) == "no description available");
  }

  TEST_CASE("CUresult to errc") {
    CHECK(cuda_errc(CUDA_ERROR_OUT_OF_MEMORY) == errc::out_of_memory);
    CHECK(cuda_errc(CUDA_ERROR_NO_DEVICE) == errc::unavailable);
    CHECK(cuda_errc(CUDA_ERROR_STUB_LIBRARY) == errc::unavailable);
    CHECK(cuda_errc(CUDA_ERROR_INVALID_VALUE) == errc::invalid_argument);
    CHECK(cuda_errc(CUDA_ERROR_NOT_SUPPORTED) == errc::unimplemented);
    CHECK(cuda_errc(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) == errc::already_exists);
    CHECK(cuda_errc(CUDA_ERROR_ILLEGAL_ADDRESS) == errc::unavailable);
  }

  TEST_CASE("device properties and allocation ids") {
    auto d = fake_driver();
    auto p = d->device_properties(0);
    REQUIRE(p.has_value());
    CHECK(p->name == "xlamem fake GPU");
    CHECK(p->compute_capability_major == 9);
    CHECK(p->virtual_memory_management);
    CHECK(p->memory_pools);
    CHECK(d->version() == 13000);
    const auto a = d->next_allocation_id();
    const auto b = d->next_allocation_id();
    CHECK(a != 0);
    CHECK(b == a + 1);
  }
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("cuda/context") {
  TEST_CASE("the primary context is retained once per copy group and released with the last") {
    auto d = fake_driver();
    {
      auto ctx = cuda_primary_context::retain(d, 0);
      REQUIRE(ctx.has_value());
      CHECK(fake_gpu::get().retained[0] == 1);
      cuda_primary_context copy = *ctx;
      CHECK(fake_gpu::get().retained[0] == 1);
      CHECK(copy == *ctx);
      CHECK(copy.ordinal() == 0);
    }
    CHECK(fake_gpu::get().retained[0] == 0);
    CHECK(cuda_primary_context::retain(nullptr, 0).error().code() == errc::invalid_argument);
  }

  TEST_CASE("make_current switches and restores the previous context") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 2;
    auto c0 = cuda_primary_context::retain(d, 0);
    auto c1 = cuda_primary_context::retain(d, 1);
    REQUIRE(c0.has_value());
    REQUIRE(c1.has_value());
    fake_gpu::current() = c0->get();
    {
      auto scope = c1->make_current();
      REQUIRE(scope.has_value());
      CHECK(scope->switched());
      CHECK(scope->previous() == c0->get());
      CHECK(fake_gpu::current() == c1->get());
      {
        auto inner = c1->make_current();  // already current: nothing switched
        REQUIRE(inner.has_value());
        CHECK_FALSE(inner->switched());
      }
      CHECK(fake_gpu::current() == c1->get());
    }
    CHECK(fake_gpu::current() == c0->get());
    fake_gpu::current() = nullptr;
  }

  TEST_CASE("a failing cuCtxSetCurrent is reported, naming it") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    fake_gpu::get().fail_next["cuCtxSetCurrent"] = CUDA_ERROR_INVALID_CONTEXT;
    auto scope = ctx->make_current();
    REQUIRE_FALSE(scope.has_value());
    CHECK(contains(scope.error().message(), "cuCtxSetCurrent"));
    CHECK(contains(scope.error().message(), "CUDA_ERROR_INVALID_CONTEXT"));
  }

  TEST_CASE("retain failures carry the driver's error") {
    auto d = fake_driver();
    fake_gpu::get().fail_next["cuDevicePrimaryCtxRetain"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE_FALSE(ctx.has_value());
    CHECK(ctx.error().code() == errc::out_of_memory);
    CHECK(contains(ctx.error().message(), "cuDevicePrimaryCtxRetain(device 0)"));
  }
}

// ---------------------------------------------------------------------------------------------
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
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("cuda/device_allocation") {
  TEST_CASE("owns its memory, has ids, size, ordinal and to_string") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    {
      auto a = device_allocation::allocate(*mem, 1024);
      auto b = device_allocation::allocate(*mem, 4096);
      CHECK(a.address() != nullptr);
      CHECK(a.size() == 1024);
      CHECK(a.device_ordinal() == 0);
      CHECK(a.unique_id() != 0);
      CHECK(b.unique_id() != a.unique_id());
      CHECK(a.device_pointer() == reinterpret_cast<std::uintptr_t>(a.address()));
      const std::string s = a.to_string();
      CHECK(contains(s, "id=" + std::to_string(a.unique_id())));
      CHECK(contains(s, "device=0"));
      CHECK(contains(s, "size=1024"));
      CHECK(fake_gpu::get().device_allocations.size() == 2);

      device_allocation moved = std::move(a);
      CHECK_FALSE(a);
      CHECK(moved);
      moved = std::move(b);  // frees moved's own memory first
      CHECK(fake_gpu::get().device_allocations.size() == 1);
    }
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("zero bytes give an empty allocation without a driver call (as XLA)") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::try_allocate(*mem, 0);
    REQUIRE(a.has_value());
    CHECK(a->address() == nullptr);
    CHECK(a->size() == 0);
    CHECK(fake_gpu::get().contexts_at_alloc.empty());
  }

  TEST_CASE("failures carry the resource's error") {
    auto d = fake_driver();
    fake_gpu::get().memory_limit = 4096;
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::try_allocate(*mem, 1 << 20);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().code() == errc::out_of_memory);
    CHECK_THROWS_AS((void)device_allocation::allocate(*mem, 1 << 20), std::bad_alloc);
  }

  TEST_CASE("over VMM the size is the padded size") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE(vmm.has_value());
    auto a = device_allocation::allocate(*vmm, 1000);
    CHECK(a.size() == (2u << 20));
    CHECK(a.requested_size() == 1000);
  }
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("cuda/vmm") {
  TEST_CASE("create, reserve, map, set access; sizes rounded to the granularity") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<recording_log>::create(d, 0);
    REQUIRE(vmm.has_value());
    CHECK(vmm->granularity() == (2u << 20));
    CHECK(vmm->allocation_size(1) == (2u << 20));
    CHECK(vmm->allocation_size(0) == (2u << 20));
    CHECK(vmm->allocation_size((2u << 20) + 1) == (4u << 20));
    CHECK(vmm->allocation_size(1, 8u << 20) == (8u << 20));
    void* p = vmm->allocate(3u << 20);
    fake_gpu& f = fake_gpu::get();
    CHECK(f.vmm_mappings.size() == 1);
    CHECK(f.vmm_handles.empty());  // released right after mapping: the mapping holds the memory
    CHECK(f.access_sets == 1);
    CHECK(f.vmm_reservations.begin()->second == (4u << 20));
    CHECK(vmm->log().sizes.back() == (3u << 20));
    vmm->deallocate(p, 3u << 20);
    CHECK(f.vmm_mappings.empty());
    CHECK(f.vmm_reservations.empty());
    CHECK(f.ctx_synchronizes == 1);
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("every failing step undoes the earlier ones") {
    for (const char* step :
         {"cuMemCreate", "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "cuMemRelease"}) {
      CAPTURE(step);
      auto d = fake_driver();
      auto vmm = cuda_vmm_device_memory<>::create(d, 0);
      REQUIRE(vmm.has_value());
      fake_gpu::get().fail_next[step] = CUDA_ERROR_OUT_OF_MEMORY;
      auto r = vmm->try_allocate(1000);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::out_of_memory);
      CHECK(contains(r.error().message(), step));
      CHECK(contains(r.error().message(), "CUDA_ERROR_OUT_OF_MEMORY"));
      fake_gpu& f = fake_gpu::get();
      CHECK(f.vmm_mappings.empty());
      CHECK(f.vmm_reservations.empty());
      // A failed cuMemRelease leaves the handle with the driver; every other step releases it.
      CHECK(f.vmm_handles.size() == (std::string(step) == "cuMemRelease" ? 1u : 0u));
    }
  }

  TEST_CASE("options: extra alignment, no synchronisation; bad options and devices") {
    auto d = fake_driver();
    cuda_vmm_options o;
    o.alignment = 4u << 20;
    o.synchronize_before_unmap = false;
    auto vmm = cuda_vmm_device_memory<>::create(d, 0, o);
    REQUIRE(vmm.has_value());
    CHECK(vmm->allocation_size(1) == (4u << 20));
    vmm->deallocate(vmm->allocate(1), 1);
    CHECK(fake_gpu::get().ctx_synchronizes == 0);

    o.alignment = 3;
    CHECK(cuda_vmm_device_memory<>::create(d, 0, o).error().code() == errc::invalid_argument);
    fake_gpu::get().vmm_supported = false;
    auto unsupported = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE_FALSE(unsupported.has_value());
    CHECK(unsupported.error().code() == errc::unimplemented);
  }

  TEST_CASE("a driver without cuMemCreate is unavailable naming it") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.mem_create = nullptr;
    auto d = cuda_driver::from_api(api);
    REQUIRE(d.has_value());
    auto vmm = cuda_vmm_device_memory<>::create(*d, 0);
    REQUIRE_FALSE(vmm.has_value());
    CHECK(vmm.error().code() == errc::unavailable);
    CHECK(contains(vmm.error().message(), "cuMemCreate"));
  }
}

// ---------------------------------------------------------------------------------------------
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
}

// ---------------------------------------------------------------------------------------------
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
}

// ---------------------------------------------------------------------------------------------
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
}

// =============================================================================================
// GPU suites: the real driver and device. main.cpp runs them only with --gpu and skips (77)
// with the reason when there is no driver or device.
namespace {

std::shared_ptr<const cuda_driver> real_driver() {
  if (test::fake_gpu_mode()) {
    auto f = fake_driver();
    fake_gpu::get().memory_limit = std::size_t(3) << 30;
    return f;
  }
  auto d = cuda_driver::load();
  REQUIRE_MESSAGE(d.has_value(), (d.has_value() ? std::string() : d.error().to_string()));
  return *d;
}

// Copies host→device→host through the driver and checks the bytes match.
void check_round_trip(const cuda_primary_context& ctx, void* device, std::size_t bytes) {
  const cuda_driver& d = ctx.driver();
  std::vector<unsigned char> in(bytes), out(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i)
    in[i] = static_cast<unsigned char>((i * 131u + 7u) & 0xFFu);
  auto scope = ctx.make_current();
  REQUIRE(scope.has_value());
  REQUIRE(
      d.check(d.api().memcpy_htod(detail::to_deviceptr(device), in.data(), bytes), "cuMemcpyHtoD")
          .has_value());
  REQUIRE(
      d.check(d.api().memcpy_dtoh(out.data(), detail::to_deviceptr(device), bytes), "cuMemcpyDtoH")
          .has_value());
  CHECK(in == out);
}

}  // namespace

TEST_SUITE("cuda/gpu") {
  TEST_CASE("device properties") {
    auto d = real_driver();
    auto p = d->device_properties(0);
    REQUIRE(p.has_value());
    MESSAGE("device 0: " << p->name << ", " << (p->total_memory >> 20) << " MiB, sm_"
                         << p->compute_capability_major << p->compute_capability_minor
                         << ", driver " << d->version());
    CHECK(p->total_memory > 0);
    CHECK(d->device(*d->device_count()).error().code() == errc::out_of_range);
  }

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

  TEST_CASE("device_allocation over the real device") {
    auto d = real_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::allocate(*mem, 1024);
    CHECK(a.size() >= 1024);
    CHECK(a.unique_id() != 0);
    check_round_trip(mem->context(), a.address(), 1024);
    MESSAGE(a.to_string());
    auto z = device_allocation::allocate(*mem, 0);
    CHECK(z.address() == nullptr);
  }

  TEST_CASE("VMM: granularity rounding, round trip, 1 B to 1 GiB") {
    auto d = real_driver();
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE(vmm.has_value());
    MESSAGE("VMM granularity: " << vmm->granularity() << " bytes");
    CHECK(vmm->granularity() >= 4096);
    for (std::size_t bytes : {std::size_t(1), std::size_t(1) << 20, std::size_t(3) << 20,
                              std::size_t(64) << 20, std::size_t(1) << 30}) {
      CAPTURE(bytes);
      auto a = device_allocation::allocate(*vmm, bytes);
      CHECK(a.size() % vmm->granularity() == 0);
      CHECK(a.size() >= bytes);
      CHECK(reinterpret_cast<std::uintptr_t>(a.address()) % 256 == 0);
      check_round_trip(vmm->context(), a.address(),
                       std::min<std::size_t>(bytes, std::size_t(64) << 20));
    }
  }

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
