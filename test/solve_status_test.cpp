// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/solve_status.hpp: six words, each printed once, four with an answer.
#include <doctest/doctest.h>

#include <set>
#include <string_view>

#include "xlamem/solve_status.hpp"

using xlamem::solve_status;

TEST_SUITE("core/solve_status") {
  TEST_CASE("every status has its own word; the four with an answer are the ones that say so") {
    const solve_status all[] = {solve_status::optimal,    solve_status::feasible,   solve_status::time_limit,
                                solve_status::work_limit, solve_status::infeasible, solve_status::no_answer};
    std::set<std::string_view> words;
    for (const auto s : all) words.insert(xlamem::to_string(s));
    CHECK(words == std::set<std::string_view>{"optimal", "feasible", "time_limit", "work_limit", "infeasible", "no_answer"});
    CHECK(xlamem::has_answer(solve_status::optimal));
    CHECK(xlamem::has_answer(solve_status::feasible));
    CHECK(xlamem::has_answer(solve_status::time_limit));
    CHECK(xlamem::has_answer(solve_status::work_limit));
    CHECK_FALSE(xlamem::has_answer(solve_status::infeasible));
    CHECK_FALSE(xlamem::has_answer(solve_status::no_answer));
    static_assert(xlamem::to_string(solve_status::infeasible) == "infeasible");
    CHECK(xlamem::answer_status(true, true) == solve_status::optimal);  // a proof outranks the clock
    CHECK(xlamem::answer_status(false, true) == solve_status::time_limit);
    CHECK(xlamem::answer_status(false, false) == solve_status::feasible);
  }
}
