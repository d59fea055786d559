// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/plan_report.hpp: a request's planning options, a module planned
// as asked (or the error saying why not), its sources, and the report of the plan, whether the
// plan is kept or let go.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/report_helpers.hpp"
#include "xlamem/report/plan_report.hpp"

namespace plan_report_test {

constexpr const char* small_text = R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} exponential(p), metadata={op_name="jit(f)/exp" source_file="/src/model.py" source_line=3}
  b = f32[64]{0} negate(a)
  c = f32[64]{0} add(a, b), metadata={op_name="jit(f)/add"}
  ROOT d = f32[64]{0} sine(c)
})";

inline xlamem::hlo::module small() {
  auto m = xlamem::hlo::parse_module(small_text, "small.hlo");
  REQUIRE_MESSAGE(m.has_value(), (m ? std::string() : m.error().to_string()));
  return std::move(*m);
}

}  // namespace plan_report_test

TEST_SUITE("report/memory_report") {
  using namespace xlamem::test::report_helpers;

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

TEST_SUITE("report/plan_report") {
  using namespace xlamem;
  using namespace xlamem::report;
  using plan_report_test::small;

  TEST_CASE("planning_options: the solver by alias, the time limit and the cancellation flag passed on") {
    plan_request r;
    CHECK(r.backend == "cpu");
    CHECK(r.solver == "search");
    auto defaults = planning_options(r);
    REQUIRE(defaults.has_value());
    CHECK(defaults->options.solver.name == "search");
    CHECK(defaults->options.time_limit == 1.0);
    CHECK(defaults->options.cancel == nullptr);
    CHECK(defaults->options.alignment == 64);
    cancellation_flag stop{false};
    r.solver = "xla-best-fit";
    r.time_limit = 0.25;
    r.cancel = &stop;
    r.alignment = 16;
    auto s = planning_options(r);
    REQUIRE(s.has_value());
    CHECK(s->options.solver.name == "xla");
    CHECK(s->options.time_limit == 0.25);
    CHECK(s->options.cancel == &stop);
    CHECK(s->options.alignment == 16);
    CHECK(s->backend.rules == hlo::xla_backend::cpu);
    // 0: the heuristics only; infinity: no limit; negative and NaN refused, as everywhere.
    r.time_limit = 0;
    CHECK(planning_options(r).has_value());
    r.time_limit = std::numeric_limits<double>::infinity();
    CHECK(planning_options(r).has_value());
    for (const double refused : {-1.0, std::nan("")}) {
      r.time_limit = refused;
      auto bad = planning_options(r);
      REQUIRE_FALSE(bad.has_value());
      CHECK(bad.error().code() == errc::invalid_argument);
      CHECK(bad.error().message() == time_limit_error(refused));
    }
  }

  TEST_CASE("plan_module: the request's errors, the planner's error in the module's name, a valid plan described") {
    auto m = small();
    plan_request r;
    r.solver = "nope";
    auto bad = plan_module(m, "small.hlo", r);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::invalid_argument);
    CHECK(bad.error().message().find("unknown solver 'nope'") == 0);
    r.solver = "search";
    r.backend = "tpu";
    CHECK(plan_module(m, "small.hlo", r).error().message().find("unknown backend 'tpu'") == 0);
    r.backend = "cpu";
    r.alignment = 128;
    auto ok = plan_module(m, "small.hlo", r);
    REQUIRE(ok.has_value());
    CHECK(ok->description == "xlamem plan (solver search, alignment 128)");
    CHECK(ok->seconds >= 0);
    CHECK(ok->plan.validate(m).has_value());
    CHECK(m.backend == hlo::xla_backend::cpu);
    auto aliased = hlo::parse_module(R"(HloModule bad, input_output_alias={ {}: (3, {}, may-alias) }
ENTRY e {
  a = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(a)
})");
    REQUIRE(aliased.has_value());
    auto refused = plan_module(*aliased, "bad.hlo", plan_request{});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().to_string().find("bad.hlo") != std::string::npos);
    CHECK(refused.error().to_string().find("parameter 3") != std::string::npos);
  }

  TEST_CASE("sources_of: the metadata of the instructions that have any, by name") {
    const auto m = small();
    const auto sources = sources_of(m);
    REQUIRE(sources.size() == 2);
    REQUIRE(sources.count("a") == 1);
    CHECK(sources.at("a").op_name == "jit(f)/exp");
    CHECK(sources.at("a").location() == "model.py:3");
    REQUIRE(sources.count("c") == 1);
    CHECK(sources.at("c").op_name == "jit(f)/add");
    CHECK(sources.at("c").location().empty());
    CHECK(sources.count("b") == 0);
  }

  TEST_CASE("report_of: the head from the plan; kept or let go, the same report") {
    auto m = small();
    plan_request r;
    r.solver = "heuristic";
    auto kept = plan_module(m, "small.hlo", r);
    REQUIRE(kept.has_value());
    const auto a = report_of(m, *kept, "dir/small.hlo");
    CHECK(a.file == "dir/small.hlo");
    CHECK(a.module == "m");
    CHECK(a.description == kept->description);
    CHECK(a.planning_seconds == kept->seconds);
    CHECK(a.instructions == m.instructions.size());
    CHECK(a.scheduled);
    REQUIRE(a.heaps.size() == kept->plan.heaps().size());
    for (std::size_t k = 0; k < a.heaps.size(); ++k) {
      const auto& h = kept->plan.heaps()[k];
      CHECK(a.heaps[k].allocation == static_cast<std::int64_t>(h.allocation));
      CHECK(a.heaps[k].size == h.size);
      CHECK(a.heaps[k].lower_bound == h.lower_bound);
      CHECK(a.heaps[k].buffers == h.problem.buffers.size());
      CHECK(a.heaps[k].solver == "heuristic");
    }
    REQUIRE(a.allocations.size() == kept->plan.allocations().size());
    for (std::size_t k = 0; k < a.allocations.size(); ++k) {
      CHECK(a.allocations[k].index == static_cast<std::int64_t>(kept->plan.allocations()[k].index));
      CHECK(a.allocations[k].values.size() == kept->plan.allocations()[k].values.size());
    }
    for (const auto& lr : a.live_ranges) CHECK(lr.start <= lr.end);
    auto moved = plan_module(m, "small.hlo", r);
    REQUIRE(moved.has_value());
    const auto b = report_of(m, std::move(*moved), "dir/small.hlo");
    CHECK(b.peak.bytes == a.peak.bytes);
    CHECK(b.peak.time == a.peak.time);
    CHECK(b.stats.peak_memory_in_bytes == a.stats.peak_memory_in_bytes);
    CHECK(b.allocations.size() == a.allocations.size());
    CHECK(b.live_ranges.size() == a.live_ranges.size());
    CHECK(b.timeline.buffers.size() == a.timeline.buffers.size());
    CHECK(b.transfers.size() == a.transfers.size());
  }
}
