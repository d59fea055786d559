// SPDX-License-Identifier: Apache-2.0
/// @file
/// `graph_queries<G>`: how the passes read the optional members of `graph_traits<G>`. There is
/// one customisation point, `graph_traits<G>`; this header is not one (do not specialise
/// `graph_queries`). Each optional member is detected by name, and a member that is present but
/// does not have the signature below is a `static_assert` naming it: a typo in a return type
/// must not turn into "no constants, no aliases" without a word.
///
/// The optional members and what a graph without them gets:
///
///     // planning: reports, constants, copies, schedule, input/output aliasing, in-place reuse
///     static std::string name(const G&, instruction);                 // "#N" (dense number)
///     static std::string shape_string(const G&, instruction, const shape_index&);  // ""
///     static std::string computation_name(const G&, computation);     // "entry"
///     static bool is_constant(const G&, instruction);                 // false
///     static bool is_copy(const G&, instruction);                     // false
///     static bool is_scheduled(const G&);                             // true
///     static RANGE-OF-io_alias input_output_aliases(const G&);        // none
///     static bool can_share_operand_buffer(const G&, instruction operand, const shape_index&,
///                                          instruction user, const shape_index&);  // false
///     // graph structure (graph/graph_traits.hpp's concepts)
///     static computation entry(const G&);                             // the last computation
///     static std::size_t instruction_count(const G&), instruction_number(const G&, instruction),
///                        computation_count(const G&), computation_number(const G&, computation);
///     static std::int64_t memory_space(const G&, instruction, const shape_index&);  // and split,
///     // set_memory_space, set_split (memory_space_graph)
///
/// `name`, `shape_string` and `computation_name` may return anything a `std::string` is made
/// from (`std::string`, `std::string_view`, `const char*`). A graph_traits specialisation must be a non-final class (the detection
/// derives from it). Every query is O(1) plus the cost of the member it calls.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "xlamem/graph/graph_traits.hpp"

namespace xlamem {

namespace detail {
/// `declares_X<T>`: `T` has a member named X, whatever its kind or signature. Lookup of X in a
/// class derived from `T` and from a probe that has an X is ambiguous exactly when `T` has one.
template <class T, class Probe>
struct member_probe_mix : T, Probe {};

struct probe_name {
  int name;
};
template <class T>
concept declares_name = !requires { &member_probe_mix<T, probe_name>::name; };
struct probe_shape_string {
  int shape_string;
};
template <class T>
concept declares_shape_string = !requires { &member_probe_mix<T, probe_shape_string>::shape_string; };
struct probe_computation_name {
  int computation_name;
};
template <class T>
concept declares_computation_name = !requires { &member_probe_mix<T, probe_computation_name>::computation_name; };
struct probe_is_constant {
  int is_constant;
};
template <class T>
concept declares_is_constant = !requires { &member_probe_mix<T, probe_is_constant>::is_constant; };
struct probe_is_copy {
  int is_copy;
};
template <class T>
concept declares_is_copy = !requires { &member_probe_mix<T, probe_is_copy>::is_copy; };
struct probe_is_scheduled {
  int is_scheduled;
};
template <class T>
concept declares_is_scheduled = !requires { &member_probe_mix<T, probe_is_scheduled>::is_scheduled; };
struct probe_input_output_aliases {
  int input_output_aliases;
};
template <class T>
concept declares_input_output_aliases = !requires { &member_probe_mix<T, probe_input_output_aliases>::input_output_aliases; };
struct probe_can_share_operand_buffer {
  int can_share_operand_buffer;
};
template <class T>
concept declares_can_share_operand_buffer = !requires { &member_probe_mix<T, probe_can_share_operand_buffer>::can_share_operand_buffer; };
struct probe_entry {
  int entry;
};
template <class T>
concept declares_entry = !requires { &member_probe_mix<T, probe_entry>::entry; };
struct probe_instruction_count {
  int instruction_count;
};
template <class T>
concept declares_instruction_count = !requires { &member_probe_mix<T, probe_instruction_count>::instruction_count; };
struct probe_instruction_number {
  int instruction_number;
};
template <class T>
concept declares_instruction_number = !requires { &member_probe_mix<T, probe_instruction_number>::instruction_number; };
struct probe_computation_count {
  int computation_count;
};
template <class T>
concept declares_computation_count = !requires { &member_probe_mix<T, probe_computation_count>::computation_count; };
struct probe_computation_number {
  int computation_number;
};
template <class T>
concept declares_computation_number = !requires { &member_probe_mix<T, probe_computation_number>::computation_number; };
struct probe_memory_space {
  int memory_space;
};
template <class T>
concept declares_memory_space = !requires { &member_probe_mix<T, probe_memory_space>::memory_space; };
struct probe_split {
  int split;
};
template <class T>
concept declares_split = !requires { &member_probe_mix<T, probe_split>::split; };
struct probe_set_memory_space {
  int set_memory_space;
};
template <class T>
concept declares_set_memory_space = !requires { &member_probe_mix<T, probe_set_memory_space>::set_memory_space; };
struct probe_set_split {
  int set_split;
};
template <class T>
concept declares_set_split = !requires { &member_probe_mix<T, probe_set_split>::set_split; };

// The signatures the optional members must have.
template <class G, class T = graph_traits<G>>
concept q_name = requires(const G& g, typename T::instruction_type i) {
  requires std::constructible_from<std::string, decltype(T::name(g, i))>;
};
template <class G, class T = graph_traits<G>>
concept q_shape_string = requires(const G& g, typename T::instruction_type i, const shape_index& x) {
  requires std::constructible_from<std::string, decltype(T::shape_string(g, i, x))>;
};
template <class G, class T = graph_traits<G>>
concept q_computation_name = requires(const G& g, typename T::computation_type c) {
  requires std::constructible_from<std::string, decltype(T::computation_name(g, c))>;
};
template <class G, class T = graph_traits<G>>
concept q_is_constant = requires(const G& g, typename T::instruction_type i) {
  { T::is_constant(g, i) } -> std::convertible_to<bool>;
};
template <class G, class T = graph_traits<G>>
concept q_is_copy = requires(const G& g, typename T::instruction_type i) {
  { T::is_copy(g, i) } -> std::convertible_to<bool>;
};
template <class G, class T = graph_traits<G>>
concept q_is_scheduled = requires(const G& g) {
  { T::is_scheduled(g) } -> std::convertible_to<bool>;
};
template <class G, class T = graph_traits<G>>
concept q_input_output_aliases = requires(const G& g) {
  { T::input_output_aliases(g) } -> range_of<io_alias>;
};
template <class G, class T = graph_traits<G>>
concept q_can_share_operand_buffer =
    requires(const G& g, typename T::instruction_type i, const shape_index& x) {
      { T::can_share_operand_buffer(g, i, x, i, x) } -> std::convertible_to<bool>;
    };
template <class G, class T = graph_traits<G>>
concept q_entry = requires(const G& g) {
  { T::entry(g) } -> std::convertible_to<typename T::computation_type>;
};
template <class G, class T = graph_traits<G>>
concept q_instruction_count = requires(const G& g) {
  { T::instruction_count(g) } -> std::convertible_to<std::size_t>;
};
template <class G, class T = graph_traits<G>>
concept q_instruction_number = requires(const G& g, typename T::instruction_type i) {
  { T::instruction_number(g, i) } -> std::convertible_to<std::size_t>;
};
template <class G, class T = graph_traits<G>>
concept q_computation_count = requires(const G& g) {
  { T::computation_count(g) } -> std::convertible_to<std::size_t>;
};
template <class G, class T = graph_traits<G>>
concept q_computation_number = requires(const G& g, typename T::computation_type c) {
  { T::computation_number(g, c) } -> std::convertible_to<std::size_t>;
};
template <class G, class T = graph_traits<G>>
concept q_memory_space = requires(const G& g, typename T::instruction_type i, const shape_index& x) {
  { T::memory_space(g, i, x) } -> std::convertible_to<std::int64_t>;
};
template <class G, class T = graph_traits<G>>
concept q_split = requires(const G& g, typename T::instruction_type i, const shape_index& x) {
  { T::split(g, i, x) } -> std::convertible_to<std::optional<split_config>>;
};
template <class G, class T = graph_traits<G>>
concept q_set_memory_space = requires(G& g, typename T::instruction_type i, const shape_index& x, std::int64_t s) {
  T::set_memory_space(g, i, x, s);
};
template <class G, class T = graph_traits<G>>
concept q_set_split =
    requires(G& g, typename T::instruction_type i, const shape_index& x, const std::optional<split_config>& s) {
      T::set_split(g, i, x, s);
    };
}  // namespace detail

/// The optional members of `graph_traits<G>` with their defaults; instantiating it checks every
/// member that is present (see the file comment). The passes call these, never the members.
template <graph G>
struct graph_queries {
  using traits = graph_traits<G>;
  using instruction_type = typename traits::instruction_type;
  using computation_type = typename traits::computation_type;

  static_assert(!detail::declares_name<traits> || detail::q_name<G>,
                "graph_traits<G>::name must be callable as name(const G&, instruction_type) and return "
                "something convertible to std::string");
  static_assert(!detail::declares_shape_string<traits> || detail::q_shape_string<G>,
                "graph_traits<G>::shape_string must be callable as shape_string(const G&, instruction_type, "
                "const shape_index&) and return something convertible to std::string");
  static_assert(!detail::declares_computation_name<traits> || detail::q_computation_name<G>,
                "graph_traits<G>::computation_name must be callable as computation_name(const G&, "
                "computation_type) and return something convertible to std::string");
  static_assert(!detail::declares_is_constant<traits> || detail::q_is_constant<G>,
                "graph_traits<G>::is_constant must be callable as is_constant(const G&, instruction_type) "
                "and return bool");
  static_assert(!detail::declares_is_copy<traits> || detail::q_is_copy<G>,
                "graph_traits<G>::is_copy must be callable as is_copy(const G&, instruction_type) and "
                "return bool");
  static_assert(!detail::declares_is_scheduled<traits> || detail::q_is_scheduled<G>,
                "graph_traits<G>::is_scheduled must be callable as is_scheduled(const G&) and return bool");
  static_assert(!detail::declares_input_output_aliases<traits> || detail::q_input_output_aliases<G>,
                "graph_traits<G>::input_output_aliases must be callable as input_output_aliases(const G&) "
                "and return a range of xlamem::io_alias");
  static_assert(!detail::declares_can_share_operand_buffer<traits> || detail::q_can_share_operand_buffer<G>,
                "graph_traits<G>::can_share_operand_buffer must be callable as can_share_operand_buffer("
                "const G&, instruction_type, const shape_index&, instruction_type, const shape_index&) "
                "and return bool");
  static_assert(!detail::declares_entry<traits> || detail::q_entry<G>,
                "graph_traits<G>::entry must be callable as entry(const G&) and return a computation_type");
  static_assert(!detail::declares_instruction_count<traits> || detail::q_instruction_count<G>,
                "graph_traits<G>::instruction_count must be callable as instruction_count(const G&) and "
                "return std::size_t");
  static_assert(!detail::declares_instruction_number<traits> || detail::q_instruction_number<G>,
                "graph_traits<G>::instruction_number must be callable as instruction_number(const G&, "
                "instruction_type) and return std::size_t");
  static_assert(!detail::declares_computation_count<traits> || detail::q_computation_count<G>,
                "graph_traits<G>::computation_count must be callable as computation_count(const G&) and "
                "return std::size_t");
  static_assert(!detail::declares_computation_number<traits> || detail::q_computation_number<G>,
                "graph_traits<G>::computation_number must be callable as computation_number(const G&, "
                "computation_type) and return std::size_t");
  static_assert((detail::declares_instruction_count<traits> || detail::declares_instruction_number<traits> ||
                 detail::declares_computation_count<traits> || detail::declares_computation_number<traits>) ==
                    dense_graph<G>,
                "graph_traits<G>: dense numbering needs all four of instruction_count, instruction_number, "
                "computation_count and computation_number");
  static_assert(!detail::declares_memory_space<traits> || detail::q_memory_space<G>,
                "graph_traits<G>::memory_space must be callable as memory_space(const G&, instruction_type, "
                "const shape_index&) and return std::int64_t");
  static_assert(!detail::declares_split<traits> || detail::q_split<G>,
                "graph_traits<G>::split must be callable as split(const G&, instruction_type, const "
                "shape_index&) and return std::optional<split_config>");
  static_assert(!detail::declares_set_memory_space<traits> || detail::q_set_memory_space<G>,
                "graph_traits<G>::set_memory_space must be callable as set_memory_space(G&, instruction_type, "
                "const shape_index&, std::int64_t)");
  static_assert(!detail::declares_set_split<traits> || detail::q_set_split<G>,
                "graph_traits<G>::set_split must be callable as set_split(G&, instruction_type, const "
                "shape_index&, const std::optional<split_config>&)");

  /// Always true; `static_assert(graph_queries<G>::checked)` runs the checks above.
  static constexpr bool checked = true;

  /// A name for reports; `fallback` is the instruction's dense number in the analysis.
  static std::string name(const G& g, instruction_type i, std::size_t fallback) {
    if constexpr (detail::declares_name<traits>) {
      (void)fallback;
      return std::string(traits::name(g, i));
    } else {
      (void)g, (void)i;
      return "#" + std::to_string(fallback);
    }
  }
  /// The subshape at `index` as text (with layout), or empty when unknown.
  static std::string shape_string(const G& g, instruction_type i, const shape_index& index) {
    if constexpr (detail::declares_shape_string<traits>) {
      return std::string(traits::shape_string(g, i, index));
    } else {
      (void)g, (void)i, (void)index;
      return {};
    }
  }
  /// The name of computation `c` for reports.
  static std::string computation_name(const G& g, computation_type c) {
    if constexpr (detail::declares_computation_name<traits>) {
      return std::string(traits::computation_name(g, c));
    } else {
      (void)g, (void)c;
      return "entry";
    }
  }
  /// Constants get their own never-reused allocation and count in no statistic.
  static bool is_constant(const G& g, instruction_type i) {
    if constexpr (detail::declares_is_constant<traits>) {
      return traits::is_constant(g, i);
    } else {
      (void)g, (void)i;
      return false;
    }
  }
  /// A copy never reuses the allocation of the value it copies.
  static bool is_copy(const G& g, instruction_type i) {
    if constexpr (detail::declares_is_copy<traits>) {
      return traits::is_copy(g, i);
    } else {
      (void)g, (void)i;
      return false;
    }
  }
  /// Whether the graph went through XLA's scheduling and copy insertion (HLO
  /// `is_scheduled=true`); graphs without the member are assumed to have.
  static bool is_scheduled(const G& g) {
    if constexpr (detail::declares_is_scheduled<traits>) {
      return traits::is_scheduled(g);
    } else {
      (void)g;
      return true;
    }
  }
  /// The module's parameter/output aliasing, copied out of whatever range the graph returns.
  static std::vector<io_alias> input_output_aliases(const G& g) {
    if constexpr (detail::declares_input_output_aliases<traits>) {
      std::vector<io_alias> out;
      for (auto&& a : traits::input_output_aliases(g)) out.push_back(static_cast<io_alias>(a));
      return out;
    } else {
      (void)g;
      return {};
    }
  }
  /// Whether `user` may write its output at `user_index` over its operand `operand` at
  /// `operand_index` when that operand's value dies at `user` (same size, elementwise).
  static bool can_share_operand_buffer(const G& g, instruction_type operand, const shape_index& operand_index,
                                       instruction_type user, const shape_index& user_index) {
    if constexpr (detail::declares_can_share_operand_buffer<traits>) {
      return traits::can_share_operand_buffer(g, operand, operand_index, user, user_index);
    } else {
      (void)g, (void)operand, (void)operand_index, (void)user, (void)user_index;
      return false;
    }
  }
};

}  // namespace xlamem
