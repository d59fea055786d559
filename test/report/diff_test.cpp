// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/diff.hpp.
#include <doctest/doctest.h>

#include "support/report_helpers.hpp"

TEST_SUITE("report/diff") {
  using namespace xlamem::test::report_helpers;

  TEST_CASE("diff: identical timelines report no change; a grown buffer is named with its source") {
    const auto a = small_timeline();
    CHECK(diff_timelines(a, a).identical());
    auto b = a;
    b.buffers[2].shape = "f32[32]";
    b.buffers[2].size = 128;
    b.buffers.push_back({"extra", "f32[4]", 16, buffer_kind::temp, 0, 0, 2, 192, 0, {}});
    b.buffers.erase(b.buffers.begin() + 3);  // "b" vanishes
    const auto d = diff_timelines(a, b);
    CHECK_FALSE(d.identical());
    REQUIRE(d.changed.size() == 1);
    CHECK(d.changed[0].name == "a");
    CHECK(d.changed[0].delta() == 64);
    CHECK(d.changed[0].source.location() == "model.py:12");
    REQUIRE(d.added.size() == 1);
    CHECK(d.added[0].name == "extra");
    REQUIRE(d.removed.size() == 1);
    CHECK(d.removed[0].name == "b");
  }


  TEST_CASE("diff matches a renamed buffer by op_name and source line") {
    auto a = small_timeline();
    auto b = a;
    b.buffers[2].name = "a.7";  // XLA renumbered the fusion
    const auto d = diff_timelines(a, b);
    CHECK(d.changed.empty());
    CHECK(d.added.empty());
    CHECK(d.removed.empty());
  }

}
