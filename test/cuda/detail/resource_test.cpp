// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/detail/resource.hpp over the fake driver: the create helpers
// (context, entry points, device support), the failure loggers, scoped_free (free, refused
// scope, refused free, misuse) and cuda_resource_base's accessors.
#include "xlamem/cuda/detail/resource.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../cuda_test_support.hpp"
#include "../fake_driver.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::recording_log;
using xlamem::test::run_in_child;

namespace {
// The smallest resource over cuda_resource_base: it refuses every allocation.
class refusing_resource : public detail::cuda_resource_base<refusing_resource, recording_log> {
 public:
  static constexpr std::string_view name = "refusing_resource";
  explicit refusing_resource(cuda_primary_context context)
      : cuda_resource_base(std::move(context), recording_log{}) {}
  result<void*> refuse(std::size_t bytes) {
    return fail(error(errc::out_of_memory, "no room"), bytes);
  }
};
}  // namespace

TEST_SUITE("cuda/detail/resource") {
  TEST_CASE("retain_for_create: the context, or the error in the context of <resource>::create") {
    auto d = fake_driver();
    auto ctx = detail::retain_for_create("probe", d, 0);
    REQUIRE(ctx.has_value());
    CHECK(ctx->ordinal() == 0);
    CHECK(fake_gpu::get().retained[0] == 1);

    auto bad = detail::retain_for_create("probe", d, 3);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::out_of_range);
    CHECK(bad.error().message() ==
          "probe::create: CUDA device ordinal 3 is out of range: 1 device(s) present");
    auto null = detail::retain_for_create("probe", nullptr, 0);
    REQUIRE_FALSE(null.has_value());
    CHECK(null.error().code() == errc::invalid_argument);
    CHECK(null.error().message() ==
          "probe::create: cuda_primary_context::retain: the driver is null");
  }

  TEST_CASE("require_entry_points: success, or unavailable naming the first missing one") {
    auto d = fake_driver();
    CHECK(detail::require_entry_points(*d, {}).has_value());
    CHECK(detail::require_entry_points(*d, {{true, "cuA"}, {true, "cuB"}}).has_value());
    auto r = detail::require_entry_points(*d, {{true, "cuA"}, {false, "cuB"}, {false, "cuC"}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(r.error() == d->missing_entry_point("cuB"));
  }

  TEST_CASE("require_device_support: the attribute, unimplemented when 0, the query's error") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    CHECK(detail::require_device_support(*ctx, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                         "cuDeviceGetAttribute(POOLS)", "probe", "pools")
              .has_value());
    fake_gpu::get().pools_supported = false;
    auto no = detail::require_device_support(*ctx, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                             "cuDeviceGetAttribute(POOLS)", "probe", "pools");
    REQUIRE_FALSE(no.has_value());
    CHECK(no.error().code() == errc::unimplemented);
    CHECK(no.error().message() == "probe: device 0 does not support pools");

    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.device_get_attribute = [](int*, CUdevice_attribute, CUdevice) -> CUresult {
      return CUDA_ERROR_INVALID_DEVICE;
    };
    auto broken = cuda_driver::from_api(api, "fake driver");
    REQUIRE(broken.has_value());
    auto broken_ctx = cuda_primary_context::retain(*broken, 0);
    REQUIRE(broken_ctx.has_value());
    auto failed =
        detail::require_device_support(*broken_ctx, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                       "cuDeviceGetAttribute(POOLS)", "probe", "pools");
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code() == errc::invalid_argument);
    CHECK(failed.error().message() ==
          "cuDeviceGetAttribute(POOLS): CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)");
  }

  TEST_CASE("allocation_failed and free_failed log one event each; allocation_failed returns") {
    recording_log log;
    const error e(errc::out_of_memory, "probe: cuProbeAlloc(64 bytes) on device 2: full");
    auto r = detail::allocation_failed(log, "probe", 2, e, 64);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == e);
    int object = 0;
    detail::free_failed(log, "probe", 2, &object, 64, 256, "refused");
    REQUIRE(log.kinds.size() == 2);
    CHECK(log.kinds[0] == cuda_allocation_event_kind::allocate_failed);
    CHECK(log.resources[0] == "probe");
    CHECK(log.ordinals[0] == 2);
    CHECK(log.sizes[0] == 64);
    CHECK(log.reserved[0] == 0);
    CHECK(log.pointers[0] == nullptr);
    CHECK(log.messages[0] == e.message());
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free_failed);
    CHECK(log.pointers[1] == &object);
    CHECK(log.sizes[1] == 64);
    CHECK(log.reserved[1] == 256);
    CHECK(log.messages[1] == "refused");
  }

  TEST_CASE("scoped_free: frees in the context and restores it, logging free") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    recording_log log;
    int object = 0;
    CUcontext seen = nullptr;
    detail::scoped_free(
        log, "probe", *ctx, &object, 8, 16, "cuProbeFree",
        [&] {
          seen = fake_gpu::current();
          return CUDA_SUCCESS;
        },
        "probe: misuse");
    CHECK(seen == ctx->get());
    CHECK(fake_gpu::current() == nullptr);
    REQUIRE(log.kinds.size() == 1);
    CHECK(log.kinds[0] == cuda_allocation_event_kind::free);
    CHECK(log.pointers[0] == &object);
    CHECK(log.sizes[0] == 8);
    CHECK(log.reserved[0] == 16);
    CHECK(log.messages[0].empty());
  }

  TEST_CASE("scoped_free: a refused scope or a refused free is logged, not reported as misuse") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    recording_log log;
    int object = 0;
    int calls = 0;
    fake_gpu::get().fail_next["cuCtxSetCurrent"] = CUDA_ERROR_CONTEXT_IS_DESTROYED;
    detail::scoped_free(
        log, "probe", *ctx, &object, 8, 8, "cuProbeFree",
        [&] {
          ++calls;
          return CUDA_SUCCESS;
        },
        "probe: misuse");
    CHECK(calls == 0);  // no free without the context
    REQUIRE(log.kinds.size() == 1);
    CHECK(log.kinds[0] == cuda_allocation_event_kind::free_failed);
    CHECK(contains(log.messages[0], "cuCtxSetCurrent: CUDA_ERROR_CONTEXT_IS_DESTROYED"));

    detail::scoped_free(
        log, "probe", *ctx, &object, 8, 8, "cuProbeFree",
        [&] {
          ++calls;
          return CUDA_ERROR_ILLEGAL_ADDRESS;
        },
        "probe: misuse");
    CHECK(calls == 1);
    REQUIRE(log.kinds.size() == 2);
    CHECK(log.kinds[1] == cuda_allocation_event_kind::free_failed);
    CHECK(log.messages[1] ==
          "probe: cuProbeFree(8 bytes) on device 0: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
          "encountered)");
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("scoped_free: CUDA_ERROR_INVALID_VALUE is logged, then reported as misuse (abort)") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    int object = 0;
    auto out = run_in_child([&] {
      stream_allocation_log log;  // stderr
      detail::scoped_free(
          log, "probe", *ctx, &object, 8, 8, "cuProbeFree", [] { return CUDA_ERROR_INVALID_VALUE; },
          "probe: not ours");
    });
    CHECK(out.aborted());
    CHECK(contains(out.stderr_text, "probe: free_failed 8 bytes (8 reserved)"));
    CHECK(contains(out.stderr_text,
                   "probe: cuProbeFree(8 bytes) on device 0: CUDA_ERROR_INVALID_VALUE"));
    CHECK(contains(out.stderr_text, "xlamem: misuse: probe: not ours"));
    CHECK(out.stderr_text.find("free_failed") < out.stderr_text.find("misuse"));
  }

  TEST_CASE("cuda_resource_base: device, context, driver and log; fail() logs under the name") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 2;
    auto ctx = cuda_primary_context::retain(d, 1);
    REQUIRE(ctx.has_value());
    refusing_resource r(*ctx);
    CHECK(r.device_ordinal() == 1);
    CHECK(r.context() == *ctx);
    CHECK(&r.driver() == d.get());
    auto refused = r.refuse(32);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message() == "no room");
    REQUIRE(r.log().kinds.size() == 1);
    CHECK(r.log().kinds[0] == cuda_allocation_event_kind::allocate_failed);
    CHECK(r.log().resources[0] == "refusing_resource");
    CHECK(r.log().ordinals[0] == 1);
    CHECK(r.log().sizes[0] == 32);
    CHECK(r.log().messages[0] == "no room");
  }
}
