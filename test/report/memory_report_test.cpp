// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/memory_report.hpp and report/plan_report.hpp: a report built
// from its parts has one peak (the statistics' peak_memory_in_bytes is it), per memory space,
// fragmentation at the peak; a plan's report agrees with the plan.
#include <doctest/doctest.h>

#include <string>

#include "support/report_helpers.hpp"
#include "xlamem/report/plan_report.hpp"

TEST_SUITE("report/memory_report") {
  using namespace xlamem::test::report_helpers;

  TEST_CASE("build_report: one peak, memory spaces, fragmentation at the peak") {
    memory_report r;
    r.timeline = small_timeline();
    // A host allocation (colour 5) with a buffer live at 0..1: not in the device peak.
    r.timeline.allocations.push_back({4, 32, buffer_kind::temp, 5, false});
    r.timeline.buffers.push_back({"h", "f32[8]", 32, buffer_kind::temp, 0, 1, 4, 0, 5, {}});
    r.stats.peak_memory_in_bytes = 12345;  // whatever a source said: the report's own peak wins
    const auto b = build_report(r);
    CHECK(b.peak.bytes == find_peak(r.timeline).bytes);
    CHECK(b.peak.time == find_peak(r.timeline).time);
    CHECK(b.stats.peak_memory_in_bytes == b.peak.bytes);
    REQUIRE(b.memory_spaces.size() == 2);
    CHECK(b.memory_spaces[0].color == 0);
    CHECK_FALSE(b.memory_spaces[0].host);
    CHECK(b.memory_spaces[0].bytes == b.peak.bytes);
    CHECK(b.memory_spaces[1].color == 5);
    CHECK(b.memory_spaces[1].host);
    CHECK(b.memory_spaces[1].bytes == 32);
    CHECK(b.memory_spaces[1].time == 0);
    REQUIRE(b.fragmentation_at_peak.size() == 1);
    CHECK(b.fragmentation_at_peak.front().allocation == 2);
    CHECK(b.instruction_at(b.peak.time) == b.timeline.schedule[static_cast<std::size_t>(b.peak.time)]);
    CHECK(b.instruction_at(99).empty());
  }

  TEST_CASE("the report of a plan: its peak is the plan's peak_memory_in_bytes; heaps, allocations, live ranges") {
    auto m = xlamem::hlo::parse_module(R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} exponential(p), metadata={op_name="jit(f)/exp" source_file="/src/model.py" source_line=3}
  b = f32[64]{0} negate(a)
  c = f32[64]{0} add(a, b)
  ROOT d = f32[64]{0} sine(c)
})", "small.hlo");
    REQUIRE(m);
    plan_request req;
    req.solver = "xla";
    auto p = plan_module(*m, "small.hlo", req);
    REQUIRE(p.has_value());
    CHECK(p->description == "xlamem plan (solver xla, alignment 64)");
    const auto r = report_of(*m, *p, "small.hlo");
    CHECK(r.file == "small.hlo");
    CHECK(r.module == "m");
    CHECK_FALSE(r.from_xla);
    CHECK(r.instructions == 5);
    CHECK(r.peak.bytes == p->plan.stats().peak_memory_in_bytes);
    CHECK(r.peak.time == p->plan.peak_time());
    CHECK(r.stats.argument_size_in_bytes == 256);
    REQUIRE(r.heaps.size() == 1);
    CHECK(r.heaps.front().solver == "xla");
    CHECK(r.allocations.size() == p->plan.allocations().size());
    CHECK_FALSE(r.live_ranges.empty());
    bool sourced = false;
    for (const auto& buf : r.timeline.buffers) sourced = sourced || buf.source.location() == "model.py:3";
    CHECK(sourced);
    // Without the value lists (what the summary and the picture need): the rest is the same.
    auto again = plan_module(*m, "small.hlo", req);
    REQUIRE(again.has_value());
    const auto lean = report_of(*m, std::move(*again), "small.hlo", false);
    CHECK(lean.allocations.empty());
    CHECK(lean.live_ranges.empty());
    CHECK(lean.peak.bytes == r.peak.bytes);
    CHECK(lean.peak.live == r.peak.live);
    CHECK(lean.timeline.buffers.size() == r.timeline.buffers.size());
    CHECK(lean.memory_spaces.size() == r.memory_spaces.size());
    req.backend = "gpu";
    auto g = plan_module(*m, "small.hlo", req);
    REQUIRE(g.has_value());
    CHECK(g->description == "xlamem plan (solver xla, alignment 256, XLA:GPU rules)");
    CHECK(m->backend == xlamem::hlo::xla_backend::gpu);
  }
}
