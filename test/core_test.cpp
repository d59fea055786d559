// SPDX-License-Identifier: Apache-2.0
// Tests for the core vocabulary: error.hpp, align.hpp, version.hpp.
#include <doctest/doctest.h>

#include <memory>
#include <new>
#include <string>

#include "xlamem/xlamem.hpp"

using namespace xlamem;

TEST_SUITE("core") {
  TEST_CASE("result holds a value or an error") {
    result<int> ok = 42;
    CHECK(ok.has_value());
    CHECK(static_cast<bool>(ok));
    CHECK(*ok == 42);
    CHECK(ok.value() == 42);
    CHECK(ok.value_or(7) == 42);

    result<int> bad(errc::parse_error, "model.hlo:3:14: expected ')'");
    CHECK_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::parse_error);
    CHECK(bad.error().message() == "model.hlo:3:14: expected ')'");
    CHECK(bad.error().to_string() == "parse_error: model.hlo:3:14: expected ')'");
    CHECK(bad.value_or(7) == 7);
    CHECK_THROWS_AS((void)bad.value(), bad_result_access);
    try {
      (void)bad.value();
    } catch (const bad_result_access& e) {
      CHECK(e.get().code() == errc::parse_error);
      CHECK(std::string(e.what()).find("expected ')'") != std::string::npos);
    }
  }

  TEST_CASE("and_then and transform chain like std::expected") {
    auto half = [](int x) -> result<int> {
      if (x % 2 != 0) return error(errc::invalid_argument, "odd");
      return x / 2;
    };
    CHECK(*result<int>(8).and_then(half).and_then(half) == 2);
    auto r = result<int>(6).and_then(half).and_then(half);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "odd");

    auto s = result<int>(3).transform([](int x) { return std::to_string(x); });
    static_assert(std::is_same_v<decltype(s), result<std::string>>);
    CHECK(*s == "3");
    auto e = result<int>(errc::internal, "boom").transform([](int x) { return x + 1.0; });
    CHECK(e.error().code() == errc::internal);

    auto ctx = std::move(e).transform_error([](const error& err) { return err.with_context("ctx"); });
    CHECK(ctx.error().message() == "ctx: boom");
  }

  TEST_CASE("result of a move-only type and of void") {
    result<std::unique_ptr<int>> p = std::make_unique<int>(5);
    auto moved = std::move(p).value();
    CHECK(*moved == 5);

    result<void> fine;
    CHECK(fine.has_value());
    CHECK_NOTHROW(fine.value());
    result<void> failed = error(errc::unavailable, "no CUDA driver");
    CHECK_FALSE(failed.has_value());
    CHECK(failed.error().code() == errc::unavailable);
    result<void> copy = failed;
    CHECK(copy.error() == failed.error());
    CHECK(*fine.and_then([] { return result<int>(1); }) == 1);
    CHECK(failed.transform([] { return 2; }).error().code() == errc::unavailable);
  }

  TEST_CASE("every code has a name") {
    for (int c = static_cast<int>(errc::invalid_argument); c <= static_cast<int>(errc::internal); ++c) {
      CHECK(to_string(static_cast<errc>(c)) != "unknown");
    }
    CHECK(to_string(errc::resource_exhausted) == "resource_exhausted");
  }

  TEST_CASE("out_of_memory is a std::bad_alloc and throw_error picks the type") {
    try {
      throw_error(error(errc::out_of_memory, "pool 'p' of 4 blocks x 64 B"));
    } catch (const std::bad_alloc& e) {
      CHECK(std::string(e.what()) == "out_of_memory: pool 'p' of 4 blocks x 64 B");
    }
    CHECK_THROWS_AS(throw_error(error(errc::invalid_argument, "x")), xlamem::exception);
  }

  TEST_CASE("alignment helpers") {
    static_assert(is_power_of_two(1) && is_power_of_two(4096) && !is_power_of_two(0) &&
                  !is_power_of_two(12));
    static_assert(align_up(0, 64) == 0 && align_up(1, 64) == 64 && align_up(64, 64) == 64);
    static_assert(align_down(127, 64) == 64);
    static_assert(next_power_of_two(0) == 1 && next_power_of_two(5) == 8 &&
                  next_power_of_two(8) == 8);
    static_assert(alignment_of(96) == 32 && alignment_of(0) == 0);
    static_assert(is_aligned(std::uint64_t{256}, 256) && !is_aligned(std::uint64_t{100}, 8));
    CHECK(checked_align_up(~std::uint64_t{0}, 64) == std::nullopt);
    CHECK(checked_align_up(10, 3) == std::nullopt);
    CHECK(checked_align_up(10, 8) == std::optional<std::uint64_t>(16));
    alignas(64) char buf[128];
    CHECK(is_aligned(static_cast<void*>(buf), 64));
    CHECK(align_pointer_up(buf + 1, 64) == buf + 64);
  }

  TEST_CASE("version") {
    CHECK(version.major == XLAMEM_VERSION_MAJOR);
    CHECK(std::string(version_string) == "0.1.0");
  }
}
