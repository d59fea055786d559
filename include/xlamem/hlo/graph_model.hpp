// SPDX-License-Identifier: Apache-2.0
/// @file
/// The HLO IR's model of the graph traits: `graph_traits<hlo::module>`, which makes a module a
/// `dense_graph`, a `memory_space_graph` and a `module_graph`, and answers the planning
/// questions of `graph/graph_queries.hpp` the way XLA does (names and shape text for reports,
/// constants, copies, `is_scheduled`, `input_output_alias`, and `CanShareOperandBufferWithUser`
/// with its opcode rules). The passes know nothing of HLO; this header is where HLO meets them.
/// Include it to run passes on a module. Every function is O(1) or O(size of what it returns),
/// except `can_share_operand_buffer` on a fusion: O(fused instructions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/gpu_aliasing.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem::hlo::detail {
/// Whether fusion `fusion` is elementwise on its operand `operand` (the first operand slot
/// holding it, as XLA looks it up): a walk over the transitive users of the fused parameter
/// that fails at the first use that is neither elementwise on that operand nor a tuple.
inline bool fusion_is_elementwise_on(const module& m, instruction_id fusion, instruction_id operand) {
  const instruction& f = m[fusion];
  std::size_t k = 0;
  while (k < f.operands.size() && f.operands[k] != operand) ++k;
  const computation* fused = nullptr;
  for (const auto& c : f.calls) {
    if (c.role == call_role::calls) fused = &m[c.computation];
  }
  if (k == f.operands.size() || fused == nullptr || k >= fused->parameters.size()) return false;
  std::vector<instruction_id> stack{fused->parameters[k]};
  std::unordered_set<instruction_id> visited{fused->parameters[k]};
  while (!stack.empty()) {
    const instruction_id current = stack.back();
    stack.pop_back();
    for (const instruction_id w : m[current].users) {
      const instruction& user = m[w];
      for (std::size_t j = 0; j < user.operands.size(); ++j) {
        if (user.operands[j] == current && user.opcode != opcodes::tuple &&
            !fused_is_elementwise_on(user, j)) {
          return false;
        }
      }
      if (visited.insert(w).second) stack.push_back(w);
    }
  }
  return true;
}
}  // namespace xlamem::hlo::detail

namespace xlamem {

/// The HLO reference IR as a graph: dense numbers are the ids, shapes come from the IR, and the
/// planning questions get XLA's answers.
template <>
struct graph_traits<hlo::module> {
  using computation_type = hlo::computation_id;
  using instruction_type = hlo::instruction_id;

  static hlo::detail::id_range<hlo::computation_id> computations(const hlo::module& m) {
    return hlo::detail::id_range<hlo::computation_id>(m.computations.size());
  }
  static const std::vector<hlo::instruction_id>& instructions(const hlo::module& m, computation_type c) {
    return m[c].instructions;
  }
  static const std::vector<hlo::instruction_id>& parameters(const hlo::module& m, computation_type c) {
    return m[c].parameters;
  }
  static instruction_type root(const hlo::module& m, computation_type c) { return m[c].root; }
  static computation_type parent(const hlo::module& m, instruction_type i) { return m[i].parent; }
  static const compact_vector<hlo::instruction_id>& operands(const hlo::module& m, instruction_type i) {
    return m[i].operands;
  }
  static const compact_vector<hlo::instruction_id>& users(const hlo::module& m, instruction_type i) {
    return m[i].users;
  }
  static memory_semantics<computation_type> semantics(const hlo::module& m, instruction_type i) {
    return hlo::semantics_of(m, i);
  }
  template <class F>
  static void for_each_subshape(const hlo::module& m, instruction_type i, F&& f) {
    hlo::for_each_subshape(m[i].shape, [&](const shape_index& index, const hlo::shape& s) {
      subshape_info info;
      info.is_tuple = s.is_tuple();
      info.tuple_size = s.elements.size();
      info.bytes = s.byte_size();
      if (s.has_layout) {
        info.memory_space = s.layout.memory_space;
        if (const auto& sc = s.layout.details().split_configs; !sc.empty()) info.split = sc.front();
      }
      f(index, static_cast<const subshape_info&>(info));
    });
  }

  static std::size_t instruction_count(const hlo::module& m) { return m.instructions.size(); }
  static std::size_t instruction_number(const hlo::module&, instruction_type i) { return hlo::index_of(i); }
  static std::size_t computation_count(const hlo::module& m) { return m.computations.size(); }
  static std::size_t computation_number(const hlo::module&, computation_type c) { return hlo::index_of(c); }

  static computation_type entry(const hlo::module& m) { return m.entry; }
  static bool is_scheduled(const hlo::module& m) { return m.is_scheduled; }
  static std::vector<io_alias> input_output_aliases(const hlo::module& m) {
    std::vector<io_alias> out;
    out.reserve(m.input_output_alias.size());
    for (const auto& e : m.input_output_alias) out.push_back({e.output_index, e.parameter, e.parameter_index, e.must_alias});
    return out;
  }

  static std::int64_t memory_space(const hlo::module& m, instruction_type i, const shape_index& index) {
    const hlo::shape* s = m[i].shape.subshape(index);
    return s != nullptr && s->has_layout ? s->layout.memory_space : 0;
  }
  static std::optional<split_config> split(const hlo::module& m, instruction_type i, const shape_index& index) {
    const hlo::shape* s = m[i].shape.subshape(index);
    if (s == nullptr || !s->has_layout || s->layout.details().split_configs.empty()) return std::nullopt;
    return s->layout.details().split_configs.front();
  }
  static void set_memory_space(hlo::module& m, instruction_type i, const shape_index& index, std::int64_t space) {
    hlo::shape* s = m[i].shape.subshape(index);
    if (s == nullptr || !s->is_array()) return;
    s->ensure_layout();
    s->layout.memory_space = space;
  }
  /// Replaces all split configurations of the leaf by `sc` (none when nullopt), as XLA does.
  static void set_split(hlo::module& m, instruction_type i, const shape_index& index,
                        const std::optional<split_config>& sc) {
    hlo::shape* s = m[i].shape.subshape(index);
    if (s == nullptr || !s->is_array()) return;
    if (!sc && !s->has_layout) return;
    s->ensure_layout();
    if (sc) {
      s->layout.details().split_configs.assign(1, *sc);
    } else if (!std::as_const(s->layout).details().split_configs.empty()) {  // none: allocate no details
      s->layout.details().split_configs.clear();
    }
  }

  // ---- planning questions (graph/graph_queries.hpp), with XLA's rules ----
  static const std::string& name(const hlo::module& m, instruction_type i) { return m[i].name; }
  static std::string shape_string(const hlo::module& m, instruction_type i, const shape_index& index) {
    const hlo::shape* s = m[i].shape.subshape(index);
    return s != nullptr ? hlo::to_string(*s) : std::string();
  }
  static const std::string& computation_name(const hlo::module& m, computation_type c) { return m[c].name; }
  static bool is_constant(const hlo::module& m, instruction_type i) { return m[i].opcode == hlo::opcodes::constant; }
  static bool is_copy(const hlo::module& m, instruction_type i) { return m[i].opcode == hlo::opcodes::copy; }
  /// XLA's `CanShareOperandBufferWithUser` for array outputs: equal array shapes, and the
  /// user is elementwise on the operand. A fusion is elementwise on an operand when every
  /// instruction reached from its fused parameter is elementwise on the value it receives
  /// (XLA's `AreTransitiveUsesElementwiseOrTuple`): a fused bitcast, broadcast, reduce or dot
  /// on the way forbids the sharing. Output fusions (XLA's add-root rule) never share here.
  ///
  /// For a module planned as XLA:GPU's (`backend == xla_backend::gpu`), XLA:GPU's hint answers
  /// first for fusions, all-reduce, collective-broadcast and custom calls (hlo/gpu_aliasing.hpp).
  static bool can_share_operand_buffer(const hlo::module& m, instruction_type operand, const shape_index& operand_index,
                                       instruction_type user, const shape_index& user_index) {
    if (m[operand].opcode == hlo::opcodes::constant) return false;
    if (m.backend == hlo::xla_backend::gpu) {
      if (const auto hint = hlo::detail::gpu_may_alias(m, operand, operand_index, user, user_index)) return *hint;
    }
    const hlo::shape* a = m[operand].shape.subshape(operand_index);
    const hlo::shape* b = m[user].shape.subshape(user_index);
    if (a == nullptr || b == nullptr || !a->is_array() || !b->is_array()) return false;
    if (a->type != b->type || a->dims != b->dims) return false;
    // Same type and bounds: the bytes differ only where the stored element bits (`E(n)`) do.
    if (a->stored_element_bits() != b->stored_element_bits() && a->byte_size() != b->byte_size()) return false;
    // XLA: "the operand and user emit the same shape and layout" (ShapeUtil::Equal): a
    // transposing copy, or LAPACK's column-major result copied to row-major, gets its own buffer.
    if (a->has_layout && b->has_layout && !(a->layout == b->layout)) return false;
    const auto& u = m[user];
    if (u.opcode == hlo::opcodes::fusion) {
      const auto kind = u.find_attribute("kind");
      if (!kind || *kind == "kOutput" || !user_index.empty()) return false;
      return hlo::detail::fusion_is_elementwise_on(m, user, operand);
    }
    // The operand positions of `operand` in the user (XLA's OperandIndices): how many, and the first.
    std::size_t uses = 0;
    std::size_t first_use = 0;
    for (std::size_t k = 0; k < u.operands.size(); ++k) {
      if (u.operands[k] == operand && uses++ == 0) first_use = k;
    }
    namespace ops = hlo::opcodes;
    if (u.opcode == ops::dynamic_update_slice || u.opcode == ops::scatter || u.opcode == ops::triangular_solve ||
        u.opcode == ops::set_dimension_size) {
      // Written over when used once, at the operand XLA names (b of triangular-solve, else the first).
      return uses == 1 && first_use == (u.opcode == ops::triangular_solve ? 1u : 0u);
    }
    if (u.opcode == ops::sort) {
      // A sort runs in place: a key (or the i-th array of a multi-operand sort, into output {i})
      // shares its operand's buffer when the sort is that operand's only user.
      if (m[operand].users.size() != 1) return false;
      if (u.operands.size() == 1) return true;
      return uses == 1 && user_index.size() == 1 && user_index[0] == static_cast<std::int64_t>(first_use);
    }
    return user_index.empty() && hlo::detail::is_elementwise(u.opcode);
  }
};

static_assert(graph<hlo::module>);
static_assert(dense_graph<hlo::module>);
static_assert(memory_space_graph<hlo::module>);
static_assert(entry_graph<hlo::module>);
static_assert(module_graph<hlo::module>);
static_assert(graph_queries<hlo::module>::checked);

}  // namespace xlamem
