// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/memory_timeline.hpp.
#include <doctest/doctest.h>

#include "support/report_helpers.hpp"

TEST_SUITE("report/memory_timeline") {
  using namespace xlamem::test::report_helpers;

  TEST_CASE("usage, peak and fragmentation of a small timeline") {
    const auto t = small_timeline();
    const auto u = usage_over_time(t);
    REQUIRE(u.size() == 5);
    CHECK(u[2][static_cast<std::size_t>(buffer_kind::temp)] == 128);
    CHECK(u[4][static_cast<std::size_t>(buffer_kind::temp)] == 256);
    CHECK(u[0][static_cast<std::size_t>(buffer_kind::constant)] == 8);
    const auto p = find_peak(t);
    CHECK(p.time == 4);
    CHECK(p.bytes == 100 + 48 + 256);  // the constant is not in the peak, as in XLA
    REQUIRE(p.live.size() == 3);
    CHECK(t.buffers[p.live.front()].name == "c");
    const auto f = fragmentation_at(t, t.allocations[2], 2);
    CHECK(f.live_bytes == 128);
    CHECK(f.wasted == 128);
    CHECK(f.largest_hole == 64);  // [64,128) and [192,256) are both 64 bytes; the first wins
    CHECK(f.hole_offset == 64);
    const auto fp = fragmentation_at_peak(t, p);
    REQUIRE(fp.size() == 1);
    CHECK(fp[0].wasted == 0);
    CHECK(fp[0].largest_hole == 0);
  }


  TEST_CASE("stacked segments: the column at each time is the usage then") {
    const auto t = small_timeline();
    const auto segs = stacked_segments(t);
    const auto u = usage_over_time(t);
    for (std::int64_t now = 0; now < t.horizon(); ++now) {
      std::int64_t top = 0, sum = 0;
      for (const auto& s : segs) {
        if (s.begin <= now && now < s.end) {
          top = std::max(top, s.base + s.bytes);
          sum += s.bytes;
        }
      }
      std::int64_t expected = 0;
      for (const auto v : u[static_cast<std::size_t>(now)]) expected += v;
      CHECK(top == expected);
      CHECK(sum == expected);
    }
    // The parameter sits at the bottom the whole program, in one segment.
    CHECK(segs.front().buffer == 0);
    CHECK(segs.front().base == 0);
    CHECK(segs.front().end == 5);
  }

}
