// SPDX-License-Identifier: Apache-2.0
/// @file
/// From a program (program.hpp) on a device mesh to the sharding problem `solve` takes, and from
/// its answer back to a sharding per operation: XLA's auto-sharding, on the library's own
/// solver.
///
/// - A node per operation, a strategy per `op_strategies` entry. Its cost is the strategy's
///   time (compute and finishing collectives) in nanoseconds; its usage is the bytes of its
///   result's shard on one device, over the operation's live interval, so the solver's memory
///   limit is a limit on the per-device peak of the values held.
/// - An edge per use of an operand: for each strategy of the operand and each of the user, the
///   time of moving the operand's result into the layout the user's strategy reads
///   (`resharding`, sharding/collectives.hpp).
/// - `auto_shard` builds, solves and reads the answer back: the sharding of every operation,
///   the predicted per-device peak and when it happens, and the collectives the answer runs by
///   kind, with the solver's status, lower bound and gap.
///
/// Costs are whole nanoseconds: a strategy below half a nanosecond costs 0, and a cost above
/// `forbidden_cost` nanoseconds (31 years) is clamped just below it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/collectives.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/problem.hpp"
#include "xlamem/sharding/program.hpp"
#include "xlamem/sharding/solver.hpp"
#include "xlamem/sharding/strategies.hpp"

namespace xlamem::sharding {

/// Seconds per unit of cost in the built problem.
inline constexpr double seconds_per_cost_unit = 1e-9;

/// The problem built from a program, with what maps an answer back.
struct program_problem {
  sharding::problem problem;                          ///< node i is operation i
  std::vector<std::vector<op_strategy>> strategies;   ///< per operation
  std::vector<std::size_t> edge_operand;              ///< per edge: which operand slot of its user
};

namespace detail {

/// `seconds` as a cost.
[[nodiscard]] inline cost_type to_cost(double seconds) noexcept {
  const double units = std::round(seconds / seconds_per_cost_unit);
  if (!(units < static_cast<double>(forbidden_cost))) return forbidden_cost - 1;
  return units > 0 ? static_cast<cost_type>(units) : 0;
}

/// The edge matrix of operand slot `k` of operation `user`: the cost of moving each of the
/// operand's results into the layout each of the user's strategies reads. Distinct layouts
/// are priced once.
[[nodiscard]] inline result<std::vector<cost_type>> operand_matrix(const std::vector<op_strategy>& from,
                                                                   const std::vector<op_strategy>& to, std::size_t k,
                                                                   const array_shape& shape, const device_mesh& mesh,
                                                                   const machine_model& machine) {
  std::vector<const tensor_sharding*> wanted;     // distinct layouts the user reads
  std::vector<std::size_t> wanted_of(to.size());  // per user strategy: its index in `wanted`
  for (std::size_t t = 0; t < to.size(); ++t) {
    const tensor_sharding& w = to[t].operands[k];
    std::size_t j = 0;
    while (j < wanted.size() && !(*wanted[j] == w)) ++j;
    if (j == wanted.size()) wanted.push_back(&w);
    wanted_of[t] = j;
  }
  std::vector<cost_type> priced(from.size() * wanted.size());
  for (std::size_t f = 0; f < from.size(); ++f) {
    for (std::size_t j = 0; j < wanted.size(); ++j) {
      auto c = resharding(shape, from[f].output, *wanted[j], mesh, machine);
      if (!c) return c.error();
      priced[f * wanted.size() + j] = to_cost(c->seconds);
    }
  }
  std::vector<cost_type> matrix(from.size() * to.size());
  for (std::size_t f = 0; f < from.size(); ++f) {
    for (std::size_t t = 0; t < to.size(); ++t) matrix[f * to.size() + t] = priced[f * wanted.size() + wanted_of[t]];
  }
  return matrix;
}

}  // namespace detail

/// The sharding problem of `program` on `mesh` and `machine` under a per-device limit of
/// `memory_limit` bytes (see the file comment). Errors name the operation at fault.
template <shardable_program P>
[[nodiscard]] result<program_problem> build_program_problem(const P& program, const device_mesh& mesh,
                                                            const machine_model& machine, usage_type memory_limit,
                                                            std::size_t max_strategies = default_max_strategies) {
  using traits = program_traits<P>;
  if (auto ok = check_program(program); !ok) return ok.error();
  if (auto ok = check_machine(machine, mesh); !ok) return ok.error();
  if (memory_limit < 0) return make_error(errc::invalid_argument, "the memory limit is negative");
  program_problem out;
  out.problem.limit = memory_limit;
  const std::size_t n = traits::op_count(program);
  out.strategies.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const program_op& op = traits::op(program, i);
    auto st = op_strategies(op, mesh, machine, max_strategies);
    if (!st) return st.error();
    std::vector<cost_type> costs;
    std::vector<usage_type> usages;
    for (const auto& s : *st) {
      costs.push_back(detail::to_cost(s.seconds()));
      usages.push_back(shard_bytes(s.output, op.shape, mesh));
    }
    out.problem.add_node(op.live, costs, usages);
    out.strategies.push_back(std::move(*st));
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const std::size_t u = op.operands[k];
      auto matrix = detail::operand_matrix(out.strategies[u], out.strategies[i], k, op.operand_shapes[k], mesh, machine);
      if (!matrix) return matrix.error().with_context("operation '" + op.name + "'s operand " + std::to_string(k));
      out.problem.add_edge(u, i, *matrix);
      out.edge_operand.push_back(k);
    }
  }
  return out;
}

/// What `auto_shard` is asked.
struct auto_shard_options {
  usage_type memory_limit = std::numeric_limits<usage_type>::max();  ///< bytes per device
  std::size_t max_strategies = default_max_strategies;               ///< per operation
  solve_options solve;                                               ///< time limit, threads, seed
};

/// The collectives of one kind an answer runs, on one device.
struct collective_total {
  std::size_t count = 0;
  double seconds = 0;
  double bytes_sent = 0;
};

/// The answer for a program.
struct auto_shard_result {
  solve_result solve;                          ///< status, cost, bound and gap of the solve
  std::vector<tensor_sharding> shardings;      ///< per operation: its result's layout
  std::vector<std::size_t> strategy;           ///< per operation: the chosen strategy
  std::int64_t peak_bytes = 0;                 ///< the predicted per-device peak of values held
  std::int64_t peak_time = 0;                  ///< the first time step at that peak
  double compute_seconds = 0;                  ///< one device's compute
  double communication_seconds = 0;            ///< one device's collectives
  std::array<collective_total, 5> collectives{};  ///< by `collective_kind`
};

/// The shardings, peak and collectives of `assignment` for `built` (one strategy per operation).
template <shardable_program P>
[[nodiscard]] result<auto_shard_result> read_answer(const P& program, const program_problem& built,
                                                    const assignment& chosen, const device_mesh& mesh,
                                                    const machine_model& machine) {
  using traits = program_traits<P>;
  if (auto ok = check_assignment(built.problem, chosen); !ok) return ok.error();
  auto_shard_result out;
  out.strategy = chosen;
  const auto add = [&](const collective_step& s) {
    auto& t = out.collectives[static_cast<std::size_t>(s.kind)];
    ++t.count;
    t.seconds += s.seconds;
    t.bytes_sent += s.bytes_sent;
    out.communication_seconds += s.seconds;
  };
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const op_strategy& s = built.strategies[i][chosen[i]];
    out.shardings.push_back(s.output);
    out.compute_seconds += s.compute_seconds;
    for (const auto& step : s.finish) add(step);
  }
  for (std::size_t e = 0; e < built.problem.edge_count(); ++e) {
    const auto [u, v] = built.problem.edge_nodes(e);
    const std::size_t k = built.edge_operand[e];
    const op_strategy& to = built.strategies[v][chosen[v]];
    auto moved = resharding(traits::op(program, v).operand_shapes[k], out.shardings[u], to.operands[k], mesh, machine);
    if (!moved) return moved.error();
    for (const auto& step : moved->steps) add(step);
  }
  auto scored = evaluate(built.problem, chosen);
  if (!scored) return scored.error();
  out.peak_bytes = scored->peak_usage.to_int64();  // a sum of shard bytes of live values
  out.peak_time = scored->peak_time;
  return out;
}

/// Shards `program` on `mesh` and `machine` within `options.memory_limit` bytes per device at
/// the least time (see the file comment). When no sharding fits, the least-usage answer comes
/// back with status `over_limit` and the error-free result says so; errors are for bad input.
template <shardable_program P>
[[nodiscard]] result<auto_shard_result> auto_shard(const P& program, const device_mesh& mesh,
                                                   const machine_model& machine, const auto_shard_options& options = {}) {
  auto built = build_program_problem(program, mesh, machine, options.memory_limit, options.max_strategies);
  if (!built) return built.error();
  auto solved = solve(built->problem, options.solve);
  if (!solved) return solved.error();
  auto out = read_answer(program, *built, solved->strategies, mesh, machine);
  if (!out) return out.error();
  out->solve = std::move(*solved);
  return out;
}

}  // namespace xlamem::sharding
