// SPDX-License-Identifier: Apache-2.0
/// @file
/// Auto-sharding of an HLO module, the front door (`xlamem autoshard`, `xlamem.auto_shard`):
/// read the entry computation as a program (hlo_program.hpp), build and solve the sharding
/// problem under a per-device memory limit (sharding/program_problem.hpp), write the answer
/// back as `sharding=` attributes (annotate.hpp), and say what a user asks first: the predicted
/// per-device peak and the instruction running then, the collectives by kind, the PartitionSpecs
/// of the arguments and results, and the layouts of the largest arrays.
///
/// When no sharding fits the limit, the answer is the one of least memory found, with status
/// `over_limit`, and `least_peak` is a floor no sharding of this module on this mesh goes below.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/autoshard/annotate.hpp"
#include "xlamem/autoshard/hlo_program.hpp"
#include "xlamem/autoshard/inline_calls.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/program_problem.hpp"

namespace xlamem::autoshard {

/// What `auto_shard_module` is asked besides the module, mesh and machine.
struct module_options {
  sharding::auto_shard_options shard;  ///< memory limit, strategies per operation, solver options
  std::size_t largest = 8;             ///< how many of the largest arrays to describe
  bool every_instruction = false;      ///< list the layout of every array instruction of the entry
};

/// One array of the entry and the layout chosen for it.
struct array_choice {
  std::string name;
  std::string shape;            ///< e.g. "f32[128,256]"
  std::int64_t bytes = 0;       ///< the whole array
  std::int64_t shard_bytes = 0; ///< one device's part
  std::string spec;             ///< e.g. "P(None, 'x')"
};

/// The answer for a module.
struct module_answer {
  hlo_program program;
  sharding::auto_shard_result result;
  entry_specs specs;
  std::string peak_instruction;         ///< running at the peak ("the end" when it is the outputs)
  std::int64_t least_peak = 0;          ///< no sharding's per-device peak is below this
  std::vector<array_choice> largest;    ///< the largest arrays of the entry, largest first
  std::vector<named_spec> instructions; ///< with `every_instruction`: each array instruction, in order
  std::size_t strategies = 0;           ///< over all operations
  std::size_t edges = 0;
};

namespace detail {

/// A floor under the peak of any assignment of `built`: every node at its least usage at once
/// (an operation at its smallest shard, no copies, no partial sums).
[[nodiscard]] inline std::int64_t least_peak(const sharding::program_problem& built) {
  const auto& p = built.problem;
  sharding::assignment a(p.node_count(), 0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t s = 1; s < p.strategy_count(i); ++s) {
      if (p.node_usage(i, s) < p.node_usage(i, a[i])) a[i] = s;
    }
  }
  const auto e = sharding::evaluate(p, a);
  return e ? e->peak_usage.to_int64() : 0;
}

/// "f32[128,256]" for an entry instruction.
[[nodiscard]] inline std::string shape_text(const hlo::instruction& in) {
  std::string s = std::string(hlo::name_of(in.shape.type)) + "[";
  for (std::size_t d = 0; d < in.shape.dims.size(); ++d) s += (d ? "," : "") + std::to_string(in.shape.dims[d]);
  return s + "]";
}

}  // namespace detail

/// Shards `m` on `mesh` and `machine` within `options.shard.memory_limit` bytes per device (see
/// the file comment); with `write_back`, the module gets the answer as `sharding=` attributes.
/// The entry's calls are inlined first (inline_calls.hpp), as XLA does before partitioning:
/// `m` becomes the inlined module, and names in the answer are its instructions'.
/// Errors: the module's liveness, a sharding attribute the mesh cannot hold, a bad machine.
[[nodiscard]] inline result<module_answer> auto_shard_module(hlo::module& m, const sharding::device_mesh& mesh,
                                                             const sharding::machine_model& machine,
                                                             const module_options& options, bool write_back) {
  module_answer out;
  if (has_inlinable_calls(m)) {
    auto inlined = inline_calls(m);
    if (!inlined) return inlined.error();
    m = std::move(*inlined);
  }
  auto program = read_hlo_program(m, mesh);
  if (!program) return program.error();
  out.program = std::move(*program);
  auto built = sharding::build_program_problem(out.program.program, mesh, machine, options.shard.memory_limit,
                                               options.shard.max_strategies);
  if (!built) return built.error();
  out.least_peak = detail::least_peak(*built);
  for (const auto& s : built->strategies) out.strategies += s.size();
  out.edges = built->problem.edge_count();
  auto solved = sharding::solve(built->problem, options.shard.solve);
  if (!solved) return solved.error();
  if (auto ok = sharding::settle_no_answer(*built, *solved); !ok) return ok.error();
  auto answer = sharding::read_answer(out.program.program, *built, solved->strategies, mesh, machine);
  if (!answer) return answer.error();
  out.result = std::move(*answer);
  out.result.solve = std::move(*solved);
  const auto t = static_cast<std::size_t>(out.result.peak_time);
  out.peak_instruction = t < out.program.schedule.size() ? m[out.program.schedule[t]].name : "the end";
  out.specs = partition_specs(m, out.program, out.result.shardings, mesh);
  for (std::size_t i = 0; i < out.program.entry_ops; ++i) {
    const auto& in = m[out.program.instruction[i]];
    const auto& op = out.program.program.ops[i];
    if (!in.shape.is_array() || op.live.empty()) continue;  // tuples, and values another defines
    out.largest.push_back({in.name, detail::shape_text(in), sharding::shard_bytes(sharding::tensor_sharding::replicated(op.shape.dims.size()), op.shape, mesh),
                           sharding::shard_bytes(out.result.shardings[i], op.shape, mesh),
                           sharding::partition_spec(out.result.shardings[i], mesh)});
  }
  std::stable_sort(out.largest.begin(), out.largest.end(),
                   [](const array_choice& a, const array_choice& b) { return a.bytes > b.bytes; });
  if (out.largest.size() > options.largest) out.largest.resize(options.largest);
  if (options.every_instruction) {
    for (const auto id : m[m.entry].instructions) {
      const std::size_t i = out.program.op_of_instruction[hlo::index_of(id)];
      if (!m[id].shape.is_array() || i >= out.program.entry_ops) continue;
      out.instructions.push_back({m[id].name, sharding::partition_spec(out.result.shardings[i], mesh)});
    }
  }
  if (write_back) {
    if (auto ok = annotate(m, out.program, out.result.shardings, mesh); !ok) return ok.error();
  }
  return out;
}

}  // namespace xlamem::autoshard
