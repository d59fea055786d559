// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/liveness.hpp.
#include <doctest/doctest.h>

#include "support/gpu_helpers.hpp"
#include "support/planning_helpers.hpp"

TEST_SUITE("planning/liveness") {
  using namespace xlamem::test::planning_helpers;

  TEST_CASE("XLA's ToString tests give exactly the expected text") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    for (const char* name : {"ToStringSimpleComputation", "ToStringComputationWithTuple"}) {
      CAPTURE(name);
      const auto base = dir / "hlo" / "xla-tests" / (std::string("hlo_live_range_test.") + name);
      const module m = read(base.string() + ".hlo");
      auto la = live_range_analysis<module>::run(m);
      REQUIRE(la.has_value());
      CHECK(xlamem::live_range_text(m, *la) == slurp(base.string() + ".expected-live-range.txt"));
    }
  }

  TEST_CASE("XLA's Call test: callee flattened before the call, call uses ignored") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto base = dir / "hlo" / "xla-tests" / "hlo_live_range_test.Call";
    const module m = read(base.string() + ".hlo");
    auto la = live_range_analysis<module>::run(m);
    REQUIRE(la.has_value());
    std::istringstream expected(slurp(base.string() + ".expected-live-range.txt"));
    std::string line;
    int checked = 0;
    while (std::getline(expected, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string name;
      std::int64_t start = 0, end = 0;
      fields >> name >> start >> end;
      CAPTURE(name);
      CHECK(range_of(m, *la, name) == live_range{start, end});
      ++checked;
    }
    CHECK(checked == 5);
    CHECK(la->end_time() == 7);
  }

  TEST_CASE("XLA's Determinism test: a while flattens condition, body, while; twice the same") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const module m = read(dir / "hlo" / "xla-tests" / "hlo_live_range_test.Determinism.hlo");
    auto a = live_range_analysis<module>::run(m);
    auto b = live_range_analysis<module>::run(m);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(xlamem::live_range_text(m, *a) == xlamem::live_range_text(m, *b));
    // param_iter, param_data, tuple.1, then the condition (4), the body (12), while, gte.
    CHECK(a->end_time() == 3 + 4 + 12 + 2);
    const auto& seq = a->sequence();
    auto name_at = [&](std::size_t k) { return m[a->dataflow().instruction(seq[k])].name; };
    CHECK(name_at(3) == "cond_param");
    CHECK(name_at(7) == "body_param");
    CHECK(name_at(19) == "while");
    CHECK(range_of(m, *a, "param_data").start == 0);
    // SSA form (XLA's): the body root value ends with the body; the while's phi carries the
    // loop state from the while on, and the init value ends where the condition starts.
    CHECK(range_of(m, *a, "add.3") == live_range{17, 19});
    const auto& df = a->dataflow();
    const auto w = df.unique_value_at(df.number(*m.find_instruction("While", "while")), shape_index{0});
    REQUIRE(w.has_value());
    CHECK(df.get(*w).is_phi);
    CHECK(a->range(*w) == live_range{19, 21});  // the result the entry returns
    const auto p = df.unique_value_at(df.number(*m.find_instruction("WhileBody", "body_param")), shape_index{1});
    REQUIRE(p.has_value());
    CHECK(df.get(*p).is_phi);
    CHECK(a->range(*p) == live_range{7, 15});  // the body's last read of it is %add
    CHECK(a->colocation().buffer_of(*p) == a->colocation().buffer_of(range_value(m, *a, "add")));
    // Without SSA form every value through the join lives as long as the while's result.
    liveness_options non_ssa;
    non_ssa.ssa_form = false;
    auto c = live_range_analysis<module>::run(m, non_ssa);
    REQUIRE(c.has_value());
    CHECK(range_of(m, *c, "add.3") == live_range{17, 21});
  }

  TEST_CASE("the kernel graph: ranges, in-place normalisation, outputs to the end") {
    using xlamem::test::kernel_graph;
    kernel_graph g;
    g.add("main", "x", {"input", "", {}, 0, -1, "", false, {{64, 0, std::nullopt}}});
    g.add("main", "y", {"op", "", {"x"}, -1, -1, "", false, {{64, 0, std::nullopt}}});
    g.add("main", "z", {"op", "", {"y"}, -1, -1, "", false, {{64, 0, std::nullopt}}});
    g.add("main", "w", {"update", "", {"z"}, -1, -1, "", false, {{64, 0, std::nullopt}}});
    g.add("main", "t", {"pack", "", {"w", "y"}, -1, -1, "", true, {{64, 0, std::nullopt}, {64, 0, std::nullopt}}});
    auto la = live_range_analysis<kernel_graph>::run(g);
    REQUIRE(la.has_value());
    const auto& df = la->dataflow();
    auto r = [&](const std::string& n) { return la->range(*df.value_defined_at(n, {})); };
    CHECK(la->end_time() == 5);
    CHECK(r("x") == live_range{0, 5});
    CHECK(r("y") == live_range{1, 5});
    CHECK(r("z") == live_range{2, 3});  // normalised against w, its in-place update
    CHECK(r("w") == live_range{3, 5});
    CHECK(r("t") == live_range{4, 5});
    CHECK(la->colocation().buffer_of(*df.value_defined_at("z", {})) == la->colocation().buffer_of(*df.value_defined_at("w", {})));

    auto a = buffer_assignment<kernel_graph>::run(g, {});
    REQUIRE(a.has_value());
    CHECK(a->validate(g).has_value());
    CHECK(a->stats().argument_size_in_bytes == 64);
    CHECK(a->stats().output_size_in_bytes == 64 + 64 + 16);
    CHECK(a->stats().temp_size_in_bytes == 0);
  }

  TEST_CASE("a computation that calls itself is an error, not a hang") {
    // The reader rejects call-graph cycles, so make one by editing the IR.
    module m = parse(R"(HloModule rec
%g (q: f32[]) -> f32[] {
  ROOT %q = f32[] parameter(0)
}
%f (p: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  ROOT %c = f32[] call(%p), to_apply=%g
}
ENTRY %main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %r = f32[] call(%a), to_apply=%f
}
)");
    const auto f = *m.find_computation("f");
    const auto c = *m.find_instruction(f, "c");
    REQUIRE(m[c].calls.size() == 1);
    m[c].calls[0].computation = f;
    auto la = live_range_analysis<module>::run(m);
    REQUIRE_FALSE(la.has_value());
    CHECK(la.error().message().find("calls itself") != std::string::npos);
  }
}

TEST_SUITE("XLA async computations") {
  using namespace xlamem::test::gpu_helpers;

  TEST_CASE("an async computation is scheduled before its async-start, shares its buffers, and lives until async-done") {
    const auto m = parse_ok(R"(HloModule a, is_scheduled=true
wrapped {
  w = f32[64]{0} parameter(0)
  ROOT wn = f32[64]{0} negate(w)
}
ENTRY e {
  p = f32[64]{0} parameter(0)
  x = f32[64]{0} exponential(p)
  s = ((f32[64]{0}), f32[64]{0}, s32[]) async-start(x), calls=wrapped
  y = f32[64]{0} negate(p)
  z = f32[64]{0} add(y, y)
  d = f32[64]{0} async-done(s)
  ROOT r = f32[64]{0} add(d, z)
})",
                            hlo::xla_backend::cpu);
    buffer_assignment_options o;
    o.solver = *find_solver("xla");
    auto a = buffer_assignment<hlo::module>::run(m, o);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    REQUIRE(a->validate(m).has_value());
    const auto& la = a->liveness();
    const auto& df = a->dataflow();
    const auto wn = df.value_defined_at(find(m, "wrapped", "wn"), {});
    REQUIRE(wn.has_value());
    // Flattened just before the async-start, like a call's callee.
    CHECK(la.time_of(df.number(find(m, "wrapped", "wn"))) < la.time_of(df.number(find(m, "e", "s"))));
    // The root's value is the async-start's {1} and the async-done's result, and it lives
    // through the async window, past y and z, until d.
    CHECK(df.value_set(find(m, "e", "s"), {1}) == std::vector<std::uint32_t>{*wn});
    CHECK(df.value_set(find(m, "e", "d"), {}) == std::vector<std::uint32_t>{*wn});
    CHECK(la.range(*wn).end >= la.time_of(df.number(find(m, "e", "d"))));
    // Nothing of it is thread-local: the wrapped computation is part of the program.
    for (const auto& al : a->allocations()) CHECK_FALSE(al.flags().is_thread_local);
    // x (the operand) is the wrapped parameter's value too: it is read inside until wn.
    const auto x = df.value_defined_at(find(m, "e", "x"), {});
    REQUIRE(x.has_value());
    CHECK(df.value_set(find(m, "wrapped", "w"), {}) == std::vector<std::uint32_t>{*x});
  }
}
