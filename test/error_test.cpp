// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/error.hpp: errc names, error values and their context, result<T> and
// result<void> (values, errors, chaining, copies), and the exceptions throw_error picks.
#include <doctest/doctest.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"

TEST_SUITE("core") {
  using namespace xlamem;

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
}

TEST_SUITE("core/error") {
  using namespace xlamem;

  TEST_CASE("the twelve codes: numbered from 1, each name its own, unknown values named so") {
    static_assert(static_cast<int>(errc::invalid_argument) == 1 && static_cast<int>(errc::internal) == 12);
    const std::vector<std::string_view> names = {
        "invalid_argument", "not_found",         "already_exists", "resource_exhausted",
        "out_of_memory",    "failed_precondition", "out_of_range",  "parse_error",
        "unavailable",      "deadline_exceeded", "unimplemented",  "internal"};
    for (int c = 1; c <= 12; ++c) CHECK(to_string(static_cast<errc>(c)) == names[static_cast<std::size_t>(c - 1)]);
    CHECK(to_string(static_cast<errc>(0)) == "unknown");
    CHECK(to_string(static_cast<errc>(13)) == "unknown");
    static_assert(to_string(errc::deadline_exceeded) == "deadline_exceeded");  // constexpr
  }

  TEST_CASE("error: code, message, to_string, context in front, equality of both parts") {
    const error e = make_error(errc::not_found, "weights.bin");
    CHECK(e.code() == errc::not_found);
    CHECK(e.message() == "weights.bin");
    CHECK(e.to_string() == "not_found: weights.bin");
    const error wrapped = e.with_context("loading the model").with_context("xlamem plan");
    CHECK(wrapped.code() == errc::not_found);
    CHECK(wrapped.message() == "xlamem plan: loading the model: weights.bin");
    CHECK(e.message() == "weights.bin");  // with_context copies
    CHECK(e == error(errc::not_found, "weights.bin"));
    CHECK_FALSE(e == error(errc::not_found, "weights.bi"));
    CHECK_FALSE(e == error(errc::invalid_argument, "weights.bin"));
    CHECK(error(errc::internal, "").to_string() == "internal: ");
  }

  TEST_CASE("throw_error: out_of_memory for both memory codes, exception carrying the error otherwise") {
    for (const errc code : {errc::out_of_memory, errc::resource_exhausted}) {
      try {
        throw_error(error(code, "pool 'p' is empty"));
        FAIL("throw_error returned");
      } catch (const xlamem::out_of_memory& e) {
        CHECK(std::string(e.what()) == std::string(to_string(code)) + ": pool 'p' is empty");
        const xlamem::out_of_memory copy = e;  // copies share the message
        CHECK(copy.what() == e.what());
      }
    }
    try {
      throw_error(error(errc::deadline_exceeded, "planning took 30 s"));
      FAIL("throw_error returned");
    } catch (const xlamem::exception& e) {
      CHECK(e.get() == error(errc::deadline_exceeded, "planning took 30 s"));
      CHECK(std::string(e.what()) == "deadline_exceeded: planning took 30 s");
    }
    static_assert(std::is_base_of_v<std::bad_alloc, xlamem::out_of_memory>);
    static_assert(std::is_base_of_v<std::exception, xlamem::exception>);
    static_assert(!std::is_base_of_v<std::bad_alloc, xlamem::exception>);
    static_assert(std::is_nothrow_copy_constructible_v<xlamem::out_of_memory>);
  }

  TEST_CASE("bad_result_access carries the error and prints it as code: message") {
    const result<std::string> r(errc::out_of_range, "index 9 of 3");
    try {
      (void)r.value();
      FAIL("value() of an error returned");
    } catch (const bad_result_access& e) {
      CHECK(e.get() == error(errc::out_of_range, "index 9 of 3"));
      CHECK(std::string(e.what()) == "out_of_range: index 9 of 3");
    }
    result<void> v(errc::unimplemented, "no such backend");
    CHECK_THROWS_WITH_AS(v.value(), "unimplemented: no such backend", bad_result_access);
    result<std::vector<int>> moved(errc::internal, "gone");
    CHECK_THROWS_AS((void)std::move(moved).value(), bad_result_access);
  }

  TEST_CASE("result<T>: access through *, ->, value() on lvalues, const and rvalues") {
    result<std::string> r = std::string("abc");
    CHECK(r->size() == 3);
    r->push_back('d');
    *r += "e";
    r.value() += "f";
    CHECK(*r == "abcdef");
    const result<std::string>& c = r;
    CHECK(c->front() == 'a');
    CHECK(c.value() == "abcdef");
    CHECK(c.value_or("zz") == "abcdef");
    const std::string taken = *std::move(r);
    CHECK(taken == "abcdef");
    const result<std::string> none(errc::not_found, "x");
    CHECK(none.value_or("fallback") == "fallback");
    // A value convertible to T, and an error given as a code and message or as an error.
    result<double> d = 3;
    CHECK(*d == 3.0);
    result<int> e1 = make_error(errc::already_exists, "dup");
    result<int> e2(errc::already_exists, "dup");
    CHECK(e1.error() == e2.error());
  }

  TEST_CASE("and_then on lvalues, const lvalues and rvalues; an error skips the function") {
    int calls = 0;
    const auto length = [&](const std::string& s) -> result<std::size_t> {
      ++calls;
      return s.size();
    };
    result<std::string> r = std::string("four");
    CHECK(*r.and_then(length) == 4);
    const result<std::string>& cr = r;
    CHECK(*cr.and_then(length) == 4);
    CHECK(*std::move(r).and_then([](std::string&& s) -> result<std::string> { return std::move(s) + "!"; }) ==
          "four!");
    CHECK(calls == 2);
    const result<std::string> bad(errc::parse_error, "line 1");
    const auto skipped = bad.and_then(length);
    CHECK(calls == 2);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(skipped)>, result<std::size_t>>);
    CHECK(skipped.error() == error(errc::parse_error, "line 1"));
    // and_then into result<void>.
    const auto check_positive = [](int x) -> result<void> {
      if (x <= 0) return error(errc::invalid_argument, "not positive");
      return {};
    };
    CHECK(result<int>(3).and_then(check_positive).has_value());
    CHECK(result<int>(-3).and_then(check_positive).error().message() == "not positive");
  }

  TEST_CASE("transform to void and from rvalues; transform_error leaves a value alone") {
    int seen = 0;
    const result<int> three = 3;
    const auto t = three.transform([&](int x) { seen = x; });
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(t)>, result<void>>);
    CHECK(t.has_value());
    CHECK(seen == 3);
    result<std::unique_ptr<int>> p = std::make_unique<int>(8);
    const auto doubled = std::move(p).transform([](std::unique_ptr<int>&& q) { return *q * 2; });
    CHECK(*doubled == 16);
    result<int> ok = 5;
    const auto unchanged = std::move(ok).transform_error([](const error&) { return error(errc::internal, "never"); });
    CHECK(*unchanged == 5);
    const result<int> failed(errc::unavailable, "gpu");
    const auto skipped = failed.transform([&](int) { seen = -1; });
    CHECK(seen == 3);
    CHECK(skipped.error().message() == "gpu");
  }

  TEST_CASE("result<void>: copies are deep, assignment both ways, transform and and_then") {
    result<void> ok;
    result<void> failed(errc::failed_precondition, "not started");
    result<void> copy = failed;
    CHECK(copy.error() == failed.error());
    CHECK(&copy.error() != &failed.error());  // its own error
    copy = ok;
    CHECK(copy.has_value());
    copy = failed;
    CHECK_FALSE(copy.has_value());
    const result<void>& same = copy;
    copy = same;  // self copy keeps the error
    CHECK(copy.error().message() == "not started");
    result<void> moved = std::move(copy);
    CHECK(moved.error().code() == errc::failed_precondition);
    CHECK_FALSE(static_cast<bool>(moved));
    CHECK(static_cast<bool>(ok));
    int ran = 0;
    CHECK(ok.transform([&] { ++ran; }).has_value());
    CHECK(ran == 1);
    CHECK(*ok.transform([] { return 7; }) == 7);
    CHECK(failed.and_then([&] { ++ran; return result<void>(); }).error().message() == "not started");
    CHECK(ran == 1);
    CHECK(sizeof(result<void>) == sizeof(void*));  // success is one null pointer
  }
}
