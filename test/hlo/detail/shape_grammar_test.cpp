// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/detail/shape_grammar.hpp: array, tuple and buffer shapes, dynamic
// dimensions, every layout part XLA prints, shape indices, the shared depth budget, and each error
// with its place; directly and through the reader.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/hlo_helpers.hpp"
#include "support/reliability_helpers.hpp"
#include "xlamem/hlo/detail/shape_grammar.hpp"

namespace shape_grammar_test {
// The grammar with its shape-index rule made public for the test.
class grammar : public xlamem::hlo::detail::shape_grammar {
 public:
  using shape_grammar::shape_grammar;
  using shape_grammar::parse_shape_index;
  [[nodiscard]] std::string error() const { return err_ ? err_->to_string() : std::string("no error"); }
};

inline xlamem::hlo::shape shape_of_text(std::string_view text) {
  grammar g(text, "s.hlo");
  auto s = g.parse_single_shape();
  REQUIRE_MESSAGE(s.has_value(), s.error().to_string());
  return std::move(*s);
}

inline std::string error_of(std::string_view text) {
  grammar g(text, "s.hlo");
  auto s = g.parse_single_shape();
  return s ? std::string("no error") : s.error().to_string();
}
}  // namespace shape_grammar_test

TEST_SUITE("hlo/detail/shape_grammar") {
  using namespace shape_grammar_test;
  using xlamem::hlo::element_type;

  TEST_CASE("arrays, scalars, dynamic dimensions, tuples and buffers") {
    auto s = shape_of_text(" f32[2,3]{1,0} ");
    CHECK(s.type == element_type::f32);
    CHECK(s.dims == std::vector<std::int64_t>{2, 3});
    CHECK(s.has_layout);
    CHECK(std::vector<std::int64_t>(s.layout.minor_to_major.begin(), s.layout.minor_to_major.end()) ==
          std::vector<std::int64_t>{1, 0});
    s = shape_of_text("pred[]");
    CHECK(s.dims.empty());
    CHECK_FALSE(s.has_layout);
    s = shape_of_text("s32[<=4, ?, 3]");
    CHECK(s.dims == std::vector<std::int64_t>{4, -1, 3});
    CHECK(s.dynamic == std::vector<bool>{true, true, false});
    s = shape_of_text("(f32[], (s32[2]{0}, pred[]), ())");
    REQUIRE(s.is_tuple());
    REQUIRE(s.elements.size() == 3);
    CHECK(s.elements[1].elements[0].dims == std::vector<std::int64_t>{2});
    CHECK(s.elements[2].is_tuple());
    CHECK(s.elements[2].elements.empty());
    s = shape_of_text("b(u8[16]{0})");
    CHECK(s.is_buffer);
    CHECK(s.type == element_type::u8);
    CHECK(shape_of_text("token[]").type == element_type::token);
  }

  TEST_CASE("every layout part, read into its field, and printed back in XLA's order") {
    const std::string text = "f32[2,3]{1,0:D(D,C+)T(8,128)(2,*)L(2)#(s32)*(s64)E(4)S(1)SC(0:1,2)P(s32[4]{0})M(8)}";
    const auto s = shape_of_text(text);
    const auto& l = s.layout;
    CHECK(l.details().dim_level_types == "D,C+");
    CHECK(l.details().tiles == std::vector<std::vector<std::int64_t>>{{8, 128}, {2, xlamem::hlo::combine_dimension}});
    CHECK(l.details().tail_padding_alignment == 2);
    CHECK(l.details().index_type == element_type::s32);
    CHECK(l.details().pointer_type == element_type::s64);
    CHECK(l.element_size_bits == 4);
    CHECK(l.memory_space == 1);
    CHECK(l.details().split_configs == std::vector<xlamem::split_config>{{0, {1, 2}}});
    CHECK(l.details().physical_shape == "s32[4]{0}");
    CHECK(l.details().dynamic_metadata_prefix_bytes == 8);
    CHECK(xlamem::hlo::to_string(s) == text);
    // Parts after ':' may be absent, the dimensions too for a scalar.
    CHECK(shape_of_text("f32[]{:S(5)}").layout.memory_space == 5);
    CHECK(shape_of_text("f32[4]{0:}").layout.memory_space == 0);
  }

  TEST_CASE("shape indices: empty, one or more indices, blanks anywhere; a missing separator is an error") {
    grammar g("{} { 0 , 1,2 }{0 1}", "i.hlo");
    xlamem::shape_index a, b, c;
    REQUIRE(g.parse_shape_index(a));
    CHECK(a.empty());
    REQUIRE(g.parse_shape_index(b));
    CHECK(b == xlamem::shape_index{0, 1, 2});
    CHECK_FALSE(g.parse_shape_index(c));
    CHECK(g.error() == "parse_error: i.hlo:1:18: expected ',' or '}' in shape index, found '1'");
  }

  TEST_CASE("errors name the place and what was expected") {
    CHECK(error_of("") == "parse_error: s.hlo:1:1: expected a shape, found end of input");
    CHECK(error_of("f33[2]") == "parse_error: s.hlo:1:1: unknown element type 'f33'");
    CHECK(error_of("f32(2)") == "parse_error: s.hlo:1:4: expected '[' after the element type, found '('");
    CHECK(error_of("f32 [2]") == "no error");  // blanks between the parts
    CHECK(error_of("f32[-1]") == "parse_error: s.hlo:1:5: negative dimension");
    CHECK(error_of("f32[2,]") == "parse_error: s.hlo:1:7: expected an integer as a dimension, found ']'");
    CHECK(error_of("f32[2] x") == "parse_error: s.hlo:1:8: expected end of shape, found 'x'");
    CHECK(error_of("token[2]") == "parse_error: s.hlo:1:1: token shapes have no dimensions");
    CHECK(error_of("b((f32[]))") == "parse_error: s.hlo:1:1: a buffer shape b(...) holds an array shape");
    CHECK(error_of("b(b(f32[]))") == "parse_error: s.hlo:1:1: a buffer shape b(...) holds an array shape");
    CHECK(error_of("f32[2]{0,1}") == "parse_error: s.hlo:1:10: layout dimension 1 is out of range for a rank-1 shape");
    CHECK(error_of("f32[2,3]{0}") == "parse_error: s.hlo:1:1: layout lists 1 dimensions for a rank-2 shape");
    CHECK(error_of("f32[2]{:S(1)}") == "parse_error: s.hlo:1:1: layout lists no dimensions for a rank-1 shape");
    CHECK(error_of("f32[2]{0,}") == "parse_error: s.hlo:1:10: expected a dimension after ',' in layout, found '}'");
    CHECK(error_of("f32[2]{0:X(1)}") ==
          "parse_error: s.hlo:1:10: expected a layout part (D, T, L, #, *, E, S, SC, P, M) or '}', found 'X'");
    CHECK(error_of("f32[2]{0:D(X)}") == "parse_error: s.hlo:1:12: expected a dim level type (D, C, S or H) in layout, found 'X'");
    CHECK(error_of("f32[2]{0:T8}") == "parse_error: s.hlo:1:11: expected '(' after T in layout, found '8'");
    CHECK(error_of("f32[2]{0:#(q32)}") == "parse_error: s.hlo:1:12: unknown element type in layout, found 'q32'");
    CHECK(error_of("f32[2]{0:S(x)}") == "parse_error: s.hlo:1:12: expected an integer in S(...), found 'x'");
    CHECK(error_of("f32[2]{0:SC(0 1)}") == "parse_error: s.hlo:1:15: expected ':' in SC(d:i), found '1'");
    CHECK(error_of("f32[2]{0") == "parse_error: s.hlo:1:9: expected '}' to close the layout, found end of input");
    std::string deep = "f32[]";
    for (int k = 0; k < 65; ++k) deep = "(" + deep + ")";
    CHECK(error_of(deep) ==
          "parse_error: s.hlo:1:66: shape nests too deeply (more than 64 levels of tuples and physical shapes)");
    std::string ok = "f32[]";
    for (int k = 0; k < 64; ++k) ok = "(" + ok + ")";
    CHECK(error_of(ok) == "no error");
  }
}

TEST_SUITE("hlo/reader/grammar") {
  using namespace xlamem::test::hlo_helpers;

  TEST_CASE("buffer shapes b(...) and sparse dim level types D(...) read and print back") {
    const auto m = parse_ok("HloModule m\nENTRY e {\n  p = b(f32[4]{0}) parameter(0)\n"
                            "  q = f32[4,4]{1,0:D(D,C+)} parameter(1)\n  ROOT t = (b(f32[4]{0}), f32[4,4]{1,0:D(D,C+)}) "
                            "tuple(b(f32[4]{0}) p, q)\n}\n");
    const auto& p = shape_of(m, "e", "p");
    CHECK(p.is_buffer);
    CHECK(p.byte_size() == 16);
    CHECK(hlo::to_string(p) == "b(f32[4]{0})");
    CHECK(shape_of(m, "e", "q").layout.details().dim_level_types == "D,C+");
    CHECK(hlo::to_string(shape_of(m, "e", "q")) == "f32[4,4]{1,0:D(D,C+)}");
    CHECK(hlo::to_string(parse_ok(hlo::to_string(m))) == hlo::to_string(m));
    CHECK(!hlo::parse_shape("b((f32[]))"));
    CHECK(!hlo::parse_shape("f32[2]{0:D(X)}"));
  }
}

TEST_SUITE("reliability/hlo") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("nested physical shapes share one depth budget (was a stack overflow)") {
    std::string shape = "f32[]";
    for (int k = 0; k < 20000; ++k) shape = "f32[]{:P(" + shape + ")}";
    const auto msg = parse_error(module_with("  ROOT p = " + shape + " parameter(0)\n"));
    CHECK(contains(msg, "t.hlo:4:"));
    CHECK(contains(msg, "nests too deeply"));
    // A few levels, and tuples inside physical shapes, still read.
    auto ok = hlo::parse_module(module_with("  ROOT p = f32[]{:P(f32[]{:P((f32[], s32[]))})} parameter(0)\n"));
    REQUIRE_MESSAGE(ok.has_value(), ok.error().to_string());
    // Tuples and physical shapes count together: 40 tuple levels plus 40 P(...) levels refuse.
    std::string mixed = "f32[]";
    for (int k = 0; k < 40; ++k) mixed = "(f32[]{:P(" + mixed + ")})";
    CHECK(contains(parse_error(module_with("  ROOT p = " + mixed + " parameter(0)\n")), "nests too deeply"));
  }
}
