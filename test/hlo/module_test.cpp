// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/module.hpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/gpu_helpers.hpp"

TEST_SUITE("XLA in-place pairs") {
  using namespace xlamem::test::gpu_helpers;

  TEST_CASE("in-place pairs: collective-permute's in-place form, set-dimension-size and ragged-all-to-all") {
    const auto m = parse_ok(R"(HloModule ip
ENTRY e {
  in = f32[8]{0} parameter(0)
  out = f32[8]{0} parameter(1)
  s0 = s32[1]{0} parameter(2)
  s1 = s32[1]{0} parameter(3)
  cp = f32[8]{0} collective-permute(in, out, s0, s1), source_target_pairs={{0,1}}, slice_sizes={{4}}
  n = s32[] parameter(4)
  sd = f32[<=8]{0} set-dimension-size(in, n), dimensions={0}
  o = s32[4]{0} parameter(5)
  ra = f32[8]{0} ragged-all-to-all(in, out, o, o, o, o), replica_groups={{0,1}}
  ROOT t = (f32[8]{0}, f32[<=8]{0}, f32[8]{0}) tuple(cp, sd, ra)
})",
                            hlo::xla_backend::cpu);
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "cp")), 1, {}, {}));
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "sd")), 0, {}, {}));
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "ra")), 1, {}, {}));
  }

  TEST_CASE("in-place pairs are traced through a fusion's tuples, get-tuple-elements and nested fusions") {
    const auto m = parse_ok(R"(HloModule nest
inner {
  x = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8]{0} dynamic-update-slice(x, u, i)
}
outer {
  a = (f32[8]{0}, f32[2]{0}) parameter(0)
  i = s32[] parameter(1)
  a0 = f32[8]{0} get-tuple-element(a), index=0
  a1 = f32[2]{0} get-tuple-element(a), index=1
  f = f32[8]{0} fusion(a0, a1, i), kind=kLoop, calls=inner
  n = f32[2]{0} negate(a1)
  ROOT r = (f32[2]{0}, f32[8]{0}) tuple(n, f)
}
ENTRY e {
  p = (f32[8]{0}, f32[2]{0}) parameter(0)
  i = s32[] parameter(1)
  ROOT o = (f32[2]{0}, f32[8]{0}) fusion(p, i), kind=kLoop, calls=outer
})",
                            hlo::xla_backend::cpu);
    const auto pairs = hlo::detail::in_place_pairs(m, find(m, "e", "o"));
    // Output {1} comes from the nested fusion, which updates its operand 0, which is {0} of
    // the outer fusion's parameter 0.
    CHECK(has_pair(pairs, 0, {0}, {1}));
    CHECK(pairs.size() == 1);
  }
}

TEST_SUITE("XLA in-place pairs") {
  using namespace xlamem::test::gpu_helpers;

  TEST_CASE("in-place pairs: the trace through nested fusions stops at 16 fusions deep") {
    // level0 updates its parameter in place; level k wraps level k-1. A fusion of level k is
    // k + 1 fusions deep: a fusion of level 15 (16 deep) still gets its pair, of 16 not, nor the
    // top one of 40.
    std::string text = "HloModule deep\nlevel0 {\n  a = f32[8]{0} parameter(0)\n  u = f32[2]{0} parameter(1)\n"
                       "  i = s32[] parameter(2)\n  ROOT d = f32[8]{0} dynamic-update-slice(a, u, i)\n}\n";
    for (int k = 1; k <= 40; ++k) {
      text += "level" + std::to_string(k) + " {\n  a = f32[8]{0} parameter(0)\n  u = f32[2]{0} parameter(1)\n"
              "  i = s32[] parameter(2)\n  ROOT f = f32[8]{0} fusion(a, u, i), kind=kLoop, calls=level" +
              std::to_string(k - 1) + "\n}\n";
    }
    text += "ENTRY e {\n  p = f32[8]{0} parameter(0)\n  q = f32[2]{0} parameter(1)\n  i = s32[] parameter(2)\n"
            "  top = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level40\n"
            "  deep = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level15\n"
            "  deeper = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level16\n"
            "  ROOT t = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(top, deep, deeper)\n}\n";
    const auto m = parse_ok(text, hlo::xla_backend::cpu);
    CHECK(hlo::detail::in_place_pairs(m, find(m, "e", "top")).empty());
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "deep")), 0, {}, {}));
    CHECK(hlo::detail::in_place_pairs(m, find(m, "e", "deeper")).empty());
  }
}

TEST_SUITE("hlo/module") {
  TEST_CASE("rare text: empty holds nothing; reads, copies and compares as its text") {
    xlamem::hlo::rare_text none;
    CHECK(none.empty());
    CHECK(none == "");
    xlamem::hlo::rare_text lit = std::string("{1, 2}");
    CHECK_FALSE(lit.empty());
    CHECK(lit == "{1, 2}");
    CHECK(lit == std::string("{1, 2}"));
    CHECK(std::string_view(lit) == "{1, 2}");
    xlamem::hlo::rare_text copy = lit;
    CHECK(copy == lit);
    copy = std::string();
    CHECK(copy.empty());
    CHECK(lit == "{1, 2}");  // the copy was deep
    std::string out = "constant(";
    out += lit;
    CHECK(out == "constant({1, 2}");
  }

  TEST_CASE("attribute list: one block, text order, repeated keys, copies and compares by value") {
    xlamem::hlo::attribute_list none;
    CHECK(none.empty());
    CHECK(none.begin() == none.end());
    CHECK_FALSE(none.find("metadata").has_value());
    xlamem::hlo::attribute_list a;
    a.push_back("metadata", R"({op_name="jit(f)/neg"})");
    a.push_back("", "");  // empty key and value round-trip too
    a.push_back("dimensions", "{0}");
    a.push_back("metadata", "{second}");
    for (int k = 0; k < 100; ++k) a.push_back("k" + std::to_string(k), std::string(static_cast<std::size_t>(k), 'v'));
    REQUIRE(a.size() == 104);
    std::vector<xlamem::hlo::attribute_list::entry> seen(a.begin(), a.end());
    REQUIRE(seen.size() == 104);
    CHECK(seen[0] == xlamem::hlo::attribute_list::entry{"metadata", R"({op_name="jit(f)/neg"})"});
    CHECK(seen[1] == xlamem::hlo::attribute_list::entry{"", ""});
    CHECK(seen[2].key == "dimensions");
    CHECK(seen[103].value == std::string(99, 'v'));
    CHECK(*a.find("metadata") == R"({op_name="jit(f)/neg"})");  // the first of a repeated key
    CHECK(*a.find("k42") == std::string(42, 'v'));
    xlamem::hlo::attribute_list copy = a;
    CHECK(copy == a);
    copy.push_back("extra", "1");
    CHECK_FALSE(copy == a);
    CHECK(a.size() == 104);  // the copy was deep
    xlamem::hlo::attribute_list moved = std::move(copy);
    CHECK(moved.size() == 105);
    CHECK(*moved.find("extra") == "1");
    moved = a;
    CHECK(moved == a);
  }
}
