// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/memory_report.hpp: a report built from its parts has one peak
// (the statistics' peak_memory_in_bytes is it), per memory space, fragmentation at the peak.
#include <doctest/doctest.h>

#include <string>

#include "support/report_helpers.hpp"

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
}
