// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/driver.hpp: loading the driver (missing library, stub library, not
// a driver), from_api, cuInit and device errors, error formatting and CUresult → errc, device
// properties and allocation ids over the fake driver; "cuda/gpu": the real device's properties.
#include "xlamem/cuda/driver.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::real_driver;

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

  TEST_CASE("CUresult to errc: arguments, lookups, preconditions") {
    static_assert(cuda_errc(CUDA_ERROR_INVALID_DEVICE) == errc::invalid_argument);
    CHECK(cuda_errc(CUDA_ERROR_INVALID_HANDLE) == errc::invalid_argument);
    CHECK(cuda_errc(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) == errc::not_found);
    CHECK(cuda_errc(CUDA_ERROR_NOT_FOUND) == errc::not_found);
    CHECK(cuda_errc(CUDA_ERROR_NOT_PERMITTED) == errc::failed_precondition);
    CHECK(cuda_errc(CUDA_ERROR_ILLEGAL_STATE) == errc::failed_precondition);
    CHECK(cuda_errc(CUDA_ERROR_INVALID_CONTEXT) == errc::failed_precondition);
    CHECK(cuda_errc(CUDA_ERROR_CONTEXT_IS_DESTROYED) == errc::failed_precondition);
    // A sticky device error or anything unknown: the device cannot serve.
    CHECK(cuda_errc(CUDA_ERROR_LAUNCH_FAILED) == errc::unavailable);
    CHECK(cuda_errc(CUDA_ERROR_NOT_INITIALIZED) == errc::unavailable);
    CHECK(cuda_errc(static_cast<CUresult>(12345)) == errc::unavailable);
  }

  TEST_CASE("the driver's own error name comes first; the table and a number are fallbacks") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.get_error_name = [](CUresult, const char** s) -> CUresult {
      *s = "NAME_FROM_DRIVER";
      return CUDA_SUCCESS;
    };
    api.get_error_string = nullptr;
    auto d = cuda_driver::from_api(api, "naming driver");
    REQUIRE(d.has_value());
    CHECK((*d)->error_name(CUDA_ERROR_OUT_OF_MEMORY) == "NAME_FROM_DRIVER");
    // Every name the table knows has a description too (the driver's own words).
    CHECK((*d)->error_description(CUDA_ERROR_LAUNCH_FAILED) == "unspecified launch failure");
    for (int code = 0; code < 1000; ++code) {
      const auto r = static_cast<CUresult>(code);
      CHECK_MESSAGE((xlamem::detail::cu_result_name(r) == nullptr) == (xlamem::detail::cu_result_description(r) == nullptr),
                    "CUresult ", code);
    }
    CHECK((*d)->error_description(CUDA_ERROR_OUT_OF_MEMORY) == "out of memory");

    // The fake answers only what the table knows, and fails for the rest.
    auto f = fake_driver();
    CHECK(f->error_name(CUDA_ERROR_NOT_PERMITTED) == "CUDA_ERROR_NOT_PERMITTED");
    CHECK(f->error_name(static_cast<CUresult>(999999)) == "CUresult 999999");
    const error e = f->make_error(static_cast<CUresult>(999999), "cuSomething");
    CHECK(e.code() == errc::unavailable);
    CHECK(e.message() == "cuSomething: CUresult 999999 (no description available)");
  }

  TEST_CASE("require and missing_entry_point name the entry point, the driver and its version") {
    auto d = fake_driver();
    CHECK(d->require(d->api().mem_alloc, "cuMemAlloc").has_value());
    auto r = d->require(d->api().mem_get_info, "cuMemGetInfo");  // the fake has none
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(r.error().message() ==
          "cuMemGetInfo is not available in the CUDA driver fake driver (version 13000): driver "
          "too old for this resource");
    CHECK(d->source() == "fake driver");

    fake_gpu::reset();
    auto unnamed = cuda_driver::from_api(test::fake_api());
    REQUIRE(unnamed.has_value());
    CHECK((*unnamed)->source() == "user-supplied cuda_driver_api");
  }

  TEST_CASE("initialisation failures: the whole cuInit message, and cuDriverGetVersion") {
    fake_gpu::reset();
    fake_gpu::get().init_result = CUDA_ERROR_NO_DEVICE;
    auto no_device = cuda_driver::from_api(test::fake_api(), "fake driver");
    REQUIRE_FALSE(no_device.has_value());
    CHECK(no_device.error().message() ==
          "cuInit(0) with driver fake driver: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
          "detected); no CUDA device can be used");

    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.driver_get_version = [](int*) -> CUresult { return CUDA_ERROR_NOT_INITIALIZED; };
    auto no_version = cuda_driver::from_api(api, "fake driver");
    REQUIRE_FALSE(no_version.has_value());
    CHECK(no_version.error().code() == errc::unavailable);
    CHECK(no_version.error().message() ==
          "cuDriverGetVersion: CUDA_ERROR_NOT_INITIALIZED (initialization error)");
  }

  TEST_CASE("a failing cuDeviceGetCount is reported by device_count, device and properties") {
    auto d = fake_driver();
    fake_gpu::get().fail_next["cuDeviceGetCount"] = CUDA_ERROR_NOT_INITIALIZED;
    auto n = d->device_count();
    REQUIRE_FALSE(n.has_value());
    CHECK(n.error().code() == errc::unavailable);
    CHECK(n.error().message() ==
          "cuDeviceGetCount: CUDA_ERROR_NOT_INITIALIZED (initialization error)");
    CHECK(*d->device_count() == 1);  // the failure was injected once

    fake_gpu::get().fail_next["cuDeviceGetCount"] = CUDA_ERROR_NOT_INITIALIZED;
    CHECK(contains(d->device(0).error().message(), "cuDeviceGetCount"));
    fake_gpu::get().fail_next["cuDeviceGetCount"] = CUDA_ERROR_NOT_INITIALIZED;
    CHECK(contains(d->device_properties(0).error().message(), "cuDeviceGetCount"));
  }

  TEST_CASE("device properties: every field, per device, and a bad ordinal") {
    auto d = fake_driver();
    fake_gpu& f = fake_gpu::get();
    f.device_count = 2;
    f.memory_limit = std::size_t(80) << 30;
    f.vmm_supported = false;
    f.pools_supported = false;
    auto p = d->device_properties(1);
    REQUIRE(p.has_value());
    CHECK(p->ordinal == 1);
    CHECK(p->name == "xlamem fake GPU");
    CHECK(p->total_memory == (std::size_t(80) << 30));
    CHECK(p->compute_capability_major == 9);
    CHECK(p->compute_capability_minor == 0);
    CHECK(p->unified_addressing);
    CHECK_FALSE(p->virtual_memory_management);
    CHECK_FALSE(p->memory_pools);
    auto bad = d->device_properties(2);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::out_of_range);
    CHECK(bad.error().message() == "CUDA device ordinal 2 is out of range: 2 device(s) present");
  }

  TEST_CASE("allocation ids are unique and non-zero across threads") {
    auto d = fake_driver();
    std::vector<std::vector<std::uint64_t>> ids(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < ids.size(); ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 1000; ++i) ids[t].push_back(d->next_allocation_id());
      });
    }
    for (auto& th : threads) th.join();
    std::set<std::uint64_t> all;
    for (const auto& v : ids) all.insert(v.begin(), v.end());
    CHECK(all.size() == 4000);
    CHECK(all.count(0) == 0);
  }
}

// GPU suite: the real driver (main.cpp runs it with --gpu only).
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
}
