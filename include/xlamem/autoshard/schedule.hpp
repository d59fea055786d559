// SPDX-License-Identifier: Apache-2.0
/// @file
/// An order of a computation's instructions that keeps memory low, for modules XLA has not
/// scheduled yet (what JAX lowers: its text is written depth first, so a value made early for a
/// use late stays live across everything between). The rule is a list scheduler's, as XLA's
/// own memory-minimising schedulers start from: among the instructions whose operands are done,
/// take the one that frees the most bytes net of what it makes (an operand is freed when its
/// last user runs), ties by text order. Parameters come first: they are held throughout anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xlamem/hlo/module.hpp"

namespace xlamem::autoshard {

/// The instructions of computation `c` of `m` in an order of low memory (see the file comment):
/// a topological order of the computation's operand edges.
[[nodiscard]] inline std::vector<hlo::instruction_id> memory_order(const hlo::module& m, hlo::computation_id c) {
  const auto& list = m[c].instructions;
  const std::size_t n = list.size();
  std::vector<std::size_t> position(m.instructions.size(), n);  // index in `list`, or n: elsewhere
  for (std::size_t i = 0; i < n; ++i) position[hlo::index_of(list[i])] = i;
  std::vector<std::size_t> waiting(n, 0);     // operands not yet scheduled
  std::vector<std::size_t> users_left(n, 0);  // users in this computation not yet scheduled
  std::vector<std::vector<std::size_t>> users(n);
  std::vector<std::int64_t> bytes(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& in = m[list[i]];
    bytes[i] = in.shape.is_array() ? static_cast<std::int64_t>(in.shape.byte_size()) : 0;
    for (const auto o : in.operands) {
      const std::size_t k = position[hlo::index_of(o)];
      if (k == n) continue;
      ++waiting[i];
      ++users_left[k];
      users[k].push_back(i);
    }
  }
  std::vector<char> done(n, 0);
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::vector<hlo::instruction_id> out;
  out.reserve(n);
  const auto gain = [&](std::size_t i) {
    if (m[list[i]].opcode == hlo::opcodes::parameter) return INT64_MAX;
    std::int64_t freed = 0;
    for (const auto o : m[list[i]].operands) {
      const std::size_t k = position[hlo::index_of(o)];
      if (k != n && users_left[k] == 1) freed += bytes[k];
    }
    return freed - bytes[i];
  };
  while (!ready.empty()) {
    std::size_t best = 0;
    std::int64_t best_gain = gain(ready[0]);
    for (std::size_t r = 1; r < ready.size(); ++r) {
      const std::int64_t g = gain(ready[r]);
      if (g > best_gain || (g == best_gain && ready[r] < ready[best])) {
        best = r;
        best_gain = g;
      }
    }
    const std::size_t i = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    done[i] = 1;
    out.push_back(list[i]);
    for (const auto o : m[list[i]].operands) {
      const std::size_t k = position[hlo::index_of(o)];
      if (k != n) --users_left[k];
    }
    for (const std::size_t u : users[i]) {
      if (--waiting[u] == 0) ready.push_back(u);
    }
  }
  // A cycle cannot occur in a read module; keep any instruction left over in text order.
  for (std::size_t i = 0; i < n; ++i) {
    if (!done[i]) out.push_back(list[i]);
  }
  return out;
}

}  // namespace xlamem::autoshard
