// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/plan_timeline.hpp.
#include <doctest/doctest.h>

#include "support/report_helpers.hpp"

TEST_SUITE("report/plan_timeline") {
  using namespace xlamem::test::report_helpers;

  TEST_CASE("a stack_frame_id resolves through the module's StackFrames, FileLocations and FileNames") {
    const char* text = R"(HloModule m, is_scheduled=true

FileNames
1 "jax_tests/example_b.py"

FunctionNames
1 "my_fn"

FileLocations
1 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=11 end_column=20}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="jit(f)/neg" stack_frame_id=1}
}
)";
    auto m = xlamem::hlo::parse_module(text, "frames.hlo");
    REQUIRE(m);
    const auto s = source_of(*m, m->instructions.back());
    CHECK(s.op_name == "jit(f)/neg");
    CHECK(s.location() == "example_b.py:6");
  }

  TEST_CASE("the timeline of xlamem's plan has one peak: buffer_assignment's peak_memory_in_bytes, at its time") {
    const fs::path dir = fs::path(XLAMEM_TEST_SOURCE_DIR) / "data" / "xla-oracle";
    int checked = 0, equal = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(e.path())) {
        const auto name = f.path().filename().string();
        constexpr std::string_view suffix = ".cpu_after_optimizations.txt";
        if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
        auto m = xlamem::hlo::read_module_file(f.path().string());
        REQUIRE(m);
        xlamem::buffer_assignment_options o;
        o.solver = *xlamem::find_solver("xla");
        auto a = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, o);
        REQUIRE(a);
        const auto t = timeline_of(*m, *a);
        const auto p = find_peak(t);
        INFO(name);
        CHECK(p.bytes == a->stats().peak_memory_in_bytes);
        CHECK(p.time == a->peak_time());
        CHECK(p.bytes > 0);
        equal += p.bytes == a->stats().peak_memory_in_bytes ? 1 : 0;
        // The stacked view is the usage, time by time.
        const auto u = usage_over_time(t);
        std::vector<std::int64_t> top(u.size(), 0);
        for (const auto& s : stacked_segments(t)) {
          for (auto x = s.begin; x < s.end; ++x) top[static_cast<std::size_t>(x)] = std::max(top[static_cast<std::size_t>(x)], s.base + s.bytes);
        }
        for (std::size_t x = 0; x < u.size(); ++x) {
          std::int64_t sum = 0;
          for (std::size_t k = 0; k < buffer_kind_count; ++k) sum += t.allocations.empty() ? 0 : u[x][k];
          CHECK(top[x] == sum);
        }
        ++checked;
      }
    }
    CHECK(checked == 15);
    CHECK(equal == 15);
  }

}
