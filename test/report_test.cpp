// SPDX-License-Identifier: Apache-2.0
// Tests for the memory report (xlamem/report/): metadata parsing, usage over time, the peak,
// fragmentation at the peak, the diff of two timelines, and the two timeline builders (a plan
// xlamem made, XLA's own dump) against the figures their sources state.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/report/dump_timeline.hpp"
#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/plan_timeline.hpp"

namespace {

namespace fs = std::filesystem;
using namespace xlamem::report;

memory_timeline small_timeline() {
  // A parameter over the whole program, an output from 2, and a heap of 256 bytes holding
  // three temporaries: at time 2, bytes [0,64) and [128,192) are in use.
  memory_timeline t;
  t.schedule = {"p", "a", "b", "c", "root"};
  t.allocations = {{0, 100, buffer_kind::parameter, 0, false},
                   {1, 50, buffer_kind::output, 0, false},
                   {2, 256, buffer_kind::temp, 0, true},
                   {3, 8, buffer_kind::constant, 0, false}};
  t.buffers = {{"p", "f32[25]", 100, buffer_kind::parameter, 0, 4, 0, 0, 0, {}},
               {"root", "f32[12]", 48, buffer_kind::output, 2, 4, 1, 0, 0, {}},
               {"a", "f32[16]", 64, buffer_kind::temp, 1, 2, 2, 0, 0, {"jit(f)/dot", "/src/model.py", 12}},
               {"b", "f32[16]", 64, buffer_kind::temp, 2, 3, 2, 128, 0, {}},
               {"c", "f32[64]", 256, buffer_kind::temp, 4, 4, 2, 0, 0, {}},
               {"k", "f32[2]", 8, buffer_kind::constant, 0, 4, 3, 0, 0, {}}};
  return t;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("parse_op_metadata reads op_name, source_file and source_line and skips the rest") {
    const auto s = parse_op_metadata(
        R"({op_name="jit(train_step)/jit(main)/dot_general" source_file="/home/me/model.py" source_line=42 stack_frame_id=3 scheduling_name="x"})");
    CHECK(s.op_name == "jit(train_step)/jit(main)/dot_general");
    CHECK(s.source_file == "/home/me/model.py");
    CHECK(s.source_line == 42);
    CHECK(s.location() == "model.py:42");
    CHECK(parse_op_metadata("{}").empty());
    CHECK(parse_op_metadata("garbage without equals").empty());
    CHECK(parse_op_metadata(R"({op_name="a\"b"})").op_name == "a\"b");
    CHECK(parse_op_metadata(R"({source_line=12x})").source_line == 0);
    CHECK(parse_op_metadata(R"({op_name="add" stack_frame_id=11})").stack_frame_id == 11);
    CHECK(source_in_instruction_text(R"(%d = f32[2]{0} dot(%a, %b), metadata={op_name="d" source_line=7})").source_line ==
          7);
  }

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

  TEST_CASE("human_bytes") {
    CHECK(human_bytes(512) == "512 B");
    CHECK(human_bytes(1536) == "1.50 KiB");
    CHECK(human_bytes(2157968) == "2.06 MiB");
    CHECK(human_bytes(-2048) == "-2.00 KiB");
    CHECK(human_bytes(150 * 1024) == "150 KiB");
  }

  TEST_CASE("the timeline of xlamem's plan: at most the plan's peak_memory_in_bytes, which counts in-place pairs twice") {
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
        o.solver = xlamem::solver_kind::xla;
        auto a = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, o);
        REQUIRE(a);
        const auto t = timeline_of(*m, *a);
        const auto p = find_peak(t);
        INFO(name);
        CHECK(p.bytes <= a->stats().peak_memory_in_bytes);
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
    MESSAGE(equal << " of 15 programs: the timeline's peak equals peak_memory_in_bytes");
  }

  TEST_CASE("the timeline of XLA's own dump equals that of xlamem's XLA-exact plan, step by step") {
    // `--solver xla` reproduces XLA's buffer assignment byte for byte on the corpus
    // (docs/xla-fidelity.md), so reading XLA's dump must give the same memory at every step.
    // (XLA:CPU's own peak_memory_in_bytes is argument + output - alias + constant, not a peak.)
    const fs::path dir = fs::path(XLAMEM_TEST_SOURCE_DIR) / "data" / "xla-oracle";
    int checked = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(e.path())) {
        const auto name = f.path().filename().string();
        constexpr std::string_view suffix = ".cpu_after_optimizations-buffer-assignment.txt";
        if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
        INFO(name);
        auto d = xlamem::read_buffer_assignment_dump(f.path());
        REQUIRE(d);
        const auto t = timeline_of(*d);
        CHECK(t.allocations.size() == d->allocations.size());
        const auto module = f.path().string().substr(0, f.path().string().size() - std::string_view("-buffer-assignment.txt").size()) + ".txt";
        auto m = xlamem::hlo::read_module_file(module);
        REQUIRE(m);
        xlamem::buffer_assignment_options o;
        o.solver = xlamem::solver_kind::xla;
        auto a = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, o);
        REQUIRE(a);
        // XLA's plan read from its dump and xlamem's XLA-exact plan: the same bytes in use at
        // every step, by kind.
        const auto mine = timeline_of(*m, *a);
        CHECK(t.horizon() == mine.horizon());
        CHECK(usage_over_time(t) == usage_over_time(mine));
        CHECK(find_peak(t).bytes == find_peak(mine).bytes);
        CHECK(find_peak(t).time == find_peak(mine).time);
        ++checked;
      }
    }
    CHECK(checked == 15);
    // Sources come from the metadata of "Used values".
    auto d = xlamem::read_buffer_assignment_dump(dir / "mlp_train_step" /
                                                 "jit_mlp_train_step.cpu_after_optimizations-buffer-assignment.txt");
    REQUIRE(d);
    bool any_source = false;
    for (const auto& b : timeline_of(*d).buffers) any_source = any_source || !b.source.op_name.empty();
    CHECK(any_source);
  }
}
