// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/views.hpp: an op's source as one line (`source_text`) and the
// stacked whole-memory column (`stacked_segments`): heap and shared allocations, what is left out.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/io/report/views.hpp"
#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/op_source.hpp"

namespace views_test {
using namespace xlamem::report;

// The segment as a comparable tuple: buffer, begin, end, base, bytes.
inline std::vector<std::int64_t> as_row(const stacked_segment& s) {
  return {static_cast<std::int64_t>(s.buffer), s.begin, s.end, s.base, s.bytes};
}

// Three steps: an output allocation whose two values share its bytes (x, then y over it), a
// heap whose v sits half over u, a host buffer, a buffer of no bytes, one in an allocation
// that does not exist, and a parameter (listed last) that stacks at the bottom throughout.
inline memory_timeline shared_and_heap() {
  memory_timeline t;
  t.schedule = {"s0", "s1", "s2"};
  t.allocations = {{0, 48, buffer_kind::output, 0, false},
                   {1, 128, buffer_kind::temp, 0, true},
                   {2, 64, buffer_kind::temp, 5, false},
                   {3, 8, buffer_kind::parameter, 0, false}};
  t.buffers = {{"x", "f32[8]", 32, buffer_kind::output, 0, 2, 0, 0, 0, {}},
               {"y", "f32[12]", 48, buffer_kind::output, 1, 1, 0, 0, 0, {}},
               {"u", "f32[16]", 64, buffer_kind::temp, 0, 1, 1, 0, 0, {}},
               {"v", "f32[16]", 64, buffer_kind::temp, 1, 2, 1, 32, 0, {}},
               {"h", "f32[16]", 64, buffer_kind::temp, 0, 2, 2, 0, 5, {}},
               {"z", "f32[0]", 0, buffer_kind::temp, 0, 2, 1, 0, 0, {}},
               {"m", "f32[4]", 16, buffer_kind::temp, 0, 2, 9, 0, 0, {}},
               {"p", "f32[2]", 8, buffer_kind::parameter, 0, 2, 3, 0, 0, {}}};
  return t;
}
}  // namespace views_test

TEST_SUITE("io/views") {
  using namespace views_test;

  TEST_CASE("source_text: the file's last component and line, then the op_name's last parts") {
    const op_source s{"jit(f)/jit(main)/transpose(jvp(g))/dot_general", "/home/u/model.py", 42, -1};
    CHECK(source_text(s) == "model.py:42 jit(f)/jit(main)/transpose(jvp(g))/dot_general");
    CHECK(source_text(s, 2) == "model.py:42 transpose(jvp(g))/dot_general");
    CHECK(source_text(s, 1) == "model.py:42 dot_general");
    CHECK(source_text(s, 4) == "model.py:42 jit(f)/jit(main)/transpose(jvp(g))/dot_general");
    CHECK(source_text(s, 10) == "model.py:42 jit(f)/jit(main)/transpose(jvp(g))/dot_general");
    // Only an op_name, only a file (with and without a line), neither.
    CHECK(source_text({"jit(f)/add", "", 0, -1}) == "jit(f)/add");
    CHECK(source_text({"jit(f)/add", "", 0, -1}, 1) == "add");
    CHECK(source_text({"", "/src/m.py", 7, -1}) == "m.py:7");
    CHECK(source_text({"", "m.py", 0, -1}, 3) == "m.py");
    CHECK(source_text({"/a/b", "", 0, -1}, 5) == "a/b");  // a leading '/' never leaves an empty first part
    CHECK(source_text(op_source{}).empty());
    CHECK(source_text(op_source{}, 2).empty());
  }

  TEST_CASE("stacked_segments: shared bytes go to the largest, a heap's bytes once, host and empty buffers left out") {
    const auto t = shared_and_heap();
    const auto segs = stacked_segments(t);
    std::vector<std::vector<std::int64_t>> rows;
    for (const auto& s : segs) rows.push_back(as_row(s));
    // The parameter first and whole; x holds the output allocation but gives it to y at time 1;
    // v takes only the 32 bytes of it that u does not cover, then all 64 once u has gone.
    const std::vector<std::vector<std::int64_t>> want = {
        {7, 0, 3, 0, 8},    {0, 0, 1, 8, 32},  {2, 0, 1, 40, 64}, {1, 1, 2, 8, 48},
        {2, 1, 2, 56, 64}, {3, 1, 2, 120, 32}, {0, 2, 3, 8, 32},  {3, 2, 3, 40, 64}};
    CHECK(rows == want);
    // The column's height is the device usage at every time (the host buffer is not in it).
    const auto usage = usage_over_time(t);
    for (std::int64_t now = 0; now < t.horizon(); ++now) {
      CAPTURE(now);
      std::int64_t top = 0;
      for (const auto& s : segs) {
        if (s.begin <= now && now < s.end) top = std::max(top, s.base + s.bytes);
      }
      std::int64_t expected = 0;
      for (const auto v : usage[static_cast<std::size_t>(now)]) expected += v;
      CHECK(top == expected);
    }
  }

  TEST_CASE("stacked_segments: an empty timeline, and buffers only in host memory, give no segment") {
    CHECK(stacked_segments(memory_timeline{}).empty());
    memory_timeline host;
    host.schedule = {"a", "b"};
    host.allocations = {{0, 64, buffer_kind::temp, host.host_color, false}};
    host.buffers = {{"h", "f32[16]", 64, buffer_kind::temp, 0, 1, 0, 0, host.host_color, {}}};
    CHECK(stacked_segments(host).empty());
    // One buffer alone: one segment over its whole live range.
    memory_timeline one;
    one.schedule = {"a", "b", "c", "d"};
    one.allocations = {{0, 16, buffer_kind::temp, 0, true}};
    one.buffers = {{"t", "f32[4]", 16, buffer_kind::temp, 1, 2, 0, 0, 0, {}}};
    const auto segs = stacked_segments(one);
    REQUIRE(segs.size() == 1);
    CHECK(as_row(segs[0]) == std::vector<std::int64_t>{0, 1, 3, 0, 16});
  }
}
