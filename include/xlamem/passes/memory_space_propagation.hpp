// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory-space propagation (XLA's MemorySpacePropagation): makes the shapes inside fused
/// computations agree with the caller side of every fusion on memory space and split
/// configuration, so no buffer is copied across memory spaces by accident. Caller shapes are the
/// source of truth; only those two layout properties change.
///
/// For each fusion in a non-fusion computation and each leaf of each operand (then of the
/// output), the source layout is pushed to the value at the matching fused parameter (root),
/// and from there to every position of that value; through a dynamic-update-slice to its base
/// (`in_place_pair::propagates_memory_space`); into nested fusions (output → their root, use →
/// their parameter); and out of a nested fusion computation to its calling fusion, never into a
/// non-fusion computation. The dataflow must treat bitcasts as defining values, so a bitcast's
/// output keeps its own memory space.
///
/// Needs a `memory_space_graph`. Cost: O(values reached x positions) per source leaf.
/// Not thread-safe on one graph (it writes layouts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/passes/dataflow.hpp"

namespace xlamem {

namespace detail {

template <memory_space_graph G>
class memory_space_propagator {
 public:
  static_assert(graph_queries<G>::checked);  // optional graph_traits members have the right signatures
  using traits = graph_traits<G>;
  using analysis_type = dataflow_analysis<G>;
  using value_id = typename analysis_type::value_id;

  memory_space_propagator(G& g, const analysis_type& a) : g_(g), a_(a), visited_(a.values().size(), 0) {}

  /// Propagates the leaf `index` of `source` (instruction number) to the value at `target`.
  bool propagate_from(std::size_t source, const shape_index& index, std::size_t target) {
    const auto h = a_.instruction(source);
    const std::int64_t space = traits::memory_space(std::as_const(g_), h, index);
    const std::optional<split_config> split = traits::split(std::as_const(g_), h, index);
    ++epoch_;  // a fresh visited set per source leaf, as in XLA
    return propagate(index, target, space, split);
  }

 private:
  G& g_;
  const analysis_type& a_;
  std::vector<std::uint32_t> visited_;
  std::uint32_t epoch_ = 0;

  bool propagate(const shape_index& index, std::size_t target, std::int64_t space,
                 const std::optional<split_config>& split) {
    bool modified = false;
    // XLA asks for the unique value; with ssa_form=false inside fusions there is one. Be
    // tolerant and visit each value of the set.
    const auto set = a_.value_set(target, index);
    for (const value_id v : set) {
      if (visited_[v] == epoch_) continue;
      visited_[v] = epoch_;
      for (const auto& pos : a_.positions(v)) {
        const std::size_t n = a_.number(pos.instruction);
        const auto cur_space = traits::memory_space(std::as_const(g_), pos.instruction, pos.index);
        const auto cur_split = traits::split(std::as_const(g_), pos.instruction, pos.index);
        if (cur_space != space || cur_split != split) {
          traits::set_memory_space(g_, pos.instruction, pos.index, space);
          traits::set_split(g_, pos.instruction, pos.index, split);
          modified = true;
        }
        const auto& sem = a_.semantics(n);
        bool is_fusion = false;
        for (std::size_t q = 0; q < sem.calls.size(); ++q) {
          if (sem.calls[q].binding != call_binding::fusion) continue;
          is_fusion = true;
          // Nested fusion output: continue at its root.
          const std::size_t callee = callee_number(sem.calls[q].computation);
          modified |= propagate(pos.index, a_.root(callee), space, split);
        }
        if (!is_fusion) {
          for (const auto& ip : sem.in_place) {
            if (ip.propagates_memory_space && ip.output_index == pos.index) {
              modified |= propagate(ip.operand_index, a_.operands(n)[ip.operand], space, split);
            }
          }
        }
        // Out of a nested fusion computation, into its calling fusion (never further out).
        const std::size_t c = a_.parent_number(n);
        if (a_.is_fusion_computation(c)) {
          for (const auto& cs : a_.callers(c)) {
            if (cs.binding != call_binding::fusion) continue;
            if (!a_.is_fusion_computation(a_.parent_number(cs.caller))) continue;
            if (a_.is_root(n)) modified |= propagate(pos.index, cs.caller, space, split);
            const auto p = a_.parameter_number(n);
            if (p >= 0 && static_cast<std::size_t>(p) < a_.operands(cs.caller).size()) {
              modified |= propagate(pos.index, a_.operands(cs.caller)[static_cast<std::size_t>(p)], space, split);
            }
          }
        }
      }
      // Uses by fusions: continue at the fused parameter.
      for (const auto& u : a_.uses(v)) {
        const std::size_t n = a_.number(u.instruction);
        const auto& sem = a_.semantics(n);
        for (const auto& cc : sem.calls) {
          if (cc.binding != call_binding::fusion) continue;
          const auto& params = a_.parameters(callee_number(cc.computation));
          if (u.operand_number < params.size()) {
            modified |= propagate(u.operand_index, params[u.operand_number], space, split);
          }
        }
      }
    }
    return modified;
  }

  std::size_t callee_number(const typename traits::computation_type& c) const { return a_.computation_number(c); }
};

template <class Analysis, class F>
void for_each_leaf(const Analysis& a, std::size_t n, F&& f) {
  const auto& idx = a.subshapes(n);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (a.is_leaf(n, k)) f(idx[k]);
  }
}

}  // namespace detail

/// Runs memory-space propagation on the whole graph: every fusion in every non-fusion
/// computation. Builds its own dataflow analysis (bitcasts define values).
/// @returns whether any layout changed, or the analysis' error for an inconsistent graph.
template <memory_space_graph G>
[[nodiscard]] result<bool> propagate_memory_spaces(G& g) {
  auto analysis = dataflow_analysis<G>::run(std::as_const(g), dataflow_options{true});
  if (!analysis) return analysis.error();
  const auto& a = *analysis;
  detail::memory_space_propagator<G> p(g, a);
  bool modified = false;
  // Instructions are numbered computation by computation, so one pass visits them in the
  // order of a loop over computations, without its cost (quadratic on 10^5 computations).
  for (std::size_t n = 0; n < a.instruction_count(); ++n) {
    if (a.is_fusion_computation(a.parent_number(n))) continue;
    const auto& sem = a.semantics(n);
    for (const auto& cc : sem.calls) {
      if (cc.binding != call_binding::fusion) continue;
      const std::size_t callee = a.computation_number(cc.computation);
      const auto& params = a.parameters(callee);
      const auto& ops = a.operands(n);
      for (std::size_t k = 0; k < ops.size() && k < params.size(); ++k) {
        detail::for_each_leaf(a, ops[k], [&](const shape_index& leaf) {
          modified |= p.propagate_from(ops[k], leaf, params[k]);
        });
      }
      detail::for_each_leaf(a, n, [&](const shape_index& leaf) {
        modified |= p.propagate_from(n, leaf, a.root(callee));
      });
    }
  }
  return modified;
}

/// Runs memory-space propagation from one computation's own parameter and root shapes
/// (XLA's RunOnComputation): the caller's operands are not read. `analysis` must have been
/// built on `g` with `bitcast_defines_value = true`.
/// @returns whether any layout changed; `errc::failed_precondition` for a wrong analysis,
///          `errc::not_found` for a computation the analysis does not know.
template <memory_space_graph G>
[[nodiscard]] result<bool> propagate_memory_spaces(G& g, const dataflow_analysis<G>& analysis,
                                                   typename graph_traits<G>::computation_type computation) {
  if (!analysis.options().bitcast_defines_value) {
    return make_error(errc::failed_precondition,
                      "memory-space propagation needs a dataflow analysis with bitcast_defines_value = true");
  }
  const std::size_t c = analysis.computation_number(computation);
  if (c >= analysis.computation_count()) {
    return make_error(errc::not_found, "memory-space propagation: the computation is not in the analysis");
  }
  detail::memory_space_propagator<G> p(g, analysis);
  bool modified = false;
  for (const std::size_t param : analysis.parameters(c)) {
    detail::for_each_leaf(analysis, param, [&](const shape_index& leaf) {
      modified |= p.propagate_from(param, leaf, param);
    });
  }
  const std::size_t root = analysis.root(c);
  detail::for_each_leaf(analysis, root, [&](const shape_index& leaf) {
    modified |= p.propagate_from(root, leaf, root);
  });
  return modified;
}

/// Runs memory-space propagation from one computation's own parameter and root shapes (XLA's
/// RunOnComputation), building the dataflow analysis it needs.
/// @returns whether any layout changed, or the analysis' error.
template <memory_space_graph G>
[[nodiscard]] result<bool> propagate_memory_spaces_from(G& g, typename graph_traits<G>::computation_type computation) {
  auto analysis = dataflow_analysis<G>::run(std::as_const(g), dataflow_options{true});
  if (!analysis) return analysis.error();
  return propagate_memory_spaces(g, *analysis, computation);
}

}  // namespace xlamem
