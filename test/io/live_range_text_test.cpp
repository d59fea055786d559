// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/xla/live_range_text.hpp: XLA's `HloLiveRange::ToString()` of a live-range
// analysis (sequence, ranges, the values live at the peak, the peak's breakdown), read back by the
// dump reader.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/io/xla/live_range_text.hpp"
#include "xlamem/passes/liveness.hpp"

namespace live_range_text_test {
using xlamem::hlo::module;

// p and a tuple parameter q live throughout; c, a, b die as the next reads them; n lives out;
// the get-tuple-elements g and s define no value.
inline constexpr const char* small_module = R"(HloModule m

ENTRY e {
  p = f32[4]{0} parameter(0)
  q = (f32[2]{0}, s32[]) parameter(1)
  g = f32[2]{0} get-tuple-element(q), index=0
  c = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[4]{0} add(p, c)
  b = f32[4]{0} multiply(a, a)
  n = f32[4]{0} negate(b)
  s = s32[] get-tuple-element(q), index=1
  ROOT t = (f32[4]{0}, s32[]) tuple(n, s)
}
)";

inline module parsed(const char* text) {
  auto m = xlamem::hlo::parse_module(text, "m.hlo");
  REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
  return std::move(*m);
}
}  // namespace live_range_text_test

TEST_SUITE("io/live_range_text") {
  using namespace live_range_text_test;

  TEST_CASE("the sections in XLA's words: sequence, a range per value, the peak's values, the breakdown") {
    const module m = parsed(small_module);
    auto la = xlamem::live_range_analysis<module>::run(m);
    REQUIRE_MESSAGE(la.has_value(), la.error().to_string());
    const auto text = xlamem::live_range_text(m, *la);
    CHECK(text.rfind("HloLiveRange (max 9):\n  InstructionSequence:\n    0:p\n    1:q\n    2:g\n    3:c\n    4:a\n    5:b\n"
                     "    6:n\n    7:s\n    8:t\n  BufferLiveRange:\n",
                     0) == 0);
    for (const char* line : {"    p{}:0-9\n", "    q{}:0-9\n", "    q{0}:0-9\n", "    q{1}:0-9\n", "    c{}:3-4\n",
                             "    a{}:4-5\n", "    b{}:5-6\n", "    n{}:6-9\n", "    t{}:8-9\n"}) {
      CAPTURE(line);
      CHECK(text.find(line) != std::string::npos);
    }
    CHECK(text.find("    g{}") == std::string::npos);  // forwarded, no value of its own
    CHECK(text.find("    s{}") == std::string::npos);
    CHECK(text.find("  Live ranges at 5 (peak):\n") != std::string::npos);
    CHECK(text.find("    q{0}: 8 bytes (cumulative: 72 bytes)\n    q{1}: 4 bytes (cumulative: 76 bytes)\n") != std::string::npos);
    CHECK(text.find("  Stack trace breakdown for peak usage: 76 bytes\n"
                    "    e (100.0%, total: 76 bytes, current: 0 bytes, remaining: 76 bytes)\n") != std::string::npos);
    CHECK(text.find("      \u251c\u2500\u2500 q{0} (10.5%, total: 8 bytes, current: 8 bytes, remaining: 4 bytes)\n") !=
          std::string::npos);
    CHECK(text.ends_with("      \u2514\u2500\u2500 q{1} (5.3%, total: 4 bytes, current: 4 bytes, remaining: 0 bytes)\n"));
    CHECK(text.find("\u251c\u2500\u2500 a (21.1%, total: 16 bytes") != std::string::npos);  // "a", not "a{}", in the breakdown
  }

  TEST_CASE("the text reads back with the dump reader: the sequence, every range and the peak as analysed") {
    const module m = parsed(small_module);
    auto la = xlamem::live_range_analysis<module>::run(m);
    REQUIRE(la.has_value());
    const auto text = "BufferAssignment:\n\nTotal bytes used: 0\n\n" + xlamem::live_range_text(m, *la);
    auto d = xlamem::parse_buffer_assignment_dump(text, "ranges.txt");
    REQUIRE_MESSAGE(d.has_value(), d.error().to_string());
    REQUIRE(d->live_ranges.has_value());
    const auto& lr = *d->live_ranges;
    const auto& df = la->dataflow();
    CHECK(lr.max_time == la->end_time());
    REQUIRE(lr.instruction_sequence.size() == la->sequence().size());
    for (std::size_t k = 0; k < lr.instruction_sequence.size(); ++k) {
      CHECK(lr.instruction_sequence[k] == m[df.instruction(la->sequence()[k])].name);
    }
    std::size_t ranged = 0;
    for (std::uint32_t v = 0; v < df.values().size(); ++v) ranged += la->has_range(v) ? 1 : 0;
    REQUIRE(lr.buffers.size() == ranged);
    for (const auto& b : lr.buffers) {
      CAPTURE(b.instruction);
      bool found = false;
      for (std::uint32_t v = 0; v < df.values().size(); ++v) {
        const auto& d0 = df.get(v).defining;
        if (!la->has_range(v) || m[d0.instruction].name != b.instruction || d0.index != b.shape_index) continue;
        found = true;
        CHECK(la->range(v).start == b.start);
        CHECK(la->range(v).end == b.end);
      }
      CHECK(found);
    }
    REQUIRE(lr.peak_time.has_value());
    CHECK(*lr.peak_time == la->peak_moment());
    const auto live = la->live_at(m, la->peak_moment());
    REQUIRE(lr.peak.size() == live.size());
    std::uint64_t cumulative = 0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      cumulative += df.get(live[k]).bytes;
      CHECK(lr.peak[k].bytes == df.get(live[k]).bytes);
      CHECK(lr.peak[k].cumulative == cumulative);
    }
    CHECK(lr.peak_bytes == cumulative);
  }

  TEST_CASE("called computations: their instructions flattened into the sequence, their values ranged") {
    const module m = parsed(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

f {
  fp = f32[4]{0} parameter(0)
  ROOT fe = f32[4]{0} exponential(fp)
}

ENTRY e {
  p = f32[4]{0} parameter(0)
  k = f32[4]{0} call(p), to_apply=f
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(k, zero), dimensions={0}, to_apply=add
}
)");
    auto la = xlamem::live_range_analysis<module>::run(m);
    REQUIRE_MESSAGE(la.has_value(), la.error().to_string());
    const auto text = xlamem::live_range_text(m, *la);
    CHECK(text.rfind("HloLiveRange (max " + std::to_string(la->end_time()) + "):\n", 0) == 0);
    // The callee's instructions come before the call (XLA flattens a call's body before it).
    const auto fe = text.find(":fe\n");
    const auto k = text.find(":k\n");
    REQUIRE(fe != std::string::npos);
    REQUIRE(k != std::string::npos);
    CHECK(fe < k);
    CHECK(text.find("    fe{}:") != std::string::npos);
    CHECK(text.find("  Stack trace breakdown for peak usage: ") != std::string::npos);
    CHECK(text.find("    e (100.0%, total: ") != std::string::npos);  // the entry computation's name
  }
}
