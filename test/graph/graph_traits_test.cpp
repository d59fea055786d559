// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/graph/graph_traits.hpp: the concepts (graph, dense_graph,
// memory_space_graph, entry_graph, module_graph) on the HLO model and on small graphs of the test's
// own, their near misses, the vocabulary types, and a pass run on a graph adapted only by traits.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "support/hlo_helpers.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/passes/dataflow.hpp"

namespace graph_traits_test {
// A chain of instructions in one computation, each reading the ones `operands` lists: the least a
// graph must offer, adapted by traits alone (no member functions).
struct chain {
  std::vector<std::vector<int>> operands;
};
// The same with more of the optional vocabulary, one capability each.
struct dense_chain : chain {};
struct module_chain : chain {
  std::vector<xlamem::io_alias> aliases;
};
struct memory_chain : chain {
  std::vector<std::int64_t> spaces;
};
// Near misses.
struct no_semantics : chain {};
struct odd_aliases : chain {};
struct half_dense : chain {};
struct handle {
  int n = 0;  // no ==: not a regular type
};
struct irregular : chain {};

// The traits every chain shares.
struct chain_traits {
  using computation_type = int;
  using instruction_type = int;
  static std::vector<int> computations(const chain&) { return {0}; }
  static std::vector<int> instructions(const chain& g, int) {
    std::vector<int> out(g.operands.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<int>(k);
    return out;
  }
  static std::vector<int> parameters(const chain& g, int) {
    std::vector<int> out;
    for (std::size_t k = 0; k < g.operands.size(); ++k) {
      if (g.operands[k].empty()) out.push_back(static_cast<int>(k));
    }
    return out;
  }
  static int root(const chain& g, int) { return static_cast<int>(g.operands.size()) - 1; }
  static int parent(const chain&, int) { return 0; }
  static const std::vector<int>& operands(const chain& g, int i) { return g.operands[static_cast<std::size_t>(i)]; }
  static std::vector<int> users(const chain& g, int i) {
    std::vector<int> out;
    for (std::size_t k = 0; k < g.operands.size(); ++k) {
      for (const int o : g.operands[k]) {
        if (o == i && (out.empty() || out.back() != static_cast<int>(k))) out.push_back(static_cast<int>(k));
      }
    }
    return out;
  }
  static xlamem::memory_semantics<int> semantics(const chain&, int) { return {}; }
  template <class F>
  static void for_each_subshape(const chain&, int, F&& f) {
    f(xlamem::shape_index{}, xlamem::subshape_info{false, 0, 16, 0, std::nullopt});
  }
};
}  // namespace graph_traits_test

template <>
struct xlamem::graph_traits<graph_traits_test::chain> : graph_traits_test::chain_traits {};
template <>
struct xlamem::graph_traits<graph_traits_test::dense_chain> : graph_traits_test::chain_traits {
  static std::size_t instruction_count(const graph_traits_test::chain& g) { return g.operands.size(); }
  static std::size_t instruction_number(const graph_traits_test::chain&, int i) { return static_cast<std::size_t>(i); }
  static std::size_t computation_count(const graph_traits_test::chain&) { return 1; }
  static std::size_t computation_number(const graph_traits_test::chain&, int) { return 0; }
};
template <>
struct xlamem::graph_traits<graph_traits_test::module_chain> : graph_traits_test::chain_traits {
  static int entry(const graph_traits_test::module_chain&) { return 0; }
  static bool is_scheduled(const graph_traits_test::module_chain&) { return true; }
  static const std::vector<xlamem::io_alias>& input_output_aliases(const graph_traits_test::module_chain& g) { return g.aliases; }
};
template <>
struct xlamem::graph_traits<graph_traits_test::memory_chain> : graph_traits_test::chain_traits {
  static std::int64_t memory_space(const graph_traits_test::memory_chain& g, int i, const xlamem::shape_index&) {
    return g.spaces[static_cast<std::size_t>(i)];
  }
  static std::optional<xlamem::split_config> split(const graph_traits_test::memory_chain&, int, const xlamem::shape_index&) {
    return std::nullopt;
  }
  static void set_memory_space(graph_traits_test::memory_chain& g, int i, const xlamem::shape_index&, std::int64_t s) {
    g.spaces[static_cast<std::size_t>(i)] = s;
  }
  static void set_split(graph_traits_test::memory_chain&, int, const xlamem::shape_index&, const std::optional<xlamem::split_config>&) {}
};
template <>
struct xlamem::graph_traits<graph_traits_test::no_semantics> {
  using computation_type = int;
  using instruction_type = int;
  static std::vector<int> computations(const graph_traits_test::chain&) { return {0}; }
  static std::vector<int> instructions(const graph_traits_test::chain&, int) { return {}; }
  static std::vector<int> parameters(const graph_traits_test::chain&, int) { return {}; }
  static int root(const graph_traits_test::chain&, int) { return 0; }
  static int parent(const graph_traits_test::chain&, int) { return 0; }
  static std::vector<int> operands(const graph_traits_test::chain&, int) { return {}; }
  static std::vector<int> users(const graph_traits_test::chain&, int) { return {}; }
  template <class F>
  static void for_each_subshape(const graph_traits_test::chain&, int, F&&) {}
};
template <>
struct xlamem::graph_traits<graph_traits_test::odd_aliases> : graph_traits_test::chain_traits {
  static int entry(const graph_traits_test::chain&) { return 0; }
  static bool is_scheduled(const graph_traits_test::chain&) { return true; }
  static std::vector<int> input_output_aliases(const graph_traits_test::chain&) { return {}; }  // not io_alias
};
template <>
struct xlamem::graph_traits<graph_traits_test::half_dense> : graph_traits_test::chain_traits {
  static std::size_t instruction_count(const graph_traits_test::chain& g) { return g.operands.size(); }
};
template <>
struct xlamem::graph_traits<graph_traits_test::irregular> : graph_traits_test::chain_traits {
  using instruction_type = graph_traits_test::handle;
};

TEST_SUITE("graph/graph_traits") {
  using namespace xlamem;
  using namespace graph_traits_test;

  TEST_CASE("each capability is told apart: the least graph, dense numbers, memory spaces, an entry, a module") {
    static_assert(graph<chain> && !dense_graph<chain> && !memory_space_graph<chain> && !entry_graph<chain>);
    static_assert(dense_graph<dense_chain> && !module_graph<dense_chain>);
    static_assert(entry_graph<module_chain> && module_graph<module_chain> && !dense_graph<module_chain>);
    static_assert(memory_space_graph<memory_chain> && !module_graph<memory_chain>);
    CHECK(true);
  }

  TEST_CASE("near misses: no semantics, aliases of another type, half the dense numbering, an irregular handle") {
    static_assert(!graph<no_semantics>);
    static_assert(entry_graph<odd_aliases> && !module_graph<odd_aliases>);
    static_assert(graph<half_dense> && !dense_graph<half_dense>);
    static_assert(!std::regular<handle> && !graph<irregular>);
    CHECK(true);
  }

  TEST_CASE("the vocabulary: shape indices, split configs as JSON, aliases and in-place pairs compare by value") {
    static_assert(std::is_same_v<parameter_alias, io_alias>);
    const split_config sc{1, {4, 8}};
    CHECK(sc == split_config{1, {4, 8}});
    CHECK_FALSE(sc == split_config{1, {4}});
    CHECK(to_json(sc) == R"({"dimension":1,"indices":[4,8]})");
    CHECK(io_alias{{1}, 0, {}, true} == io_alias{{1}, 0, {}, true});
    CHECK_FALSE(io_alias{{1}, 0, {}, true} == io_alias{{1}, 0, {}, false});
    CHECK(forwarding{{0}, 1, {2}} == forwarding{{0}, 1, {2}});
    CHECK_FALSE(in_place_pair{0, {}, {}, true} == in_place_pair{0, {}, {}, false});
    const memory_semantics<int> none;
    CHECK(none.forwards.empty());
    CHECK(none.in_place.empty());
    CHECK(none.calls.empty());
    CHECK_FALSE(none.is_bitcast);
    CHECK_FALSE(none.reads_forwarded);
    const called_computation<int> call{3};
    CHECK(call.binding == call_binding::embedded);
    CHECK(call.first_operand == 0);
    const subshape_info leaf;
    CHECK_FALSE(leaf.is_tuple);
    CHECK(leaf.memory_space == 0);
    CHECK_FALSE(leaf.split.has_value());
  }

  TEST_CASE("a pass runs on a graph adapted by traits alone: dataflow over the chain, hashed and dense") {
    // p0, p1 -> a = f(p0, p1) -> b = g(a, a) -> r = h(b, p0)
    const chain g{{{}, {}, {0, 1}, {2, 2}, {3, 0}}};
    auto df = dataflow_analysis<chain>::run(g);
    REQUIRE_MESSAGE(df.has_value(), df.error().to_string());
    CHECK(df->values().size() == 5);  // no forwarding: each instruction defines its one value
    for (int i = 0; i < 5; ++i) {
      CAPTURE(i);
      REQUIRE(df->value_set(i, {}).size() == 1);
      CHECK(df->get(df->value_set(i, {})[0]).bytes == 16);
    }
    CHECK(df->value_set(2, {})[0] != df->value_set(3, {})[0]);
    CHECK(chain_traits::users(g, 0) == std::vector<int>{2, 4});
    CHECK(chain_traits::users(g, 2) == std::vector<int>{3});  // read twice by b: one user
    dense_chain d;
    d.operands = g.operands;
    auto dd = dataflow_analysis<dense_chain>::run(d);
    REQUIRE_MESSAGE(dd.has_value(), dd.error().to_string());
    CHECK(dd->values().size() == 5);
    CHECK(dd->number(4) == 4);
  }
}

TEST_SUITE("hlo/graph_traits") {
  using namespace xlamem::test::hlo_helpers;

  TEST_CASE("concepts: positive models and near misses") {
    struct no_traits {};
    static_assert(!graph<no_traits>);
    static_assert(graph<hlo::module> && dense_graph<hlo::module> && memory_space_graph<hlo::module>);
    static_assert(entry_graph<hlo::module>);
    static_assert(!entry_graph<test::kernel_graph>);
    static_assert(module_graph<hlo::module>);
    static_assert(!module_graph<test::archetype::graph>);
    CHECK(true);
  }
}
