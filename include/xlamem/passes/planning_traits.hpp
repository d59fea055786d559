// SPDX-License-Identifier: Apache-2.0
/// @file
/// What memory planning (liveness, buffer assignment) needs to know about a graph beyond
/// `graph_traits`: instruction names and shape text for reports, which instructions are
/// constants, the module's `input_output_alias`, whether an instruction may write its output
/// over an operand that dies at that instruction (XLA's `CanShareOperandBufferWithUser`), and
/// whether it is a copy (a copy never shares its operand's allocation).
///
/// `planning_traits<G>` has defaults that need nothing more than `graph_traits<G>`:
/// names are `#N` (dense number), no constants, no aliases, no operand sharing, no copies,
/// scheduled.
/// A graph opts in to any of these by giving its `graph_traits` the matching static function;
/// each is detected separately:
///
///     static std::string name(const G&, instruction);
///     static std::string shape_string(const G&, instruction, const shape_index&);
///     static bool is_constant(const G&, instruction);
///     static bool is_copy(const G&, instruction);
///     static bool is_scheduled(const G&);
///     static std::vector<io_alias> input_output_aliases(const G&);
///     static bool can_share_operand_buffer(const G&, instruction operand, const shape_index&,
///                                          instruction user, const shape_index&);
///
/// The HLO reference IR (`hlo::module`) gets a full specialisation here, following XLA.
/// Every function is O(1) or O(size of what it returns) for the HLO IR.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem {

/// One `input_output_alias` entry: output subshape `output_index` of the entry root lives in
/// the buffer of entry parameter `parameter` at `parameter_index`. With `must_alias == false`
/// (XLA's may-alias) the parameter's allocation may also hold temporaries once the parameter
/// is dead.
struct io_alias {
  shape_index output_index;
  std::int64_t parameter = 0;
  shape_index parameter_index;
  bool must_alias = false;
  friend bool operator==(const io_alias&, const io_alias&) = default;
};

namespace detail {
template <class G>
concept pt_has_name = requires(const G& g, typename graph_traits<G>::instruction_type i) {
  { graph_traits<G>::name(g, i) } -> std::convertible_to<std::string>;
};
template <class G>
concept pt_has_shape_string =
    requires(const G& g, typename graph_traits<G>::instruction_type i, const shape_index& x) {
      { graph_traits<G>::shape_string(g, i, x) } -> std::convertible_to<std::string>;
    };
template <class G>
concept pt_has_is_constant = requires(const G& g, typename graph_traits<G>::instruction_type i) {
  { graph_traits<G>::is_constant(g, i) } -> std::convertible_to<bool>;
};
template <class G>
concept pt_has_is_copy = requires(const G& g, typename graph_traits<G>::instruction_type i) {
  { graph_traits<G>::is_copy(g, i) } -> std::convertible_to<bool>;
};
template <class G>
concept pt_has_aliases = requires(const G& g) {
  { graph_traits<G>::input_output_aliases(g) } -> std::convertible_to<std::vector<io_alias>>;
};
template <class G>
concept pt_has_is_scheduled = requires(const G& g) {
  { graph_traits<G>::is_scheduled(g) } -> std::convertible_to<bool>;
};
template <class G>
concept pt_has_share = requires(const G& g, typename graph_traits<G>::instruction_type i,
                                const shape_index& x) {
  { graph_traits<G>::can_share_operand_buffer(g, i, x, i, x) } -> std::convertible_to<bool>;
};
}  // namespace detail

/// Planning questions about a graph; see the file comment. Specialise for a graph type to
/// answer them all at once, or add the detected functions to its `graph_traits`.
template <class G>
struct planning_traits {
  using traits = graph_traits<G>;
  using instruction_type = typename traits::instruction_type;

  /// A name for reports; `fallback` is the instruction's dense number in the analysis.
  static std::string name(const G& g, instruction_type i, std::size_t fallback) {
    if constexpr (detail::pt_has_name<G>) {
      (void)fallback;
      return std::string(traits::name(g, i));
    } else {
      (void)g, (void)i;
      return "#" + std::to_string(fallback);
    }
  }
  /// The subshape at `index` as text (with layout), or empty when unknown.
  static std::string shape_string(const G& g, instruction_type i, const shape_index& index) {
    if constexpr (detail::pt_has_shape_string<G>) {
      return std::string(traits::shape_string(g, i, index));
    } else {
      (void)g, (void)i, (void)index;
      return {};
    }
  }
  /// Constants get their own never-reused allocation and count in no statistic.
  static bool is_constant(const G& g, instruction_type i) {
    if constexpr (detail::pt_has_is_constant<G>) {
      return traits::is_constant(g, i);
    } else {
      (void)g, (void)i;
      return false;
    }
  }
  /// A copy never reuses the allocation of the value it copies.
  static bool is_copy(const G& g, instruction_type i) {
    if constexpr (detail::pt_has_is_copy<G>) {
      return traits::is_copy(g, i);
    } else {
      (void)g, (void)i;
      return false;
    }
  }
  /// Whether the graph went through XLA's scheduling and copy insertion (HLO
  /// `is_scheduled=true`); graphs without the trait are assumed to have.
  static bool is_scheduled(const G& g) {
    if constexpr (detail::pt_has_is_scheduled<G>) {
      return traits::is_scheduled(g);
    } else {
      (void)g;
      return true;
    }
  }
  /// The module's parameter/output aliasing.
  static std::vector<io_alias> input_output_aliases(const G& g) {
    if constexpr (detail::pt_has_aliases<G>) {
      return traits::input_output_aliases(g);
    } else {
      (void)g;
      return {};
    }
  }
  /// Whether `user` may write its output at `user_index` over its operand `operand` at
  /// `operand_index` when that operand's value dies at `user` (same size, elementwise).
  static bool can_share_operand_buffer(const G& g, instruction_type operand, const shape_index& operand_index,
                                       instruction_type user, const shape_index& user_index) {
    if constexpr (detail::pt_has_share<G>) {
      return traits::can_share_operand_buffer(g, operand, operand_index, user, user_index);
    } else {
      (void)g, (void)operand, (void)operand_index, (void)user, (void)user_index;
      return false;
    }
  }
};

namespace detail {
/// Opcodes XLA treats as elementwise on every operand (`IsElementwise`), without `copy`.
inline bool hlo_is_elementwise(hlo::opcode op) noexcept {
  static constexpr std::string_view names[] = {
      "abs", "add", "and", "atan2", "bitcast-convert", "cbrt", "ceil", "clamp", "clz", "compare",
      "complex", "convert", "cosine", "divide", "erf", "exponential", "exponential-minus-one",
      "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "maximum", "minimum",
      "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce-precision",
      "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
      "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sqrt",
      "stochastic-convert", "subtract", "tan", "tanh", "xor"};
  const std::string_view n = hlo::name_of(op);
  for (auto x : names) {
    if (x == n) return true;
  }
  return false;
}
/// XLA's `IsElementwiseOnOperand` for an instruction inside a fused computation: the
/// elementwise opcodes plus `copy`, and `dynamic-update-slice` on the array it updates.
inline bool hlo_fused_is_elementwise_on(const hlo::instruction& user, std::size_t operand_number) noexcept {
  if (user.opcode == hlo::opcodes::dynamic_update_slice) return operand_number == 0;
  return user.opcode == hlo::opcodes::copy || hlo_is_elementwise(user.opcode);
}

/// Whether fusion `fusion` is elementwise on its operand `operand` (the first operand slot
/// holding it, as XLA looks it up): a walk over the transitive users of the fused parameter
/// that fails at the first use that is neither elementwise on that operand nor a tuple.
inline bool fusion_is_elementwise_on(const hlo::module& m, hlo::instruction_id fusion, hlo::instruction_id operand) {
  const hlo::instruction& f = m[fusion];
  std::size_t k = 0;
  while (k < f.operands.size() && f.operands[k] != operand) ++k;
  const hlo::computation* fused = nullptr;
  for (const auto& c : f.calls) {
    if (c.role == hlo::call_role::calls) fused = &m[c.computation];
  }
  if (k == f.operands.size() || fused == nullptr || k >= fused->parameters.size()) return false;
  std::vector<hlo::instruction_id> stack{fused->parameters[k]};
  std::unordered_set<hlo::instruction_id> visited{fused->parameters[k]};
  while (!stack.empty()) {
    const hlo::instruction_id current = stack.back();
    stack.pop_back();
    for (const hlo::instruction_id w : m[current].users) {
      const hlo::instruction& user = m[w];
      for (std::size_t j = 0; j < user.operands.size(); ++j) {
        if (user.operands[j] == current && user.opcode != hlo::opcodes::tuple &&
            !hlo_fused_is_elementwise_on(user, j)) {
          return false;
        }
      }
      if (visited.insert(w).second) stack.push_back(w);
    }
  }
  return true;
}
}  // namespace detail

/// The HLO IR answers every planning question (XLA's rules).
template <>
struct planning_traits<hlo::module> {
  using instruction_type = hlo::instruction_id;

  static std::string name(const hlo::module& m, instruction_type i, std::size_t) { return m[i].name; }
  static std::string shape_string(const hlo::module& m, instruction_type i, const shape_index& index) {
    const hlo::shape* s = m[i].shape.subshape(index);
    return s != nullptr ? hlo::to_string(*s) : std::string();
  }
  static bool is_constant(const hlo::module& m, instruction_type i) { return m[i].opcode == hlo::opcodes::constant; }
  static bool is_copy(const hlo::module& m, instruction_type i) { return m[i].opcode == hlo::opcodes::copy; }
  static bool is_scheduled(const hlo::module& m) { return m.is_scheduled; }
  static std::vector<io_alias> input_output_aliases(const hlo::module& m) {
    std::vector<io_alias> out;
    out.reserve(m.input_output_alias.size());
    for (const auto& a : m.input_output_alias) out.push_back({a.output_index, a.parameter, a.parameter_index, a.must_alias});
    return out;
  }
  /// XLA's `CanShareOperandBufferWithUser` for array outputs: equal array shapes, and the
  /// user is elementwise on the operand. A fusion is elementwise on an operand when every
  /// instruction reached from its fused parameter is elementwise on the value it receives
  /// (XLA's `AreTransitiveUsesElementwiseOrTuple`): a fused bitcast, broadcast, reduce or dot
  /// on the way forbids the sharing. Output fusions (XLA's add-root rule) never share here.
  static bool can_share_operand_buffer(const hlo::module& m, instruction_type operand, const shape_index& operand_index,
                                       instruction_type user, const shape_index& user_index) {
    const hlo::shape* a = m[operand].shape.subshape(operand_index);
    const hlo::shape* b = m[user].shape.subshape(user_index);
    if (a == nullptr || b == nullptr || !a->is_array() || !b->is_array()) return false;
    if (a->type != b->type || a->dims != b->dims || a->byte_size() != b->byte_size()) return false;
    const auto& u = m[user];
    if (u.opcode == hlo::opcodes::fusion) {
      const std::string* kind = u.find_attribute("kind");
      if (kind == nullptr || *kind == "kOutput" || !user_index.empty()) return false;
      return detail::fusion_is_elementwise_on(m, user, operand);
    }
    return user_index.empty() && detail::hlo_is_elementwise(u.opcode);
  }
};

}  // namespace xlamem
