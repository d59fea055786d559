// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/detail/hlo_lexer.hpp: the cursor (whitespace and comments, names,
// keywords, integers, strings, attribute values balanced over brackets) and its diagnostics
// (file:line:column, bounded quotes of the token found), directly and through the reader.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/hlo_helpers.hpp"
#include "support/reliability_helpers.hpp"
#include "xlamem/hlo/detail/hlo_lexer.hpp"

namespace hlo_lexer_test {
// The lexer with its cursor and diagnostics made public for the test.
class lexer : public xlamem::hlo::detail::hlo_lexer {
 public:
  using hlo_lexer::hlo_lexer;
  using hlo_lexer::at_end;
  using hlo_lexer::expect;
  using hlo_lexer::fail;
  using hlo_lexer::found;
  using hlo_lexer::integer;
  using hlo_lexer::keyword;
  using hlo_lexer::list_next;
  using hlo_lexer::list_step;
  using hlo_lexer::location;
  using hlo_lexer::name;
  using hlo_lexer::peek;
  using hlo_lexer::scan_value;
  using hlo_lexer::skip_string;
  using hlo_lexer::ws;
  [[nodiscard]] std::size_t pos() const noexcept { return p_; }
  [[nodiscard]] std::string error() const { return err_ ? err_->to_string() : std::string("no error"); }
};

// The attribute value scanned from the start of `text` (after whitespace), or its error.
inline std::string value_of(std::string_view text) {
  lexer l(text, "v.hlo");
  std::string_view v;
  if (!l.ws() || !l.scan_value(v, "k")) return "error: " + l.error();
  return std::string(v);
}
}  // namespace hlo_lexer_test

TEST_SUITE("hlo/detail/hlo_lexer") {
  using namespace hlo_lexer_test;

  TEST_CASE("location: line and column from 1, past the end clamped; found: the token there, bounded") {
    const lexer l("ab\ncd\n\nxyz", "f.hlo");
    CHECK(l.location(0) == "f.hlo:1:1");
    CHECK(l.location(1) == "f.hlo:1:2");
    CHECK(l.location(3) == "f.hlo:2:1");
    CHECK(l.location(4) == "f.hlo:2:2");
    CHECK(l.location(6) == "f.hlo:3:1");
    CHECK(l.location(7) == "f.hlo:4:1");
    CHECK(l.location(1000) == "f.hlo:4:4");
    CHECK(l.found(7) == "'xyz'");
    CHECK(l.found(8) == "'yz'");
    CHECK(l.found(2) == "'\\n'");  // not a name character: that one character
    CHECK(l.found(10) == "end of input");
    const std::string long_name = "%" + std::string(100, 'n') + " rest";
    const lexer m(long_name, "g.hlo");
    CHECK(m.found(0) == "'%" + std::string(xlamem::max_quoted_chars - 1, 'n') + "\xE2\x80\xA6'");
    const lexer c("\x1b[2J", "c.hlo");
    CHECK(c.found(0) == "'?'");  // control bytes never reach a message raw
  }

  TEST_CASE("whitespace and comments are skipped; an unterminated block comment is an error at its start") {
    lexer l(" \t\r\n\f\v/* a\n b */ // line\n// last\nx", "w.hlo");
    REQUIRE(l.ws());
    CHECK(l.peek() == 'x');
    lexer slash("/ x", "w.hlo");  // a lone '/' is no comment
    REQUIRE(slash.ws());
    CHECK(slash.pos() == 0);
    lexer tail("  // no newline", "w.hlo");
    REQUIRE(tail.ws());
    CHECK(tail.at_end());
    lexer open("a\n  /* never closed", "w.hlo");
    open.name();
    CHECK_FALSE(open.ws());
    CHECK(open.error() == "parse_error: w.hlo:2:3: unterminated '/*' comment");
  }

  TEST_CASE("names with or without '%', keywords only as whole words") {
    lexer l("%abc.1-x_2(rest", "n.hlo");
    CHECK(l.name() == "abc.1-x_2");
    CHECK(l.peek() == '(');
    lexer none("%(", "n.hlo");
    CHECK(none.name().empty());
    CHECK(none.pos() == 0);  // nothing consumed, '%' included
    lexer kw("ROOT x", "k.hlo");
    CHECK_FALSE(kw.keyword("ROO"));  // a prefix of the word there is not the keyword
    CHECK(kw.keyword("ROOT"));
    CHECK(kw.pos() == 4);
    lexer glued("ROOTx", "k.hlo");
    CHECK_FALSE(glued.keyword("ROOT"));
    CHECK(glued.pos() == 0);
    lexer whole("ROOT", "k.hlo");
    CHECK(whole.keyword("ROOT"));
  }

  TEST_CASE("integers: signs, int64's largest, and errors naming what the number was for") {
    lexer l("  -42 9223372036854775807", "i.hlo");
    std::int64_t v = 0;
    REQUIRE(l.integer(v, "as a test"));
    CHECK(v == -42);
    REQUIRE(l.integer(v, "as a test"));
    CHECK(v == INT64_MAX);
    lexer big("9223372036854775808", "i.hlo");
    CHECK_FALSE(big.integer(v, "as a dimension"));
    CHECK(big.error() == "parse_error: i.hlo:1:1: integer out of range as a dimension");
    lexer word("\n x1", "i.hlo");
    CHECK_FALSE(word.integer(v, "as a dimension"));
    CHECK(word.error() == "parse_error: i.hlo:2:2: expected an integer as a dimension, found 'x1'");
    lexer minus("-)", "i.hlo");
    CHECK_FALSE(minus.integer(v, "in a tile"));
    CHECK(minus.pos() == 0);
    CHECK(minus.error() == "parse_error: i.hlo:1:1: expected an integer in a tile, found '-'");
  }

  TEST_CASE("expect, list_next, and the first error kept") {
    int made = 0;
    lexer l(" ( a , b ) x", "e.hlo");
    CHECK(l.expect('(', [&] { return ++made, std::string("to open"); }));
    CHECK(made == 0);  // the context is made only for a message
    l.ws();
    l.name();
    l.ws();
    CHECK(l.list_next(')', "the list") == lexer::list_step::more);
    l.ws();
    l.name();
    l.ws();
    CHECK(l.list_next(')', "the list") == lexer::list_step::closed);
    l.ws();
    CHECK(l.list_next(')', "the list") == lexer::list_step::error);
    CHECK(l.error() == "parse_error: e.hlo:1:12: expected ',' or ')' in the list, found 'x'");
    CHECK_FALSE(l.expect('y', [&] { return ++made, std::string("after x"); }));
    CHECK(made == 1);
    CHECK(l.error() == "parse_error: e.hlo:1:12: expected ',' or ')' in the list, found 'x'");  // the first one stays
    CHECK_FALSE(l.fail(0, "later"));
    CHECK(l.error() == "parse_error: e.hlo:1:12: expected ',' or ')' in the list, found 'x'");
  }

  TEST_CASE("strings: escapes skipped, an unterminated one an error at its opening quote") {
    lexer l(R"("a\"b\\" rest)", "s.hlo");
    REQUIRE(l.skip_string());
    CHECK(l.pos() == 8);
    lexer open("x = \"abc\\\"", "s.hlo");
    open.name();
    open.ws();
    open.expect('=', "after x");
    open.ws();
    CHECK_FALSE(open.skip_string());
    CHECK(open.error() == "parse_error: s.hlo:1:5: unterminated string literal");
  }

  TEST_CASE("attribute values: a string, or text balanced over brackets up to ',', a blank or an unmatched closer") {
    CHECK(value_of("\"a, b\\\" c\", next") == "\"a, b\\\" c\"");
    CHECK(value_of("{op_name=\"x{\" source_line=3}, next") == "{op_name=\"x{\" source_line=3}");
    CHECK(value_of("{a={b,[c,(d)]}}\nnext") == "{a={b,[c,(d)]}}");
    CHECK(value_of("%add)") == "%add");
    CHECK(value_of("[2,4]<=[4,2]T(1,0), x") == "[2,4]<=[4,2]T(1,0)");
    CHECK(value_of("mesh['a'=2] \t{'a'}, x") == "mesh['a'=2] \t{'a'}");  // a blank then '{' after ']' continues
    CHECK(value_of("[1] x") == "[1]");
    CHECK(value_of("true}") == "true");
    CHECK(value_of("{a") == "error: parse_error: v.hlo:1:1: unbalanced brackets in attribute 'k': missing '}' before end of input");
    CHECK(value_of("{a)") == "error: parse_error: v.hlo:1:3: unbalanced brackets in attribute 'k': expected '}', found ')'");
    CHECK(value_of(", x") == "error: parse_error: v.hlo:1:1: expected a value for attribute 'k', found ','");
    CHECK(value_of("") == "error: parse_error: v.hlo:1:1: expected a value for attribute 'k', found end of input");
    CHECK(value_of("{\"a}") == "error: parse_error: v.hlo:1:2: unterminated string literal");
    CHECK(value_of(std::string(256, '(') + std::string(256, ')')) == std::string(256, '(') + std::string(256, ')'));
    CHECK(value_of(std::string(257, '(')) == "error: parse_error: v.hlo:1:257: brackets nest too deeply in attribute 'k'");
  }
}

TEST_SUITE("hlo/reader/grammar") {
  using namespace xlamem::test::hlo_helpers;

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
}

TEST_SUITE("reliability/hlo") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("messages quote a bounded prefix of a huge token") {
    const std::string token(5'000'000, 'q');
    for (const std::string& text : {module_with("  ROOT p = f32[] " + token + "(0)\n"),
                                    module_with("  ROOT p = " + token + "[] parameter(0)\n"),
                                    module_with("  ROOT p = f32[] negate(" + token + ")\n"),
                                    "HloModule m\n\nENTRY e {\n  ROOT p = f32[] call(), to_apply=" + token + "\n}\n"}) {
      const auto msg = parse_error(text);
      CHECK(msg.size() < 400);
      CHECK(contains(msg, "\xE2\x80\xA6"));
    }
  }
}
