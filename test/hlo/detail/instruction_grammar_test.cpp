// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/detail/instruction_grammar.hpp through the reader: operands, constants,
// parameters, compact get-tuple-elements and their schedule, output_to_operand_aliasing, size limits,
// and the end of a computation (root, parameter numbers, users, cycles), each error with its place.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "support/hlo_helpers.hpp"
#include "support/reliability_helpers.hpp"
#include "xlamem/hlo/detail/instruction_grammar.hpp"

namespace instruction_grammar_test {
// The reader's message for `body` as the entry computation of a module in file `c.hlo`.
inline std::string error_in(std::string_view body) {
  auto r = xlamem::hlo::parse_module("HloModule m\nENTRY e {\n" + std::string(body) + "}\n", "c.hlo");
  REQUIRE_MESSAGE(!r.has_value(), "expected an error");
  CHECK(r.error().code() == xlamem::errc::parse_error);
  return r.error().message();
}
}  // namespace instruction_grammar_test

TEST_SUITE("hlo/detail/instruction_grammar") {
  using namespace xlamem::test::hlo_helpers;
  using instruction_grammar_test::error_in;

  TEST_CASE("constants keep their literal as text; parameters are numbered by their number, not their place") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  b = f32[] parameter(1)
  a = f32[] parameter(0)
  s = s32[2,2]{1,0} constant( { { 1, 2 }, { 3, 4 } } )
  t = u8[3]{0} constant("a)b")
  ROOT r = (f32[], f32[]) tuple(a, b)
}
)");
    CHECK(m[find(m, "e", "s")].literal == "{ { 1, 2 }, { 3, 4 } }");  // blanks around it trimmed
    CHECK(m[find(m, "e", "t")].literal == "\"a)b\"");                 // a ')' inside a string is no end
    const auto& e = m.computations[0];
    REQUIRE(e.parameters.size() == 2);
    CHECK(m[e.parameters[0]].name == "a");
    CHECK(m[e.parameters[1]].name == "b");
    CHECK(m[find(m, "e", "b")].parameter_number == 1);
  }

  TEST_CASE("operands in long form (shapes first, tuples and buffers too) and short form; users each once, in order") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  q = (f32[4]{0}, s32[]) parameter(1)
  bb = b(f32[4]{0}) parameter(2)
  k = b(f32[4]{0}) copy(b(f32[4]{0}) %bb)
  g = f32[4]{0} get-tuple-element((f32[4]{0}, s32[]) %q), index=0
  a = f32[4]{0} add(f32[4]{0} %p, p)
  m = f32[4]{0} multiply(a, g)
  ROOT d = f32[4]{0} add(m, a)
}
)");
    const auto p = find(m, "e", "p"), a = find(m, "e", "a"), g = find(m, "e", "g"), mul = find(m, "e", "m");
    CHECK(m[a].operands == std::vector<hlo::instruction_id>{p, p});
    CHECK(m[p].users == std::vector<hlo::instruction_id>{a});  // used twice by one instruction: one user
    CHECK(m[a].users == std::vector<hlo::instruction_id>{mul, find(m, "e", "d")});
    CHECK(m[g].tuple_index == 0);
    CHECK(m[g].operands == std::vector<hlo::instruction_id>{find(m, "e", "q")});
    CHECK(m[find(m, "e", "k")].operands == std::vector<hlo::instruction_id>{find(m, "e", "bb")});
    CHECK(m[find(m, "e", "k")].shape.is_buffer);
  }

  TEST_CASE("instruction errors: names, opcodes, literals, parameters, roots and cycles, each with its place") {
    CHECK(error_in("  = f32[] parameter(0)\n") == "c.hlo:3:3: expected an instruction name or '}', found '='");
    CHECK(error_in("  p f32[] parameter(0)\n") == "c.hlo:3:5: expected '=' after instruction name 'p', found 'f32'");
    CHECK(error_in("  p = f32[] (0)\n") == "c.hlo:3:13: expected an opcode, found '('");
    CHECK(error_in("  p = f32[] frobnicate(0)\n") == "c.hlo:3:13: unknown opcode 'frobnicate'");
    CHECK(error_in("  p = f32[] parameter 0\n") == "c.hlo:3:23: expected '(' after opcode 'parameter', found '0'");
    CHECK(error_in("  p = f32[] parameter(-1)\n") == "c.hlo:3:13: negative parameter number");
    CHECK(error_in("  p = f32[] parameter(0)\n  q = f32[] parameter(2)\n") ==
          "c.hlo:4:3: parameter number 2 out of range: computation 'e' has 2 parameters");
    CHECK(error_in("  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n") ==
          "c.hlo:4:3: duplicate parameter number 0 in computation 'e'");
    CHECK(error_in("  c = f32[2] constant(1])\n") == "c.hlo:3:24: unbalanced ']' in constant literal");
    auto open = hlo::parse_module("HloModule m\nENTRY e {\n  c = f32[2] constant({1, 2}", "c.hlo");
    REQUIRE_FALSE(open.has_value());
    CHECK(open.error().message() == "c.hlo:3:23: unterminated constant literal (expected ')')");
    CHECK(error_in("  p = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p)\n") ==
          "c.hlo:4:18: get-tuple-element 'g' needs index=N");
    CHECK(error_in("  p = f32[] parameter(0)\n  p = f32[] negate(p)\n") ==
          "c.hlo:4:3: duplicate instruction name 'p' (first defined at c.hlo:3:3)");
    CHECK(error_in("  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n") ==
          "c.hlo:4:8: second ROOT in computation 'e' (first is 'a')");
    CHECK(error_in("  a = f32[] negate(b)\n  b = f32[] negate(a)\n  ROOT c = f32[] negate(b)\n") ==
          "c.hlo:3:3: instruction 'a' is part of a cycle in computation 'e'");
    CHECK(error_in("  a = f32[] negate(a)\n") == "c.hlo:3:3: instruction 'a' is part of a cycle in computation 'e'");
    CHECK(error_in("  a = f32[] negate(,)\n") == "c.hlo:3:20: expected an operand name, found ','");
    CHECK(error_in("  a = f32[] parameter(0)\n  b = f32[] negate(a b)\n") ==
          "c.hlo:4:22: expected ',' or ')' in the operand list, found 'b'");
  }
}

TEST_SUITE("hlo/reader/grammar") {
  using namespace xlamem::test::hlo_helpers;

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
}

TEST_SUITE("reliability/hlo") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("a byte size that overflows 64 bits, or is above 2^60, is an error naming the instruction") {
    // 2^62 f32 elements: 2^64 bytes, which used to wrap to 0.
    auto msg = parse_error(module_with("  ROOT huge = f32[4611686018427387904] parameter(0)\n"));
    CHECK(contains(msg, "t.hlo:4:"));
    CHECK(contains(msg, "'huge'"));
    CHECK(contains(msg, "larger than the limit of 2^60 bytes"));
    // The element count itself overflows.
    msg = parse_error(module_with("  ROOT big = f32[4294967296,4294967296,4] parameter(0)\n"));
    CHECK(contains(msg, "'big'"));
    // Inside a tuple.
    msg = parse_error(module_with("  ROOT t = (f32[2], u8[2305843009213693952]) parameter(0)\n"));
    CHECK(contains(msg, "'t'"));
    // The shape API never wraps: it saturates, and the checked form says so.
    auto s = hlo::parse_shape("f32[4611686018427387904]");
    REQUIRE(s.has_value());
    CHECK(!s->checked_byte_size());
    CHECK(s->byte_size() == UINT64_MAX);
    CHECK(hlo::parse_shape("u4[3]{0:E(4)}")->byte_size() == 2);
  }

  TEST_CASE("the module's sizes sum to at most 2^60 bytes, so no total or offset can overflow") {
    // 16 temporaries of 2^60 bytes: plan used to put nine at one offset and report 136 bytes.
    std::string body = "  p = u8[8] parameter(0)\n";
    for (int k = 0; k < 16; ++k) {
      body += "  t" + std::to_string(k) + " = u8[1152921504606846976] broadcast(p)\n";
    }
    body += "  ROOT r = (";
    for (int k = 0; k < 16; ++k) body += std::string(k ? ", " : "") + "u8[1152921504606846976]";
    body += ") tuple(";
    for (int k = 0; k < 16; ++k) body += std::string(k ? ", " : "") + "t" + std::to_string(k);
    body += ")\n";
    const auto msg = parse_error(module_with(body));
    CHECK(contains(msg, "t.hlo:5:"));  // t0: the parameter's 8 bytes plus 2^60
    CHECK(contains(msg, "'t0'"));
    CHECK(contains(msg, "sum to more than the limit of 2^60 bytes"));
    // Exactly at the limit reads, and plans with sizes that fit.
    auto m = hlo::parse_module(module_with("  p = u8[576460752303423488] parameter(0)\n"
                                           "  ROOT n = u8[576460752303423487] slice(p)\n"));
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    buffer_assignment_options o;
    o.solver = *find_solver("xla");
    auto a = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    CHECK(a->validate(*m).has_value());
    CHECK(a->stats().argument_size_in_bytes == 576460752303423488);
  }

  TEST_CASE("a malformed output_to_operand_aliasing is refused with its place (was dropped silently)") {
    const auto msg = parse_error(module_with(
        "  p = f32[4] parameter(0)\n"
        "  ROOT c = f32[4] custom-call(p), custom_call_target=\"x\", output_to_operand_aliasing={{}: (0 {})}\n"));
    CHECK(contains(msg, "t.hlo:5:"));
    CHECK(contains(msg, "expected ','"));
    for (const char* bad : {"{{}: (0, {})", "{{}: (-1, {})}", "{{} (0, {})}", "{{}: (0, {}) {}: (0, {})}", "{{x}: (0, {})}"}) {
      CAPTURE(bad);
      parse_error(module_with(std::string("  p = f32[4] parameter(0)\n  ROOT c = f32[4] custom-call(p), "
                                          "custom_call_target=\"x\", output_to_operand_aliasing=") + bad + "\n"));
    }
    auto ok = hlo::parse_module(module_with(
        "  p = (f32[4], f32[2]) parameter(0)\n"
        "  ROOT c = (f32[4], f32[2]) custom-call(p), custom_call_target=\"x\", "
        "output_to_operand_aliasing={{0}: (0, {0}), {1}: (0, {1})}\n"));
    REQUIRE_MESSAGE(ok.has_value(), ok.error().to_string());
    CHECK(hlo::semantics_of(*ok, ok->computations[0].root).in_place.size() == 2);
  }
}
