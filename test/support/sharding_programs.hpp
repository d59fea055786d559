// SPDX-License-Identifier: Apache-2.0
// Small programs for the tests of sharding/program.hpp, strategies.hpp and program_problem.hpp:
// arguments, elementwise operations, matrix products and reductions written as index letters,
// with live intervals from the order of the operations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/program.hpp"

namespace xlamem::test {

/// An argument of the given shape (4-byte elements), letters 0, 1, ...
inline std::size_t add_input(sharding::sharding_program& p, std::string name, std::vector<std::int64_t> dims) {
  sharding::program_op op;
  op.name = std::move(name);
  op.shape = {std::move(dims), 4};
  for (std::size_t d = 0; d < op.shape.dims.size(); ++d) op.output_letters.push_back(static_cast<std::int32_t>(d));
  op.is_input = true;
  p.ops.push_back(std::move(op));
  return p.ops.size() - 1;
}

/// An elementwise operation of `a` and `b` (same shapes).
inline std::size_t add_elementwise(sharding::sharding_program& p, std::string name, std::size_t a, std::size_t b) {
  sharding::program_op op;
  op.name = std::move(name);
  op.shape = p.ops[a].shape;
  for (std::size_t d = 0; d < op.shape.dims.size(); ++d) op.output_letters.push_back(static_cast<std::int32_t>(d));
  op.operands = {a, b};
  op.operand_letters = {op.output_letters, op.output_letters};
  op.operand_shapes = {p.ops[a].shape, p.ops[b].shape};
  op.flops = 1;
  for (auto n : op.shape.dims) op.flops *= static_cast<double>(n);
  p.ops.push_back(std::move(op));
  return p.ops.size() - 1;
}

/// The matrix product of `a` [m, k] and `b` [k, n]: letters m=0, k=1, n=2.
inline std::size_t add_matmul(sharding::sharding_program& p, std::string name, std::size_t a, std::size_t b) {
  sharding::program_op op;
  op.name = std::move(name);
  const auto m = p.ops[a].shape.dims[0], k = p.ops[a].shape.dims[1], n = p.ops[b].shape.dims[1];
  op.shape = {{m, n}, 4};
  op.output_letters = {0, 2};
  op.operands = {a, b};
  op.operand_letters = {{0, 1}, {1, 2}};
  op.operand_shapes = {p.ops[a].shape, p.ops[b].shape};
  op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  p.ops.push_back(std::move(op));
  return p.ops.size() - 1;
}

/// The sum of `a` over its dimension `dim`.
inline std::size_t add_reduce(sharding::sharding_program& p, std::string name, std::size_t a, std::size_t dim) {
  sharding::program_op op;
  op.name = std::move(name);
  const auto& in = p.ops[a].shape;
  op.shape.element_bytes = in.element_bytes;
  std::vector<std::int32_t> letters;
  for (std::size_t d = 0; d < in.dims.size(); ++d) {
    letters.push_back(static_cast<std::int32_t>(d));
    if (d == dim) continue;
    op.shape.dims.push_back(in.dims[d]);
    op.output_letters.push_back(static_cast<std::int32_t>(d));
  }
  op.operands = {a};
  op.operand_letters = {letters};
  op.operand_shapes = {in};
  op.flops = 1;
  for (auto n : in.dims) op.flops *= static_cast<double>(n);
  p.ops.push_back(std::move(op));
  return p.ops.size() - 1;
}

/// Live intervals from the order of the operations: operation i from step i to its last use
/// (inclusive); arguments from step 0 and the last operation to the end.
inline void set_live_ranges(sharding::sharding_program& p) {
  const auto steps = static_cast<std::int64_t>(p.ops.size());
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    auto& op = p.ops[i];
    op.live = {op.is_input ? 0 : static_cast<std::int64_t>(i), static_cast<std::int64_t>(i) + 1};
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    for (std::size_t u : p.ops[i].operands) {
      p.ops[u].live.upper = std::max(p.ops[u].live.upper, static_cast<std::int64_t>(i) + 1);
    }
  }
  p.ops.back().live.upper = steps;
  p.ops.back().is_output = true;
}

/// A machine for the tests: every link 1 us and 1 GB/s, 1 GFLOP/s, 10 GB/s of memory.
inline sharding::machine_model test_machine(const sharding::device_mesh& mesh) {
  sharding::machine_model m;
  m.name = "test";
  m.links.assign(mesh.axis_count(), sharding::axis_link{1e-6, 1e9});
  m.flops = 1e9;
  m.memory_bandwidth = 1e10;
  return m;
}

/// x [8, 4] times w [4, 6], live ranges from the order.
inline sharding::sharding_program matmul_program() {
  sharding::sharding_program p;
  const auto x = add_input(p, "x", {8, 4});
  const auto w = add_input(p, "w", {4, 6});
  add_matmul(p, "y", x, w);
  set_live_ranges(p);
  return p;
}

}  // namespace xlamem::test
