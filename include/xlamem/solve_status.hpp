// SPDX-License-Identifier: Apache-2.0
/// @file
/// The status words every anytime solver reports (packing, sharding, the auto-sharding
/// builder), one meaning each. Four say there is an answer and why the search ended with it;
/// two say there is none, and whether that is proven.
#pragma once

#include <string_view>

namespace xlamem {

enum class solve_status {
  optimal,     ///< an answer within every constraint, proven best
  feasible,    ///< an answer within every constraint; the solver ran its course without proving it best
  time_limit,  ///< an answer within every constraint: the best found when the time limit (or a
               ///< cancellation) ended the search
  work_limit,  ///< an answer within every constraint: the best found when the work limit ended the search
  infeasible,  ///< proven: no answer within the constraints exists
  no_answer,   ///< none within the constraints was found, and none is proven impossible
};

/// The word as the tools print it ("optimal", "feasible", "time_limit", "work_limit",
/// "infeasible", "no_answer").
[[nodiscard]] constexpr std::string_view to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::optimal: return "optimal";
    case solve_status::feasible: return "feasible";
    case solve_status::time_limit: return "time_limit";
    case solve_status::work_limit: return "work_limit";
    case solve_status::infeasible: return "infeasible";
    case solve_status::no_answer: return "no_answer";
  }
  return "unknown";
}

/// The status of an answer within every constraint: `optimal` when proven so, else
/// `time_limit` when the clock (or a cancellation) ended the search, else `feasible`.
[[nodiscard]] constexpr solve_status answer_status(bool proven_optimal, bool stopped_by_time_limit) noexcept {
  return proven_optimal ? solve_status::optimal : stopped_by_time_limit ? solve_status::time_limit : solve_status::feasible;
}

/// Whether `s` comes with an answer within every constraint.
[[nodiscard]] constexpr bool has_answer(solve_status s) noexcept {
  return s == solve_status::optimal || s == solve_status::feasible || s == solve_status::time_limit ||
         s == solve_status::work_limit;
}

}  // namespace xlamem
