// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/config.hpp: the default hooks as this build defines them (exceptions
// on, XLAMEM_THROW throws, XLAMEM_ASSERT and XLAMEM_MISUSE print their message and abort).
#include <doctest/doctest.h>

#include <csignal>
#include <stdexcept>
#include <string>

#include <sys/wait.h>

#include "support/child_process.hpp"
#include "xlamem/config.hpp"

TEST_SUITE("core/config") {
  using xlamem::test::run_in_child;

  TEST_CASE("this build has exceptions, and XLAMEM_THROW throws the expression it is given") {
    static_assert(XLAMEM_USE_EXCEPTIONS == 1);
    CHECK_THROWS_WITH_AS(XLAMEM_THROW(std::runtime_error("thrown through the hook")), "thrown through the hook",
                         std::runtime_error);
    const auto thrower = [](int code) {
      if (code != 0) XLAMEM_THROW(std::out_of_range("code " + std::to_string(code)));
      return code;
    };
    CHECK(thrower(0) == 0);
    CHECK_THROWS_WITH_AS((void)thrower(7), "code 7", std::out_of_range);
  }

  TEST_CASE("XLAMEM_ASSERT evaluates its condition once and is an expression") {
    int evaluated = 0;
    XLAMEM_ASSERT(++evaluated == 1);
    CHECK(evaluated == 1);
    const int five = (XLAMEM_ASSERT(evaluated > 0), 5);
    CHECK(five == 5);
  }

  TEST_CASE("a failed XLAMEM_ASSERT prints the condition, file and line, then aborts") {
    const int assert_line = __LINE__ + 3;
    const auto r = run_in_child([] {
      const int one = 1;
      XLAMEM_ASSERT(one + 1 == 3);
    });
    CHECK(WIFSIGNALED(r.status));
    if (WIFSIGNALED(r.status)) CHECK(WTERMSIG(r.status) == SIGABRT);
    CHECK(r.err == "xlamem: assertion failed: one + 1 == 3 (" + std::string(__FILE__) + ":" +
                       std::to_string(assert_line) + ")\n");
  }

  TEST_CASE("the default XLAMEM_MISUSE prints the message and aborts") {
    const auto r = run_in_child([] { XLAMEM_MISUSE("pool 'p': double release of block 3"); });
    CHECK(WIFSIGNALED(r.status));
    if (WIFSIGNALED(r.status)) CHECK(WTERMSIG(r.status) == SIGABRT);
    CHECK(r.err == "xlamem: misuse: pool 'p': double release of block 3\n");
    const auto fine = run_in_child([] {});  // the harness itself: a clean exit, nothing printed
    CHECK(WIFEXITED(fine.status));
    CHECK(fine.err.empty());
  }

  TEST_CASE("XLAMEM_NO_UNIQUE_ADDRESS lets an empty member take no room") {
    struct empty {};
    struct holder {
      XLAMEM_NO_UNIQUE_ADDRESS empty policy;
      int value;
    };
    static_assert(sizeof(holder) == sizeof(int));
    holder h{{}, 3};
    CHECK(h.value == 3);
  }
}
