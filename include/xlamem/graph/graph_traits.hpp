// SPDX-License-Identifier: Apache-2.0
/// @file
/// Graph traits: what a pass may ask of a user's graph, in the spirit of Boost.Graph and LLVM's
/// GraphTraits. A graph type `G` is adapted by specialising `xlamem::graph_traits<G>` with static
/// functions that take the graph object as their first argument. The vocabulary:
///
/// - computations, each with its instructions in a stable order, its parameters and its root;
/// - operands and users of an instruction, and the computation it belongs to (`parent`);
/// - the shape tree of an instruction's output, visited in pre-order (`for_each_subshape`), with
///   byte size, memory space and split configuration on the leaves;
/// - memory semantics as data (`memory_semantics`): which output subshapes forward an operand's
///   buffer, which operands are updated in place, which computations are called and how their
///   parameters and root bind to the caller's operands and output.
///
/// Optional capabilities are detected: dense instruction numbers (`dense_graph`) let analyses use
/// flat arrays instead of hash maps; `memory_space_graph` adds writable memory space and split
/// configuration on leaves; `entry_graph` and `module_graph` add the entry computation, the
/// schedule flag and input/output aliasing (`io_alias`). The planning passes read a few more
/// optional members of the same `graph_traits<G>` (names, shape text, constants, copies, operand
/// sharing); `graph/graph_queries.hpp` lists them with their defaults, and a member that is
/// present with the wrong signature is a compile error naming it, never a silent default.
///
/// What the compiler cannot check: handles are cheap to copy and compare, stay valid while the
/// graph is not structurally changed, and `instructions(g, c)` returns the same order every time.
/// Every trait function is expected to be O(1) or O(size of what it returns), and thread-compatible
/// (concurrent reads are fine, writes need exclusive access). Traits never own the graph.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace xlamem {

/// The path to a subshape in a shape tree: `{}` is the whole output, `{1, 0}` is element 0 of
/// tuple element 1. Same meaning as XLA's ShapeIndex.
using shape_index = std::vector<std::int64_t>;

/// A split configuration of a layout (XLA `SC(d:i,...)`): the array is split on `dimension`
/// at each of `indices`.
struct split_config {
  std::int64_t dimension = 0;
  std::vector<std::int64_t> indices;

  friend bool operator==(const split_config&, const split_config&) = default;
};

/// A split config's fields for writers that visit fields (`io/codec/json.hpp`).
template <class F>
void visit_fields(const split_config& sc, F&& f) {
  f("dimension", sc.dimension);
  f("indices", sc.indices);
}

/// What `for_each_subshape` reports about one node of an output shape tree.
struct subshape_info {
  bool is_tuple = false;            ///< an interior node (its own value is the pointer table)
  std::size_t tuple_size = 0;       ///< number of elements when `is_tuple`
  std::uint64_t bytes = 0;          ///< buffer size: array bytes, or 8 per element for a tuple
  std::int64_t memory_space = 0;    ///< layout memory space (`S(n)`); 0 is the default space
  std::optional<split_config> split;  ///< first split configuration of the layout, if any
};

/// Output subshape `output_index` (and everything below it) is the operand's buffer at
/// `operand_index`: no new value is defined there (tuple elements, get-tuple-element, a
/// non-defining bitcast, copy-done, optimization barriers).
struct forwarding {
  shape_index output_index;
  std::size_t operand = 0;
  shape_index operand_index;

  friend bool operator==(const forwarding&, const forwarding&) = default;
};

/// The output at `output_index` may reuse the buffer of operand `operand` at `operand_index`
/// (dynamic-update-slice base, scatter operands, custom-call `output_to_operand_aliasing`).
/// Dataflow still defines a new value there; buffer assignment colocates the two.
struct in_place_pair {
  std::size_t operand = 0;
  shape_index operand_index;
  shape_index output_index;
  /// The output must live where the operand lives (XLA: the base of a dynamic-update-slice),
  /// so memory-space propagation follows the pair.
  bool propagates_memory_space = false;

  friend bool operator==(const in_place_pair&, const in_place_pair&) = default;
};

/// How a called computation binds to its caller.
enum class call_binding : std::uint8_t {
  /// Fused computation: parameter k corresponds to operand k and the root to the output, but
  /// they are separate values (the fusion defines its output; fused parameters define theirs).
  fusion,
  /// Call: parameter k aliases operand k, the caller's output aliases the root.
  call,
  /// While body: parameter 0 aliases operand 0 and the body root; the output aliases both.
  while_body,
  /// While condition: parameter 0 aliases operand 0 and the body root; its root is a predicate.
  while_condition,
  /// Conditional branch b: parameter 0 aliases operand `first_operand` (= b + 1); the output
  /// aliases every branch root.
  conditional_branch,
  /// Applied computation without buffer binding (reduce, sort, map, scatter, all-reduce,
  /// custom-call): its parameters and root define their own values.
  embedded,
  /// Asynchronously run computation (XLA's async-start `calls=`): parameter k aliases operand
  /// k, and the arrays of the caller's output {1, ...} are the root's (XLA's ((operands),
  /// output, contexts) tuple; its tuple tables are the caller's own values). It is scheduled
  /// just before its caller, and its values live until the last instruction of the chain that
  /// passes the caller's output on (its async-done).
  async_wrapped,
};

/// One computation an instruction calls, and how it binds.
template <class Computation>
struct called_computation {
  Computation computation;
  call_binding binding = call_binding::embedded;
  std::size_t first_operand = 0;  ///< operand bound to parameter 0 (conditional: branch + 1)
};

/// Memory semantics of one instruction, as data. Output subshapes not covered by `forwards`
/// define new values.
template <class Computation>
struct memory_semantics {
  std::vector<forwarding> forwards;                  ///< output subtrees that reuse operand buffers
  std::vector<in_place_pair> in_place;               ///< operand buffers the output may update
  std::vector<called_computation<Computation>> calls;  ///< called computations and their binding
  /// A bitcast: its output is operand 0's buffer unless the analysis treats bitcasts as
  /// defining (XLA's `bitcast_defines_value`); `forwards` is left empty for it.
  bool is_bitcast = false;
  /// The instruction also reads the buffers it forwards, so they count as uses (XLA: optimization
  /// barriers, copy-done, async-done); tuple, get-tuple-element, copy-of-tuple and domain only
  /// pass them through.
  bool reads_forwarded = false;
};

/// One `input_output_alias` entry (XLA): output subshape `output_index` of the entry root lives
/// in the buffer of entry parameter `parameter` at `parameter_index`. With `must_alias == false`
/// (XLA's may-alias) the parameter's allocation may also hold temporaries once the parameter is
/// dead. The one alias type of the traits: `input_output_aliases(g)` returns a range of these,
/// and colocation and buffer assignment read them. A negative or too large `parameter` is an
/// error of the passes, not undefined behaviour.
struct io_alias {
  shape_index output_index;
  std::int64_t parameter = 0;
  shape_index parameter_index;
  bool must_alias = false;  ///< `must-alias`; otherwise the alias is allowed, not required

  friend bool operator==(const io_alias&, const io_alias&) = default;
};

/// The name `io_alias` had in `graph_traits` before the planning and graph traits were one
/// family; the same type.
using parameter_alias = io_alias;

/// Specialise for a graph type. The primary template is left undefined so that a missing
/// specialisation fails at the first use with "incomplete type graph_traits<G>".
template <class G>
struct graph_traits;

namespace detail {
template <class R>
concept iterable_range = requires(R& r) {
  std::begin(r);
  std::end(r);
};
/// A range whose elements convert to `T`.
template <class R, class T>
concept range_of = iterable_range<R> && requires(R& r) {
  { *std::begin(r) } -> std::convertible_to<T>;
};
/// The visitor a graph's `for_each_subshape` must accept (a named type: lambdas in concepts
/// trip some front ends).
struct subshape_visitor {
  void operator()(const shape_index&, const subshape_info&) const noexcept {}
};
}  // namespace detail

/// A graph that passes can read. Handles (`computation_type`, `instruction_type`) are regular
/// values; `parent(g, i)` is the computation holding `i`.
template <class G>
concept graph = requires(const G& g, typename graph_traits<G>::computation_type c,
                         typename graph_traits<G>::instruction_type i) {
  typename graph_traits<G>::computation_type;
  typename graph_traits<G>::instruction_type;
  requires std::regular<typename graph_traits<G>::computation_type>;
  requires std::regular<typename graph_traits<G>::instruction_type>;
  { graph_traits<G>::computations(g) } -> detail::iterable_range;
  { graph_traits<G>::instructions(g, c) } -> detail::iterable_range;
  { graph_traits<G>::parameters(g, c) } -> detail::iterable_range;
  { graph_traits<G>::root(g, c) } -> std::convertible_to<typename graph_traits<G>::instruction_type>;
  { graph_traits<G>::parent(g, i) } -> std::convertible_to<typename graph_traits<G>::computation_type>;
  { graph_traits<G>::operands(g, i) } -> detail::iterable_range;
  { graph_traits<G>::users(g, i) } -> detail::iterable_range;
  { graph_traits<G>::semantics(g, i) }
      -> std::convertible_to<memory_semantics<typename graph_traits<G>::computation_type>>;
  graph_traits<G>::for_each_subshape(g, i, detail::subshape_visitor{});
};

/// A graph whose instructions and computations carry dense numbers in `[0, count)`, so that
/// analyses can keep per-instruction results in flat arrays.
template <class G>
concept dense_graph = graph<G> && requires(const G& g, typename graph_traits<G>::computation_type c,
                                           typename graph_traits<G>::instruction_type i) {
  { graph_traits<G>::instruction_count(g) } -> std::convertible_to<std::size_t>;
  { graph_traits<G>::instruction_number(g, i) } -> std::convertible_to<std::size_t>;
  { graph_traits<G>::computation_count(g) } -> std::convertible_to<std::size_t>;
  { graph_traits<G>::computation_number(g, c) } -> std::convertible_to<std::size_t>;
};

/// A graph whose output leaves have a memory space and split configuration that a pass may
/// read and write (memory-space propagation). `index` names a leaf of `i`'s output shape.
template <class G>
concept memory_space_graph =
    graph<G> && requires(G& g, const G& cg, typename graph_traits<G>::instruction_type i,
                         const shape_index& index, std::int64_t space,
                         const std::optional<split_config>& split) {
      { graph_traits<G>::memory_space(cg, i, index) } -> std::convertible_to<std::int64_t>;
      { graph_traits<G>::split(cg, i, index) } -> std::convertible_to<std::optional<split_config>>;
      graph_traits<G>::set_memory_space(g, i, index, space);
      graph_traits<G>::set_split(g, i, index, split);
    };

/// A graph that names an entry computation (the program's main function).
template <class G>
concept entry_graph = graph<G> && requires(const G& g) {
  { graph_traits<G>::entry(g) } -> std::convertible_to<typename graph_traits<G>::computation_type>;
};

/// A whole program: an entry computation, whether each computation's instruction order is
/// its schedule (XLA `is_scheduled`), and which entry parameters the output may alias.
template <class G>
concept module_graph = entry_graph<G> && requires(const G& g) {
  { graph_traits<G>::is_scheduled(g) } -> std::convertible_to<bool>;
  { graph_traits<G>::input_output_aliases(g) } -> detail::range_of<io_alias>;
};

}  // namespace xlamem
