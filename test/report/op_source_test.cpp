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

}
