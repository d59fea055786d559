// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/program_problem.hpp: the problem built from a two-layer perceptron on a
// 2x2 mesh has a node per operation and an edge per use, with each strategy's time and shard
// bytes and each edge's resharding time; `auto_shard` reaches the optimum that enumerating
// every combination of strategies finds, at every memory limit from loose to impossible; the
// answer's peak is the evaluator's, its compute and collective times add up to the cost; weights
// that do not fit replicated come back sharded, and a fixed contracting split is finished by a
// collective that the answer reports; bad input is named.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/sharding_layouts.hpp"
#include "support/sharding_programs.hpp"
#include "xlamem/sharding/program_problem.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::test;

namespace {

// x [8, 4] -> h = x w1 [8, 8] -> y = h w2 [8, 4].
sharding_program perceptron() {
  sharding_program p;
  const auto x = add_input(p, "x", {8, 4});
  const auto w1 = add_input(p, "w1", {4, 8});
  const auto h = add_matmul(p, "h", x, w1);
  const auto w2 = add_input(p, "w2", {8, 4});
  add_matmul(p, "y", h, w2);
  set_live_ranges(p);
  return p;
}

program_problem build(const sharding_program& p, const device_mesh& mesh, usage_type limit) {
  auto b = build_program_problem(p, mesh, test_machine(mesh), limit);
  REQUIRE_MESSAGE(b, b.error().to_string());
  return std::move(*b);
}

struct best_found {
  std::optional<wide_cost> cost;  // none: nothing fits
  wide_cost least_peak;           // the least peak of any combination
};

// Every combination of the operations' strategies (copies and scratch as they follow),
// scored by the evaluator.
best_found enumerate(const program_problem& b) {
  const auto& p = b.problem;
  best_found out;
  bool any = false;
  assignment a(b.op_count, 0);
  while (true) {
    const auto e = evaluate(p, complete_assignment(b, a));
    if (e->feasible && (!out.cost || e->cost < *out.cost)) out.cost = e->cost;
    if (!any || e->peak_usage < out.least_peak) out.least_peak = e->peak_usage;
    any = true;
    std::size_t i = 0;
    while (i < a.size() && ++a[i] == b.strategies[i].size()) a[i++] = 0;
    if (i == a.size()) break;
  }
  return out;
}

auto_shard_result shard(const sharding_program& p, const device_mesh& mesh, usage_type limit) {
  auto_shard_options o;
  o.memory_limit = limit;
  o.solve.time_limit = 10;
  auto r = auto_shard(p, mesh, test_machine(mesh), o);
  REQUIRE_MESSAGE(r, r.error().to_string());
  return std::move(*r);
}

}  // namespace

TEST_SUITE("sharding/program_problem") {
  TEST_CASE("a node per operation, a copy node per use, a scratch node per partial sum") {
    const auto mesh = mesh_of("2x2");
    const auto p = perceptron();
    const auto b = build(p, mesh, 1 << 20);
    REQUIRE(b.op_count == 5);
    REQUIRE(b.uses.size() == 4);
    // 5 operations, 4 copies, and a scratch node for each matrix product (h, y).
    REQUIRE(b.problem.node_count() == 11);
    CHECK(b.problem.edge_count() == 4 * 2 + 2);
    CHECK(b.problem.usage_limit() == (1 << 20));
    for (std::size_t i = 0; i < 5; ++i) {
      REQUIRE(b.problem.strategy_count(i) == b.strategies[i].size());
      CHECK(b.problem.interval(i) == p.ops[i].live);
      for (std::size_t s = 0; s < b.strategies[i].size(); ++s) {
        CHECK(b.problem.node_usage(i, s) == shard_bytes(b.strategies[i][s].output, p.ops[i].shape, mesh));
        CHECK(b.problem.node_cost(i, s) == static_cast<cost_type>(std::llround(b.strategies[i][s].seconds() * 1e9)));
      }
    }
    CHECK(b.scratch_node[0] == program_problem::no_node);
    REQUIRE(b.scratch_node[2] != program_problem::no_node);
    CHECK(b.problem.interval(b.scratch_node[2]) == live_interval{2, 3});
    for (std::size_t s = 0; s < b.strategies[2].size(); ++s) {
      CHECK(b.problem.node_usage(b.scratch_node[2], s) == b.strategies[2][s].partial_bytes * !b.strategies[2][s].finish.empty());
    }
    // The use of w2 by y: keeping a layout is free where w2 has it, copying costs the resharding.
    const auto& use = b.uses[3];
    CHECK(use.producer == 3);
    CHECK(use.user == 4);
    CHECK(use.slot == 1);
    CHECK(b.problem.interval(use.copy_node) == live_interval{4, 5});
    std::size_t e = 0;
    while (b.problem.edge_nodes(e) != std::pair<std::size_t, std::size_t>{3, use.copy_node}) ++e;
    const std::size_t w = use.wanted.size();
    for (std::size_t f = 0; f < b.strategies[3].size(); ++f) {
      for (std::size_t j = 0; j < w; ++j) {
        const auto moved = resharding(p.ops[3].shape, b.strategies[3][f].output, *use.wanted[j], mesh, test_machine(mesh));
        REQUIRE(moved);
        CHECK(b.problem.edge_cost(e, f, 2 * j + 1) == static_cast<cost_type>(std::llround(moved->seconds * 1e9)));
        CHECK(is_forbidden(b.problem.edge_cost(e, f, 2 * j)) == !(b.strategies[3][f].output == *use.wanted[j]));
      }
    }
    for (std::size_t j = 0; j < w; ++j) {
      CHECK(b.problem.node_usage(use.copy_node, 2 * j) == 0);
      CHECK(b.problem.node_usage(use.copy_node, 2 * j + 1) == shard_bytes(*use.wanted[j], p.ops[3].shape, mesh));
    }
  }

  TEST_CASE("auto_shard finds the optimum that enumeration finds, at every limit") {
    const auto mesh = mesh_of("2x2");
    const auto p = perceptron();
    const auto loose = build(p, mesh, std::numeric_limits<usage_type>::max());
    const auto every = enumerate(loose);
    REQUIRE(every.cost);
    const std::int64_t least = every.least_peak.to_int64();
    const auto replicated_peak = [&] {
      return evaluate(loose.problem, complete_assignment(loose, assignment(5, 0)))->peak_usage.to_int64();
    }();
    CHECK(least < replicated_peak);
    for (const std::int64_t limit : {replicated_peak * 2, replicated_peak, (least + replicated_peak) / 2, least + 16,
                                     least, least - 1}) {
      CAPTURE(limit);
      const auto b = build(p, mesh, limit);
      const auto truth = enumerate(b);
      const auto r = shard(p, mesh, limit);
      if (!truth.cost) {
        CHECK(limit < least);
        CHECK_FALSE(has_answer(r.solve.status));
        CHECK_FALSE(r.solve.feasible);
        continue;
      }
      CHECK(r.solve.status == solve_status::optimal);
      CHECK(r.solve.cost == *truth.cost);
      CHECK(r.peak_bytes <= limit);
      const auto e = evaluate(b.problem, complete_assignment(b, r.strategy));
      CHECK(r.peak_bytes == e->peak_usage.to_int64());
      CHECK(r.peak_time == e->peak_time);
      // The times add up to the cost, up to the rounding of each of the 9 terms to 1 ns.
      CHECK(std::abs((r.compute_seconds + r.communication_seconds) * 1e9 - r.solve.cost.to_double()) <= 9.0);
      // The solver's copies are the ones the operations' strategies call for.
      CHECK(evaluate(b.problem, complete_assignment(b, r.strategy))->cost == r.solve.cost);
      for (std::size_t i = 0; i < 5; ++i) CHECK(r.shardings[i] == b.strategies[i][r.strategy[i]].output);
    }
  }

  TEST_CASE("weights too large to hold replicated come back sharded") {
    const auto mesh = mesh_of("4");
    sharding_program p;
    const auto x = add_input(p, "x", {4, 256});
    const auto w = add_input(p, "w", {256, 256});
    add_matmul(p, "y", x, w);
    set_live_ranges(p);
    const std::int64_t weight = 256 * 256 * 4;
    const auto r = shard(p, mesh, weight / 2);  // the whole weight cannot be held on one device
    REQUIRE(r.solve.feasible);
    CHECK(r.peak_bytes <= weight / 2);
    CHECK(shard_bytes(r.shardings[1], p.ops[1].shape, mesh) == weight / 4);
    const auto free = shard(p, mesh, std::numeric_limits<usage_type>::max());
    CHECK(free.solve.cost <= r.solve.cost);
  }

  TEST_CASE("a contracting split fixed by the program is finished by a collective the answer reports") {
    const auto mesh = mesh_of("4");
    auto p = perceptron();
    p.ops[0].fixed = spec({{}, {0}});  // x split along its contracting dimension
    p.ops[1].fixed = spec({{0}, {}});  // w1 along its rows
    p.ops[2].fixed = spec({{}, {}});   // h replicated: a partial sum finished by an all-reduce
    const auto r = shard(p, mesh, std::numeric_limits<usage_type>::max());
    CHECK(r.shardings[0] == spec({{}, {0}}));
    CHECK(r.shardings[2] == spec({{}, {}}));
    const auto& reduced = r.collectives[static_cast<std::size_t>(collective_kind::all_reduce)];
    CHECK(reduced.count >= 1);
    CHECK(reduced.bytes_sent > 0);
    CHECK(r.communication_seconds >= reduced.seconds);
  }

  TEST_CASE("bad input is named") {
    const auto mesh = mesh_of("4");
    auto p = perceptron();
    CHECK_FALSE(build_program_problem(p, mesh, test_machine(mesh), -1));
    auto two = test_machine(mesh_of("2x2"));
    auto wrong = build_program_problem(p, mesh, two, 100);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().to_string().find("has 2 links for a mesh of 1 axes") != std::string::npos);
    p.ops[3].fixed = spec({{0}, {0}});
    auto twice = build_program_problem(p, mesh, test_machine(mesh), 100);
    REQUIRE_FALSE(twice);
    CHECK(twice.error().to_string().find("operation 'w2''s own sharding") != std::string::npos);
    auto a = auto_shard(perceptron(), mesh, test_machine(mesh));
    REQUIRE(a);
    auto bad = read_answer(perceptron(), build(perceptron(), mesh, 100), assignment{0, 0}, mesh, test_machine(mesh));
    CHECK_FALSE(bad);
  }
}
