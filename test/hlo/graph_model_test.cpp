// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/graph_model.hpp.
#include <doctest/doctest.h>

#include "support/hlo_helpers.hpp"

TEST_SUITE("hlo/graph_traits") {
  using namespace xlamem::test::hlo_helpers;

  TEST_CASE("the same pass runs unchanged on a second, non-HLO graph model") {
    using test::kernel_graph;
    using test::kg_node;
    kernel_graph g;
    const split_config sc{0, {3}};
    // A nested "view" region (a bitcast) inside a kernel body, like NestedInputFusion.
    g.add("view_body", "vb_in", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("view_body", "vb_view", kg_node{"view", "", {"vb_in"}, -1, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_in0", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_in1", kg_node{"input", "", {}, 1, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_pack", kg_node{"pack", "", {"b_in0", "b_in1"}, -1, -1, "", true, {{24, 0, {}}, {24, 0, {}}}});
    g.add("body", "b_pick", kg_node{"pick", "", {"b_pack"}, -1, 0, "", false, {{24, 0, {}}}});
    g.add("body", "b_kernel", kg_node{"kernel", "", {"b_pick"}, -1, -1, "view_body", false, {{24, 0, {}}}});
    g.add("body", "b_sum", kg_node{"op", "", {"b_kernel", "b_in1"}, -1, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_in0", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_in1", kg_node{"input", "", {}, 1, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_moved", kg_node{"op", "", {"m_in0"}, -1, -1, "", false, {{24, 1, sc}}});
    g.add("main", "m_call", kg_node{"kernel", "", {"m_moved", "m_in1"}, -1, -1, "body", false, {{24, 2, {}}}});

    auto r = propagate_memory_spaces(g);
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(g.nodes["b_in0"].leaves[0].space == 1);
    CHECK(g.nodes["b_in0"].leaves[0].split == sc);
    CHECK(g.nodes["b_pack"].leaves[0].space == 1);   // the packed element aliases b_in0
    CHECK(g.nodes["b_pack"].leaves[1].space == 0);
    CHECK(g.nodes["b_pick"].leaves[0].space == 1);
    CHECK(g.nodes["vb_in"].leaves[0].space == 1);    // reached through the nested kernel's use
    CHECK(g.nodes["vb_view"].leaves[0].space == 0);  // a view defines its own value
    CHECK(g.nodes["b_sum"].leaves[0].space == 2);    // the body result takes the kernel's output
    CHECK(g.nodes["b_kernel"].leaves[0].space == 0);
    CHECK(g.nodes["m_in0"].leaves[0].space == 0);    // caller side untouched

    auto again = propagate_memory_spaces(g);
    REQUIRE(again.has_value());
    CHECK_FALSE(*again);

    // Dataflow on the same model: hash-map numbering, forwarding through pack/pick.
    auto a = dataflow_analysis<kernel_graph>::run(g);
    REQUIRE(a.has_value());
    CHECK(a->value_set(std::string("b_pick"), {}) == a->value_set(std::string("b_in0"), {}));
    CHECK(a->value_set(std::string("vb_view"), {}) == a->value_set(std::string("vb_in"), {}));
  }

  TEST_CASE("archetypes: the passes compile against the least a graph must offer") {
    // Compile-only in spirit: the archetype graphs are empty, so running is trivial; what
    // matters is that these instantiations compile with nothing beyond the declared concepts.
    test::archetype::graph g;
    auto a = dataflow_analysis<test::archetype::graph>::run(g);
    CHECK(a.has_value());
    test::archetype::mutable_graph mg;
    auto r = propagate_memory_spaces(mg);
    REQUIRE(r.has_value());
    CHECK_FALSE(*r);
    auto ma = dataflow_analysis<test::archetype::mutable_graph>::run(mg, dataflow_options{true});
    REQUIRE(ma.has_value());
    auto rc = propagate_memory_spaces(mg, *ma, test::archetype::comp{});
    CHECK_FALSE(rc.has_value());  // the empty archetype has no computation
  }

  TEST_CASE("the HLO model's traits: order, users, subshapes, schedule flag and aliases") {
    const auto m = parse_ok(R"(HloModule t, is_scheduled=true, input_output_alias={ {1}: (0, {}, must-alias) }
ENTRY e {
  p = f32[4]{0:S(1)} parameter(0)
  q = f32[4]{0} negate(p)
  ROOT t = (f32[4]{0}, f32[4]{0:S(1)}) tuple(q, p)
})");
    using T = graph_traits<hlo::module>;
    const auto c = T::entry(m);
    std::vector<hlo::instruction_id> order(T::instructions(m, c).begin(), T::instructions(m, c).end());
    REQUIRE(order.size() == 3);
    CHECK(m[order[0]].name == "p");
    CHECK(T::root(m, c) == order[2]);
    CHECK(T::users(m, order[0]) == std::vector<hlo::instruction_id>{order[1], order[2]});
    CHECK(T::is_scheduled(m));
    CHECK(T::input_output_aliases(m) == std::vector<parameter_alias>{{{1}, 0, {}, true}});
    std::vector<std::pair<shape_index, subshape_info>> seen;
    T::for_each_subshape(m, order[2], [&](const shape_index& i, const subshape_info& s) { seen.emplace_back(i, s); });
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].first.empty());
    CHECK(seen[0].second.is_tuple);
    CHECK(seen[0].second.bytes == 16);
    CHECK(seen[2].first == shape_index{1});
    CHECK(seen[2].second.memory_space == 1);
    CHECK(seen[2].second.bytes == 16);
    CHECK(T::instruction_count(m) == 3);
    CHECK(T::instruction_number(m, order[1]) == 1);
  }
}
