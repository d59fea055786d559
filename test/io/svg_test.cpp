// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/svg.hpp.
#include <doctest/doctest.h>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/io") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("SVG: one rectangle per buffer, peak and capacity lines, escaped labels") {
    auto p = example12();
    p.buffers[0].id = "a<b>&\"c\"";
    const placement s{{8, 8, 4, 4, 0}};
    layout_svg_options o;
    o.title = "example";
    o.capacity = 16;
    const auto svg = layout_svg(layout_of(p, s), o);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    std::size_t rects = 0;
    for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++rects;
    CHECK(rects == 5);
    CHECK(svg.find("peak 12 B") != std::string::npos);
    CHECK(svg.find("capacity 16 B") != std::string::npos);
    CHECK(svg.find("a&lt;b&gt;&amp;&quot;c&quot;") != std::string::npos);
    CHECK(svg.find("a<b>") == std::string::npos);
    CHECK(layout_svg({}).find("</svg>") != std::string::npos);  // empty layouts draw too
  }

  TEST_CASE("SVG level of detail: above max_rects the largest are drawn, the rest merged with a note; the size is bounded") {
    std::vector<layout_rect> rects;
    const std::string long_label(1000, 'x');
    for (int i = 0; i < 100000; ++i) {  // small buffers, each live one step, stacked in 8 rows
      rects.push_back({i / 8, i / 8 + 1, 64 * (i % 8), 64, long_label});
    }
    rects.push_back({0, 12500, 512, 4096, "the big one"});
    layout_svg_options o;
    o.max_rects = 1000;
    const auto svg = layout_svg(rects, o);
    std::size_t titles = 0;
    for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++titles;
    CHECK(titles == 1000 + 1);  // the drawn ones and the merged group's
    CHECK(svg.find("<title>the big one: [0, 12500), 4096 B at 512</title>") != std::string::npos);
    CHECK(svg.find("<title>99001 smaller buffers merged (level of detail)</title>") != std::string::npos);
    CHECK(svg.find("level of detail: the 1000 largest of 100001 buffers drawn, 99001 merged into grey 4-pixel cells") !=
          std::string::npos);
    CHECK(svg.find(std::string(201, 'x')) == std::string::npos);  // tooltips cut to max_label
    CHECK(svg.size() < 2'000'000);
    // At the default bound 100,001 rectangles stay under the documented 12 MB.
    const auto full = layout_svg(rects);
    CHECK(full.size() < 12'000'000);
    CHECK(full.find("the 20000 largest of 100001 buffers drawn") != std::string::npos);
    // Below the bound nothing is merged and no note is written.
    rects.resize(500);
    CHECK(layout_svg(rects, o).find("level of detail") == std::string::npos);
  }
}
