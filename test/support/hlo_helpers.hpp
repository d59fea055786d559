// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/hlo_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/common.hpp"
#include "support/hlo_archetype.hpp"
#include "support/hlo_test_graph.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/hlo/shape.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace xlamem::test::hlo_helpers {
using namespace xlamem;
namespace fs = std::filesystem;

inline hlo::module parse_ok(std::string_view text, std::string_view name = "<test>") {
  auto m = hlo::parse_module(text, name);
  if (!m) FAIL(m.error().to_string());
  return std::move(*m);
}

inline hlo::instruction_id find(const hlo::module& m, std::string_view comp, std::string_view name) {
  auto i = m.find_instruction(comp, name);
  REQUIRE_MESSAGE(i.has_value(), "no instruction " << name << " in " << comp);
  return *i;
}

inline const hlo::shape& shape_of(const hlo::module& m, std::string_view comp, std::string_view name) {
  return m[find(m, comp, name)].shape;
}

inline std::string layout_text(const hlo::module& m, std::string_view comp, std::string_view name) {
  return hlo::to_string(shape_of(m, comp, name));
}

/// Full structural equality of two modules (the round-trip criterion).
inline void check_same_ir(const hlo::module& a, const hlo::module& b) {
  CHECK(a.name == b.name);
  CHECK(a.is_scheduled == b.is_scheduled);
  CHECK(a.input_output_alias == b.input_output_alias);
  CHECK(a.buffer_donors == b.buffer_donors);
  CHECK(a.entry_parameter_layouts == b.entry_parameter_layouts);
  CHECK(a.entry_result_layout == b.entry_result_layout);
  CHECK(a.attributes == b.attributes);
  CHECK(a.stack_frames == b.stack_frames);
  CHECK(a.entry == b.entry);
  REQUIRE(a.computations.size() == b.computations.size());
  REQUIRE(a.instructions.size() == b.instructions.size());
  for (std::size_t c = 0; c < a.computations.size(); ++c) {
    const auto& x = a.computations[c];
    const auto& y = b.computations[c];
    CHECK(x.name == y.name);
    CHECK(x.instructions == y.instructions);
    CHECK(x.parameters == y.parameters);
    CHECK(x.root == y.root);
    CHECK(x.is_entry == y.is_entry);
    CHECK(x.attributes == y.attributes);
  }
  std::size_t mismatches = 0;
  for (std::size_t k = 0; k < a.instructions.size(); ++k) {
    const auto& x = a.instructions[k];
    const auto& y = b.instructions[k];
    const bool same = x.name == y.name && x.opcode == y.opcode && x.shape == y.shape &&
                      x.operands == y.operands && x.users == y.users && x.attributes == y.attributes &&
                      x.calls == y.calls && x.literal == y.literal && x.opcode_spelling == y.opcode_spelling &&
                      x.parameter_number == y.parameter_number && x.tuple_index == y.tuple_index &&
                      x.parent == y.parent && x.is_root == y.is_root;
    if (!same && mismatches++ < 3) FAIL_CHECK("instruction differs after round trip: " << x.name);
  }
  CHECK(mismatches == 0);
}

inline std::vector<fs::path> hlo_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& sub : {"hlo/xla-models", "hlo/xla-tests"}) {
    for (const auto& e : fs::directory_iterator(dir / sub)) {
      if (e.path().extension() == ".hlo") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct bad_case {
  std::string name;
  std::string text;
  int line;                 // expected line (0: any)
  std::string_view needle;  // part of the message
};

inline std::vector<bad_case> hand_written_bad_cases() {
  const std::string ok_head = "HloModule m\n\nENTRY e {\n";
  return {
      {"empty input", "", 1, "expected 'HloModule'"},
      {"only a header", "HloModule m\n", 2, "expected a computation"},
      {"missing module name", "HloModule \n", 2, "expected a module name"},
      {"bad header attribute", "HloModule m, =3\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n", 1, "module attribute name"},
      {"bad is_scheduled", "HloModule m, is_scheduled=maybe\n", 1, "true or false"},
      {"bad alias kind", "HloModule m, input_output_alias={ {0}: (0, {}, sometimes) }\n", 1, "may-alias or must-alias"},
      {"unclosed alias", "HloModule m, input_output_alias={ {0}: (0, {}\n", 2, "expected ')'"},
      {"bad entry layout", "HloModule m, entry_computation_layout={(f32[])=>f32[]}\n", 1, "'->'"},
      {"unknown element type", ok_head + "  ROOT p = f33[2] parameter(0)\n}\n", 4, "unknown element type 'f33'"},
      {"unknown type in tuple", ok_head + "  ROOT p = (f32[], quux[1]) parameter(0)\n}\n", 4, "unknown element type 'quux'"},
      {"unknown opcode", ok_head + "  ROOT p = f32[] frobnicate()\n}\n", 4, "unknown opcode 'frobnicate'"},
      {"missing equals", ok_head + "  ROOT p f32[] parameter(0)\n}\n", 4, "expected '='"},
      {"missing shape", ok_head + "  ROOT p = parameter(0)\n}\n", 4, "unknown element type 'parameter'"},
      {"missing opcode paren", ok_head + "  ROOT p = f32[] parameter 0\n}\n", 4, "expected '('"},
      {"bad parameter number", ok_head + "  ROOT p = f32[] parameter(x)\n}\n", 4, "expected an integer"},
      {"negative dimension", ok_head + "  ROOT p = f32[-2] parameter(0)\n}\n", 4, "negative dimension"},
      {"unclosed dims", ok_head + "  ROOT p = f32[2 parameter(0)\n}\n", 4, "expected ',' or ']'"},
      {"layout rank mismatch", ok_head + "  ROOT p = f32[2,3]{0} parameter(0)\n}\n", 4, "rank-2"},
      {"layout dim out of range", ok_head + "  ROOT p = f32[2]{5} parameter(0)\n}\n", 4, "out of range"},
      {"bad layout part", ok_head + "  ROOT p = f32[2]{0:Q(1)} parameter(0)\n}\n", 4, "layout part"},
      {"unclosed layout", ok_head + "  ROOT p = f32[2]{0:S(1) parameter(0)\n}\n", 4, "layout part"},
      {"bad split config", ok_head + "  ROOT p = f32[2]{0:SC(0)} parameter(0)\n}\n", 4, "':'"},
      {"token with dims", ok_head + "  ROOT p = token[2] parameter(0)\n}\n", 4, "no dimensions"},
      {"dangling operand", ok_head + "  p = f32[] parameter(0)\n  ROOT n = f32[] negate(q)\n}\n", 5, "unknown operand 'q'"},
      {"duplicate instruction", ok_head + "  p = f32[] parameter(0)\n  p = f32[] negate(p)\n}\n", 5, "duplicate instruction name 'p'"},
      {"duplicate computation", "HloModule m\nc {\n ROOT p = f32[] parameter(0)\n}\nc {\n ROOT p = f32[] parameter(0)\n}\n", 5, "duplicate computation name 'c'"},
      {"two roots", ok_head + "  ROOT p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n", 5, "second ROOT"},
      {"two entries", "HloModule m\nENTRY a {\n ROOT p = f32[] parameter(0)\n}\nENTRY b {\n ROOT p = f32[] parameter(0)\n}\n", 5, "second ENTRY"},
      {"parameter gap", ok_head + "  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n", 5, "out of range"},
      {"duplicate parameter", ok_head + "  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(a, b)\n}\n", 5, "duplicate parameter number 0"},
      {"cycle", ok_head + "  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n", 4, "cycle"},
      {"unknown computation", ok_head + "  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=nowhere\n}\n", 5, "unknown computation 'nowhere'"},
      {"call-graph cycle", "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=e\n}\n", 2, "calls itself"},
      {"fusion without calls", ok_head + "  p = f32[] parameter(0)\n  ROOT f = f32[] fusion(p), kind=kLoop\n}\n", 5, "needs calls="},
      {"fusion arity", "HloModule m\nf {\n ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT f = f32[] fusion(p, p), kind=kLoop, calls=f\n}\n", 7, "fused computation has 1"},
      {"while arity", "HloModule m\nb {\n ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT w = f32[] while(p), body=b\n}\n", 7, "condition= and body="},
      {"conditional arity", "HloModule m\nb {\n ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  p = pred[] parameter(0)\n  ROOT c = f32[] conditional(p), branch_computations={b}\n}\n", 7, "one operand per branch"},
      {"gte index out of range", ok_head + "  p = (f32[], f32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=2\n}\n", 5, "out of range"},
      {"gte of array", ok_head + "  p = f32[] parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=0\n}\n", 5, "out of range"},
      {"gte without index", ok_head + "  p = (f32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p)\n}\n", 5, "needs index="},
      {"tuple arity", ok_head + "  p = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(p)\n}\n", 5, "has 1 operands"},
      {"bad output_to_operand_aliasing", ok_head + "  p = f32[] parameter(0)\n  ROOT c = f32[] custom-call(p), custom_call_target=\"x\", output_to_operand_aliasing={{}: (3, {})}\n}\n", 5, "does not exist"},
      {"unterminated string", ok_head + "  ROOT p = f32[] parameter(0), metadata={op_name=\"abc}\n}\n", 4, "unterminated string"},
      {"unterminated comment", ok_head + "  /* forever\n  ROOT p = f32[] parameter(0)\n}\n", 4, "unterminated '/*'"},
      {"mismatched brackets", ok_head + "  ROOT p = f32[] parameter(0), sharding={devices=[1,2)}\n}\n", 4, "unbalanced brackets"},
      {"unclosed attribute braces", ok_head + "  ROOT p = f32[] parameter(0), metadata={op_name=\"x\"\n", 4, "unbalanced brackets"},
      {"missing attribute value", ok_head + "  ROOT p = f32[] parameter(0), sharding=, x=1\n}\n", 4, "expected a value"},
      {"unclosed computation", ok_head + "  ROOT p = f32[] parameter(0)\n", 5, "is not closed"},
      {"unclosed operand list", ok_head + "  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p\n}\n", 6, "expected ',' or ')'"},
      {"unterminated constant", ok_head + "  ROOT c = f32[2] constant({1, 2}\n", 4, "unterminated constant"},
      {"empty computation", "HloModule m\nENTRY e {\n}\n", 2, "has no instructions"},
      {"integer overflow", ok_head + "  ROOT p = f32[99999999999999999999] parameter(0)\n}\n", 4, "out of range"},
      {"deeply nested shape", ok_head + "  ROOT p = " + std::string(300, '(') + "f32[]" + std::string(300, ')') + " parameter(0)\n}\n", 4, "nests too deeply"},
      {"deeply nested attribute", ok_head + "  ROOT p = f32[] parameter(0), x=" + std::string(300, '{') + std::string(300, '}') + "\n}\n", 4, "nest too deeply"},
      {"binary garbage", std::string("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n") + "\x01\x02\xff", 5, "expected a computation name"},
      {"stray closing brace", "HloModule m\n}\n", 2, "expected a computation name"},
  };
}

/// Checks that `text` fails with a parse error whose message starts with name:line:column.
inline void check_bad(const std::string& name, const std::string& text, int line, std::string_view needle) {
  CAPTURE(name);
  auto m = hlo::parse_module(text, "bad.hlo");
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error().code() == errc::parse_error);
  const std::string& msg = m.error().message();
  CAPTURE(msg);
  REQUIRE(msg.rfind("bad.hlo:", 0) == 0);
  std::size_t p = 8;
  int got_line = 0;
  while (p < msg.size() && msg[p] >= '0' && msg[p] <= '9') got_line = got_line * 10 + (msg[p++] - '0');
  REQUIRE(p < msg.size());
  CHECK(msg[p] == ':');
  ++p;
  std::size_t digits = 0;
  while (p < msg.size() && msg[p] >= '0' && msg[p] <= '9') ++p, ++digits;
  CHECK(digits > 0);
  CHECK(got_line > 0);
  if (line > 0) CHECK(got_line == line);
  if (!needle.empty()) CHECK(msg.find(needle) != std::string::npos);
}

/// Runs the whole-module pass on `input` and compares every leaf with `expected`.
inline void check_propagation_pair(const fs::path& input, const fs::path& expected) {
  auto m = hlo::read_module_file(input.string());
  auto e = hlo::read_module_file(expected.string());
  REQUIRE(m.has_value());
  REQUIRE(e.has_value());
  auto changed = propagate_memory_spaces(*m);
  REQUIRE(changed.has_value());
  CHECK(*changed);
  REQUIRE(m->instructions.size() == e->instructions.size());
  using T = graph_traits<hlo::module>;
  std::size_t leaves = 0;
  for (std::size_t k = 0; k < m->instructions.size(); ++k) {
    const auto id = static_cast<hlo::instruction_id>(k);
    CAPTURE((*m)[id].name);
    CHECK((*m)[id].name == (*e)[id].name);
    hlo::for_each_subshape((*m)[id].shape, [&](const shape_index& idx, const hlo::shape& s) {
      if (s.is_tuple()) return;
      ++leaves;
      CHECK(T::memory_space(*m, id, idx) == T::memory_space(*e, id, idx));
      CHECK(T::split(*m, id, idx) == T::split(*e, id, idx));
    });
    CHECK((*m)[id].shape == (*e)[id].shape);
  }
  CHECK(leaves > 10);
  // Running again changes nothing.
  auto again = propagate_memory_spaces(*m);
  REQUIRE(again.has_value());
  CHECK_FALSE(*again);
}

const char* const no_memory_space_hlo = R"(HloModule no_space
%fused {
  %a = f32[8]{0:T(128)} parameter(0)
  %b = f32[8]{0:T(128)} parameter(1)
  ROOT %s = f32[8]{0:T(128)} add(%a, %b)
}
ENTRY %main {
  %x = f32[8]{0:T(128)} parameter(0)
  %y = f32[8]{0:T(128)} parameter(1)
  %cx = f32[8]{0:T(128)} copy(%x)
  ROOT %f = f32[8]{0:T(128)} fusion(%cx, %y), kind=kLoop, calls=%fused
}
)";

}  // namespace xlamem::test::hlo_helpers
