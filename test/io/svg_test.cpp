// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/svg.hpp.
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
}
