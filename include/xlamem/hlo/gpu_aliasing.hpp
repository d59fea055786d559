// SPDX-License-Identifier: Apache-2.0
/// @file
/// XLA:GPU's buffer-sharing hint on NVIDIA targets (`NVPTXAliasInfo::MayAlias`, falling back to
/// `GpuAliasInfo::MayAlias`): whether a user may take over an operand's buffer that dies where
/// the user is defined. The graph model (`hlo/graph_model.hpp`) asks it first for a module
/// whose `backend` is `xla_backend::gpu` (`hlo/backend.hpp`'s `xla_gpu` preset); nullopt
/// leaves the question to XLA's generic rules. Restated from XLA's sources and tests
/// (docs/xla-gpu-buffer-assignment.md, section 3); no code of theirs.
///
/// Where XLA consults its fusion analysis (which emitter a fusion gets, its "hero"), this file
/// decides from the fused computation alone: a root's hero is the first reduce, transpose or
/// copy met walking back from it through bitcasts, reshapes and elementwise instructions, and a
/// fusion is a reduction when a root's hero is a reduce that drops elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "xlamem/hlo/module.hpp"

namespace xlamem::hlo::detail {

/// Same element type, dimensions and, where both have one, layout (XLA's ShapeUtil::Equal on
/// the arrays and tuples of an optimised module).
[[nodiscard]] inline bool same_shape(const shape& a, const shape& b) {
  if (a.is_tuple() != b.is_tuple()) return false;
  if (a.is_tuple()) {
    if (a.elements.size() != b.elements.size()) return false;
    for (std::size_t k = 0; k < a.elements.size(); ++k) {
      if (!same_shape(a.elements[k], b.elements[k])) return false;
    }
    return true;
  }
  if (a.type != b.type || a.dims != b.dims) return false;
  return !(a.has_layout && b.has_layout) || a.layout == b.layout;
}

/// The hero of fusion root `root` inside its fused computation, or nullopt: see the file comment.
[[nodiscard]] inline std::optional<instruction_id> fusion_root_hero(const module& m, instruction_id root) {
  std::deque<instruction_id> queue{root};
  std::unordered_set<instruction_id> seen{root};
  while (!queue.empty()) {
    const instruction& i = m[queue.front()];
    const instruction_id id = queue.front();
    queue.pop_front();
    if (i.opcode == opcodes::reduce || i.opcode == opcodes::transpose || i.opcode == opcodes::copy) return id;
    if (i.opcode != opcodes::bitcast && i.opcode != opcodes::reshape && !is_elementwise(i.opcode)) continue;
    for (const auto o : i.operands) {
      if (seen.insert(o).second) queue.push_back(o);
    }
  }
  return std::nullopt;
}

/// The outputs of fused computation `c`: the root's operands when it is a tuple, else the root.
[[nodiscard]] inline std::vector<instruction_id> fusion_outputs(const module& m, const computation& c) {
  if (m[c.root].opcode == opcodes::tuple) return {m[c.root].operands.begin(), m[c.root].operands.end()};
  return {c.root};
}

/// The reduce a reduction fusion is emitted around (XLA's FindHeroReduction), or nullopt.
[[nodiscard]] inline std::optional<instruction_id> fusion_reduction_hero(const module& m, const computation& c) {
  for (const auto r : fusion_outputs(m, c)) {
    const auto hero = fusion_root_hero(m, r);
    if (!hero || m[*hero].opcode != opcodes::reduce || m[*hero].operands.empty()) continue;
    const shape& in = m[m[*hero].operands[0]].shape;
    const shape& out = m[*hero].shape.is_tuple() && !m[*hero].shape.elements.empty() ? m[*hero].shape.elements[0]
                                                                                       : m[*hero].shape;
    if (in.is_array() && out.is_array() && in.element_count() > out.element_count()) return hero;
  }
  return std::nullopt;
}

[[nodiscard]] inline std::size_t count_of(std::span<const instruction_id> v, instruction_id x) {
  return static_cast<std::size_t>(std::count(v.begin(), v.end(), x));
}
[[nodiscard]] inline std::size_t slot_of(std::span<const instruction_id> v, instruction_id x) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}
[[nodiscard]] inline bool effective_scalar(const shape& s) { return s.is_array() && s.element_count() == 1; }

/// XLA:GPU's fusion rule (`FusionCanShareBufferHint`): fusion `user`'s output `user_index` may
/// reuse operand `operand`'s buffer when the two iterate the same elements in the same order:
/// every path from the fused parameter to that output runs through elementwise instructions
/// (not copy), bitcasts and tuples; a root scatter or sort may be reached through its own input,
/// a root dynamic-update-slice through its update or through a dynamic-slice of the same slice,
/// and a reduction fusion's reduce ends the walk.
[[nodiscard]] inline bool gpu_fusion_can_share(const module& m, instruction_id user, instruction_id operand,
                                               const shape_index& user_index) {
  const instruction& f = m[user];
  const shape* out_shape = f.shape.subshape(user_index);
  const shape& in_shape = m[operand].shape;
  if (out_shape == nullptr) return false;
  if (!same_shape(in_shape, *out_shape)) {
    // Different shapes: still the same iteration space and the same bytes per element.
    if (!in_shape.is_array() || !out_shape->is_array()) return false;
    if (in_shape.element_count() != out_shape->element_count()) return false;
    if (element_bits(in_shape.type) != element_bits(out_shape->type)) return false;
  }
  const computation* fused = nullptr;
  for (const auto& c : f.calls) {
    if (c.role == call_role::calls) fused = &m[c.computation];
  }
  const std::size_t slot = slot_of(f.operands, operand);
  if (fused == nullptr || slot >= fused->parameters.size()) return false;
  instruction_id output = fused->root;
  if (m[output].opcode == opcodes::tuple) {
    if (user_index.empty() || user_index[0] < 0 || static_cast<std::size_t>(user_index[0]) >= m[output].operands.size()) {
      return false;
    }
    output = m[output].operands[static_cast<std::size_t>(user_index[0])];
  }
  if (m[output].opcode == opcodes::tuple) return false;
  instruction_id root = output;  // the output without one leading bitcast
  if (m[root].opcode == opcodes::bitcast && !m[root].operands.empty()) root = m[root].operands[0];
  const instruction& r = m[root];
  const auto hero = fusion_reduction_hero(m, *fused);

  std::deque<instruction_id> queue{fused->parameters[slot]};
  std::unordered_set<instruction_id> visited{fused->parameters[slot]};
  bool reaches_output = false;
  while (!queue.empty()) {
    const instruction_id at = queue.front();
    queue.pop_front();
    if (at == output) reaches_output = true;  // its other users still count
    if (hero && at == *hero) continue;        // the reduction is computed before any output is written
    for (const instruction_id w : m[at].users) {
      if (visited.insert(w).second) queue.push_back(w);
      const instruction& u = m[w];
      const std::size_t k = slot_of(u.operands, at);
      if (w == root && u.opcode == opcodes::scatter) {
        const std::size_t inputs = u.shape.is_tuple() ? u.shape.elements.size() : 1;
        if (k < inputs && count_of(u.operands, at) == 1) continue;
      }
      if (w == root && u.opcode == opcodes::sort && count_of(u.operands, at) == 1) {
        // Each sorted array may only become its own output.
        const bool own = u.shape.is_tuple() ? user_index.size() == 1 && user_index[0] == static_cast<std::int64_t>(k)
                                            : k == 0;
        if (!own) return false;
        continue;
      }
      if (r.opcode == opcodes::dynamic_update_slice && u.opcode == opcodes::dynamic_slice && r.operands.size() >= 2 &&
          !u.operands.empty() && r.operands[0] == u.operands[0] && same_shape(u.shape, m[r.operands[1]].shape)) {
        // Reading exactly the slice the update writes is safe; so is any single element.
        if (!effective_scalar(u.shape) || !effective_scalar(m[r.operands[1]].shape)) {
          for (std::size_t j = 1; j < u.operands.size(); ++j) {
            if (j + 1 >= r.operands.size() || u.operands[j] != r.operands[j + 1]) return false;
          }
        }
      } else if ((!fused_is_elementwise_on(u, k) || u.opcode == opcodes::copy) && u.opcode != opcodes::bitcast &&
                 u.opcode != opcodes::tuple && !(hero && w == *hero)) {
        // A root dynamic-update-slice reached through its update writes what it read.
        if (w != root || u.opcode != opcodes::dynamic_update_slice || k != 1) return false;
      }
    }
  }
  // A multi-output fusion: reaching another output is only safe when this one is elementwise
  // and no reached output is written in a transposed order.
  if (m[fused->root].opcode == opcodes::tuple) {
    bool other = false, transposed = false;
    for (const auto o : m[fused->root].operands) {
      if (visited.count(o) == 0) continue;
      other = other || o != output;
      const auto h = fusion_root_hero(m, o);
      transposed = transposed || (h && (m[*h].opcode == opcodes::transpose || m[*h].opcode == opcodes::copy));
    }
    if (other && ((!is_elementwise(r.opcode) && r.opcode != opcodes::copy) || transposed)) return false;
  }
  return reaches_output;
}

/// `beta` of a cuBLAS custom call's `gemm_backend_config` (0 when absent, as in the proto).
[[nodiscard]] inline double gemm_beta(const instruction& i) {
  const std::optional<std::string_view> config = i.find_attribute("backend_config");
  if (!config) return 0.0;
  const std::string_view key = "\"beta\":";
  const auto at = config->find(key);
  if (at == std::string_view::npos) return 0.0;
  const std::string number(config->substr(at + key.size(), 32));
  return std::strtod(number.c_str(), nullptr);
}

/// XLA:GPU's MayAlias hint for NVIDIA (see the file comment), or nullopt for the generic rules.
/// Only arrays share a buffer: an element of a tuple-shaped operand, or a user's tuple table,
/// never does (XLA's fusion rule compares the whole operand's shape, which is then a tuple).
[[nodiscard]] inline std::optional<bool> gpu_may_alias(const module& m, instruction_id operand,
                                                       const shape_index& operand_index, instruction_id user,
                                                       const shape_index& user_index) {
  const instruction& u = m[user];
  const shape* in = m[operand].shape.subshape(operand_index);
  const shape* out = u.shape.subshape(user_index);
  if (in == nullptr || out == nullptr || !in->is_array() || !out->is_array()) return false;
  if (!operand_index.empty()) return false;
  if (u.opcode == opcodes::all_reduce || u.opcode == opcodes::collective_broadcast) {
    // NCCL reduces and broadcasts in place; NVSHMEM's one-shot all-reduce does not.
    const auto config = u.find_attribute("backend_config");
    if (u.opcode == opcodes::all_reduce && config && contains_ignoring_case(*config, "nvshmem")) return false;
    return u.operands.size() == 1 ||
           (user_index.size() == 1 && user_index[0] >= 0 &&
            static_cast<std::size_t>(user_index[0]) < u.operands.size() &&
            u.operands[static_cast<std::size_t>(user_index[0])] == operand);
  }
  if (u.opcode == opcodes::custom_call) {
    // cublasLt computes D = alpha*A*B + beta*C and may write D over C (operand 2) when C is
    // read (beta != 0), passed once, and D is output {0}, not the workspace.
    const auto target = u.find_attribute("custom_call_target");
    if (target && *target == "\"__cublas$lt$matmul\"") {
      return gemm_beta(u) != 0.0 && u.operands.size() > 2 && u.operands[2] == operand &&
             count_of(u.operands, operand) == 1 && user_index.size() == 1 && user_index[0] == 0;
    }
    return false;
  }
  if (u.opcode == opcodes::fusion) return gpu_fusion_can_share(m, user, operand, user_index);
  return std::nullopt;
}

}  // namespace xlamem::hlo::detail
