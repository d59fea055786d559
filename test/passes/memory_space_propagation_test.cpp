// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/memory_space_propagation.hpp.
#include <doctest/doctest.h>

#include "support/hlo_helpers.hpp"

TEST_SUITE("hlo/memory_space_propagation") {
  using namespace xlamem::test::hlo_helpers;

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
  static std::string with_negate(std::string_view replacement) {
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
