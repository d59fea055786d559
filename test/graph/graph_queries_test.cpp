// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/graph/graph_queries.hpp: the defaults a graph without the optional members
// gets, the members a graph has (any return type that converts), detection by name, and the
// signature checks that stop a member with the wrong type from passing as absent.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"

namespace graph_queries_test {
// A graph of `n` instructions in one computation, no operands: the required members only.
struct plain {
  int n = 3;
};
// The same graph with every optional member, each returning a type that converts.
struct full : plain {
  std::vector<std::string> names{"a", "b", "c"};
};
// Optional members with the wrong signature (the checks must see them; nothing instantiates
// graph_queries for these, which would stop the build: test/compile_fail covers that).
struct wrong : plain {};
struct data_member : plain {};

struct plain_traits {
  using computation_type = int;
  using instruction_type = int;
  static std::vector<int> computations(const plain&) { return {0}; }
  static std::vector<int> instructions(const plain& g, int) {
    std::vector<int> out;
    for (int k = 0; k < g.n; ++k) out.push_back(k);
    return out;
  }
  static std::vector<int> parameters(const plain&, int) { return {}; }
  static int root(const plain& g, int) { return g.n - 1; }
  static int parent(const plain&, int) { return 0; }
  static std::vector<int> operands(const plain&, int) { return {}; }
  static std::vector<int> users(const plain&, int) { return {}; }
  static xlamem::memory_semantics<int> semantics(const plain&, int) { return {}; }
  template <class F>
  static void for_each_subshape(const plain&, int, F&& f) {
    f(xlamem::shape_index{}, xlamem::subshape_info{false, 0, 4, 0, std::nullopt});
  }
};
// An alias type of the graph's own that converts to io_alias.
struct my_alias {
  int output = 0;
  operator xlamem::io_alias() const { return {{output}, 0, {}, true}; }  // NOLINT: converts on purpose
};
}  // namespace graph_queries_test

template <>
struct xlamem::graph_traits<graph_queries_test::plain> : graph_queries_test::plain_traits {};
template <>
struct xlamem::graph_traits<graph_queries_test::full> : graph_queries_test::plain_traits {
  static const std::string& name(const graph_queries_test::full& g, int i) { return g.names[static_cast<std::size_t>(i)]; }
  static const char* shape_string(const graph_queries_test::full&, int, const xlamem::shape_index& x) {
    return x.empty() ? "f32[4]{0}" : "f32[]";
  }
  // A view, as a graph that owns its names hands them out (a std::string is made from it).
  static std::string_view computation_name(const graph_queries_test::full&, int) { return "main"; }
  static int is_constant(const graph_queries_test::full&, int i) { return i == 0 ? 1 : 0; }  // converts to bool
  static bool is_copy(const graph_queries_test::full&, int i) { return i == 1; }
  static bool is_scheduled(const graph_queries_test::full&) { return false; }
  static std::array<graph_queries_test::my_alias, 2> input_output_aliases(const graph_queries_test::full&) {
    return {graph_queries_test::my_alias{0}, graph_queries_test::my_alias{1}};
  }
  static bool can_share_operand_buffer(const graph_queries_test::full&, int operand, const xlamem::shape_index&, int user,
                                       const xlamem::shape_index&) {
    return operand + 1 == user;
  }
};
template <>
struct xlamem::graph_traits<graph_queries_test::wrong> : graph_queries_test::plain_traits {
  static std::vector<int> name(const graph_queries_test::wrong&, int) { return {}; }              // not text
  static std::string is_constant(const graph_queries_test::wrong&, int) { return "yes"; }         // not bool
  static bool is_scheduled(const graph_queries_test::wrong&, int) { return true; }                // an extra argument
  static std::vector<int> input_output_aliases(const graph_queries_test::wrong&) { return {}; }  // not io_alias
  static std::size_t instruction_count(const graph_queries_test::wrong&) { return 3; }           // one of four
};
template <>
struct xlamem::graph_traits<graph_queries_test::data_member> : graph_queries_test::plain_traits {
  static constexpr bool is_copy = true;  // a member by that name, but no function
};

TEST_SUITE("graph/graph_queries") {
  using namespace xlamem;
  using namespace graph_queries_test;

  TEST_CASE("without the optional members: the documented defaults") {
    using Q = graph_queries<plain>;
    static_assert(Q::checked);
    const plain g;
    CHECK(Q::name(g, 2, 7) == "#7");  // the analysis's dense number, not the handle
    CHECK(Q::shape_string(g, 0, {}).empty());
    CHECK(Q::computation_name(g, 0) == "entry");
    CHECK_FALSE(Q::is_constant(g, 0));
    CHECK_FALSE(Q::is_copy(g, 0));
    CHECK(Q::is_scheduled(g));
    CHECK(Q::input_output_aliases(g).empty());
    CHECK_FALSE(Q::can_share_operand_buffer(g, 0, {}, 1, {}));
  }

  TEST_CASE("with them: each member called, its result converted") {
    using Q = graph_queries<full>;
    static_assert(Q::checked);
    const full g;
    CHECK(Q::name(g, 1, 7) == "b");
    CHECK(Q::shape_string(g, 0, {}) == "f32[4]{0}");
    CHECK(Q::shape_string(g, 0, {0}) == "f32[]");
    CHECK(Q::computation_name(g, 0) == "main");
    CHECK(Q::is_constant(g, 0));
    CHECK_FALSE(Q::is_constant(g, 1));
    CHECK(Q::is_copy(g, 1));
    CHECK_FALSE(Q::is_scheduled(g));
    CHECK(Q::input_output_aliases(g) == std::vector<io_alias>{{{0}, 0, {}, true}, {{1}, 0, {}, true}});
    CHECK(Q::can_share_operand_buffer(g, 1, {}, 2, {}));
    CHECK_FALSE(Q::can_share_operand_buffer(g, 2, {}, 1, {}));
  }

  TEST_CASE("detection by name, whatever the member's kind or signature") {
    using TP = graph_traits<plain>;
    using TF = graph_traits<full>;
    using TW = graph_traits<wrong>;
    using TD = graph_traits<data_member>;
    static_assert(!detail::declares_name<TP> && !detail::declares_is_copy<TP> && !detail::declares_entry<TP>);
    static_assert(detail::declares_name<TF> && detail::declares_shape_string<TF> && detail::declares_computation_name<TF>);
    static_assert(detail::declares_is_constant<TF> && detail::declares_is_copy<TF> && detail::declares_is_scheduled<TF>);
    static_assert(detail::declares_input_output_aliases<TF> && detail::declares_can_share_operand_buffer<TF>);
    static_assert(detail::declares_name<TW> && detail::declares_is_constant<TW> && detail::declares_instruction_count<TW>);
    static_assert(detail::declares_is_copy<TD>);
    // Members inherited from a base class count too.
    struct derived : graph_traits<full> {};
    static_assert(detail::declares_name<derived> && detail::declares_can_share_operand_buffer<derived>);
    static_assert(!detail::declares_memory_space<TF>);
    CHECK(true);
  }

  TEST_CASE("the signature checks: a present member of the wrong type fails its check, never reads as absent") {
    // Each condition below is what graph_queries<G> static_asserts for that member.
    static_assert(detail::q_name<full> && detail::q_shape_string<full> && detail::q_computation_name<full>);
    static_assert(detail::q_is_constant<full> && detail::q_is_copy<full> && detail::q_is_scheduled<full>);
    static_assert(detail::q_input_output_aliases<full> && detail::q_can_share_operand_buffer<full>);
    using TW = graph_traits<wrong>;
    static_assert(!(!detail::declares_name<TW> || detail::q_name<wrong>));
    static_assert(!(!detail::declares_is_constant<TW> || detail::q_is_constant<wrong>));
    static_assert(!(!detail::declares_is_scheduled<TW> || detail::q_is_scheduled<wrong>));
    static_assert(!(!detail::declares_input_output_aliases<TW> || detail::q_input_output_aliases<wrong>));
    static_assert(detail::declares_instruction_count<TW> && !dense_graph<wrong>);  // the dense-numbering check fails
    static_assert(!(!detail::declares_is_copy<graph_traits<data_member>> || detail::q_is_copy<data_member>));
    CHECK(true);
  }
}
