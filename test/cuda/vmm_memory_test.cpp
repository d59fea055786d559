// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/vmm_memory.hpp: cuda_vmm_device_memory over the fake driver
// (granularity rounding, undo of every failing step, options, equality, frees that must keep
// the mapping, misuse) and, in "cuda/gpu", VMM allocations on the real device.
#include "xlamem/cuda/vmm_memory.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/device_allocation.hpp"
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

  TEST_CASE("a failing cuCtxSynchronize keeps the mapping (a leak, not a fault) and logs it") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<recording_log>::create(d, 0);
    REQUIRE(vmm.has_value());
    void* p = vmm->allocate(1);
    fake_gpu& f = fake_gpu::get();
    f.fail_next["cuCtxSynchronize"] = CUDA_ERROR_LAUNCH_FAILED;
    vmm->deallocate(p, 1);
    CHECK(f.vmm_mappings.size() == 1);
    CHECK(f.vmm_reservations.size() == 1);
    const recording_log& log = vmm->log();
    CHECK(log.kinds.back() == cuda_allocation_event_kind::free_failed);
    CHECK(log.sizes.back() == 1);
    CHECK(log.reserved.back() == (2u << 20));
    CHECK(log.pointers.back() == p);
    CHECK(contains(log.messages.back(),
                   "cuda_vmm_device_memory: cuCtxSynchronize(2097152 bytes) on device 0: "
                   "CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(fake_gpu::current() == nullptr);

    vmm->deallocate(p, 1);  // the device recovered: the free goes through
    CHECK(log.kinds.back() == cuda_allocation_event_kind::free);
    CHECK(f.vmm_mappings.empty());
    CHECK(f.vmm_reservations.empty());
  }

  TEST_CASE("sizes that overflow the rounding are out_of_memory; allocation_size saturates") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE(vmm.has_value());
    CHECK(vmm->allocation_size(SIZE_MAX) == SIZE_MAX);
    CHECK(vmm->allocation_size(SIZE_MAX - (2u << 20)) == SIZE_MAX - (2u << 20) + 1);
    auto r = vmm->try_allocate(SIZE_MAX);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message() == "cuda_vmm_device_memory: cuMemCreate(" + std::to_string(SIZE_MAX) +
                                     " bytes) on device 0: the size overflows when rounded to "
                                     "2097152");
    CHECK(fake_gpu::get().vmm_handles.empty());
    auto bad = vmm->try_allocate(64, 48);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::invalid_argument);
  }

  TEST_CASE("equality follows the device, the driver and the rounding; a bad granularity") {
    auto d = fake_driver();
    auto a = cuda_vmm_device_memory<>::create(d, 0);
    auto b = cuda_vmm_device_memory<>::create(d, 0);
    cuda_vmm_options wider;
    wider.alignment = 8u << 20;
    auto c = cuda_vmm_device_memory<>::create(d, 0, wider);
    cuda_vmm_options recommended;
    recommended.recommended_granularity = true;
    auto e = cuda_vmm_device_memory<>::create(d, 0, recommended);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    REQUIRE(c.has_value());
    REQUIRE(e.has_value());
    CHECK(*a == *b);
    CHECK_FALSE(*a == *c);  // sizes would disagree at free
    CHECK(c->options().alignment == (8u << 20));
    CHECK(e->options().recommended_granularity);
    CHECK(*a == *e);  // the fake's recommended granularity is its minimum

    fake_gpu::get().granularity = 3u << 20;
    auto odd = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE_FALSE(odd.has_value());
    CHECK(odd.error().code() == errc::internal);
    CHECK(odd.error().message() ==
          "cuda_vmm_device_memory: the driver reports granularity 3145728, not a power of two");
    fake_gpu::get().granularity = 0;
    CHECK(cuda_vmm_device_memory<>::create(d, 0).error().code() == errc::internal);
  }

  TEST_CASE("an unsupported device is unimplemented, naming the resource and the feature") {
    auto d = fake_driver();
    fake_gpu::get().vmm_supported = false;
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE_FALSE(vmm.has_value());
    CHECK(vmm.error().message() ==
          "cuda_vmm_device_memory: device 0 does not support virtual memory management");
    CHECK(fake_gpu::get().retained[0] == 0);  // the context went with the failed create
  }

  TEST_CASE("freeing with another size is misuse: cuMemUnmap refuses the range (abort)") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<stream_allocation_log>::create(d, 0);  // logs to stderr
    REQUIRE(vmm.has_value());
    auto out = run_in_child([&] {
      void* p = vmm->allocate(1);
      vmm->deallocate(p, (2u << 20) + 1);  // rounds to 4 MiB, not the 2 MiB mapped
    });
    CHECK(out.aborted());
    CHECK(contains(out.stderr_text,
                   "cuda_vmm_device_memory: free_failed 2097153 bytes "
                   "(4194304 reserved)"));
    CHECK(contains(out.stderr_text,
                   "cuMemUnmap(4194304 bytes) on device 0: "
                   "CUDA_ERROR_INVALID_VALUE"));
    CHECK(contains(out.stderr_text,
                   "xlamem: misuse: cuda_vmm_device_memory: cuMemUnmap refused a range "
                   "(CUDA_ERROR_INVALID_VALUE): not from this resource, freed twice, or freed "
                   "with another size"));
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
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
}
