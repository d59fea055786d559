// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/reader.hpp.
#include <doctest/doctest.h>

#include "support/hlo_helpers.hpp"
#include "support/reliability_helpers.hpp"

TEST_SUITE("hlo/reader") {
  using namespace xlamem::test::hlo_helpers;

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
    REQUIRE(c.find_attribute("backend_config").has_value());
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

TEST_SUITE("hlo/reader/malformed") {
  using namespace xlamem::test::hlo_helpers;

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

TEST_SUITE("reliability/hlo") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("the name table: first name kept, lookups after growth, clear forgets in constant time") {
    xlamem::hlo::detail::name_table<hlo::instruction_id> t;
    std::vector<std::string> names;
    for (int k = 0; k < 5000; ++k) names.push_back("n" + std::to_string(k));
    for (std::size_t k = 0; k < names.size(); ++k) {
      const auto [id, added] = t.emplace(names[k], static_cast<hlo::instruction_id>(k));
      CHECK(added);
      CHECK(id == static_cast<hlo::instruction_id>(k));
    }
    const auto [first, added] = t.emplace("n7", static_cast<hlo::instruction_id>(99999));
    CHECK(!added);
    CHECK(first == static_cast<hlo::instruction_id>(7));
    CHECK(t.size() == names.size());
    for (std::size_t k = 0; k < names.size(); ++k) {
      const auto* id = t.find(names[k]);
      REQUIRE(id != nullptr);
      CHECK(*id == static_cast<hlo::instruction_id>(k));
    }
    CHECK(t.find("n5000") == nullptr);
    CHECK(t.find("") == nullptr);
    t.clear();
    CHECK(t.size() == 0);
    CHECK(!t.contains("n7"));
    CHECK(t.emplace("n7", static_cast<hlo::instruction_id>(1)).second);
    CHECK(*t.find("n7") == static_cast<hlo::instruction_id>(1));
    // Room made ahead keeps the names there and takes the next ones.
    t.reserve(20000);
    CHECK(*t.find("n7") == static_cast<hlo::instruction_id>(1));
    for (std::size_t k = 0; k < names.size(); ++k) t.emplace(names[k], static_cast<hlo::instruction_id>(k + 10));
    CHECK(t.size() == names.size());
    CHECK(*t.find("n7") == static_cast<hlo::instruction_id>(1));
    CHECK(*t.find("n4999") == static_cast<hlo::instruction_id>(5009));
    t.reserve(3);  // never shrinks
    CHECK(*t.find("n0") == static_cast<hlo::instruction_id>(10));
  }

  TEST_CASE("one computation of 2x10^5 instructions, then 2x10^4 small ones: read in near-linear time") {
    // The name table was cleared per computation at the cost of its largest size (a std::unordered_map
    // clears every bucket): 10^6 then 10^5 took 19.4 s CPU to read, now 2.3 s (release).
    auto m = hlo::parse_module(xlamem::test::big_then_small_module(200000, 20000), "big_then_small.hlo");
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    CHECK(m->computations.size() == 20002);
    CHECK(m->instructions.size() == 200001 + 2 * 20000 + 20002);  // big, small, entry (a0, c0 .. c20000)
    const auto last = m->find_instruction("s19999", "n");
    REQUIRE(last.has_value());
    CHECK((*m)[*last].operands.size() == 1);
  }
}
