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
/// - A copy node per use of an operand, held for the user's step: for each layout the user's
///   strategies read, keep it in place (no memory; allowed only where the producer made that
///   layout) or copy into it (the copy's shard bytes, and on the edge from the producer the time
///   of `resharding` into it, sharding/collectives.hpp). An all-gathered operand holds memory, as
///   it does in XLA.
/// - A scratch node per operation that may leave partial sums, following its strategy: the
///   partial sums' buffer, held for the operation's step before they are finished.
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

/// One use of an operand and the node that holds its copy when the user reads another layout.
struct operand_use {
  std::size_t producer = 0;  ///< the operation whose result is read
  std::size_t user = 0;      ///< the operation that reads it
  std::size_t slot = 0;      ///< which operand of the user
  std::size_t copy_node = 0; ///< its node: strategy 2j keeps layout j in place, 2j + 1 copies into it
  std::vector<const tensor_sharding*> wanted;  ///< the distinct layouts the user's strategies read
  std::vector<std::size_t> wanted_of;          ///< per strategy of the user: its layout in `wanted`
};

/// The problem built from a program, with what maps an answer back. Nodes `[0, op_count)` are
/// the operations; after them come a copy node per operand use and a scratch node per
/// operation that may leave partial sums.
struct program_problem {
  sharding::problem problem;
  std::size_t op_count = 0;
  std::vector<std::vector<op_strategy>> strategies;  ///< per operation
  std::vector<operand_use> uses;
  std::vector<std::size_t> scratch_node;             ///< per operation, or `no_node`
  static constexpr std::size_t no_node = static_cast<std::size_t>(-1);
};

namespace detail {

/// `seconds` as a cost.
[[nodiscard]] inline cost_type to_cost(double seconds) noexcept {
  const double units = std::round(seconds / seconds_per_cost_unit);
  if (!(units < static_cast<double>(forbidden_cost))) return forbidden_cost - 1;
  return units > 0 ? static_cast<cost_type>(units) : 0;
}

/// The distinct layouts the strategies `to` read in operand slot `k`.
inline void wanted_layouts(operand_use& use, const std::vector<op_strategy>& to) {
  use.wanted_of.resize(to.size());
  for (std::size_t t = 0; t < to.size(); ++t) {
    const tensor_sharding& w = to[t].operands[use.slot];
    std::size_t j = 0;
    while (j < use.wanted.size() && !(*use.wanted[j] == w)) ++j;
    if (j == use.wanted.size()) use.wanted.push_back(&w);
    use.wanted_of[t] = j;
  }
}

/// The one step of the user's time, or an empty interval when the user holds no memory.
[[nodiscard]] inline live_interval step_of(const program_op& op) noexcept {
  return op.live.empty() ? live_interval{} : live_interval{op.live.lower, op.live.lower + 1};
}

/// Adds the copy node of `use` and its two edges: from the producer (keeping a layout costs
/// nothing and is allowed only where the producer made it; copying costs the resharding), and
/// to the user (each user strategy reads one layout).
[[nodiscard]] inline result<void> add_copy(program_problem& out, operand_use& use, const program_op& user,
                                           const device_mesh& mesh, const machine_model& machine) {
  const auto& from = out.strategies[use.producer];
  const auto& to = out.strategies[use.user];
  const array_shape& shape = user.operand_shapes[use.slot];
  wanted_layouts(use, to);
  const std::size_t w = use.wanted.size();
  std::vector<cost_type> none(2 * w, 0);
  std::vector<usage_type> usage(2 * w, 0);
  for (std::size_t j = 0; j < w; ++j) usage[2 * j + 1] = shard_bytes(*use.wanted[j], shape, mesh);
  use.copy_node = out.problem.add_node(step_of(user), none, usage);
  // Each layout checked once, then F x W pricings without the checks (the machine was checked
  // by the caller): at 10^4 operations the checks were most of the build.
  for (std::size_t f = 0; f < from.size(); ++f) {
    if (auto ok = check_sharding(from[f].output, shape, mesh, uneven_shards::pad); !ok) {
      return ok.error().with_context("the source sharding");
    }
  }
  for (std::size_t j = 0; j < w; ++j) {
    if (auto ok = check_sharding(*use.wanted[j], shape, mesh, uneven_shards::pad); !ok) {
      return ok.error().with_context("the target sharding");
    }
  }
  std::vector<cost_type> in(from.size() * 2 * w);
  resharding_scratch scratch;
  for (std::size_t f = 0; f < from.size(); ++f) {
    for (std::size_t j = 0; j < w; ++j) {
      auto moved = resharding_of(shape, from[f].output, *use.wanted[j], mesh, machine, false, scratch);
      if (!moved) return moved.error();
      in[f * 2 * w + 2 * j] = from[f].output == *use.wanted[j] ? 0 : forbidden_cost;
      in[f * 2 * w + 2 * j + 1] = to_cost(moved->seconds);
    }
  }
  out.problem.add_edge(use.producer, use.copy_node, in);
  std::vector<cost_type> onward(2 * w * to.size(), forbidden_cost);
  for (std::size_t t = 0; t < to.size(); ++t) {
    onward[(2 * use.wanted_of[t]) * to.size() + t] = 0;
    onward[(2 * use.wanted_of[t] + 1) * to.size() + t] = 0;
  }
  out.problem.add_edge(use.copy_node, use.user, onward);
  return {};
}

/// Adds the scratch node of operation `i` when a strategy of it leaves partial sums: the same
/// strategies, holding the partial sums' buffer for the operation's step.
inline void add_scratch(program_problem& out, std::size_t i, const program_op& op) {
  const auto& st = out.strategies[i];
  std::vector<usage_type> usage(st.size(), 0);
  bool any = false;
  for (std::size_t s = 0; s < st.size(); ++s) {
    if (st[s].finish.empty()) continue;
    usage[s] = st[s].partial_bytes;
    any = true;
  }
  if (!any || op.live.empty()) return;
  out.scratch_node[i] = out.problem.add_node(step_of(op), std::vector<cost_type>(st.size(), 0), usage);
  std::vector<cost_type> same(st.size() * st.size(), forbidden_cost);
  for (std::size_t s = 0; s < st.size(); ++s) same[s * st.size() + s] = 0;
  out.problem.add_edge(i, out.scratch_node[i], same);
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
  out.op_count = n;
  out.strategies.reserve(n);
  out.scratch_node.assign(n, program_problem::no_node);
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
  }
  for (std::size_t i = 0; i < n; ++i) {
    const program_op& op = traits::op(program, i);
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      operand_use use;
      use.producer = op.operands[k];
      use.user = i;
      use.slot = k;
      if (auto ok = detail::add_copy(out, use, op, mesh, machine); !ok) {
        return ok.error().with_context("operation '" + op.name + "'s operand " + std::to_string(k));
      }
      out.uses.push_back(std::move(use));
    }
    detail::add_scratch(out, i, op);
  }
  return out;
}

/// The full assignment of `built` for one strategy per operation: each copy node keeps the
/// layout in place where the producer made the one the user reads, else copies; each scratch
/// node follows its operation.
[[nodiscard]] inline assignment complete_assignment(const program_problem& built, const assignment& per_op) {
  assignment a(built.problem.node_count(), 0);
  std::copy(per_op.begin(), per_op.begin() + static_cast<std::ptrdiff_t>(built.op_count), a.begin());
  for (const auto& use : built.uses) {
    const std::size_t j = use.wanted_of[per_op[use.user]];
    const bool same = built.strategies[use.producer][per_op[use.producer]].output == *use.wanted[j];
    a[use.copy_node] = 2 * j + (same ? 0 : 1);
  }
  for (std::size_t i = 0; i < built.op_count; ++i) {
    if (built.scratch_node[i] != program_problem::no_node) a[built.scratch_node[i]] = per_op[i];
  }
  return a;
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
  std::vector<std::size_t> strategy;           ///< per operation: the chosen strategy (copy and scratch nodes aside)
  std::int64_t peak_bytes = 0;                 ///< the predicted per-device peak of values held
  std::int64_t peak_time = 0;                  ///< the first time step at that peak
  double compute_seconds = 0;                  ///< one device's compute
  double communication_seconds = 0;            ///< one device's collectives
  std::array<collective_total, 5> collectives{};  ///< by `collective_kind`
};

/// The shardings, peak and collectives of `chosen` for `built` (one strategy per node).
template <shardable_program P>
[[nodiscard]] result<auto_shard_result> read_answer(const P& program, const program_problem& built,
                                                    const assignment& chosen, const device_mesh& mesh,
                                                    const machine_model& machine) {
  using traits = program_traits<P>;
  if (auto ok = check_assignment(built.problem, chosen); !ok) return ok.error();
  auto_shard_result out;
  out.strategy.assign(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(built.op_count));
  const auto add = [&](const collective_step& s) {
    auto& t = out.collectives[static_cast<std::size_t>(s.kind)];
    ++t.count;
    t.seconds += s.seconds;
    t.bytes_sent += s.bytes_sent;
    out.communication_seconds += s.seconds;
  };
  for (std::size_t i = 0; i < built.op_count; ++i) {
    const op_strategy& s = built.strategies[i][chosen[i]];
    out.shardings.push_back(s.output);
    out.compute_seconds += s.compute_seconds;
    for (const auto& step : s.finish) add(step);
  }
  for (const auto& use : built.uses) {
    const std::size_t c = chosen[use.copy_node];
    if (c % 2 == 0) continue;  // read in place
    auto moved = resharding(traits::op(program, use.user).operand_shapes[use.slot], out.shardings[use.producer],
                            *use.wanted[c / 2], mesh, machine);
    if (!moved) return moved.error();
    for (const auto& step : moved->steps) add(step);
  }
  auto scored = evaluate(built.problem, chosen);
  if (!scored) return scored.error();
  out.peak_bytes = scored->peak_usage.to_int64();  // a sum of shard bytes of live values
  out.peak_time = scored->peak_time;
  return out;
}

/// When the solver found nothing within the limit, its answer may keep a layout in place where
/// the producer did not make it (a forbidden choice, cheaper in memory than any real answer).
/// Every choice per operation has real answers (copies join any two), so the answer becomes
/// the least-memory one: each operation at its smallest shard, copies where needed, status
/// `no_answer` (or `infeasible`, when proven), no bound.
[[nodiscard]] inline result<void> settle_no_answer(const program_problem& built, solve_result& r) {
  if (r.feasible && r.forbidden_choices == 0) return {};
  assignment per_op(built.op_count, 0);
  for (std::size_t i = 0; i < built.op_count; ++i) {
    for (std::size_t s = 1; s < built.problem.strategy_count(i); ++s) {
      if (built.problem.node_usage(i, s) < built.problem.node_usage(i, per_op[i])) per_op[i] = s;
    }
  }
  r.strategies = complete_assignment(built, per_op);
  auto e = evaluate(built.problem, r.strategies);
  if (!e) return e.error();
  if (e->allowed()) r.status = solve_status::time_limit;
  else if (r.status != solve_status::infeasible) r.status = solve_status::no_answer;  // a proof stays
  r.cost = e->cost;
  r.peak = e->peak_usage;
  r.feasible = e->feasible;
  r.forbidden_choices = e->forbidden_choices;
  r.lower_bound.reset();
  r.gap.reset();
  return {};
}

/// Shards `program` on `mesh` and `machine` within `options.memory_limit` bytes per device at
/// the least time (see the file comment). When no sharding fits, the least-usage answer comes
/// back with status `no_answer` (or `infeasible`) and the error-free result says so; errors are for bad input.
template <shardable_program P>
[[nodiscard]] result<auto_shard_result> auto_shard(const P& program, const device_mesh& mesh,
                                                   const machine_model& machine, const auto_shard_options& options = {}) {
  auto built = build_program_problem(program, mesh, machine, options.memory_limit, options.max_strategies);
  if (!built) return built.error();
  auto solved = solve(built->problem, options.solve);
  if (!solved) return solved.error();
  if (auto ok = settle_no_answer(*built, *solved); !ok) return ok.error();
  auto out = read_answer(program, *built, solved->strategies, mesh, machine);
  if (!out) return out.error();
  out->solve = std::move(*solved);
  return out;
}

}  // namespace xlamem::sharding
