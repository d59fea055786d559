// SPDX-License-Identifier: Apache-2.0
/// @file
/// A sharding solve or evaluation for people and programs (`xlamem shard`): `sharding_text`
/// and `sharding_evaluation_text` write the summaries; `visit_fields` of `sharding_report` and
/// `sharding_evaluation_report` give their JSON (`io/codec/json.hpp`). Costs and usages are 128-bit
/// sums, so the JSON carries them as decimal strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/problem.hpp"
#include "xlamem/sharding/solver.hpp"

namespace xlamem {

/// One solve, as reported.
struct sharding_report {
  std::string file;
  const sharding::problem* problem = nullptr;
  const sharding::solve_result* result = nullptr;
  unsigned threads = 1;
  double time_limit = 0;
  double seconds_reading = 0;  ///< already included in the result's times
  std::optional<std::string> output;
  std::optional<std::uint64_t> work_limit;  ///< steps, when the run was paced in steps
  std::uint64_t seed = 1;
};

/// The JSON fields of a solve.
template <class F>
void visit_fields(const sharding_report& x, F&& f) {
  const auto& r = *x.result;
  f("file", x.file);
  f("status", std::string(to_string(r.status)));
  f("cost", r.cost.to_string());
  f("feasible", r.feasible);
  f("forbidden_choices", r.forbidden_choices);
  f("peak", r.peak.to_string());
  f("limit", x.problem->limit);
  f("lower_bound", r.lower_bound ? std::optional<std::string>(r.lower_bound->to_string()) : std::nullopt);  // null: unknown
  f("gap", r.gap);
  f("internal_error", r.internal_error.empty() ? std::nullopt : std::optional<std::string>(r.internal_error));
  f("seconds", r.seconds);
  f("seconds_reading", x.seconds_reading);
  f("seconds_to_first_feasible", r.seconds_to_first_feasible);
  f("seconds_to_best", r.seconds_to_best);
  f("time_limit", x.time_limit);
  f("threads", x.threads);
  f("work_limit", x.work_limit);
  f("seed", x.seed);
  f("nodes", x.problem->node_count());
  f("edges", x.problem->edge_count());
  f("variables_after_presolve", r.variables);
  f("relaxation_steps", r.relaxation_steps);
  f("search_steps", r.search.steps);
  f("output", x.output);
}

namespace detail {
inline std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
}  // namespace detail

/// The solve for people.
[[nodiscard]] inline std::string sharding_text(const sharding_report& x) {
  const auto& r = *x.result;
  const auto& p = *x.problem;
  std::string s = x.file + ": " + std::to_string(p.node_count()) + " nodes, " + std::to_string(p.edge_count()) +
                  " edges, limit " + std::to_string(p.limit) + "; presolved to " + std::to_string(r.variables) +
                  " variables; " + std::to_string(x.threads) + (x.threads == 1 ? " thread, " : " threads, ") +
                  detail::fixed2(x.time_limit) + " s" +
                  (x.work_limit ? ", at most " + std::to_string(*x.work_limit) + " steps, seed " + std::to_string(x.seed) : "") + "\n";
  s += "status:      " + std::string(to_string(r.status)) + "\n";
  s += "cost:        " + r.cost.to_string();
  if (r.forbidden_choices != 0) s += " (" + std::to_string(r.forbidden_choices) + " forbidden choices)";
  s += "\npeak usage:  " + r.peak.to_string() + " of the limit " + std::to_string(p.limit) +
       (r.feasible ? " (within the limit)\n" : " (over the limit)\n");
  if (r.lower_bound && r.gap) {
    s += "lower bound: " + r.lower_bound->to_string() + " (gap " + detail::fixed2(100.0 * *r.gap) + " %)\n";
  } else if (r.feasible && r.forbidden_choices == 0) {
    s += "lower bound: unknown\n";
  }
  if (!r.internal_error.empty()) s += "internal error: " + r.internal_error + "\n";
  s += "time:        read " + detail::fixed2(x.seconds_reading) + " s, first feasible " +
       detail::fixed2(r.seconds_to_first_feasible) + " s, best " + detail::fixed2(r.seconds_to_best) + " s, total " +
       detail::fixed2(r.seconds) + " s\n";
  if (x.output) s += "wrote " + *x.output + "\n";
  return terminal_text(s);  // file names come from the user
}

/// One evaluated solution, as reported.
struct sharding_evaluation_report {
  std::string file;
  std::string solution;
  const sharding::problem* problem = nullptr;
  const sharding::evaluation* evaluation = nullptr;
};

/// The JSON fields of an evaluation.
template <class F>
void visit_fields(const sharding_evaluation_report& x, F&& f) {
  const auto& e = *x.evaluation;
  f("file", x.file);
  f("solution", x.solution);
  f("cost", e.cost.to_string());
  f("node_cost", e.node_cost.to_string());
  f("edge_cost", e.edge_cost.to_string());
  f("feasible", e.feasible);
  f("forbidden_choices", e.forbidden_choices);
  f("peak", e.peak_usage.to_string());
  f("peak_time", e.peak_time);
  f("first_over_limit", e.first_over_limit);
  f("limit", x.problem->limit);
}

/// The evaluation for people.
[[nodiscard]] inline std::string sharding_evaluation_text(const sharding_evaluation_report& x) {
  const auto& e = *x.evaluation;
  std::string s = "cost:        " + e.cost.to_string();
  if (e.forbidden_choices != 0) s += " (" + std::to_string(e.forbidden_choices) + " forbidden choices)";
  s += "\npeak usage:  " + e.peak_usage.to_string() + " at time step " + std::to_string(e.peak_time) + " of the limit " +
       std::to_string(x.problem->limit);
  s += e.first_over_limit ? " (over the limit from time step " + std::to_string(*e.first_over_limit) + ")\n"
                          : std::string(" (within the limit)\n");
  return terminal_text(s);  // file names come from the user
}

}  // namespace xlamem
