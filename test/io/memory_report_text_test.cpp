// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/memory_report_text.hpp: the summary, the diff for people, and the
// JSON of a report from its field visitor.
#include <doctest/doctest.h>

#include <string>

#include "support/common.hpp"
#include "support/report_helpers.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/report/diff.hpp"

namespace memory_report_text_test {
using xlamem::test::report_helpers::mlp;
}  // namespace memory_report_text_test

TEST_SUITE("io/memory_report_text") {
  using namespace xlamem;
  using namespace memory_report_text_test;

  TEST_CASE("the summary: statistics, the peak and what runs then, heap, fragmentation, top buffers with sources") {
    report_request r;
    r.solver = "xla";
    auto rep = report_from_text(mlp(256), "mlp.hlo", r);
    REQUIRE(rep.has_value());
    const auto s = summary_text(*rep, 3);
    CHECK(s.rfind("jit_mlp: 5 instructions, xlamem plan (solver xla, alignment 64), planned in ", 0) == 0);
    CHECK(s.find("CompiledMemoryStats(") != std::string::npos);
    CHECK(s.find("peak: " + bytes_text(rep->peak.bytes) + " at time ") != std::string::npos);
    CHECK(s.find("counts in-place updates twice") == std::string::npos);  // one peak
    CHECK(s.find("fragmentation at the peak: ") != std::string::npos);
    CHECK(s.find("largest buffers live at the peak (3 of ") != std::string::npos);
    CHECK(s.find("model.py:1") != std::string::npos);
    CHECK(s.find("jit(main)/") != std::string::npos);  // two components of the op_name
    CHECK(s.find("jit(mlp)/jit(main)") == std::string::npos);
  }

  TEST_CASE("the JSON: command first, the report's fields, the peak's buffers, memory spaces") {
    report_request r;
    auto rep = report_from_text(mlp(256), "mlp.hlo", r);
    REQUIRE(rep.has_value());
    const auto j = json_document("plan", *rep);
    CHECK(j.rfind("{\n \"command\": \"plan\",\n \"file\": \"mlp.hlo\",\n \"module\": \"jit_mlp\",\n \"origin\": \"xlamem\",", 0) == 0);
    for (const char* key : {"\"compiled_memory_stats\": {", "\"peak_memory_in_bytes\": ", "\"bytes_by_kind\": {",
                            "\"memory_spaces\": [", "\"temp_heaps\": [", "\"fragmentation_at_peak\": [", "\"schedule\": [",
                            "\"allocations\": [", "\"live_ranges\": [", "\"source_line\": 13"}) {
      CAPTURE(key);
      CHECK(j.find(key) != std::string::npos);
    }
  }

  TEST_CASE("the diff: no change for one program twice; a doubled batch names the grown buffers and their sources") {
    report_request r;
    r.solver = "xla";
    auto a = report_from_text(mlp(128), "a.hlo", r);
    auto b = report_from_text(mlp(256), "b.hlo", r);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    const auto same = report::diff(*a, *a);
    CHECK(same.identical());
    CHECK(diff_text(same).find("no change: the same peak") != std::string::npos);
    const auto d = report::diff(*a, *b);
    CHECK_FALSE(d.identical());
    const auto t = diff_text(d);
    CHECK(t.rfind("xlamem diff: a.hlo (jit_mlp) -> b.hlo (jit_mlp)\n", 0) == 0);
    CHECK(t.find("+64.0 KiB") != std::string::npos);
    CHECK(t.find("model.py:13 jit(mlp)/jit(main)/tanh") != std::string::npos);
    const auto j = json_document("diff", d);
    CHECK(j.find("\"files\": [\n  \"a.hlo\",\n  \"b.hlo\"\n ]") != std::string::npos);
    CHECK(j.find("\"all_allocations\": {") != std::string::npos);
    CHECK(j.find("\"identical\": false") != std::string::npos);
  }
}
