// SPDX-License-Identifier: Apache-2.0
// Tests of the core vocabulary (include/xlamem/*.hpp): error.hpp, align.hpp, version.hpp,
// checked.hpp, input_file.hpp and compact_vector.hpp.
#include <doctest/doctest.h>

#include <algorithm>

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/reliability_helpers.hpp"
#include "xlamem/compact_vector.hpp"
#include "xlamem/xlamem.hpp"

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

  TEST_CASE("compact_vector: in place up to 8 bytes, then one heap block; copies, moves, compares") {
    using ids = xlamem::compact_vector<std::uint32_t>;
    static_assert(sizeof(ids) == 16 && ids::inline_capacity == 2);
    ids v;
    CHECK(v.empty());
    v.push_back(7);
    v.push_back(8);
    CHECK(v.capacity() == 2);  // still in place
    CHECK(v == std::vector<std::uint32_t>{7, 8});
    for (std::uint32_t k = 0; k < 1000; ++k) v.push_back(k);
    REQUIRE(v.size() == 1002);
    CHECK(v.front() == 7);
    CHECK(v.back() == 999);
    CHECK(v[502] == 500);
    CHECK(v.at(3) == 1);
    CHECK_THROWS_AS((void)v.at(1002), std::out_of_range);
    ids copy = v;
    CHECK(copy == v);
    copy[0] = 1;
    CHECK(v[0] == 7);  // deep copy
    ids moved = std::move(copy);
    CHECK(moved.size() == 1002);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from vector is empty
    ids small{1};
    moved = small;  // heap -> in place by copy
    CHECK(moved == std::vector<std::uint32_t>{1});
    small = std::move(v);  // in place <- heap by move
    CHECK(small.size() == 1002);
    small.resize(3);
    CHECK(small == std::vector<std::uint32_t>{7, 8, 0});
    small.resize(5);
    CHECK(small == std::vector<std::uint32_t>{7, 8, 0, 0, 0});  // new elements are zero
    small.clear();
    CHECK(small.empty());
    xlamem::compact_vector<std::int64_t> dims{16};
    CHECK(dims.capacity() == 1);
    const std::span<const std::int64_t> view = dims;
    CHECK(view.size() == 1);
    CHECK(view[0] == 16);
    // insert: in place, at the front, in the middle, at the end, and across the move to the heap.
    ids sorted;
    for (const std::uint32_t x : {5u, 1u, 3u, 9u, 7u}) sorted.insert(std::lower_bound(sorted.begin(), sorted.end(), x), x);
    CHECK(sorted == std::vector<std::uint32_t>{1, 3, 5, 7, 9});
    CHECK(*sorted.insert(sorted.end(), 10) == 10);
    CHECK(*sorted.insert(sorted.begin(), 0) == 0);
    CHECK(sorted == std::vector<std::uint32_t>{0, 1, 3, 5, 7, 9, 10});
  }

  TEST_CASE("version") {
    CHECK(version.major == XLAMEM_VERSION_MAJOR);
    CHECK(std::string(version_string) == "0.1.0");
  }
}

TEST_SUITE("reliability/checked") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("checked_add and checked_mul refuse what does not fit, signed and unsigned") {
    CHECK(checked_add<std::uint64_t>(UINT64_MAX - 1, 1) == UINT64_MAX);
    CHECK(!checked_add<std::uint64_t>(UINT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_add<std::int64_t>(INT64_MIN, INT64_MAX) == -1);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 62, 4) == std::nullopt);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 31, std::uint64_t{1} << 32) == std::uint64_t{1} << 63);
    CHECK(checked_mul<std::int64_t>(INT64_MIN, 1) == INT64_MIN);
    CHECK(!checked_mul<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_mul<std::int64_t>(-3, 4) == -12);
    std::uint64_t total = 0;
    CHECK(checked_accumulate(total, max_total_bytes, max_total_bytes));
    CHECK(!checked_accumulate(total, std::uint64_t{1}, max_total_bytes));
    CHECK(total == max_total_bytes);
  }

  TEST_CASE("quote_token keeps a bounded prefix of a token") {
    CHECK(quote_token("abc") == "'abc'");
    const std::string big(5'000'000, 'x');
    const auto q = quote_token(big);
    CHECK(q.size() < max_quoted_chars + 8);
    CHECK(contains(q, "\xE2\x80\xA6"));
    CHECK(quote_token("a\nb\x01") == "'a\\nb?'");
  }
}

TEST_SUITE("reliability/input") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("readers take only regular files, within the size limit") {
    const std::string dir = fs::temp_directory_path().string();
    auto r = read_input_file(dir);
    REQUIRE(!r);
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(contains(r.error().message(), dir + ": is a directory"));
    if (fs::exists("/dev/zero")) {
      r = read_input_file("/dev/zero");
      REQUIRE(!r);
      CHECK(contains(r.error().message(), "/dev/zero: is not a regular file"));
      CHECK(!hlo::read_module_file("/dev/zero"));
      CHECK(!read_interval_csv_file("/dev/zero"));
      CHECK(!read_memory_terms_csv_file("/dev/zero"));
      CHECK(!read_buffer_assignment_dump("/dev/zero"));
    }
    r = read_input_file(dir + "/xlamem-no-such-file");
    REQUIRE(!r);
    CHECK(r.error().code() == errc::not_found);
    const auto f = temp_file("limit.txt", std::string(100, 'a'));
    r = read_input_file(f.string(), input_limits{99});
    REQUIRE(!r);
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(contains(r.error().message(), "larger than the limit of 99 bytes"));
    r = read_input_file(f.string(), input_limits{100});
    REQUIRE(r.has_value());
    CHECK(r->size() == 100);
    auto m = hlo::read_module_file(dir);
    REQUIRE(!m);
    CHECK(contains(m.error().message(), "is a directory"));
    fs::remove(f);
  }
}
