// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/safe_text.hpp and of the writers that use it: text from an input
// reaches a terminal, an SVG and a page only escaped.
#include <doctest/doctest.h>

#include <string>

#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_page.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/io/codec/safe_text.hpp"

TEST_SUITE("io/safe_text") {
  using xlamem::terminal_text;
  using xlamem::xml_text;

  TEST_CASE("terminal_text shows control bytes, C1 controls and invalid UTF-8 as \\xNN") {
    CHECK(terminal_text("plain text\nnext line") == "plain text\nnext line");
    CHECK(terminal_text("\x1b]0;owned\x07") == "\\x1b]0;owned\\x07");  // a window title
    CHECK(terminal_text("a\x1b[2Jb") == "a\\x1b[2Jb");                 // clear screen
    CHECK(terminal_text("tab\there\r") == "tab\\x09here\\x0d");
    CHECK(terminal_text("\x7f") == "\\x7f");
    CHECK(terminal_text("\xc2\x9b" "31m") == "\\xc2\\x9b31m");  // CSI as a C1 control
    CHECK(terminal_text("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // valid UTF-8 stays
    CHECK(terminal_text("bad \xff\xfe end") == "bad \\xff\\xfe end");
    CHECK(terminal_text("\xe2\x9c") == "\\xe2\\x9c");  // a truncated sequence
  }

  TEST_CASE("xml_text escapes markup and replaces what XML forbids") {
    CHECK(xml_text("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    CHECK(xml_text("a\x01" "b") == "a\xEF\xBF\xBD" "b");
    CHECK(xml_text("x\xffy") == "x\xEF\xBF\xBDy");
    CHECK(xml_text("\t\n\r") == "\t\n\r");
    CHECK(xml_text("\xc3\xa9") == "\xc3\xa9");
  }

  TEST_CASE("a module whose op_name carries script and escape text: page, SVG and summary stay safe") {
    const std::string hostile = R"(<!--<script>alert(1)</script>\u001b]0;x\u0007)";
    const std::string text = "HloModule evil, is_scheduled=true\n\nENTRY %main (p: f32[64]) -> f32[64] {\n"
                             "  %p = f32[64]{0} parameter(0)\n"
                             "  %n = f32[64]{0} negate(%p), metadata={op_name=\"" + hostile + "\x1b[2J\" source_file=\"<x>.py\" source_line=3}\n"
                             "  ROOT %e = f32[64]{0} exponential(%n)\n}\n";
    auto r = xlamem::plan_report(text, "evil.hlo", {});
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message()));
    const auto page = xlamem::report_page(*r);
    const auto data_start = page.find("<script type=\"application/json\" id=\"data\">");
    REQUIRE(data_start != std::string::npos);
    const auto data_end = page.find("</script>", data_start);
    const auto data = page.substr(data_start, data_end - data_start);
    CHECK(data.find("<!--") == std::string::npos);
    CHECK(data.find("<script>") == std::string::npos);
    CHECK(page.find("<!--<script>") == std::string::npos);
    const auto svg = xlamem::report_svg(*r);
    CHECK(svg.find("\x1b") == std::string::npos);
    CHECK(svg.find("<!--") == std::string::npos);
    const auto summary = xlamem::summary_text(*r);
    CHECK(summary.find('\x1b') == std::string::npos);
    CHECK(summary.find('\x07') == std::string::npos);
  }
}
