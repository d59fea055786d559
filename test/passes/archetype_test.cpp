// SPDX-License-Identifier: Apache-2.0
// The planning passes instantiated with the archetypes of hlo_archetype.hpp: liveness,
// colocation, buffer assignment (every packer) and the statistics compile against graphs that
// offer only what graph/graph_traits.hpp and graph/graph_queries.hpp declare, including one
// with std::size_t handles. The explicit instantiations compile every member; the test cases
// run the passes on the empty archetypes, which must be refused with an error, not a crash.
#include <doctest/doctest.h>

#include "support/hlo_archetype.hpp"
#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/colocation.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/liveness.hpp"
#include "xlamem/passes/memory_stats.hpp"

namespace arch = xlamem::test::archetype;

template class xlamem::dataflow_analysis<arch::sized_graph>;
template class xlamem::colocation_analysis<arch::graph>;
template class xlamem::colocation_analysis<arch::sized_graph>;
template class xlamem::colocation_analysis<arch::planning_graph>;
template class xlamem::live_range_analysis<arch::graph>;
template class xlamem::live_range_analysis<arch::sized_graph>;
template class xlamem::live_range_analysis<arch::planning_graph>;
template class xlamem::buffer_assignment<arch::graph>;
template class xlamem::buffer_assignment<arch::sized_graph>;
template class xlamem::buffer_assignment<arch::planning_graph>;
template struct xlamem::graph_queries<arch::graph>;
template struct xlamem::graph_queries<arch::sized_graph>;
template struct xlamem::graph_queries<arch::planning_graph>;

namespace {

template <class G>
void plan_empty() {
  const G g;
  auto df = xlamem::dataflow_analysis<G>::run(g);
  REQUIRE(df.has_value());
  auto co = xlamem::colocation_analysis<G>::run(g, *df, 0);
  CHECK(co.has_value());  // no computation: nothing to alias
  auto la = xlamem::live_range_analysis<G>::run(g);
  REQUIRE_FALSE(la.has_value());
  CHECK(la.error().message().find("no computation") != std::string::npos);
  for (const auto& solver : xlamem::packing_solvers) {
    xlamem::buffer_assignment_options o;
    o.solver = solver;
    CHECK_FALSE(xlamem::buffer_assignment<G>::run(g, o).has_value());
  }
  CHECK_FALSE(xlamem::buffer_assignment<G>::run(g, {}, xlamem::xla_best_fit_packer{}).has_value());
  CHECK_FALSE(xlamem::buffer_assignment<G>::run(g, {}, xlamem::named_temp_packer{}).has_value());
  const std::vector<xlamem::allocation_flags> none;
  CHECK(xlamem::stats_from_allocations(none) == xlamem::compiled_memory_stats{});
}

}  // namespace

TEST_SUITE("planning archetypes") {
  TEST_CASE("the planning passes ask an archetype graph for nothing it does not declare") {
    plan_empty<arch::graph>();
    plan_empty<arch::planning_graph>();
  }
  TEST_CASE("std::size_t handles: dataflow and planning compile and run") {
    static_assert(std::is_same_v<xlamem::graph_traits<arch::sized_graph>::instruction_type, std::size_t>);
    plan_empty<arch::sized_graph>();
  }
  TEST_CASE("graph_queries: defaults without the optional members, the members when present") {
    using Q = xlamem::graph_queries<arch::graph>;
    const arch::graph g;
    CHECK(Q::name(g, {}, 7) == "#7");
    CHECK(Q::shape_string(g, {}, {}).empty());
    CHECK(Q::computation_name(g, {}) == "entry");
    CHECK_FALSE(Q::is_constant(g, {}));
    CHECK(Q::is_scheduled(g));
    CHECK(Q::input_output_aliases(g).empty());
    using P = xlamem::graph_queries<arch::planning_graph>;
    const arch::planning_graph pg;
    CHECK(P::name(pg, {}, 7) == "i");
    CHECK(P::shape_string(pg, {}, {}) == "f32[]");
    CHECK(P::computation_name(pg, {}) == "c");
  }
}
