// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/deadline.hpp: what a time limit means (0 at once, infinity none,
// negative and NaN refused), the cancellation flag kept through every derived deadline, and
// the strided watch that reads the clock and the flag.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "xlamem/deadline.hpp"

// Inside the suite (a namespace), so the directive stays out of the other files of the core
// area's unity build.
TEST_SUITE("core/deadline") {
  using namespace xlamem;

  TEST_CASE("a time limit: 0 is a deadline already passed, infinity none, a number of seconds that many later") {
    const auto start = solve_clock::now();
    CHECK(*deadline_after(start, 0.0) == start);
    CHECK(deadline_passed(deadline_after(solve_clock::now(), 0.0)));
    CHECK(*deadline_after(start, 2.0) - start == std::chrono::seconds(2));
    CHECK_FALSE(deadline_after(start, std::numeric_limits<double>::infinity()).has_value());
    CHECK_FALSE(deadline_after(start, 1e300).has_value());  // beyond the clock: no limit
    // What is refused is never unbounded, should a caller skip the check.
    CHECK(*deadline_after(start, std::nan("")) == start);
    CHECK(*deadline_after(start, -1.0) == start);
    CHECK(time_limit_error(std::nan("")) == std::string("the time limit is not a number; give seconds (0: at once, infinity: no limit)"));
    CHECK(std::string(time_limit_error(-0.5)).find("negative") != std::string::npos);
    CHECK(time_limit_error(0.0) == nullptr);
    CHECK(time_limit_error(std::numeric_limits<double>::infinity()) == nullptr);
  }

  TEST_CASE("the cancellation flag: read with the clock, kept by every derived deadline") {
    const auto start = solve_clock::now();
    cancellation_flag flag{false};
    solve_deadline given;
    given.cancel = &flag;
    const auto d = deadline_or_after(given, start, 5.0);
    CHECK(d.has_value());
    CHECK(d.cancel == &flag);
    CHECK(deadline_or_after(given, start, std::numeric_limits<double>::infinity()).cancel == &flag);
    CHECK(deadline_before(d, std::chrono::seconds(1)).cancel == &flag);
    CHECK(*deadline_before(d, std::chrono::seconds(1)) == *d - std::chrono::seconds(1));
    CHECK_FALSE(deadline_before(given, std::chrono::seconds(1)).has_value());  // none stays none
    const solve_deadline at(start + std::chrono::hours(1));
    CHECK(*deadline_or_after(at, start, 5.0) == *at);  // a given time wins over the limit
    CHECK_FALSE(deadline_passed(given));
    CHECK(given.watched());
    CHECK_FALSE(solve_deadline{}.watched());
    flag.store(true);
    CHECK(given.cancelled());
    CHECK(deadline_passed(given));
    CHECK(deadline_passed(d));
    given.reset();
    CHECK(given.cancel == nullptr);
    CHECK_FALSE(given.has_value());
  }

  TEST_CASE("the watch reads once per stride of work and stays passed") {
    cancellation_flag flag{false};
    deadline_watch watch(solve_deadline(std::nullopt, &flag), 4);
    CHECK_FALSE(watch.passed(8));  // a flag alone makes the watch count: clear so far
    flag.store(true);
    CHECK_FALSE(watch.passed(1));  // read once every stride
    CHECK(watch.passed(3));
    CHECK(watch.seen_passed());
    flag.store(false);
    CHECK(watch.passed(1));  // once passed, passed: nested loops all stop
    CHECK_FALSE(deadline_watch(solve_deadline{}, 1).passed(8));  // no limit, no flag: never
    deadline_watch late(solve_clock::now() - std::chrono::seconds(1), 3);
    CHECK_FALSE(late.passed(2));
    CHECK(late.passed(1));
  }
}
