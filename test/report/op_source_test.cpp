// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/op_source.hpp.
#include <doctest/doctest.h>

#include "support/report_helpers.hpp"

TEST_SUITE("report/op_source") {
  using namespace xlamem::test::report_helpers;

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

  TEST_CASE("parse_op_metadata reads every key in one pass as attribute_value reads each") {
    // A repeated key: the first counts; a value with braces, an escaped quote and a trailing
    // backslash; keys in any order.
    const std::string text =
        R"({source_line=9 deduplicated_name={a b} op_name="x\"y" source_line=10 op_name="z" source_file="f.py\"})";
    const auto s = parse_op_metadata(text);
    CHECK(s.op_name == attribute_value(text, "op_name"));
    CHECK(s.op_name == "x\"y");
    CHECK(s.source_line == 9);
    CHECK(s.source_file == attribute_value(text, "source_file"));
    CHECK(attribute_value(text, "deduplicated_name") == "{a b}");
    CHECK(attribute_value(text, "missing").empty());
    CHECK(s.stack_frame_id == -1);
  }

}
