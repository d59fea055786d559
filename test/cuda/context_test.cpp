// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/context.hpp over the fake driver: retaining and releasing the
// primary context, equality, cuda_context_scope's switch and restore (moves included), and the
// errors of cuDevicePrimaryCtxRetain, cuCtxGetCurrent and cuCtxSetCurrent.
#include "xlamem/cuda/context.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <utility>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

using namespace xlamem;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;

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

  TEST_CASE("retain: no device is unavailable, a bad ordinal out_of_range; nothing is retained") {
    auto d = fake_driver();
    fake_gpu::get().device_count = 0;
    auto none = cuda_primary_context::retain(d, 0);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code() == errc::unavailable);
    CHECK(contains(none.error().message(), "no CUDA device"));

    fake_gpu::get().device_count = 2;
    auto bad = cuda_primary_context::retain(d, 5);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::out_of_range);
    CHECK(contains(bad.error().message(), "ordinal 5"));
    CHECK(fake_gpu::get().retained[0] == 0);
    CHECK(fake_gpu::get().retained[1] == 0);
  }

  TEST_CASE("equality, accessors, one retain per retain() call, and the driver kept alive") {
    auto d = fake_driver();
    fake_gpu& f = fake_gpu::get();
    f.device_count = 2;
    std::weak_ptr<const cuda_driver> weak = d;
    {
      auto a = cuda_primary_context::retain(d, 0);
      auto b = cuda_primary_context::retain(d, 0);
      auto c = cuda_primary_context::retain(d, 1);
      REQUIRE(a.has_value());
      REQUIRE(b.has_value());
      REQUIRE(c.has_value());
      CHECK(*a == *b);  // same driver object, same device
      CHECK(f.retained[0] == 2);
      CHECK_FALSE(*a == *c);
      CHECK(c->ordinal() == 1);
      CHECK(c->device() == 1);
      CHECK(c->get() == f.context_of(1));
      CHECK(&c->driver() == d.get());
      CHECK(c->shared_driver() == d);

      // Another driver object over the same entry points is another driver.
      auto other = cuda_driver::from_api(test::fake_api(), "second fake driver");
      REQUIRE(other.has_value());
      auto e = cuda_primary_context::retain(*other, 0);
      REQUIRE(e.has_value());
      CHECK_FALSE(*a == *e);
      CHECK(f.retained[0] == 3);

      d.reset();
      CHECK_FALSE(weak.expired());  // the contexts hold it
      auto scope = a->make_current();
      REQUIRE(scope.has_value());
      CHECK(fake_gpu::current() == f.context_of(0));
    }
    CHECK(weak.expired());
    CHECK(f.retained[0] == 0);
    CHECK(f.retained[1] == 0);
    CHECK(fake_gpu::current() == nullptr);
  }

  TEST_CASE("a scope entered from no context restores none; a moved scope restores once") {
    auto d = fake_driver();
    auto ctx = cuda_primary_context::retain(d, 0);
    REQUIRE(ctx.has_value());
    fake_gpu& f = fake_gpu::get();
    {
      auto scope = cuda_context_scope::enter(*d, ctx->get());
      REQUIRE(scope.has_value());
      CHECK(scope->switched());
      CHECK(scope->previous() == nullptr);
      CHECK(f.context_switches == 1);
      {
        cuda_context_scope moved(std::move(*scope));
        CHECK(moved.switched());
        CHECK(moved.previous() == nullptr);
        CHECK_FALSE(scope->switched());
        CHECK(fake_gpu::current() == ctx->get());
      }
      CHECK(fake_gpu::current() == nullptr);  // restored by the scope it moved to
      CHECK(f.context_switches == 2);
    }
    CHECK(f.context_switches == 2);  // the moved-from scope restores nothing
  }

  TEST_CASE("a failing cuCtxGetCurrent is reported, naming it, and nothing is switched") {
    fake_gpu::reset();
    cuda_driver_api api = test::fake_api();
    api.ctx_get_current = [](CUcontext*) -> CUresult { return CUDA_ERROR_DEINITIALIZED; };
    auto d = cuda_driver::from_api(api, "fake driver");
    REQUIRE(d.has_value());
    auto ctx = cuda_primary_context::retain(*d, 0);
    REQUIRE(ctx.has_value());
    auto scope = ctx->make_current();
    REQUIRE_FALSE(scope.has_value());
    CHECK(scope.error().code() == errc::unavailable);
    CHECK(scope.error().message() ==
          "cuCtxGetCurrent: CUDA_ERROR_DEINITIALIZED (driver shutting down)");
    CHECK(fake_gpu::get().context_switches == 0);
  }
}
