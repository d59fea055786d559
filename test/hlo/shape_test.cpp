// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/shape.hpp.
#include <doctest/doctest.h>

#include "support/hlo_helpers.hpp"

TEST_SUITE("hlo/shape") {
  using namespace xlamem::test::hlo_helpers;

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
    REQUIRE(s->layout.details().split_configs.size() == 1);
    CHECK(s->layout.details().split_configs[0] == split_config{0, {3}});
    CHECK(s->layout.details().tiles == std::vector<std::vector<std::int64_t>>{{128}});
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

  TEST_CASE("layout equality and has_details: rare parts set, written back to defaults, or never made") {
    hlo::layout plain, touched, tiled, tiled_too;
    plain.minor_to_major = touched.minor_to_major = tiled.minor_to_major = tiled_too.minor_to_major = {1, 0};
    (void)touched.details();  // made, left at its defaults
    tiled.details().tiles = {{8, 128}};
    tiled_too.details().tiles = {{8, 128}};
    CHECK_FALSE(plain.has_details());
    CHECK_FALSE(touched.has_details());
    CHECK(tiled.has_details());
    CHECK(plain == touched);
    CHECK(touched == plain);
    CHECK_FALSE(plain == tiled);
    CHECK_FALSE(tiled == touched);
    CHECK(tiled == tiled_too);
    hlo::shape s;
    s.type = hlo::element_type::f32;
    s.dims = {2, 3};
    s.has_layout = true;
    s.layout = touched;
    CHECK(hlo::to_string(s) == "f32[2,3]{1,0}");
    s.layout = tiled;
    CHECK(hlo::to_string(s) == "f32[2,3]{1,0:T(8,128)}");
  }
}
