// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/backend.hpp: the XLA:CPU and XLA:GPU planning presets, and a plan
// made with XLA:GPU's rules.
#include <doctest/doctest.h>

#include "support/gpu_helpers.hpp"
#include "xlamem/hlo/backend.hpp"
#include "xlamem/report/plan_report.hpp"

TEST_SUITE("XLA:GPU planning") {
  using namespace xlamem::test::gpu_helpers;

  TEST_CASE("GPU planning: a converting fusion reuses its operand's buffer, offsets are 256-aligned") {
    // p -> n (negate, dies at c) -> c = convert fusion f32 -> s32 -> r. On GPU c may take over
    // n's buffer (same elements, same width); on CPU it may not.
    const char* text = R"(HloModule plan, is_scheduled=true
conv {
  a = f32[64]{0} parameter(0)
  ROOT c = s32[64]{0} convert(a)
}
ENTRY e {
  p = f32[64]{0} parameter(0)
  n = f32[64]{0} negate(p)
  c = s32[64]{0} fusion(n), kind=kLoop, calls=conv
  s = s32[16]{0} slice(c), slice={[0:16]}
  x = s32[16]{0} negate(s)
  ROOT r = s32[16]{0} add(x, s)
})";
    buffer_assignment_options o;
    o.solver = *find_solver("xla");
    o.alignment = 256;
    const auto gpu = parse_ok(text);
    auto g = buffer_assignment<hlo::module>::run(gpu, o);
    REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
    REQUIRE(g->validate(gpu).has_value());
    const auto cpu = parse_ok(text, hlo::xla_backend::cpu);
    auto c = buffer_assignment<hlo::module>::run(cpu, o);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    // n (256 B) and c (256 B) share on GPU; on CPU both live at c's definition.
    CHECK(g->stats().temp_size_in_bytes < c->stats().temp_size_in_bytes);
    for (const auto& a : g->allocations()) {
      for (const auto& v : a.values) CHECK(v.offset % 256 == 0);
    }
  }
}

TEST_SUITE("hlo/backend") {
  using namespace xlamem;

  TEST_CASE("the presets: XLA:CPU and XLA:GPU by name, with their rules and alignments") {
    static_assert(hlo::backend_presets.front().name == "cpu");
    CHECK(hlo::find_backend("cpu")->rules == hlo::xla_backend::cpu);
    CHECK(hlo::find_backend("cpu")->alignment == 64);
    CHECK(hlo::find_backend("cpu")->can_use_allocation.empty());
    const auto* gpu = hlo::find_backend("gpu");
    REQUIRE(gpu != nullptr);
    CHECK(gpu->rules == hlo::xla_backend::gpu);
    CHECK(gpu->alignment == 256);
    REQUIRE(gpu->can_use_allocation.size() == 1);
    CHECK(gpu->can_use_allocation.front() == hlo::color_pair{0, 1});
    CHECK(hlo::find_backend("tpu") == nullptr);
    auto bad = hlo::parse_backend("tpu");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() == "unknown backend 'tpu' (expected cpu or gpu)");
  }

  TEST_CASE("planning_options applies a preset: rules, alignment (unless given), cross-colour reuse, solver") {
    report::plan_request r;
    r.backend = "gpu";
    r.solver = "portfolio";
    auto s = report::planning_options(r);
    REQUIRE(s.has_value());
    CHECK(s->backend.rules == hlo::xla_backend::gpu);
    CHECK(s->options.alignment == 256);
    CHECK(s->options.solver.name == "heuristic");
    CHECK(s->options.can_use_allocation == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}});
    r.alignment = 128;
    CHECK(report::planning_options(r)->options.alignment == 128);
    r.backend = "cpu";
    r.alignment = 0;
    CHECK(report::planning_options(r)->options.alignment == 64);
    CHECK(report::planning_options(r)->options.can_use_allocation.empty());
    r.solver = "nope";
    CHECK(report::planning_options(r).error().message().find("unknown solver 'nope'") == 0);
    r.solver = "xla";
    r.backend = "tpu";
    CHECK(report::planning_options(r).error().message().find("unknown backend 'tpu'") == 0);
  }
}
