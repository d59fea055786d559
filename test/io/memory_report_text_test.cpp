// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/memory_report_text.hpp and io/report/memory_report_page.hpp: the summary,
// the diff for people, the JSON of a report from its field visitor, the page and the picture.
#include <doctest/doctest.h>

#include <string>

#include "support/common.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_page.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/report/diff.hpp"

namespace memory_report_text_test {
// A two-layer MLP with metadata as JAX writes it; `batch` rows.
inline std::string mlp(int batch) {
  const std::string b = std::to_string(batch);
  const std::string md = " source_file=\"/home/u/model.py\" source_line=";
  return "HloModule jit_mlp, is_scheduled=true\n\nENTRY %main (x: f32[" + b + ",64], w: f32[64,128]) -> f32[" + b + ",128] {\n" +
         "  %x = f32[" + b + ",64]{1,0} parameter(0)\n  %w = f32[64,128]{1,0} parameter(1)\n" +
         "  %dot = f32[" + b + ",128]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name=\"jit(mlp)/jit(main)/dot_general\"" + md + "12}\n" +
         "  %t = f32[" + b + ",128]{1,0} tanh(%dot), metadata={op_name=\"jit(mlp)/jit(main)/tanh\"" + md + "13}\n" +
         "  ROOT %n = f32[" + b + ",128]{1,0} negate(%t), metadata={op_name=\"jit(mlp)/jit(main)/neg\"" + md + "14}\n}\n";
}
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

  TEST_CASE("the page holds its data without a raw '</'; the picture is an SVG with the peak") {
    report_request r;
    auto rep = report_from_text(mlp(8), "a</script><b>.hlo", r);
    REQUIRE(rep.has_value());
    const auto page = report_page(*rep);
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(page.find("a</script><b>") == std::string::npos);
    CHECK(page.find("a&lt;/script&gt;&lt;b&gt;.hlo") != std::string::npos);
    CHECK(page.find("\\u003c/script\\u003e") != std::string::npos);  // the file name, in the page's data
    CHECK(page.find("\"segments\":[[") != std::string::npos);
    const auto svg = report_svg(*rep);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("peak " + human_bytes(rep->peak.bytes)) != std::string::npos);
  }

  TEST_CASE("the page's level of detail: above 20,000 buffers and steps, the largest and the peak table, in bars") {
    std::string text = "HloModule chain\n\nENTRY main {\n  big = f32[262144]{0} parameter(0)\n  v0 = f32[16]{0} parameter(1)\n";
    const int n = 25000;
    for (int i = 1; i <= n; ++i) {
      text += "  v" + std::to_string(i) + " = f32[16]{0} negate(v" + std::to_string(i - 1) + ")\n";
    }
    text += "  ROOT t = (f32[262144]{0}, f32[16]{0}) tuple(big, v" + std::to_string(n) + ")\n}\n";
    report_request r;
    auto rep = report_from_text(text, "chain.hlo", r);
    REQUIRE(rep.has_value());
    REQUIRE(rep->timeline.buffers.size() > detail::page_max_buffers);
    const auto d = detail::page_detail_of(*rep, 20);
    CHECK(d.reduced());
    CHECK(d.step == 2);
    CHECK(d.buffers.size() >= detail::page_max_buffers);
    CHECK(d.buffers.size() <= detail::page_max_buffers + 20);
    for (std::size_t k = 0; k < rep->peak.live.size() && k < 20; ++k) CHECK(d.index[rep->peak.live[k]] >= 0);
    const auto page = report_page(*rep);
    CHECK(page.find("level of detail: the " + std::to_string(d.buffers.size()) + " largest of " +
                    std::to_string(rep->timeline.buffers.size()) + " buffers") != std::string::npos);
    CHECK(page.find("\"usage_step\":2") != std::string::npos);
    CHECK(page.find("\"schedule\":{") != std::string::npos);  // only the steps the page names
    CHECK(page.size() < 4'000'000);
    // A small program keeps everything and says nothing of a level of detail.
    auto small = report_from_text(mlp(8), "mlp.hlo", r);
    REQUIRE(small.has_value());
    CHECK_FALSE(detail::page_detail_of(*small, 20).reduced());
    CHECK(report_page(*small).find("<span id=\"detail\">") == std::string::npos);
  }
}
