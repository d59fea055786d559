// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/printer.hpp: the long and the short form of a module and of one
// instruction (header attributes, stack frames, signatures, operand shapes), IR shapes in the text,
// and the memory space of every output leaf as data.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "support/hlo_helpers.hpp"
#include "xlamem/io/codec/json.hpp"

namespace printer_test {
// Every part of the header the printer writes, two stack-frame tables, a called computation with
// an attribute, a constant and attributes kept verbatim: in the printer's own long form.
inline constexpr const char* long_form =
    "HloModule full, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}, must-alias) }, "
    "buffer_donor={ (1, {0}) }, entry_computation_layout={(f32[4]{0}, (f32[2]{0}, s32[]))->(f32[4]{0}, s32[])}, "
    "num_partitions=1\n"
    "\n"
    "FileNames\n"
    "1 \"a.py\"\n"
    "\n"
    "StackFrames\n"
    "1 {file_location_id=1 parent_frame_id=0}\n"
    "\n"
    "%add (x: f32[], y: f32[]) -> f32[], execution_thread=\"main\" {\n"
    "  %x = f32[] parameter(0)\n"
    "  %y = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
    "}\n"
    "\n"
    "ENTRY %main (p: f32[4]{0}, q: (f32[2]{0}, s32[])) -> (f32[4]{0}, s32[]) {\n"
    "  %p = f32[4]{0} parameter(0)\n"
    "  %q = (f32[2]{0}, s32[]) parameter(1)\n"
    "  %c = f32[] constant(0.5)\n"
    "  %r = f32[] reduce(f32[4]{0} %p, f32[] %c), dimensions={0}, to_apply=%add, metadata={op_name=\"jit(f)/r\"}\n"
    "  %b = f32[4]{0} broadcast(f32[] %r), dimensions={}\n"
    "  %i = s32[] get-tuple-element((f32[2]{0}, s32[]) %q), index=1\n"
    "  ROOT %t = (f32[4]{0}, s32[]) tuple(f32[4]{0} %b, s32[] %i)\n"
    "}\n"
    "\n";
}  // namespace printer_test

TEST_SUITE("hlo/printer") {
  using namespace xlamem::test::hlo_helpers;
  using namespace printer_test;

  TEST_CASE("the long form prints a module as it reads: header, stack frames, signatures, operand shapes") {
    const auto m = parse_ok(long_form, "full.hlo");
    CHECK(hlo::to_string(m) == long_form);
    std::string appended = "# ";
    hlo::append_module(appended, m);
    CHECK(appended == std::string("# ") + long_form);
  }

  TEST_CASE("the short form: no '%', no signatures, no operand shapes; stack frames on request") {
    const auto m = parse_ok(long_form, "full.hlo");
    const auto text = hlo::to_string(m, hlo::short_form());
    CHECK(text.find("\nadd, execution_thread=\"main\" {\n  x = f32[] parameter(0)\n") != std::string::npos);
    CHECK(text.find("\nENTRY main {\n") != std::string::npos);
    CHECK(text.find("  r = f32[] reduce(p, c), dimensions={0}, to_apply=%add, metadata={op_name=\"jit(f)/r\"}\n") !=
          std::string::npos);  // attributes verbatim, so `%add` stays as written
    CHECK(text.find("  ROOT t = (f32[4]{0}, s32[]) tuple(b, i)\n") != std::string::npos);
    CHECK(text.find("FileNames\n1 \"a.py\"\n\n") != std::string::npos);
    CHECK(text.find('%') == text.find("%add"));  // the only '%' is inside an attribute
    auto o = hlo::short_form();
    o.stack_frames = false;
    const auto bare = hlo::to_string(m, o);
    CHECK(bare.find("FileNames") == std::string::npos);
    CHECK(bare.find("StackFrames") == std::string::npos);
    // Each form reads back to the same IR and prints the same again.
    for (const auto& opts : {hlo::print_options{}, hlo::short_form(), o}) {
      const auto again = parse_ok(hlo::to_string(m, opts), "again.hlo");
      CHECK(hlo::to_string(again, opts) == hlo::to_string(m, opts));
      if (opts.stack_frames) CHECK(hlo::to_string(again) == long_form);
    }
  }

  TEST_CASE("one instruction: ROOT, parameters, constants, async sugar as written, each option alone") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  k = s32[2]{0} constant({1, 2})
  s = ((f32[4]{0}), f32[4]{0}, s32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[4]{0} custom-call-done(s)
}
)");
    CHECK(hlo::to_string(m, find(m, "e", "p")) == "%p = f32[4]{0} parameter(0)");
    CHECK(hlo::to_string(m, find(m, "e", "k")) == "%k = s32[2]{0} constant({1, 2})");
    CHECK(hlo::to_string(m, find(m, "e", "s")) ==
          "%s = ((f32[4]{0}), f32[4]{0}, s32[]) custom-call-start(f32[4]{0} %p), custom_call_target=\"foo\"");
    CHECK(hlo::to_string(m, find(m, "e", "d")) == "ROOT %d = f32[4]{0} custom-call-done(((f32[4]{0}), f32[4]{0}, s32[]) %s)");
    hlo::print_options names_only;
    names_only.operand_shapes = false;
    CHECK(hlo::to_string(m, find(m, "e", "d"), names_only) == "ROOT %d = f32[4]{0} custom-call-done(%s)");
    hlo::print_options shapes_only;
    shapes_only.percent_names = false;
    CHECK(hlo::to_string(m, find(m, "e", "d"), shapes_only) == "ROOT d = f32[4]{0} custom-call-done(((f32[4]{0}), f32[4]{0}, s32[]) s)");
    std::string out = "[";
    hlo::append_instruction(out, m, find(m, "e", "p"), hlo::short_form());
    CHECK(out == "[p = f32[4]{0} parameter(0)");
  }

  TEST_CASE("shapes come from the IR: a memory space set on an instruction shows wherever its shape is printed") {
    auto m = parse_ok("HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)\n}\n");
    m[find(m, "e", "p")].shape.layout.memory_space = 5;
    const auto text = hlo::to_string(m);
    CHECK(text.find("ENTRY %e (p: f32[4]{0:S(5)}) -> f32[4]{0} {\n") != std::string::npos);
    CHECK(text.find("  %p = f32[4]{0:S(5)} parameter(0)\n") != std::string::npos);
    CHECK(text.find("negate(f32[4]{0:S(5)} %p)") != std::string::npos);
    const auto again = parse_ok(text);
    CHECK(again[find(again, "e", "p")].shape.layout.memory_space == 5);
  }

  TEST_CASE("memory_space_leaves: every array leaf with its space and first split config, as data and as JSON") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  p = f32[8]{0:S(1)SC(0:3,5)} parameter(0)
  q = (s32[], f32[]) parameter(1)
  ROOT t = (f32[8]{0:S(1)SC(0:3,5)}, (s32[], f32[])) tuple(p, q)
}
)");
    const auto leaves = hlo::memory_space_leaves(m);
    REQUIRE(leaves.size() == 6);  // p, q's two and t's three; tuples themselves are not leaves
    CHECK(leaves[0].instruction == "p");
    CHECK(leaves[0].computation == "e");
    CHECK(leaves[0].index.empty());
    CHECK(leaves[0].memory_space == 1);
    REQUIRE(leaves[0].split.has_value());
    CHECK(*leaves[0].split == split_config{0, {3, 5}});
    CHECK(leaves[1].instruction == "q");
    CHECK(leaves[1].index == shape_index{0});
    CHECK(leaves[1].memory_space == 0);
    CHECK_FALSE(leaves[1].split.has_value());
    CHECK(leaves[2].index == shape_index{1});
    CHECK(leaves[3].instruction == "t");
    CHECK(leaves[3].index == shape_index{0});
    CHECK(leaves[4].index == shape_index{1, 0});
    CHECK(leaves[5].index == shape_index{1, 1});
    CHECK(xlamem::to_json(leaves[3]) ==
          R"({"computation":"e","instruction":"t","index":[0],"memory_space":1,"split_config":{"dimension":0,"indices":[3,5]}})");
    CHECK(xlamem::to_json(leaves[5]) ==
          R"({"computation":"e","instruction":"t","index":[1,1],"memory_space":0,"split_config":null})");
  }
}
