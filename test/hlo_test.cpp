// SPDX-License-Identifier: Apache-2.0
// Tests for the hlo area: graph traits, the HLO reference IR, reader and printer, dataflow
// analysis and memory-space propagation (on HLO and on a second, non-HLO graph model).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo_archetype.hpp"
#include "hlo_test_graph.hpp"
#include "support.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/hlo/shape.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace {

using namespace xlamem;
namespace fs = std::filesystem;

hlo::module parse_ok(std::string_view text, std::string_view name = "<test>") {
  auto m = hlo::parse_module(text, name);
  if (!m) FAIL(m.error().to_string());
  return std::move(*m);
}

hlo::instruction_id find(const hlo::module& m, std::string_view comp, std::string_view name) {
  auto i = m.find_instruction(comp, name);
  REQUIRE_MESSAGE(i.has_value(), "no instruction " << name << " in " << comp);
  return *i;
}

const hlo::shape& shape_of(const hlo::module& m, std::string_view comp, std::string_view name) {
  return m[find(m, comp, name)].shape;
}

std::string layout_text(const hlo::module& m, std::string_view comp, std::string_view name) {
  return hlo::to_string(shape_of(m, comp, name));
}

/// Full structural equality of two modules (the round-trip criterion).
void check_same_ir(const hlo::module& a, const hlo::module& b) {
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

std::vector<fs::path> hlo_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& sub : {"hlo/xla-models", "hlo/xla-tests"}) {
    for (const auto& e : fs::directory_iterator(dir / sub)) {
      if (e.path().extension() == ".hlo") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST_SUITE("hlo/shape") {
  TEST_CASE("every element type parses and prints back") {
    for (const auto& e : hlo::detail::element_types) {
      if (e.type == hlo::element_type::invalid) continue;
      const bool scalar_only = e.type == hlo::element_type::token || e.type == hlo::element_type::opaque;
      const std::string text = std::string(e.name) + (scalar_only ? "[]" : "[2,3]");
      auto s = hlo::parse_shape(text);
      REQUIRE_MESSAGE(s.has_value(), text);
      CHECK(s->type == e.type);
      CHECK(hlo::to_string(*s) == text);
    }
  }

  TEST_CASE("layouts: minor_to_major, tiles, memory space, split config and the rare parts") {
    for (std::string_view text :
         {"s32[6]{0:T(128)S(1)SC(0:3)}", "f32[2,3]{1,0:S(2)}", "s32[]{:T(128)}", "u32[]{:S(2)}",
          "bf16[1024,512]{1,0:T(8,128)(2,1)}", "s4[8,32768,1,256]{3,1,0,2:T(64,128)(8,1)E(4)S(1)}",
          "f32[4,8]{0,1:T(2,*)L(4)#(s32)*(s64)E(32)S(5)SC(1:2,4)SC(0:1)P(f32[8,4]{1,0})M(8)}",
          "f32[<=4,?]{1,0}", "(f32[], (s32[2]{0}, token[]), pred[1]{0:S(1)})", "()"}) {
      auto s = hlo::parse_shape(text);
      REQUIRE_MESSAGE(s.has_value(), text << ": " << s.error().to_string());
      CHECK(hlo::to_string(*s) == text);
    }
    auto s = hlo::parse_shape("s32[6]{0:T(128)S(1)SC(0:3)}");
    REQUIRE(s.has_value());
    CHECK(s->layout.memory_space == 1);
    REQUIRE(s->layout.split_configs.size() == 1);
    CHECK(s->layout.split_configs[0] == split_config{0, {3}});
    CHECK(s->layout.tiles == std::vector<std::vector<std::int64_t>>{{128}});
  }

  TEST_CASE("byte sizes: arrays, pred, packed sub-byte types, tuples, tokens") {
    CHECK(hlo::parse_shape("f32[2,3]")->byte_size() == 24);
    CHECK(hlo::parse_shape("pred[10]")->byte_size() == 10);
    CHECK(hlo::parse_shape("s4[10]{0}")->byte_size() == 10);
    CHECK(hlo::parse_shape("s4[10]{0:E(4)}")->byte_size() == 5);
    CHECK(hlo::parse_shape("(f32[], f32[], f32[])")->byte_size() == 24);
    CHECK(hlo::parse_shape("token[]")->byte_size() == 0);
    CHECK(hlo::parse_shape("bf16[<=8]")->byte_size() == 16);
  }

  TEST_CASE("a shape written without a layout gets the default one when a space is set") {
    auto m = parse_ok("HloModule m\nENTRY e {\n  ROOT p = f32[2,3] parameter(0)\n}\n");
    graph_traits<hlo::module>::set_memory_space(m, m.computations[0].root, {}, 5);
    CHECK(hlo::to_string(m[m.computations[0].root].shape) == "f32[2,3]{1,0:S(5)}");
  }
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("hlo/reader") {
  TEST_CASE("every module under xla-models and xla-tests parses and round-trips, long and short form") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto files = hlo_files(dir);
    CHECK(files.size() >= 40);
    for (const auto& f : files) {
      CAPTURE(f.filename().string());
      auto m = hlo::read_module_file(f.string());
      REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
      CHECK(!m->instructions.empty());
      for (const auto& opts : {hlo::print_options{}, hlo::short_form()}) {
        const std::string text = hlo::to_string(*m, opts);
        auto again = hlo::parse_module(text, "printed");
        REQUIRE_MESSAGE(again.has_value(), again.error().to_string());
        check_same_ir(*m, *again);
        CHECK(hlo::to_string(*again, opts) == text);
      }
    }
  }

  TEST_CASE("real-model facts: sizes, input_output_alias, stack frames, /*index=*/ comments") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    auto m = hlo::read_module_file((dir / "hlo/xla-models/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo").string());
    REQUIRE(m.has_value());
    CHECK(m->instructions.size() == 1947);
    CHECK(!m->input_output_alias.empty());
    CHECK(m->input_output_alias[0] == hlo::alias_entry{{0}, 0, {}, false});
    CHECK(m->computations[hlo::index_of(m->entry)].is_entry);

    auto scan = hlo::read_module_file((dir / "hlo/xla-models/bench_scan_N2000_M3.hlo").string());
    REQUIRE(scan.has_value());
    CHECK(scan->instructions.size() == 40);
    REQUIRE(scan->stack_frames.size() == 4);
    CHECK(scan->stack_frames[0].name == "FileNames");
    CHECK(scan->stack_frames[0].entries[0] == std::pair<std::int64_t, std::string>{1, "\"jax_tests/example_b.py\""});
    CHECK(scan->stack_frames[3].name == "StackFrames");
    REQUIRE(scan->entry_parameter_layouts.has_value());
    CHECK(hlo::to_string((*scan->entry_parameter_layouts)[0]) == "f32[2000,3]{1,0}");

    auto xnn = hlo::read_module_file((dir / "hlo/xla-models/xnn.parallel_dots.optimized.hlo").string());
    REQUIRE(xnn.has_value());  // leading /* */ comment, attributes on the next line, names reused across computations
    CHECK(xnn->computations.size() == 6);
  }

  TEST_CASE("grammar cases from XLA's parser tests") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto t = dir / "hlo/xla-tests";
    auto pred = hlo::read_module_file((t / "hlo_parser_test.ConstantPred.hlo").string());
    REQUIRE(pred.has_value());
    const auto& c = (*pred)[pred->computations[0].root];
    CHECK(c.literal == "true");
    REQUIRE(c.find_attribute("backend_config") != nullptr);
    CHECK(*c.find_attribute("backend_config") == "\"foo\\\" bar\"");

    auto nested = hlo::read_module_file((t / "hlo_parser_test.NestedAliasing.hlo").string());
    REQUIRE(nested.has_value());
    REQUIRE(nested->input_output_alias.size() == 2);
    CHECK(nested->input_output_alias[1] == hlo::alias_entry{{1, 1}, 0, {1}, false});

    auto copies = hlo::read_module_file((t / "hlo_parser_test.CopyStartAndCopyDone.hlo").string());
    REQUIRE(copies.has_value());
    CHECK((*copies->entry_parameter_layouts)[1].layout.memory_space == 1);
    CHECK(copies->entry_result_layout->elements[1].layout.memory_space == 2);

    auto sched = hlo::read_module_file((t / "memory_space_assignment_test.CrossProgramRootLiveOutBug.hlo").string());
    REQUIRE(sched.has_value());
    CHECK(sched->is_scheduled);
    CHECK(!sched->input_output_alias.empty());

    auto composite = hlo::read_module_file((t / "hlo_parser_test.CompositeCall.hlo").string());
    REQUIRE(composite.has_value());
  }

  TEST_CASE("short form, mixed form, comments, elided constants and called computations") {
    const auto m = parse_ok(R"(// a line comment
/* a block
   comment */ HloModule mixed, is_scheduled=true, input_output_alias={ {0}: (1, {}, must-alias) }, buffer_donor={ (0, {}) }, num_partitions=1

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %v = f32[4]{0} get-tuple-element(%p), index=1
  ROOT %t = (s32[], f32[4]{0}) tuple(%i, %v)
}

%cond {
  %p = (s32[], f32[4]{0}) parameter(0)
  ROOT %c = pred[] constant(false)
}

ENTRY %main.3 (x: f32[4], y: f32[4]) -> f32[] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %big = f32[4]{0} constant({...})
  %nest = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  %z = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(s32[] %z, f32[4]{0} %x)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body, metadata={op_name="a{b}" source_line=3}
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[4]{0} %y, %zero), dimensions={0}, to_apply=region_0.1,
      frontend_attributes={x="{"}, backend_config={"k":{"v":"}"}}
}
)");
    CHECK(m.is_scheduled);
    CHECK(m.input_output_alias == std::vector<hlo::alias_entry>{{{0}, 1, {}, true}});
    CHECK(m.buffer_donors == std::vector<hlo::buffer_donor_entry>{{0, {}}});
    REQUIRE(m.attributes.size() == 1);
    CHECK(m.attributes[0] == hlo::attribute{"num_partitions", "1"});
    CHECK(m[m.entry].name == "main.3");
    const auto w = find(m, "main.3", "w");
    REQUIRE(m[w].calls.size() == 2);
    CHECK(m[w].calls[0].role == hlo::call_role::condition);
    CHECK(m[m[w].calls[1].computation].name == "body");
    CHECK(m[find(m, "main.3", "big")].literal == "{...}");
    CHECK(m[find(m, "main.3", "nest")].literal == "{ { 1, 2 }, { 3, 4 } }");
    const auto r = find(m, "main.3", "r");
    CHECK(*m[r].find_attribute("backend_config") == R"({"k":{"v":"}"}})");
    CHECK(*m[r].find_attribute("frontend_attributes") == R"({x="{"})");
    CHECK(m[find(m, "body", "v")].tuple_index == 1);
    CHECK(m[find(m, "main.3", "x")].users == std::vector<hlo::instruction_id>{find(m, "main.3", "init")});
  }

  TEST_CASE("async sugar (`custom-call-start` / `-done`) reads as async-start / async-done and prints back") {
    const std::string text = R"(HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  s = ((f32[4]{0}), f32[4]{0}, s32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[4]{0} custom-call-done(s)
}
)";
    const auto m = parse_ok(text);
    const auto S = find(m, "e", "s"), D = find(m, "e", "d");
    CHECK(m[S].opcode == hlo::opcodes::async_start);
    CHECK(m[D].opcode == hlo::opcodes::async_done);
    CHECK(hlo::to_string(m, S, hlo::short_form()) ==
          R"(s = ((f32[4]{0}), f32[4]{0}, s32[]) custom-call-start(p), custom_call_target="foo")");
    auto a = dataflow_analysis<hlo::module>::run(m);
    REQUIRE(a.has_value());
    CHECK(a->value_set(S, {0, 0}) == a->value_set(find(m, "e", "p"), {}));
    CHECK(a->value_set(D, {}) == a->value_set(S, {1}));
  }

  TEST_CASE("a dynamic-dimension and a forward reference parse; the root defaults to the last instruction") {
    const auto m = parse_ok("HloModule m\nENTRY e {\n  a = f32[<=8,?] parameter(0)\n  n = f32[<=8,?] negate(a)\n}\n");
    const auto& c = m.computations[0];
    CHECK(m[c.root].name == "n");
    CHECK(m[c.root].is_root);
    CHECK(m[c.parameters[0]].shape.dynamic == std::vector<bool>{true, true});
    const auto fwd = parse_ok("HloModule m\nENTRY e {\n  ROOT n = f32[] negate(a)\n  a = f32[] parameter(0)\n}\n");
    CHECK(fwd[fwd.computations[0].root].operands.size() == 1);
  }
}

// ---------------------------------------------------------------------------------------------
namespace {

struct bad_case {
  std::string name;
  std::string text;
  int line;                 // expected line (0: any)
  std::string_view needle;  // part of the message
};

std::vector<bad_case> hand_written_bad_cases() {
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
void check_bad(const std::string& name, const std::string& text, int line, std::string_view needle) {
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

}  // namespace

TEST_SUITE("hlo/reader/malformed") {
  TEST_CASE("hand-written malformed modules name the place and what was expected") {
    const auto cases = hand_written_bad_cases();
    CHECK(cases.size() >= 50);
    for (const auto& c : cases) check_bad(c.name, c.text, c.line, c.needle);
  }

  TEST_CASE("mutations of real modules: truncations, unbalanced braces, unknown types, duplicates, dangling operands") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    auto text = hlo::read_text_file((dir / "hlo/xla-tests/memory_space_assignment_test.TestCustomKernelColoringBug.hlo").string());
    REQUIRE(text.has_value());
    const std::string src = *text;
    int cases = 0;
    // Truncations inside the (only, entry) computation: always "not closed" or an earlier error.
    const auto body = src.find('{', src.find("ENTRY"));
    REQUIRE(body != std::string::npos);
    const auto last = src.rfind('}');
    for (int k = 1; k <= 24; ++k) {
      const std::size_t cut = body + 1 + (last - body - 1) * static_cast<std::size_t>(k) / 25;
      check_bad("truncated at " + std::to_string(cut), src.substr(0, cut), 0, "");
      ++cases;
    }
    auto mutate = [&](const std::string& what, std::string_view from, std::string_view to, std::string_view needle,
                      std::size_t nth = 0) {
      std::size_t at = src.find(from);
      for (std::size_t k = 0; k < nth && at != std::string::npos; ++k) at = src.find(from, at + 1);
      REQUIRE_MESSAGE(at != std::string::npos, what);
      std::string t = src;
      t.replace(at, from.size(), to);
      const int line = static_cast<int>(std::count(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
      check_bad(what, t, needle.empty() ? 0 : line, needle);
      ++cases;
    };
    mutate("unknown type", "bf16[1024,512]{1,0:T(8,128)(2,1)} parameter(0)", "bf17[1024,512]{1,0:T(8,128)(2,1)} parameter(0)", "unknown element type 'bf17'");
    mutate("unknown opcode", " parameter(0)", " parameterx(0)", "unknown opcode");
    mutate("unbalanced metadata", "metadata={op_name=\"call.0\"}", "metadata={op_name=\"call.0\"", "");
    mutate("extra closing brace", "metadata={op_name=\"call.0\"}", "metadata={op_name=\"call.0\"}}", "");
    mutate("unterminated string", "op_name=\"call.0\"", "op_name=\"call.0", "");
    mutate("dangling operand", "%param.2)", "%param.22)", "unknown operand '");
    mutate("duplicate name", "%param.2 =", "%constant.1 =", "duplicate instruction name 'constant.1'");
    mutate("bad layout", "{1,0:T(8,128)(2,1)}", "{1,0:T(8,128)(2,1)X}", "layout part");
    mutate("missing equals", "%param.2 =", "%param.2 :", "expected '='");
    mutate("bad header", "is_scheduled=true", "is_scheduled=yes", "true or false");
    mutate("negative dimension", "bf16[2,512,4096]", "bf16[2,-512,4096]", "negative dimension");
    mutate("no module keyword", "HloModule", "HloModul", "expected 'HloModule'");

    // The largest real module, mutated in the same ways.
    auto big = hlo::read_text_file((dir / "hlo/xla-models/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo").string());
    REQUIRE(big.has_value());
    for (std::size_t frac : {3u, 5u, 7u, 9u}) {
      std::string t = big->substr(0, big->size() * frac / 10);
      auto m = hlo::parse_module(t, "bad.hlo");
      CHECK_FALSE(m.has_value());
      if (!m) CHECK(m.error().message().rfind("bad.hlo:", 0) == 0);
      ++cases;
    }
    // Dropping every '}' in turn from a small module never crashes and always errors.
    auto small = hlo::read_text_file((dir / "hlo/xla-tests/memory_space_propagation_test.NestedInputFusion.input.hlo").string());
    REQUIRE(small.has_value());
    for (std::size_t at = small->find('}'); at != std::string::npos; at = small->find('}', at + 1)) {
      std::string t = *small;
      t.erase(at, 1);
      auto m = hlo::parse_module(t, "bad.hlo");
      CHECK_FALSE(m.has_value());
      ++cases;
    }
    CHECK(cases >= 50);
  }

  TEST_CASE("random byte mutations never crash the reader, the analysis or the pass") {
    const std::string src = R"(HloModule fuzz, input_output_alias={ {0}: (0, {}, may-alias) }
%inner {
  %ip = s32[6]{0:T(128)} parameter(0)
  ROOT %ib = s32[2,3]{1,0:T(128)} bitcast(%ip)
}
%fused (p0: s32[6], p1: (s32[6], s32[6])) -> (s32[2,3], s32[6]) {
  %p0 = s32[6]{0:T(128)} parameter(0)
  %p1 = (s32[6]{0:T(128)}, s32[6]{0:T(128)}) parameter(1)
  %g = s32[6]{0:T(128)} get-tuple-element(%p1), index=1
  %nf = s32[2,3]{1,0:T(128)} fusion(%g), kind=kLoop, calls=%inner
  %i = s32[] constant(0)
  %d = s32[6]{0:T(128)} dynamic-update-slice(%p0, %g, %i)
  ROOT %t = (s32[2,3]{1,0:T(128)}, s32[6]{0:T(128)}) tuple(%nf, %d)
}
%body {
  %bp = (s32[], s32[6]{0}) parameter(0)
  ROOT %bt = (s32[], s32[6]{0}) copy(%bp)
}
%cond {
  %cp = (s32[], s32[6]{0}) parameter(0)
  ROOT %c = pred[] constant(false)
}
ENTRY %main {
  %a = s32[6]{0:T(128)S(1)SC(0:3)} parameter(0)
  %b = (s32[6]{0:T(128)}, s32[6]{0:T(128)S(2)}) parameter(1)
  %f = (s32[2,3]{1,0:T(128)S(1)}, s32[6]{0:T(128)}) fusion(%a, %b), kind=kLoop, calls=%fused, metadata={op_name="x" source_line=1}
  %z = s32[] constant(0)
  %w0 = (s32[], s32[6]{0}) tuple(%z, %a)
  %w = (s32[], s32[6]{0}) while(%w0), condition=%cond, body=%body
  ROOT %r = ((s32[2,3]{1,0:T(128)S(1)}, s32[6]{0:T(128)}), (s32[], s32[6]{0})) tuple(%f, %w)
}
)";
    REQUIRE(hlo::parse_module(src).has_value());
    const std::string alphabet = "{}()[],=%:\"/*\n 0123456789-SCTabfsu.<>?";
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    auto next = [&] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    std::size_t parsed = 0, rejected = 0;
    for (int iter = 0; iter < 600; ++iter) {
      std::string t = src;
      const int edits = 1 + static_cast<int>(next() % 3);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = next() % t.size();
        switch (next() % 3) {
          case 0: t.erase(at, 1 + next() % 4); break;
          case 1: t.insert(at, 1, alphabet[next() % alphabet.size()]); break;
          default: t[at] = alphabet[next() % alphabet.size()]; break;
        }
        if (t.empty()) t = "x";
      }
      auto m = hlo::parse_module(t, "fuzz.hlo");
      if (!m) {
        ++rejected;
        CHECK(m.error().message().rfind("fuzz.hlo:", 0) == 0);
        continue;
      }
      ++parsed;
      (void)hlo::to_string(*m);
      auto a = dataflow_analysis<hlo::module>::run(*m);
      if (a) (void)a->values().size();
      (void)propagate_memory_spaces(*m);
    }
    CHECK(rejected > 100);
    CHECK(parsed + rejected == 600);
  }

  TEST_CASE("every prefix of a small module either parses or fails cleanly") {
    const std::string src = R"(HloModule m, input_output_alias={ {0}: (0, {}) }
%f (a: f32[4]) -> f32[4] {
  %a = f32[4]{0:S(1)} parameter(0)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %a), metadata={op_name="x{y}" source_line=2}
}
ENTRY %e {
  %p = f32[4]{0} parameter(0)
  ROOT %r = f32[4]{0} fusion(%p), kind=kLoop, calls=%f, backend_config={"a":[1,{"b":"}"}]}
}
)";
    std::size_t errors = 0;
    for (std::size_t n = 0; n <= src.size(); ++n) {
      auto m = hlo::parse_module(std::string_view(src).substr(0, n), "prefix.hlo");
      if (!m) {
        ++errors;
        CHECK(m.error().message().rfind("prefix.hlo:", 0) == 0);
      }
    }
    CHECK(errors > src.size() / 2);
  }
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("hlo/dataflow") {
  using analysis = dataflow_analysis<hlo::module>;

  TEST_CASE("tuple and get-tuple-element forward values; the tuple table is its own value") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  t = (f32[4]{0}, f32[4]{0}) tuple(a, b)
  g = f32[4]{0} get-tuple-element(t), index=1
  ROOT n = f32[4]{0} negate(g)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto A = find(m, "e", "a"), B = find(m, "e", "b"), T = find(m, "e", "t"), G = find(m, "e", "g"), N = find(m, "e", "n");
    const auto vb = a->value_defined_at(B, {});
    REQUIRE(vb.has_value());
    CHECK(a->value_set(G, {}) == std::vector<analysis::value_id>{*vb});
    CHECK(a->value_set(T, {1}) == std::vector<analysis::value_id>{*vb});
    CHECK(a->value_defined_at(T, {}).has_value());
    CHECK_FALSE(a->value_defined_at(T, {0}).has_value());
    CHECK_FALSE(a->value_defined_at(G, {}).has_value());
    CHECK(a->values().size() == 4);  // a, b, the tuple table, n
    const auto& val = a->get(*vb);
    CHECK(val.positions.size() == 3);
    CHECK(val.positions[0] == analysis::position{B, {}});
    // The tuple does not use b (it forwards it); negate does, through the gte.
    REQUIRE(val.uses.size() == 1);
    CHECK(val.uses[0].instruction == N);
    // The gte reads the tuple table.
    const auto& table = a->get(*a->value_defined_at(T, {}));
    REQUIRE(table.uses.size() == 1);
    CHECK(table.uses[0].instruction == G);
    CHECK(table.is_tuple);
    CHECK(table.bytes == 16);
    CHECK(a->get(*a->value_defined_at(A, {})).bytes == 16);
  }

  TEST_CASE("bitcast forwards, or defines a value with bitcast_defines_value") {
    const auto m = parse_ok("HloModule m\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  ROOT b = f32[2,2]{1,0} bitcast(a)\n}\n");
    const auto A = find(m, "e", "a"), B = find(m, "e", "b");
    auto fwd = analysis::run(m);
    REQUIRE(fwd.has_value());
    CHECK(fwd->value_set(B, {}) == fwd->value_set(A, {}));
    CHECK(fwd->values().size() == 1);
    auto def = analysis::run(m, dataflow_options{true});
    REQUIRE(def.has_value());
    CHECK(def->value_defined_at(B, {}).has_value());
    CHECK(def->values().size() == 2);
  }

  TEST_CASE("while: init, body parameter, body root, condition parameter and result share values") {
    const auto m = parse_ok(R"(HloModule m
cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} negate(v)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(zero, p)
  ROOT w = (s32[], f32[4]{0}) while(init), condition=cond, body=body
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto P = find(m, "e", "p"), W = find(m, "e", "w"), V2 = find(m, "body", "v2");
    const auto BP = find(m, "body", "bp"), CP = find(m, "cond", "cp"), V = find(m, "body", "v");
    std::vector<analysis::value_id> expect{*a->value_defined_at(P, {}), *a->value_defined_at(V2, {})};
    std::sort(expect.begin(), expect.end());
    CHECK(a->value_set(W, {1}) == expect);
    CHECK(a->value_set(BP, {1}) == expect);
    CHECK(a->value_set(CP, {1}) == expect);
    CHECK(a->value_set(V, {}) == expect);
    CHECK_FALSE(a->value_defined_at(W, {}).has_value());
    CHECK_FALSE(a->value_defined_at(BP, {}).has_value());
    CHECK(a->value_set(W, {}).size() == 2);  // init's table and the body root's table
    const auto body = a->computation_number(m.find_computation("body").value());
    REQUIRE(a->callers(body).size() == 1);
    CHECK(a->callers(body)[0].binding == call_binding::while_body);
  }

  TEST_CASE("SSA form: phis where a loop changes a value, none for invariants, nested loops end") {
    // The outer loop carries a counter (changed), a vector (changed by an inner loop that
    // negates it) and a constant vector nobody writes (invariant).
    const auto m = parse_ok(R"(HloModule m
icond {
  icp = (s32[], f32[4]{0}) parameter(0)
  ici = s32[] get-tuple-element(icp), index=0
  ilim = s32[] constant(3)
  ROOT ilt = pred[] compare(ici, ilim), direction=LT
}
ibody {
  ibp = (s32[], f32[4]{0}) parameter(0)
  ii = s32[] get-tuple-element(ibp), index=0
  iv = f32[4]{0} get-tuple-element(ibp), index=1
  ione = s32[] constant(1)
  ii2 = s32[] add(ii, ione)
  iv2 = f32[4]{0} negate(iv)
  ROOT ibt = (s32[], f32[4]{0}) tuple(ii2, iv2)
}
cond {
  cp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  k = f32[4]{0} get-tuple-element(bp), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  izero = s32[] constant(0)
  iinit = (s32[], f32[4]{0}) tuple(izero, v)
  inner = (s32[], f32[4]{0}) while(iinit), condition=icond, body=ibody
  v2 = f32[4]{0} get-tuple-element(inner), index=1
  ROOT bt = (s32[], f32[4]{0}, f32[4]{0}) tuple(i2, v2, k)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  q = f32[4]{0} parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}, f32[4]{0}) tuple(zero, p, q)
  ROOT w = (s32[], f32[4]{0}, f32[4]{0}) while(init), condition=cond, body=body
})");
    dataflow_options ssa;
    ssa.ssa_form = true;
    auto a = analysis::run(m, ssa);
    REQUIRE(a.has_value());
    const auto W = find(m, "e", "w"), BP = find(m, "body", "bp"), CP = find(m, "cond", "cp");
    const auto IBP = find(m, "ibody", "ibp"), INNER = find(m, "body", "inner");
    const auto vq = *a->value_defined_at(find(m, "e", "q"), {});
    // The invariant {2} is q itself everywhere: no phi.
    for (const auto n : {W, BP, CP}) CHECK(a->value_set(n, {2}) == std::vector<analysis::value_id>{vq});
    // The counter and the vector are phis at the while, the body and condition parameters.
    for (const auto n : {W, BP, CP}) {
      for (const std::int64_t k : {0, 1}) {
        const auto v = a->value_defined_at(n, {k});
        REQUIRE(v.has_value());
        CHECK(a->get(*v).is_phi);
        CHECK(a->value_set(n, {k}) == std::vector<analysis::value_id>{*v});
      }
    }
    // The body parameter's vector phi flows from p (the init) and from the inner loop's result.
    const auto& bp1 = a->get(*a->value_defined_at(BP, {1}));
    const auto inner1 = a->value_defined_at(INNER, {1});
    REQUIRE(inner1.has_value());
    CHECK(a->get(*inner1).is_phi);
    std::vector<analysis::value_id> expect{*a->value_defined_at(find(m, "e", "p"), {}), *inner1};
    std::sort(expect.begin(), expect.end());
    CHECK(bp1.phi_inputs == expect);
    // The inner loop's parameter phi takes the outer body's vector (the outer phi) and its own
    // root's negate.
    const auto& ibp1 = a->get(*a->value_defined_at(IBP, {1}));
    CHECK(std::find(ibp1.phi_inputs.begin(), ibp1.phi_inputs.end(), *a->value_defined_at(BP, {1})) !=
          ibp1.phi_inputs.end());
    // Without SSA form the same positions hold value sets, and no phis exist.
    auto plain = analysis::run(m);
    REQUIRE(plain.has_value());
    for (const auto& v : plain->values()) CHECK_FALSE(v.is_phi);
    std::vector<analysis::value_id> both{*plain->value_defined_at(find(m, "e", "p"), {}),
                                         *plain->value_defined_at(find(m, "ibody", "iv2"), {})};
    std::sort(both.begin(), both.end());
    CHECK(plain->value_set(W, {1}) == both);  // the init and the inner negate, side by side
  }

  TEST_CASE("SSA form: a loop passing a loop-carried value through makes no phi of its own") {
    // Issue 15 item (d), the shape of reverse_scan_grad: w2 passes w1's loop-carried vector
    // through unchanged. Before phis exist, two values (p and v2) reach w2's element {1}, but
    // once w1 has its phi, only that phi does (the other input is w2's own element): XLA's
    // Phi() makes none there, and w1's phi lives until w2 ends.
    const auto m = parse_ok(R"(HloModule m
c1 {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
b1 {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} negate(v)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}
c2 {
  dp = (s32[], f32[4]{0}) parameter(0)
  di = s32[] get-tuple-element(dp), index=0
  dlim = s32[] constant(5)
  ROOT dlt = pred[] compare(di, dlim), direction=LT
}
b2 {
  ep = (s32[], f32[4]{0}) parameter(0)
  j = s32[] get-tuple-element(ep), index=0
  u = f32[4]{0} get-tuple-element(ep), index=1
  eone = s32[] constant(1)
  j2 = s32[] add(j, eone)
  ROOT et = (s32[], f32[4]{0}) tuple(j2, u)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(zero, p)
  w1 = (s32[], f32[4]{0}) while(init), condition=c1, body=b1
  x = f32[4]{0} get-tuple-element(w1), index=1
  zero2 = s32[] constant(0)
  init2 = (s32[], f32[4]{0}) tuple(zero2, x)
  ROOT w2 = (s32[], f32[4]{0}) while(init2), condition=c2, body=b2
})");
    dataflow_options ssa;
    ssa.ssa_form = true;
    auto a = analysis::run(m, ssa);
    REQUIRE(a.has_value());
    const auto W1 = find(m, "e", "w1"), W2 = find(m, "e", "w2");
    const auto phi = a->value_defined_at(W1, {1});
    REQUIRE(phi.has_value());
    CHECK(a->get(*phi).is_phi);
    for (const auto n : {W2, find(m, "b2", "ep"), find(m, "c2", "dp"), find(m, "b2", "u")}) {
      CHECK_FALSE(a->value_defined_at(n, n == find(m, "b2", "u") ? shape_index{} : shape_index{1}).has_value());
    }
    CHECK(a->value_set(W2, {1}) == std::vector<analysis::value_id>{*phi});
    CHECK(a->value_set(find(m, "b2", "ep"), {1}) == std::vector<analysis::value_id>{*phi});
    // w2's counter does change: a phi, as before. Value ids have no gaps.
    const auto counter = a->value_defined_at(W2, {0});
    REQUIRE(counter.has_value());
    CHECK(a->get(*counter).is_phi);
    for (std::size_t v = 0; v < a->values().size(); ++v) CHECK(a->values()[v].id == v);
    // No value is the removed phi: every position of w2{1} holds w1's phi, and it is used by w2.
    bool used_by_w2 = false;
    for (const auto& u : a->get(*phi).uses) used_by_w2 = used_by_w2 || u.instruction == W2;
    CHECK(used_by_w2);
  }

  TEST_CASE("recv-done forwards the recv's data; send forwards its operand to {0}") {
    // HloDataflowAnalysis::UpdateRecvDoneValueSet and UpdateSendValueSet.
    const auto m = parse_ok(R"(HloModule sr
ENTRY e {
  p = f32[4]{0} parameter(0)
  tok = token[] after-all()
  s = (f32[4]{0}, u32[], token[]) send(p, tok), channel_id=2
  sd = token[] send-done(s), channel_id=2
  r = (f32[4]{0}, u32[], token[]) recv(tok), channel_id=1
  rd = (f32[4]{0}, token[]) recv-done(r), channel_id=1
  d = f32[4]{0} get-tuple-element(rd), index=0
  ROOT a = f32[4]{0} add(d, p)
})");
    auto a = analysis::run(m);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    const auto R = find(m, "e", "r"), RD = find(m, "e", "rd"), S = find(m, "e", "s"), P = find(m, "e", "p");
    const auto data = a->value_defined_at(R, {0});
    REQUIRE(data.has_value());
    CHECK_FALSE(a->value_defined_at(RD, {0}).has_value());
    CHECK(a->value_set(RD, {0}) == std::vector<analysis::value_id>{*data});
    CHECK(a->value_defined_at(RD, {1}).has_value());  // its own token
    CHECK(a->value_set(S, {0}) == a->value_set(P, {}));
    CHECK(a->value_defined_at(S, {1}).has_value());  // the context
  }

  TEST_CASE("forwarding opcodes: barriers, domain, add-dependency, async and collective start/done; scatter in place") {
    // One module with a row of docs/hlo.md's opcode table each (HloDataflowAnalysis's
    // Update*ValueSet for the forwarding ones, GetInPlaceInputOutputPairs for scatter).
    const auto m = parse_ok(R"(HloModule fw
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
wrapped {
  w = f32[4]{0} parameter(0)
  ROOT wn = f32[4]{0} negate(w)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  q = f32[4]{0} parameter(1)
  u = f32[1]{0} parameter(2)
  t = (f32[4]{0}, f32[4]{0}) tuple(p, q)
  b = (f32[4]{0}, f32[4]{0}) opt-barrier(t)
  b2 = (f32[4]{0}, f32[4]{0}) optimization-barrier(b)
  dm = f32[4]{0} domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  tok = token[] after-all()
  ad = f32[4]{0} add-dependency(q, tok)
  ars = f32[4]{0} all-reduce-start(p), to_apply=sum
  ard = f32[4]{0} all-reduce-done(ars)
  cps = (f32[4]{0}, f32[4]{0}, u32[], u32[]) collective-permute-start(q), source_target_pairs={{0,1}}
  cpd = f32[4]{0} collective-permute-done(cps)
  as = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(p), calls=wrapped
  au = ((f32[4]{0}), f32[4]{0}, s32[]) async-update(as), calls=wrapped
  adn = f32[4]{0} async-done(au), calls=wrapped
  idx = s32[1,1]{1,0} constant({{0}})
  sc = f32[4]{0} scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
  ROOT r = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(dm, ad, ard, cpd, adn, sc, b2#1)
})");
    auto a = analysis::run(m);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    auto set = [&](const char* name, shape_index index) { return a->value_set(find(m, "e", name), index); };
    auto defines = [&](const char* name, shape_index index) {
      return a->value_defined_at(find(m, "e", name), index).has_value();
    };
    CHECK(set("b", {0}) == set("p", {}));
    CHECK(set("b", {}) == set("t", {}));  // the barrier forwards the whole tree, table included
    CHECK(set("b2", {1}) == set("q", {}));
    CHECK_FALSE(defines("b2", {}));
    CHECK(set("dm", {}) == set("p", {}));
    CHECK(set("ad", {}) == set("q", {}));
    CHECK(defines("ars", {}));
    CHECK(set("ard", {}) == set("ars", {}));
    CHECK(set("cps", {0}) == set("q", {}));
    CHECK(defines("cps", {1}));
    CHECK(set("cpd", {}) == set("cps", {1}));
    // async-start: its tuple tables and context are its own; element {0, k} is operand k, {1}
    // the wrapped computation's root, whose parameter k is operand k (UpdateAsyncStartValueSet).
    CHECK(set("as", {0, 0}) == set("p", {}));
    CHECK(defines("as", {}));
    CHECK(defines("as", {0}));
    CHECK(defines("as", {2}));
    CHECK_FALSE(defines("as", {1}));
    CHECK(set("as", {1}) == a->value_set(find(m, "wrapped", "wn"), {}));
    CHECK(a->value_set(find(m, "wrapped", "w"), {}) == set("p", {}));
    CHECK_FALSE(a->value_defined_at(find(m, "wrapped", "w"), {}).has_value());
    // async-update and async-done pass the arrays on and define the tuple tables.
    CHECK(set("au", {1}) == set("as", {1}));
    CHECK(defines("au", {}));
    CHECK(set("adn", {}) == set("as", {1}));
    CHECK(defines("sc", {}));
    const auto& pairs = a->semantics(a->number(find(m, "e", "sc"))).in_place;
    REQUIRE(pairs.size() == 1);
    CHECK(pairs[0].operand == 0);
    CHECK(pairs[0].output_index.empty());
    // all-reduce-start is one of XLA's default in-place operations.
    const auto& ar = a->semantics(a->number(find(m, "e", "ars"))).in_place;
    REQUIRE(ar.size() == 1);
    CHECK(ar[0].operand == 0);
    CHECK(ar[0].output_index.empty());
  }

  TEST_CASE("call and conditional bind parameters to operands and outputs to roots") {
    const auto m = parse_ok(R"(HloModule m
callee {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
t {
  tp = f32[] parameter(0)
  ROOT tr = f32[] negate(tp)
}
f {
  ROOT fp = f32[] parameter(0)
}
ENTRY e {
  a = f32[] parameter(0)
  c = f32[] call(a), to_apply=callee
  k = pred[] parameter(1)
  b = f32[] parameter(2)
  ROOT cond = f32[] conditional(k, c, b), true_computation=t, false_computation=f
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto va = *a->value_defined_at(find(m, "e", "a"), {});
    const auto vy = *a->value_defined_at(find(m, "callee", "y"), {});
    const auto vb = *a->value_defined_at(find(m, "e", "b"), {});
    const auto vtr = *a->value_defined_at(find(m, "t", "tr"), {});
    CHECK(a->value_set(find(m, "callee", "x"), {}) == std::vector<analysis::value_id>{va});
    CHECK(a->value_set(find(m, "e", "c"), {}) == std::vector<analysis::value_id>{vy});
    CHECK(a->value_set(find(m, "t", "tp"), {}) == std::vector<analysis::value_id>{vy});
    CHECK(a->value_set(find(m, "f", "fp"), {}) == std::vector<analysis::value_id>{vb});
    std::vector<analysis::value_id> out{vb, vtr};
    std::sort(out.begin(), out.end());
    CHECK(a->value_set(find(m, "e", "cond"), {}) == out);
  }

  TEST_CASE("fusions keep separate values and expose their binding; in-place dynamic-update-slice") {
    const auto m = parse_ok(R"(HloModule m
fused {
  base = f32[8]{0} parameter(0)
  upd = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT dus = f32[8]{0} dynamic-update-slice(base, upd, i)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  j = s32[] parameter(2)
  f = f32[8]{0} fusion(p, u, j), kind=kLoop, calls=fused
  ROOT d = f32[8]{0} dynamic-update-slice(f, u, j)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto F = find(m, "e", "f"), D = find(m, "e", "d"), BASE = find(m, "fused", "base");
    CHECK(a->value_defined_at(F, {}).has_value());
    CHECK(a->value_defined_at(BASE, {}).has_value());
    CHECK(a->value_defined_at(D, {}).has_value());
    const auto fc = a->computation_number(m.find_computation("fused").value());
    CHECK(a->is_fusion_computation(fc));
    CHECK(a->fusion_instruction(fc) == F);
    const auto& sd = a->semantics(a->number(D));
    REQUIRE(sd.in_place.size() == 1);
    CHECK(sd.in_place[0].operand == 0);
    CHECK(sd.in_place[0].propagates_memory_space);
    const auto& sf = a->semantics(a->number(F));
    REQUIRE(sf.in_place.size() == 1);  // the fused root updates parameter 0 in place
    CHECK(sf.in_place[0].operand == 0);
    CHECK_FALSE(sf.in_place[0].propagates_memory_space);
    REQUIRE(sf.calls.size() == 1);
    CHECK(sf.calls[0].binding == call_binding::fusion);
    // The fusion uses p; the fused parameter's value is used by the dus.
    const auto& vp = a->get(*a->value_defined_at(find(m, "e", "p"), {}));
    REQUIRE(vp.uses.size() == 1);
    CHECK(vp.uses[0].instruction == F);
  }

  TEST_CASE("copy-start / copy-done and copy of a tuple forward what XLA forwards") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  v = f32[2,3]{1,0:S(1)} parameter(0)
  cs = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}, u32[]) copy-start(v)
  cd = f32[2,3]{1,0:S(2)} copy-done(cs)
  t = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}) tuple(cd, v)
  ROOT c = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}) copy(t)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto V = find(m, "e", "v"), CS = find(m, "e", "cs"), CD = find(m, "e", "cd"), C = find(m, "e", "c");
    CHECK(a->value_set(CS, {1}) == a->value_set(V, {}));
    CHECK(a->value_defined_at(CS, {0}).has_value());
    CHECK(a->value_set(CD, {}) == a->value_set(CS, {0}));
    CHECK(a->value_defined_at(C, {}).has_value());
    CHECK(a->value_set(C, {1}) == a->value_set(V, {}));
    CHECK(a->subshape(a->number(CD), 0).memory_space == 2);
    // copy-done reads the buffer it forwards; the tuple and the copy of a tuple do not. The
    // source stays in use until copy-done (as in XLA, which keeps it alive until then).
    const auto& dest = a->get(*a->value_defined_at(CS, {0}));
    REQUIRE(dest.uses.size() == 1);
    CHECK(dest.uses[0].instruction == CD);
    const auto& src = a->get(*a->value_defined_at(V, {}));
    REQUIRE(src.uses.size() == 2);
    CHECK(src.uses[0].instruction == CS);
    CHECK(src.uses[1].instruction == CD);
    CHECK(src.uses[1].operand_index == shape_index{1});
  }

  TEST_CASE("every real module analyses; instruction numbers are dense and in order") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    for (const auto& f : hlo_files(dir)) {
      CAPTURE(f.filename().string());
      auto m = hlo::read_module_file(f.string());
      REQUIRE(m.has_value());
      auto a = analysis::run(*m);
      REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
      CHECK(a->instruction_count() == m->instructions.size());
      for (std::size_t n = 0; n < a->instruction_count(); ++n) {
        CHECK(a->number(a->instruction(n)) == n);
        for (std::size_t k = 0; k < a->subshapes(n).size(); ++k) {
          CHECK_FALSE(a->value_set(n, a->subshapes(n)[k]).empty());
        }
      }
      for (const auto& v : a->values()) {
        REQUIRE_FALSE(v.positions.empty());
        CHECK(v.positions[0] == v.defining);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
namespace {

/// Runs the whole-module pass on `input` and compares every leaf with `expected`.
void check_propagation_pair(const fs::path& input, const fs::path& expected) {
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

}  // namespace

TEST_SUITE("hlo/memory_space_propagation") {
  TEST_CASE("NoMemorySpace: nothing to do, returns false, module unchanged") {
    auto m = parse_ok(no_memory_space_hlo);
    const std::string before = hlo::to_string(m);
    auto r = propagate_memory_spaces(m);
    REQUIRE(r.has_value());
    CHECK_FALSE(*r);
    CHECK(hlo::to_string(m) == before);
  }

  TEST_CASE("NonTupleOutput: XLA's expected module") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto t = dir / "hlo/xla-tests/memory_space_propagation_test.NonTupleOutput";
    check_propagation_pair(t.string() + ".input.hlo", t.string() + ".expected.hlo");
  }

  TEST_CASE("TupleOutput: XLA's expected module") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto t = dir / "hlo/xla-tests/memory_space_propagation_test.TupleOutput";
    check_propagation_pair(t.string() + ".input.hlo", t.string() + ".expected.hlo");
  }

  TEST_CASE("NestedInputFusion: XLA's expected module (the nested bitcast keeps its space)") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto t = dir / "hlo/xla-tests/memory_space_propagation_test.NestedInputFusion";
    check_propagation_pair(t.string() + ".input.hlo", t.string() + ".expected.hlo");
  }

  TEST_CASE("BitcastInFusion: XLA's expected module (bitcast defines a value)") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto t = dir / "hlo/xla-tests/memory_space_propagation_test.BitcastInFusion";
    check_propagation_pair(t.string() + ".input.hlo", t.string() + ".expected.hlo");
  }

  TEST_CASE("NestedOutputFusion: the output reaches the nested fusion and its root, not its input") {
    auto m = parse_ok(R"(HloModule nested_out
%inner {
  %ip = f32[8]{0:T(128)} parameter(0)
  ROOT %ib = f32[2,4]{1,0:T(128)} bitcast(%ip)
}
%outer {
  %p0 = f32[8]{0:T(128)} parameter(0)
  %p1 = f32[8]{0:T(128)} parameter(1)
  %sum = f32[8]{0:T(128)} add(%p0, %p1)
  ROOT %nf = f32[2,4]{1,0:T(128)} fusion(%sum), kind=kLoop, calls=%inner
}
ENTRY %main {
  %x = f32[8]{0:T(128)} parameter(0)
  %y = f32[8]{0:T(128)} parameter(1)
  ROOT %f = f32[2,4]{1,0:T(128)S(1)SC(1:2)} fusion(%x, %y), kind=kLoop, calls=%outer
}
)");
    auto r = propagate_memory_spaces(m);
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(layout_text(m, "outer", "nf") == "f32[2,4]{1,0:T(128)S(1)SC(1:2)}");
    CHECK(layout_text(m, "inner", "ib") == "f32[2,4]{1,0:T(128)S(1)SC(1:2)}");
    CHECK(layout_text(m, "inner", "ip") == "f32[8]{0:T(128)}");
    CHECK(layout_text(m, "outer", "sum") == "f32[8]{0:T(128)}");
    CHECK(layout_text(m, "outer", "p0") == "f32[8]{0:T(128)}");
  }

  namespace {
  const char* const from_parameters_hlo = R"(HloModule from_params
%neg {
  %np = f32[8]{0:T(128)} parameter(0)
  ROOT %nn = f32[8]{0:T(128)} negate(%np)
}
%fc {
  %p0 = f32[8]{0:T(128)S(1)} parameter(0)
  %p1 = f32[8]{0:T(128)} parameter(1)
  %t = (f32[8]{0:T(128)}, f32[8]{0:T(128)}) tuple(%p0, %p1)
  %g = f32[8]{0:T(128)} get-tuple-element(%t), index=0
  %n = f32[8]{0:T(128)} NEGATE
  ROOT %r = (f32[8]{0:T(128)}, f32[8]{0:T(128)}) tuple(%n, %p1)
}
ENTRY %main {
  %x = f32[8]{0:T(128)} parameter(0)
  %y = f32[8]{0:T(128)} parameter(1)
  ROOT %f = (f32[8]{0:T(128)}, f32[8]{0:T(128)}) fusion(%x, %y), kind=kLoop, calls=%fc
}
)";
  std::string with_negate(std::string_view replacement) {
    std::string s = from_parameters_hlo;
    s.replace(s.find("NEGATE"), 6, replacement);
    return s;
  }
  }  // namespace

  TEST_CASE("RunOnComputationPropagateFromParameters: aliases get the space, the negate does not") {
    auto m = parse_ok(with_negate("negate(%g)"));
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{true});
    REQUIRE(a.has_value());
    auto r = propagate_memory_spaces(m, *a, *m.find_computation("fc"));
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(layout_text(m, "fc", "t") == "(f32[8]{0:T(128)S(1)}, f32[8]{0:T(128)})");
    CHECK(layout_text(m, "fc", "g") == "f32[8]{0:T(128)S(1)}");
    CHECK(layout_text(m, "fc", "n") == "f32[8]{0:T(128)}");
    CHECK(layout_text(m, "main", "x") == "f32[8]{0:T(128)}");  // callers are not read or written
  }

  TEST_CASE("RunOnComputationFromParametersNestedFusion: also reaches the nested fusion's parameter") {
    auto m = parse_ok(with_negate("fusion(%g), kind=kLoop, calls=%neg"));
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{true});
    REQUIRE(a.has_value());
    auto r = propagate_memory_spaces(m, *a, *m.find_computation("fc"));
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(layout_text(m, "fc", "g") == "f32[8]{0:T(128)S(1)}");
    CHECK(layout_text(m, "neg", "np") == "f32[8]{0:T(128)S(1)}");
    CHECK(layout_text(m, "neg", "nn") == "f32[8]{0:T(128)}");
    CHECK(layout_text(m, "fc", "n") == "f32[8]{0:T(128)}");
  }

  TEST_CASE("RunOnComputationPropagateFromOutput: the root element reaches the negate producing it") {
    auto m = parse_ok(R"(HloModule from_output
%fc {
  %p0 = f32[8]{0:T(128)} parameter(0)
  %p1 = f32[8]{0:T(128)} parameter(1)
  %n = f32[8]{0:T(128)} negate(%p0)
  ROOT %r = (f32[8]{0:T(128)S(1)}, f32[8]{0:T(128)}) tuple(%n, %p1)
}
ENTRY %main {
  %x = f32[8]{0:T(128)} parameter(0)
  %y = f32[8]{0:T(128)} parameter(1)
  ROOT %f = (f32[8]{0:T(128)S(1)}, f32[8]{0:T(128)}) fusion(%x, %y), kind=kLoop, calls=%fc
}
)");
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{true});
    REQUIRE(a.has_value());
    auto r = propagate_memory_spaces(m, *a, *m.find_computation("fc"));
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(layout_text(m, "fc", "n") == "f32[8]{0:T(128)S(1)}");
    CHECK(layout_text(m, "fc", "p0") == "f32[8]{0:T(128)}");
  }

  TEST_CASE("run-on-computation needs an analysis where bitcasts define values") {
    auto m = parse_ok(no_memory_space_hlo);
    auto a = dataflow_analysis<hlo::module>::run(m);
    REQUIRE(a.has_value());
    auto r = propagate_memory_spaces(m, *a, m.entry);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::failed_precondition);
  }

  TEST_CASE("NestedFusionShapeMismatchBug: dynamic-update-slice base and nested fusion output get S(1)") {
    auto m = parse_ok(R"(HloModule dus_nested, is_scheduled=true
%copy_inner {
  %ci = s4[64,32]{1,0:T(8,128)E(4)S(1)} parameter(0)
  ROOT %cc = s4[64,32]{1,0:T(8,128)E(4)} copy(%ci)
}
%dus_fused {
  %base = s4[64,32]{1,0:T(8,128)E(4)S(1)} parameter(0)
  %nf = s4[64,32]{1,0:T(8,128)E(4)} fusion(%base), kind=kLoop, output_to_operand_aliasing={{}: (0, {})}, calls=%copy_inner
  %upd = s4[8,32]{1,0:T(8,128)E(4)S(1)} parameter(1)
  %i = s32[]{:T(128)} parameter(2)
  %z = s32[]{:T(128)} constant(0)
  ROOT %dus = s4[64,32]{1,0:T(8,128)E(4)S(1)} dynamic-update-slice(%nf, %upd, %i, %z)
}
ENTRY %main {
  %a = s4[64,32]{1,0:T(8,128)E(4)} parameter(0)
  %b = s4[8,32]{1,0:T(8,128)E(4)} parameter(1)
  %c = s32[]{:T(128)} parameter(2)
  %ca = s4[64,32]{1,0:T(8,128)E(4)S(1)} copy(%a)
  %cb = s4[8,32]{1,0:T(8,128)E(4)S(1)} copy(%b)
  %f = s4[64,32]{1,0:T(8,128)E(4)S(1)} fusion(%ca, %cb, %c), kind=kLoop, calls=%dus_fused
  ROOT %out = s4[64,32]{1,0:T(8,128)E(4)} copy(%f)
}
)");
    auto r = propagate_memory_spaces(m);
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(shape_of(m, "dus_fused", "nf").layout.memory_space == 1);
    CHECK(shape_of(m, "copy_inner", "cc").layout.memory_space == 1);
    CHECK(shape_of(m, "main", "out").layout.memory_space == 0);  // never outside fusions
    CHECK(shape_of(m, "main", "a").layout.memory_space == 0);
  }

  TEST_CASE("split configs are replaced, not merged; the source without one clears it") {
    auto m = parse_ok(R"(HloModule sc
%fc {
  %p = f32[8]{0:S(2)SC(0:4)SC(0:2)} parameter(0)
  ROOT %n = f32[8]{0} negate(%p)
}
ENTRY %main {
  %x = f32[8]{0:S(1)} parameter(0)
  ROOT %f = f32[8]{0} fusion(%x), kind=kLoop, calls=%fc
}
)");
    auto r = propagate_memory_spaces(m);
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(layout_text(m, "fc", "p") == "f32[8]{0:S(1)}");
  }

  TEST_CASE("a whole real module runs; an unfused module is left alone") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    auto m = hlo::read_module_file((dir / "hlo/xla-models/hlo_llama3_8b_bf16_activation_offloading_1x8.hlo").string());
    REQUIRE(m.has_value());
    const std::string before = hlo::to_string(*m);
    auto r = propagate_memory_spaces(*m);
    REQUIRE(r.has_value());
    CHECK_FALSE(*r);
    CHECK(hlo::to_string(*m) == before);
  }
}

// ---------------------------------------------------------------------------------------------
TEST_SUITE("hlo/graph_traits") {
  TEST_CASE("the same pass runs unchanged on a second, non-HLO graph model") {
    using test::kernel_graph;
    using test::kg_node;
    kernel_graph g;
    const split_config sc{0, {3}};
    // A nested "view" region (a bitcast) inside a kernel body, like NestedInputFusion.
    g.add("view_body", "vb_in", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("view_body", "vb_view", kg_node{"view", "", {"vb_in"}, -1, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_in0", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_in1", kg_node{"input", "", {}, 1, -1, "", false, {{24, 0, {}}}});
    g.add("body", "b_pack", kg_node{"pack", "", {"b_in0", "b_in1"}, -1, -1, "", true, {{24, 0, {}}, {24, 0, {}}}});
    g.add("body", "b_pick", kg_node{"pick", "", {"b_pack"}, -1, 0, "", false, {{24, 0, {}}}});
    g.add("body", "b_kernel", kg_node{"kernel", "", {"b_pick"}, -1, -1, "view_body", false, {{24, 0, {}}}});
    g.add("body", "b_sum", kg_node{"op", "", {"b_kernel", "b_in1"}, -1, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_in0", kg_node{"input", "", {}, 0, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_in1", kg_node{"input", "", {}, 1, -1, "", false, {{24, 0, {}}}});
    g.add("main", "m_moved", kg_node{"op", "", {"m_in0"}, -1, -1, "", false, {{24, 1, sc}}});
    g.add("main", "m_call", kg_node{"kernel", "", {"m_moved", "m_in1"}, -1, -1, "body", false, {{24, 2, {}}}});

    auto r = propagate_memory_spaces(g);
    REQUIRE(r.has_value());
    CHECK(*r);
    CHECK(g.nodes["b_in0"].leaves[0].space == 1);
    CHECK(g.nodes["b_in0"].leaves[0].split == sc);
    CHECK(g.nodes["b_pack"].leaves[0].space == 1);   // the packed element aliases b_in0
    CHECK(g.nodes["b_pack"].leaves[1].space == 0);
    CHECK(g.nodes["b_pick"].leaves[0].space == 1);
    CHECK(g.nodes["vb_in"].leaves[0].space == 1);    // reached through the nested kernel's use
    CHECK(g.nodes["vb_view"].leaves[0].space == 0);  // a view defines its own value
    CHECK(g.nodes["b_sum"].leaves[0].space == 2);    // the body result takes the kernel's output
    CHECK(g.nodes["b_kernel"].leaves[0].space == 0);
    CHECK(g.nodes["m_in0"].leaves[0].space == 0);    // caller side untouched

    auto again = propagate_memory_spaces(g);
    REQUIRE(again.has_value());
    CHECK_FALSE(*again);

    // Dataflow on the same model: hash-map numbering, forwarding through pack/pick.
    auto a = dataflow_analysis<kernel_graph>::run(g);
    REQUIRE(a.has_value());
    CHECK(a->value_set(std::string("b_pick"), {}) == a->value_set(std::string("b_in0"), {}));
    CHECK(a->value_set(std::string("vb_view"), {}) == a->value_set(std::string("vb_in"), {}));
  }

  TEST_CASE("archetypes: the passes compile against the least a graph must offer") {
    // Compile-only in spirit: the archetype graphs are empty, so running is trivial; what
    // matters is that these instantiations compile with nothing beyond the declared concepts.
    test::archetype::graph g;
    auto a = dataflow_analysis<test::archetype::graph>::run(g);
    CHECK(a.has_value());
    test::archetype::mutable_graph mg;
    auto r = propagate_memory_spaces(mg);
    REQUIRE(r.has_value());
    CHECK_FALSE(*r);
    auto ma = dataflow_analysis<test::archetype::mutable_graph>::run(mg, dataflow_options{true});
    REQUIRE(ma.has_value());
    auto rc = propagate_memory_spaces(mg, *ma, test::archetype::comp{});
    CHECK_FALSE(rc.has_value());  // the empty archetype has no computation
  }

  TEST_CASE("concepts: positive models and near misses") {
    struct no_traits {};
    static_assert(!graph<no_traits>);
    static_assert(graph<hlo::module> && dense_graph<hlo::module> && memory_space_graph<hlo::module>);
    static_assert(entry_graph<hlo::module>);
    static_assert(!entry_graph<test::kernel_graph>);
    static_assert(module_graph<hlo::module>);
    static_assert(!module_graph<test::archetype::graph>);
    CHECK(true);
  }

  TEST_CASE("the HLO model's traits: order, users, subshapes, schedule flag and aliases") {
    const auto m = parse_ok(R"(HloModule t, is_scheduled=true, input_output_alias={ {1}: (0, {}, must-alias) }
ENTRY e {
  p = f32[4]{0:S(1)} parameter(0)
  q = f32[4]{0} negate(p)
  ROOT t = (f32[4]{0}, f32[4]{0:S(1)}) tuple(q, p)
})");
    using T = graph_traits<hlo::module>;
    const auto c = T::entry(m);
    std::vector<hlo::instruction_id> order(T::instructions(m, c).begin(), T::instructions(m, c).end());
    REQUIRE(order.size() == 3);
    CHECK(m[order[0]].name == "p");
    CHECK(T::root(m, c) == order[2]);
    CHECK(T::users(m, order[0]) == std::vector<hlo::instruction_id>{order[1], order[2]});
    CHECK(T::is_scheduled(m));
    CHECK(T::input_output_aliases(m) == std::vector<parameter_alias>{{{1}, 0, {}, true}});
    std::vector<std::pair<shape_index, subshape_info>> seen;
    T::for_each_subshape(m, order[2], [&](const shape_index& i, const subshape_info& s) { seen.emplace_back(i, s); });
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].first.empty());
    CHECK(seen[0].second.is_tuple);
    CHECK(seen[0].second.bytes == 16);
    CHECK(seen[2].first == shape_index{1});
    CHECK(seen[2].second.memory_space == 1);
    CHECK(seen[2].second.bytes == 16);
    CHECK(T::instruction_count(m) == 3);
    CHECK(T::instruction_number(m, order[1]) == 1);
  }
}

template class xlamem::dataflow_analysis<xlamem::test::archetype::graph>;
template class xlamem::dataflow_analysis<xlamem::test::archetype::mutable_graph>;

// ---------------------------------------------------------------------------------------------
// Issue 15 item 1: grammar forms of newer XLA (xla/hlo/parser/hlo_parser.cc and its tests).
TEST_SUITE("hlo/reader/grammar") {
  TEST_CASE("compact get-tuple-element operands become get-tuple-element instructions") {
    // What JAX >= 0.11 dumps: no get-tuple-element lines, operands `%name#N`.
    const auto m = parse_ok(R"(HloModule compact, is_scheduled=true

%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %one = s32[] constant(1)
  %i = s32[] add(s32[] %s#0, s32[] %one)
  %x = f32[4]{0} negate(f32[4]{0} %s#1)
  ROOT %t = (s32[], f32[4]{0}) tuple(s32[] %i, f32[4]{0} %x)
}

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]{0}) parameter(0)
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%s#0, %n), direction=LT
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%z, %p)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  %nest = ((s32[], f32[4]{0}), f32[4]{0}) tuple(%w, %p)
  %a = f32[4]{0} add(f32[4]{0} %w#1, %nest#0#1)
  ROOT %r = f32[4]{0} multiply(%a, %w#1)
}
)");
    // One get-tuple-element per (tuple, index), shared by every use, where a breadth-first
    // schedule has it (next test).
    const auto& body = m[*m.find_computation("body")];
    REQUIRE(body.instructions.size() == 7);
    const auto s0 = find(m, "body", "s_gte0");
    const auto s1 = find(m, "body", "s_gte1");
    CHECK(m[s0].opcode == hlo::opcodes::get_tuple_element);
    CHECK(m[s0].tuple_index == 0);
    CHECK(m[s0].operands == std::vector<hlo::instruction_id>{find(m, "body", "s")});
    CHECK(hlo::to_string(m[s1].shape) == "f32[4]{0}");
    CHECK(m[find(m, "body", "i")].operands[0] == s0);
    CHECK(body.instructions[2] == s0);  // after %s and %one (ready first), before %i
    CHECK(body.instructions[3] == s1);
    CHECK(body.instructions[4] == find(m, "body", "i"));
    const auto w1 = find(m, "main", "w_gte1");
    CHECK(m[find(m, "main", "a")].operands[0] == w1);
    CHECK(m[find(m, "main", "r")].operands[1] == w1);  // shared, not a second GTE
    // A chain `%nest#0#1`: the inner get-tuple-element reads the outer one.
    const auto n0 = find(m, "main", "nest_gte0");
    const auto n01 = find(m, "main", "nest_gte0_gte1");
    CHECK(m[n01].operands[0] == n0);
    CHECK(m[find(m, "main", "a")].operands[1] == n01);
    // Printed with explicit get-tuple-elements, it reads back to the same text; the dataflow
    // analysis sees what it sees in the long form.
    const std::string printed = hlo::to_string(m);
    const auto again = parse_ok(printed, "printed");
    CHECK(hlo::to_string(again) == printed);
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    auto b = dataflow_analysis<hlo::module>::run(again, dataflow_options{false, true});
    REQUIRE(b.has_value());
    CHECK(a->values().size() == b->values().size());
    const auto& set = a->value_set(w1, {});
    REQUIRE(set.size() == 1);
    CHECK(a->get(set[0]).is_phi);
  }

  TEST_CASE("compact get-tuple-element operands are scheduled breadth-first, as XLA:CPU ran them") {
    // The shape of jax 0.12's sort_topk: XLA's live-range dump has the get-tuple-elements of
    // %cc right after %a, not before the root that prints them, so %cc's index table dies
    // there (its HloLiveRange 1-4; placed before the root it would live to 7).
    const auto m = parse_ok(R"(HloModule bfs, is_scheduled=true

ENTRY %main (x: f32[8]) -> (f32[8], f32[8], f32[8]) {
  %x = f32[8]{0} parameter(0)
  %cc = (f32[8]{0}, f32[8]{0}) custom-call(%x), custom_call_target="two"
  %a = f32[8]{0} negate(%x)
  %b = f32[8]{0} exponential(%a)
  %c = f32[8]{0} sqrt(%b)
  ROOT %r = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%cc#0, %cc#1, %c)
}
)");
    const auto& entry = m[*m.find_computation("main")];
    std::vector<std::string> names;
    for (const auto i : entry.instructions) names.push_back(m[i].name);
    // %a became ready with %cc (both read only %x), the get-tuple-elements when %cc ran, %b
    // when %a ran: that is the breadth-first order.
    CHECK(names == std::vector<std::string>{"x", "cc", "a", "cc_gte0", "cc_gte1", "b", "c", "r"});
    // Text not in dependency order (an operand printed after its reader) is no schedule: the
    // get-tuple-element stays just before its reader.
    const auto f = parse_ok("HloModule m\nENTRY e {\n  ROOT n = f32[] negate(q#0)\n  q = (f32[], s32[]) parameter(0)\n}\n");
    const auto& e = f[*f.find_computation("e")];
    REQUIRE(e.instructions.size() == 3);
    CHECK(f[e.instructions[0]].name == "q_gte0");
    CHECK(f[e.instructions[1]].name == "n");
  }

  TEST_CASE("compact get-tuple-element: bad index, non-tuple operand, missing index, name clash") {
    auto err = [](std::string_view body) {
      auto r = hlo::parse_module("HloModule m\nENTRY e {\n" + std::string(body) + "}\n", "c.hlo");
      REQUIRE(!r.has_value());
      return r.error().message();
    };
    CHECK(err("  p = (f32[], s32[]) parameter(0)\n  ROOT n = f32[] negate(p#2)\n").find("c.hlo:4:") != std::string::npos);
    CHECK(err("  p = (f32[], s32[]) parameter(0)\n  ROOT n = f32[] negate(p#2)\n").find("out of range") != std::string::npos);
    CHECK(err("  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p#0)\n").find("out of range for shape 'f32[]'") !=
          std::string::npos);
    CHECK(err("  p = (f32[]) parameter(0)\n  ROOT n = f32[] negate(p#)\n").find("expected a tuple index after '#'") !=
          std::string::npos);
    const auto m = parse_ok("HloModule m\nENTRY e {\n  p = (f32[], s32[]) parameter(0)\n"
                            "  p_gte0 = f32[] constant(1)\n  ROOT n = f32[] add(p#0, p_gte0)\n}\n");
    const auto g = find(m, "e", "p_gte0.1");
    CHECK(m[g].opcode == hlo::opcodes::get_tuple_element);
    CHECK(m[find(m, "e", "n")].operands == std::vector<hlo::instruction_id>{g, find(m, "e", "p_gte0")});
  }

  TEST_CASE("iota and mesh replica groups, iota tile assignments: kept verbatim") {
    const auto m = parse_ok(R"(HloModule spmd, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
  %ar = f32[8]{0} all-reduce(f32[8]{0} %p), channel_id=1, replica_groups=mesh['data'=2,'model'=2]{'data'}, use_global_device_ids=true, to_apply=%add
  %b = f32[8]{0} all-reduce(%ar), replica_groups=[2,4]<=[8], to_apply=%add
  %c = f32[8]{0} all-reduce(%b), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=%add
  ROOT %d = f32[32]{0} all-gather(%c), channel_id=2, replica_groups=mesh['a'=2,'b'=2] {'a','b'}, dimensions={0}, use_global_device_ids=true
}
)");
    // JAX 0.12 prints mesh groups with a space before the axis list.
    CHECK(*m[find(m, "e", "d")].find_attribute("replica_groups") == "mesh['a'=2,'b'=2] {'a','b'}");
    CHECK(*m[find(m, "e", "d")].find_attribute("dimensions") == "{0}");
    CHECK(*m[find(m, "e", "ar")].find_attribute("replica_groups") == "mesh['data'=2,'model'=2]{'data'}");
    CHECK(*m[find(m, "e", "ar")].find_attribute("use_global_device_ids") == "true");
    CHECK(*m[find(m, "e", "b")].find_attribute("replica_groups") == "[2,4]<=[8]");
    CHECK(*m[find(m, "e", "c")].find_attribute("replica_groups") == "[2,4]<=[4,2]T(1,0)");
    CHECK(*m[find(m, "e", "p")].find_attribute("sharding") == "{devices=[2,2]<=[4] last_tile_dim_replicate}");
    CHECK(hlo::to_string(parse_ok(hlo::to_string(m))) == hlo::to_string(m));
  }

  TEST_CASE("buffer shapes b(...) and sparse dim level types D(...) read and print back") {
    const auto m = parse_ok("HloModule m\nENTRY e {\n  p = b(f32[4]{0}) parameter(0)\n"
                            "  q = f32[4,4]{1,0:D(D,C+)} parameter(1)\n  ROOT t = (b(f32[4]{0}), f32[4,4]{1,0:D(D,C+)}) "
                            "tuple(b(f32[4]{0}) p, q)\n}\n");
    const auto& p = shape_of(m, "e", "p");
    CHECK(p.is_buffer);
    CHECK(p.byte_size() == 16);
    CHECK(hlo::to_string(p) == "b(f32[4]{0})");
    CHECK(shape_of(m, "e", "q").layout.dim_level_types == "D,C+");
    CHECK(hlo::to_string(shape_of(m, "e", "q")) == "f32[4,4]{1,0:D(D,C+)}");
    CHECK(hlo::to_string(parse_ok(hlo::to_string(m))) == hlo::to_string(m));
    CHECK(!hlo::parse_shape("b((f32[]))"));
    CHECK(!hlo::parse_shape("f32[2]{0:D(X)}"));
  }
}

TEST_SUITE("hlo/dataflow/combined") {
  TEST_CASE("XLA:GPU combined all-gather-start: element {0, k} is operand k, {1, k} new values") {
    const auto m = parse_ok(R"(HloModule combined

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[8]{0} parameter(1)
  ags = ((f32[4]{0}, f32[8]{0}), (f32[16]{0}, f32[32]{0})) all-gather-start(a, b), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT agd = (f32[16]{0}, f32[32]{0}) all-gather-done(ags)
}
)");
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    const auto ags = find(m, "e", "ags");
    const auto pa = find(m, "e", "a");
    const auto pb = find(m, "e", "b");
    CHECK(a->value_set(ags, {0, 0}) == a->value_set(pa, {}));
    CHECK(a->value_set(ags, {0, 1}) == a->value_set(pb, {}));
    CHECK(a->value_defined_at(ags, {1, 0}).has_value());
    CHECK(a->value_defined_at(ags, {1, 1}).has_value());
    const auto agd = find(m, "e", "agd");
    CHECK(a->value_set(agd, {1}) == a->value_set(ags, {1, 1}));
    CHECK(!a->value_defined_at(agd, {0}).has_value());
  }
}
