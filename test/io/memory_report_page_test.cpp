// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/memory_report_page.hpp: the page's data, facts and level of
// detail, text from the input escaped in the page and the SVG, and the static picture.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "support/report_helpers.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_page.hpp"

namespace memory_report_page_test {
using xlamem::test::report_helpers::mlp;

// The report of report_helpers' small timeline with hostile text in every field that reaches
// the page: module, origin, file, a buffer's name and shape, the instruction at the peak.
inline xlamem::report::memory_report hostile_report() {
  using namespace xlamem::report;
  memory_report r;
  r.file = "a&b<c>.hlo";
  r.module = "m<1>";
  r.description = "xlamem plan \"x\" & <y>";
  r.timeline = xlamem::test::report_helpers::small_timeline();
  r.timeline.buffers[2].name = "</script><!--a";
  r.timeline.buffers[3].shape = "f32[16]<b>";
  r.timeline.schedule[4] = "c<&>";
  r.peak = find_peak(r.timeline);
  r.fragmentation_at_peak = fragmentation_at_peak(r.timeline, r.peak);
  r.heaps = {{2, 0, 256, 128, 3, "xla"}};
  r.stats.argument_size_in_bytes = 100;
  r.stats.output_size_in_bytes = 48;
  r.stats.temp_size_in_bytes = 256;
  r.stats.total_allocation_bytes = 412;
  return r;
}
}  // namespace memory_report_page_test

TEST_SUITE("io/memory_report_text") {
  using namespace xlamem;
  using namespace memory_report_page_test;

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

TEST_SUITE("io/memory_report_page") {
  using namespace xlamem;
  using namespace memory_report_page_test;

  TEST_CASE("the page's data: every buffer, its segments, usage, heaps, the peak table cut at `top`, statistics") {
    const auto r = hostile_report();
    REQUIRE(r.peak.time == 4);
    REQUIRE(r.peak.live == std::vector<std::size_t>{4, 0, 1});  // c, p, root: largest first
    const auto d = detail::page_detail_of(r, 20);
    CHECK_FALSE(d.reduced());
    CHECK(d.all == 6);
    CHECK(d.buffers == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
    CHECK(d.index == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(d.step == 1);
    const auto data = detail::page_data(r, 2, d);
    CHECK(data.rfind("{\"module\":\"m<1>\",\"origin\":\"xlamem plan \\\"x\\\" & <y>\",\"file\":\"a&b<c>.hlo\",\"horizon\":5,", 0) == 0);
    CHECK(data.find("\"schedule\":[\"p\",\"a\",\"b\",\"c\",\"c<&>\"]") != std::string::npos);
    CHECK(data.find("\"peak\":{\"time\":4,\"bytes\":404}") != std::string::npos);
    CHECK(data.find("\"kinds\":[\"parameter\",\"output\",\"temp\",\"constant\",\"thread-local\"]") != std::string::npos);
    // [name, shape, size, kind, start, end, allocation, offset, source]
    CHECK(data.find("[\"</script><!--a\",\"f32[16]\",64,2,1,2,2,0,\"model.py:12 jit(f)/dot\"]") != std::string::npos);
    CHECK(data.find("[\"k\",\"f32[2]\",8,3,0,4,3,0,\"\"]") != std::string::npos);
    CHECK(data.find("\"segments\":[[0,0,5,0,100],") != std::string::npos);  // the parameter, whole, at the bottom
    CHECK(data.find("\"heaps\":[{\"allocation\":2,\"size\":256,\"lower_bound\":128,\"color\":0}]") != std::string::npos);
    CHECK(data.find("\"top\":[4,0],\"live_at_peak\":3,") != std::string::npos);  // two of the three
    CHECK(data.find("\"host\"") == std::string::npos);  // nothing in host memory, nothing moved
    CHECK(data.find("\"stats\":{\"argument\":100,\"output\":48,\"alias\":0,\"temp\":256,\"total\":412}") != std::string::npos);
    CHECK(data.find("\"fragmentation\":{\"heap_size\":256,\"wasted\":0,\"largest_hole\":0}") != std::string::npos);
    CHECK(detail::page_data(r, 0, d).find("\"top\":[],") != std::string::npos);
  }

  TEST_CASE("the page: input text only escaped, in the markup and in the script's data") {
    const auto r = hostile_report();
    const auto page = report_page(r);
    CHECK(page.rfind("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>xlamem: memory of m&lt;1&gt;</title>", 0) == 0);
    CHECK(page.find("<h1>Memory of m&lt;1&gt;</h1>") != std::string::npos);
    CHECK(page.find("<p class=\"sub\">xlamem plan &quot;x&quot; &amp; &lt;y&gt;, from a&amp;b&lt;c&gt;.hlo</p>") != std::string::npos);
    CHECK(page.find("<span>peak <b>" + detail::svg_escape(bytes_text(404)) + "</b> at time 4 (c&lt;&amp;&gt;)</span>") != std::string::npos);
    CHECK(page.find("<span>argument 100 B</span><span>output 48 B</span><span>temp 256 B</span><span>all allocations 412 B</span>") !=
          std::string::npos);
    CHECK(page.find("<span>heap unused at the peak 0 B, largest free hole 0 B</span>") != std::string::npos);
    CHECK(page.find("<span id=\"detail\">") == std::string::npos);  // everything shown
    // The data element holds no raw '<', '>' or '&': each is its JSON escape.
    const std::string open = "<script type=\"application/json\" id=\"data\">";
    const auto from = page.find(open);
    REQUIRE(from != std::string::npos);
    const auto to = page.find("</script>", from);
    REQUIRE(to != std::string::npos);
    const auto data = page.substr(from + open.size(), to - from - open.size());
    CHECK(data.find_first_of("<>&") == std::string::npos);
    CHECK(data.find("\"module\":\"m\\u003c1\\u003e\"") != std::string::npos);
    CHECK(data.find("\\u003c/script\\u003e\\u003c!--a") != std::string::npos);
    CHECK(data.find("\"a\\u0026b\\u003cc\\u003e.hlo\"") != std::string::npos);
    CHECK(data.find("\"f32[16]\\u003cb\\u003e\"") != std::string::npos);
    CHECK(page.find("<!--a") == std::string::npos);
    CHECK(page.ends_with("</script>\n</body></html>\n"));
  }

  TEST_CASE("the SVG: the stacked column of every device buffer, the title and labels escaped") {
    const auto r = hostile_report();
    const auto svg = report_svg(r);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("m&lt;1&gt;: all device memory over time, stacked by kind and allocation; peak " + human_bytes(404) +
                   " at time 4") != std::string::npos);
    CHECK(svg.find("&lt;/script&gt;&lt;!--a (temp, f32[16])") != std::string::npos);
    CHECK(svg.find("b (temp, f32[16]&lt;b&gt;)") != std::string::npos);
    CHECK(svg.find("<!--") == std::string::npos);
    CHECK(svg.find("</script>") == std::string::npos);
  }
}
