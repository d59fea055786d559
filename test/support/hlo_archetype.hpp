// SPDX-License-Identifier: Apache-2.0
// Archetypes: the least a graph can offer and still model `graph` / `memory_space_graph`.
// Handles are bare regular types (plus std::hash, which dataflow_analysis declares it needs
// for graphs without dense numbers), ranges have only begin/end, and nothing else is defined.
// Instantiating the passes with them proves the passes ask for no more than they declare.
// `sized_graph` has `std::size_t` handles and dense numbers; `planning_graph` declares every
// optional member of graph/graph_queries.hpp, each with the least its signature allows
// (input_output_aliases returns a begin/end range of a type that only converts to io_alias).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "xlamem/graph/graph_traits.hpp"

namespace xlamem::test::archetype {

struct comp {
  int v = 0;
  friend bool operator==(const comp&, const comp&) = default;
};
struct instr {
  int v = 0;
  friend bool operator==(const instr&, const instr&) = default;
};

/// A range with nothing but begin/end over a pointer pair.
template <class T>
struct range {
  const T* b = nullptr;
  const T* e = nullptr;
  const T* begin() const { return b; }
  const T* end() const { return e; }
};

/// An empty read-only graph.
struct graph {};
/// An empty graph with writable memory spaces.
struct mutable_graph {};

template <class G>
struct traits_base {
  using computation_type = comp;
  using instruction_type = instr;
  static range<comp> computations(const G&) { return {}; }
  static range<instr> instructions(const G&, comp) { return {}; }
  static range<instr> parameters(const G&, comp) { return {}; }
  static instr root(const G&, comp) { return {}; }
  static comp parent(const G&, instr) { return {}; }
  static range<instr> operands(const G&, instr) { return {}; }
  static range<instr> users(const G&, instr) { return {}; }
  static memory_semantics<comp> semantics(const G&, instr) { return {}; }
  template <class F>
  static void for_each_subshape(const G&, instr, F&& f) {
    f(shape_index{}, subshape_info{});
  }
};

/// A graph whose handles are `std::size_t` (dense numbers), as an IR holding nodes in a vector.
struct sized_graph {};
/// A graph that answers every optional planning question.
struct planning_graph {};

/// An alias entry of the graph's own type: it converts to io_alias and offers nothing else.
struct own_alias {
  operator io_alias() const { return {}; }  // NOLINT(google-explicit-constructor): the point
};

}  // namespace xlamem::test::archetype

template <>
struct std::hash<xlamem::test::archetype::instr> {
  std::size_t operator()(const xlamem::test::archetype::instr& i) const noexcept { return std::hash<int>{}(i.v); }
};

template <>
struct xlamem::graph_traits<xlamem::test::archetype::graph>
    : xlamem::test::archetype::traits_base<xlamem::test::archetype::graph> {};

template <>
struct xlamem::graph_traits<xlamem::test::archetype::mutable_graph>
    : xlamem::test::archetype::traits_base<xlamem::test::archetype::mutable_graph> {
  using G = xlamem::test::archetype::mutable_graph;
  static std::int64_t memory_space(const G&, instruction_type, const shape_index&) { return 0; }
  static std::optional<split_config> split(const G&, instruction_type, const shape_index&) { return std::nullopt; }
  static void set_memory_space(G&, instruction_type, const shape_index&, std::int64_t) {}
  static void set_split(G&, instruction_type, const shape_index&, const std::optional<split_config>&) {}
};

static_assert(xlamem::graph<xlamem::test::archetype::graph>);
static_assert(!xlamem::dense_graph<xlamem::test::archetype::graph>);
static_assert(!xlamem::memory_space_graph<xlamem::test::archetype::graph>);
static_assert(xlamem::memory_space_graph<xlamem::test::archetype::mutable_graph>);

template <>
struct xlamem::graph_traits<xlamem::test::archetype::sized_graph> {
  using G = xlamem::test::archetype::sized_graph;
  using computation_type = std::size_t;
  using instruction_type = std::size_t;
  static xlamem::test::archetype::range<std::size_t> computations(const G&) { return {}; }
  static xlamem::test::archetype::range<std::size_t> instructions(const G&, std::size_t) { return {}; }
  static xlamem::test::archetype::range<std::size_t> parameters(const G&, std::size_t) { return {}; }
  static std::size_t root(const G&, std::size_t) { return 0; }
  static std::size_t parent(const G&, std::size_t) { return 0; }
  static xlamem::test::archetype::range<std::size_t> operands(const G&, std::size_t) { return {}; }
  static xlamem::test::archetype::range<std::size_t> users(const G&, std::size_t) { return {}; }
  static memory_semantics<std::size_t> semantics(const G&, std::size_t) { return {}; }
  template <class F>
  static void for_each_subshape(const G&, std::size_t, F&& f) {
    f(shape_index{}, subshape_info{});
  }
  static std::size_t instruction_count(const G&) { return 0; }
  static std::size_t instruction_number(const G&, std::size_t i) { return i; }
  static std::size_t computation_count(const G&) { return 0; }
  static std::size_t computation_number(const G&, std::size_t c) { return c; }
};

template <>
struct xlamem::graph_traits<xlamem::test::archetype::planning_graph>
    : xlamem::test::archetype::traits_base<xlamem::test::archetype::planning_graph> {
  using G = xlamem::test::archetype::planning_graph;
  static const char* name(const G&, instruction_type) { return "i"; }
  static const char* shape_string(const G&, instruction_type, const shape_index&) { return "f32[]"; }
  static const char* computation_name(const G&, computation_type) { return "c"; }
  static bool is_constant(const G&, instruction_type) { return false; }
  static bool is_copy(const G&, instruction_type) { return false; }
  static bool is_scheduled(const G&) { return true; }
  static computation_type entry(const G&) { return {}; }
  static xlamem::test::archetype::range<xlamem::test::archetype::own_alias> input_output_aliases(const G&) { return {}; }
  static bool can_share_operand_buffer(const G&, instruction_type, const shape_index&, instruction_type,
                                       const shape_index&) {
    return false;
  }
};

static_assert(xlamem::dense_graph<xlamem::test::archetype::sized_graph>);
static_assert(xlamem::module_graph<xlamem::test::archetype::planning_graph>);
