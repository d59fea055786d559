// SPDX-License-Identifier: Apache-2.0
/// @file
/// Colocation (XLA's HloAliasAnalysis): groups the values of a `dataflow_analysis` into
/// buffers, the units that buffer assignment places. Values share a buffer when
///
/// - they may appear at one position (the non-SSA value sets of dataflow: a while's init,
///   body parameter, body root, condition parameter and result; a conditional's branch roots
///   and result; a call's root and result), or one is a phi (SSA form) and the other flows
///   into it;
/// - an instruction updates an operand in place (`memory_semantics::in_place`: the base of a
///   dynamic-update-slice, scatter operands, `output_to_operand_aliasing`, fusions whose root
///   is such an update): the operand's value and the output's;
/// - the module aliases an entry parameter with an output (`input_output_alias`, may or must):
///   the parameter's value and the values at that output index of the entry root.
///
/// Buffers are numbered by their smallest value id, so results are deterministic. Cost:
/// O(total value-set size + in-place pairs + aliases) near-linear union-find operations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/graph/graph_queries.hpp"

namespace xlamem {

/// The buffers of a graph: sets of dataflow values that must live in one place.
template <graph G>
class colocation_analysis {
 public:
  static_assert(graph_queries<G>::checked);  // optional graph_traits members have the right signatures
  using dataflow_type = dataflow_analysis<G>;
  using value_id = typename dataflow_type::value_id;
  using buffer_id = std::uint32_t;

  /// Groups the values of `df` (computed on `g`). `entry` is the entry computation's dense
  /// number in `df`. @returns `errc::invalid_argument` when an `input_output_alias` names a
  /// parameter or subshape that does not exist.
  [[nodiscard]] static result<colocation_analysis> run(const G& g, const dataflow_type& df, std::size_t entry) {
    colocation_analysis a;
    const std::size_t nv = df.values().size();
    a.parent_.resize(nv);
    std::iota(a.parent_.begin(), a.parent_.end(), value_id{0});
    // 1. Values that meet at a position.
    for (std::size_t n = 0; n < df.instruction_count(); ++n) {
      for (const auto& index : df.subshapes(n)) {
        const auto& set = df.value_set(n, index);
        for (std::size_t k = 1; k < set.size(); ++k) a.unite(set[0], set[k]);
      }
    }
    // 1b. A phi (SSA form) and the values flowing into it.
    for (const auto& val : df.values()) {
      if (!val.is_phi) continue;
      for (auto w : df.phi_inputs(val.id)) a.unite(val.id, w);
    }
    // 2. In-place updates.
    for (std::size_t n = 0; n < df.instruction_count(); ++n) {
      for (const auto& ip : df.semantics(n).in_place) {
        if (ip.operand >= df.operands(n).size()) continue;
        const auto& from = df.value_set(df.operands(n)[ip.operand], ip.operand_index);
        const auto& to = df.value_set(n, ip.output_index);
        for (auto v : from) {
          for (auto w : to) a.unite(v, w);
        }
      }
    }
    // 3. Parameter/output aliasing of the module.
    if (entry < df.computation_count()) {
      const std::size_t root = df.root(entry);
      const auto& params = df.parameters(entry);
      for (const auto& al : graph_queries<G>::input_output_aliases(g)) {
        if (al.parameter < 0 || static_cast<std::size_t>(al.parameter) >= params.size()) {
          return make_error(errc::invalid_argument, "input_output_alias names parameter " +
                                                        std::to_string(al.parameter) + ", but the entry has " +
                                                        std::to_string(params.size()));
        }
        const std::size_t p = params[static_cast<std::size_t>(al.parameter)];
        if (!df.find_index(p, al.parameter_index) || !df.find_index(root, al.output_index)) {
          return make_error(errc::invalid_argument, "input_output_alias of parameter " + std::to_string(al.parameter) +
                                                        " names a subshape that does not exist");
        }
        a.aliases_.push_back(al);
        for (auto v : df.value_set(p, al.parameter_index)) {
          for (auto w : df.value_set(root, al.output_index)) a.unite(v, w);
        }
      }
    }
    // 4. Number the buffers by smallest value.
    // Values are listed buffer by buffer, each buffer's ascending (counted, then filled).
    a.buffer_of_.assign(nv, 0);
    std::vector<buffer_id> id_of_root(nv, static_cast<buffer_id>(-1));
    std::size_t buffers = 0;
    for (value_id v = 0; v < nv; ++v) {
      const value_id r = a.find(v);
      if (id_of_root[r] == static_cast<buffer_id>(-1)) id_of_root[r] = static_cast<buffer_id>(buffers++);
      a.buffer_of_[v] = id_of_root[r];
    }
    a.begin_.assign(buffers + 1, 0);
    for (value_id v = 0; v < nv; ++v) ++a.begin_[a.buffer_of_[v] + 1];
    for (std::size_t b = 0; b < buffers; ++b) a.begin_[b + 1] += a.begin_[b];
    a.values_.resize(nv);
    std::vector<value_id> next(a.begin_.begin(), a.begin_.end() - 1);
    for (value_id v = 0; v < nv; ++v) a.values_[next[a.buffer_of_[v]]++] = v;
    a.parent_.clear();
    a.parent_.shrink_to_fit();
    return a;
  }

  /// Number of buffers.
  [[nodiscard]] std::size_t buffer_count() const noexcept { return begin_.empty() ? 0 : begin_.size() - 1; }
  /// The buffer holding value `v`.
  [[nodiscard]] buffer_id buffer_of(value_id v) const { return buffer_of_[v]; }
  /// The values of buffer `b`, ascending.
  [[nodiscard]] std::span<const value_id> values(buffer_id b) const {
    return {values_.data() + begin_[b], values_.data() + begin_[b + 1]};
  }
  /// The module's parameter/output aliases that were applied.
  [[nodiscard]] const std::vector<io_alias>& aliases() const noexcept { return aliases_; }
  /// Whether entry parameter `parameter` at `index` is aliased with an output.
  [[nodiscard]] bool parameter_has_alias(std::int64_t parameter, const shape_index& index) const {
    for (const auto& al : aliases_) {
      if (al.parameter == parameter && al.parameter_index == index) return true;
    }
    return false;
  }

 private:
  std::vector<value_id> parent_;
  std::vector<buffer_id> buffer_of_;
  std::vector<value_id> begin_;   // buffer b's values are values_[begin_[b] .. begin_[b + 1])
  std::vector<value_id> values_;
  std::vector<io_alias> aliases_;

  value_id find(value_id v) {
    while (parent_[v] != v) {
      parent_[v] = parent_[parent_[v]];
      v = parent_[v];
    }
    return v;
  }
  void unite(value_id a, value_id b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }
};

}  // namespace xlamem
