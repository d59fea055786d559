// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/codec/json_reader.hpp: the pull tokenizer `json_cursor` (integers on both
// paths, strings and their escapes, skipped values, messages with path and offset, refills across
// piece and window boundaries, the source's own error) and `decoded_text` (plain, gzip, zlib, limits).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/deflate_writer.hpp"
#include "xlamem/io/codec/gzip.hpp"
#include "xlamem/io/codec/json_reader.hpp"

namespace json_reader_test {
using xlamem::detail::json_cursor;
using xlamem::detail::json_path;
using xlamem::detail::text_source;

// `text` in pieces of `n` bytes (the last shorter), then the end.
inline text_source pieces(std::string text, std::size_t n) {
  auto kept = std::make_shared<std::string>(std::move(text));
  return [kept, n, pos = std::size_t{0}]() mutable -> xlamem::result<std::string_view> {
    const std::size_t k = std::min(n, kept->size() - pos);
    const std::string_view piece(kept->data() + pos, k);
    pos += k;
    return piece;
  };
}

inline json_cursor cursor(std::string text, std::size_t piece = 7, bool compressed = false) {
  return json_cursor(pieces(std::move(text), piece), "t.json", compressed);
}

// The message of the first integer of `text` that does not read, at path `a.b`.
inline std::string int_error(std::string text) {
  auto c = cursor(std::move(text));
  std::int64_t v = 0;
  CHECK_FALSE(c.read_int({"a.b"}, v));
  REQUIRE(c.failed());
  return c.failure().to_string();
}

inline std::string skip_error(std::string text) {
  auto c = cursor(std::move(text), 3);
  CHECK_FALSE(c.skip_value({"x"}));
  REQUIRE(c.failed());
  return c.failure().to_string();
}

// The bytes of the JSON string at the start of `text` (escapes decoded), or its error.
inline std::string string_of(std::string text, std::size_t piece = 2) {
  auto c = cursor(std::move(text), piece);
  std::string out;
  bool truncated = false;
  if (!c.read_string({"s"}, out, 1 << 20, truncated)) return "error: " + c.failure().to_string();
  CHECK_FALSE(truncated);
  return out;
}

inline std::uint64_t word_of(std::string_view eight) {
  std::uint64_t w = 0;
  std::memcpy(&w, eight.data(), 8);
  return w;
}
}  // namespace json_reader_test

TEST_SUITE("io/json_reader") {
  using namespace json_reader_test;

  TEST_CASE("json_path: a prefix and up to two indices; a third replaces the second") {
    const json_path p{"problem.edges.costs"};
    CHECK(p.str() == "problem.edges.costs");
    CHECK(p.at(17).str() == "problem.edges.costs[17]");
    CHECK(p.at(17).at(4).str() == "problem.edges.costs[17][4]");
    CHECK(p.at(17).at(4).at(9).str() == "problem.edges.costs[17][9]");
    CHECK(json_path{}.str().empty());
  }

  TEST_CASE("integers: both signs, int64's ends, whitespace between, offsets counted across pieces") {
    auto c = cursor(" 12\n\t-5 9223372036854775807 -9223372036854775808 -0 0 ", 3);
    std::int64_t v = 0;
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == 12);
    CHECK(c.offset() == 3);
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == -5);
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == INT64_MAX);
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == INT64_MIN);
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == 0);
    REQUIRE(c.read_int({"n"}, v));
    CHECK(v == 0);
    CHECK(c.at_end());
    CHECK(c.offset() == 54);
    CHECK_FALSE(c.failed());
  }

  TEST_CASE("integers that are not int64 name the path, the byte and the token") {
    CHECK(int_error("  01") == "parse_error: t.json: a.b: at byte 2: '01' is not a JSON number (a leading zero)");
    CHECK(int_error("1.5") == "parse_error: t.json: a.b: at byte 0: '1.5' is not an integer (fractions and exponents are not allowed)");
    CHECK(int_error("7e2") == "parse_error: t.json: a.b: at byte 0: '7e2' is not an integer (fractions and exponents are not allowed)");
    CHECK(int_error("9223372036854775808") == "parse_error: t.json: a.b: at byte 0: '9223372036854775808' is out of the range of int64");
    CHECK(int_error("-9223372036854775809") == "parse_error: t.json: a.b: at byte 0: '-9223372036854775809' is out of the range of int64");
    CHECK(int_error("99999999999999999999999") == "parse_error: t.json: a.b: at byte 0: '99999999999999999999999' is out of the range of int64");
    CHECK(int_error("x") == "parse_error: t.json: a.b: at byte 0: expected an integer, found 'x'");
    CHECK(int_error("- 1") == "parse_error: t.json: a.b: at byte 0: expected an integer, found '-'");
    CHECK(int_error(" ") == "parse_error: t.json: a.b: at byte 1: expected an integer, found the end of the text");
    CHECK(int_error("\"1\"") == "parse_error: t.json: a.b: at byte 0: expected an integer, found '\"'");
    // A token is quoted at a bounded length.
    CHECK(int_error("-" + std::string(200, 'q')) ==
          "parse_error: t.json: a.b: at byte 0: expected an integer, found '-" + std::string(xlamem::max_quoted_chars - 1, 'q') +
              "\xE2\x80\xA6'");
  }

  TEST_CASE("the fast path takes only plain non-negative integers ended inside the window, and consumes nothing else") {
    auto ok = cursor("  123456789012345678,7", 64);
    REQUIRE(ok.ensure(32) > 0);
    std::int64_t v = -1;
    REQUIRE(ok.scan_plain_int(v));
    CHECK(v == 123456789012345678);
    CHECK(ok.peek() == ',');
    for (const char* text : {"-1,", "01,", "1.5,", "2e3,", "12345678901234567890,", "9223372036854775808,", ",", "12"}) {
      CAPTURE(text);
      auto c = cursor(text, 64);
      c.ensure(32);
      const auto before = c.offset();
      v = -1;
      CHECK_FALSE(c.scan_plain_int(v));
      CHECK(v == -1);
      CHECK(c.offset() == before);
    }
    // Before anything is read the window is empty: nothing to scan yet.
    auto fresh = cursor("5,", 64);
    CHECK_FALSE(fresh.scan_plain_int(v));
  }

  TEST_CASE("eight digits at a time: digit runs, their values, and every length up to 19 against std::stoull") {
    CHECK(json_cursor::digit_run(word_of("12345678")) == 8);
    CHECK(json_cursor::digit_run(word_of("123,5678")) == 3);
    CHECK(json_cursor::digit_run(word_of("x2345678")) == 0);
    CHECK(json_cursor::digit_run(word_of("1234567/")) == 7);  // '/' and ':' border the digits
    CHECK(json_cursor::digit_run(word_of("1234567:")) == 7);
    CHECK(json_cursor::digits_value(word_of("90210,xx"), 5) == 90210);
    CHECK(json_cursor::digits_value(word_of("00000007"), 8) == 7);
    CHECK(json_cursor::digits_value(word_of("98765432"), 8) == 98765432);
    CHECK(json_cursor::digits_value(word_of("x0000000"), 0) == 0);
    const std::string all = "9876543210123456789";
    for (std::size_t n = 1; n <= all.size(); ++n) {
      for (const std::string& tail : {std::string(","), std::string(",          ")}) {  // short and long windows
        CAPTURE(n);
        const std::string text = all.substr(0, n) + tail;
        std::uint64_t m = 0;
        const char* end = json_cursor::scan_digits(text.data(), text.data() + text.size(), m);
        CHECK(end == text.data() + n);
        CHECK(m == std::stoull(all.substr(0, n)));
      }
    }
  }

  TEST_CASE("strings: every escape decoded to UTF-8, surrogate pairs joined, pieces of any size") {
    for (const std::size_t piece : {1, 2, 5, 64}) {
      CAPTURE(piece);
      CHECK(string_of(R"("a\"b\\c\/d\b\f\n\r\t")", piece) == "a\"b\\c/d\b\f\n\r\t");
      CHECK(string_of(R"("caf\u00e9 \u20AC \ud83d\ude00 \u0041")", piece) == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 A");
      CHECK(string_of("\"raw \xC3\xA9 bytes\"", piece) == "raw \xC3\xA9 bytes");
      CHECK(string_of(R"("")", piece).empty());
    }
  }

  TEST_CASE("strings that are not JSON name the fault and where it is") {
    CHECK(string_of("\"a\tb\"") == "error: parse_error: t.json: s: at byte 2: a control character inside a string");
    CHECK(string_of(R"("ab\x")") == "error: parse_error: t.json: s: at byte 3: an invalid escape in a string");
    CHECK(string_of(R"("\u12G4")") == "error: parse_error: t.json: s: at byte 1: an invalid \\u escape in a string");
    CHECK(string_of(R"("\ud83dx")") == "error: parse_error: t.json: s: at byte 7: an unpaired surrogate in a string");
    CHECK(string_of(R"("\ud83d\u0041")") == "error: parse_error: t.json: s: at byte 13: an unpaired surrogate in a string");
    CHECK(string_of(R"("\ude00")") == "error: parse_error: t.json: s: at byte 7: an unpaired surrogate in a string");
    CHECK(string_of("\"abc") == "error: parse_error: t.json: s: at byte 4: the text ends inside a string");
    CHECK(string_of("\"ab\\") == "error: parse_error: t.json: s: at byte 3: the text ends inside a string");
    CHECK(string_of("\"\\u12") == "error: parse_error: t.json: s: at byte 1: the text ends inside a string");
    CHECK(string_of("x") == "error: parse_error: t.json: s: at byte 0: expected a string, found 'x'");
  }

  TEST_CASE("a string over the byte limit reads whole and says it was truncated; an escape across the window's end") {
    auto c = cursor("\"abc\\u00e9defgh\" 5", 4);
    std::string out;
    bool truncated = false;
    REQUIRE(c.read_string({"s"}, out, 5, truncated));
    CHECK(truncated);
    CHECK(out.size() <= 5);
    std::int64_t v = 0;
    REQUIRE(c.read_int({"n"}, v));  // the cursor is past the whole string
    CHECK(v == 5);
    // The window holds 256 KiB: a \u escape and a surrogate pair straddle its end.
    for (const std::size_t before : {(std::size_t{1} << 18) - 3, (std::size_t{1} << 18) - 8}) {
      CAPTURE(before);
      const std::string text = "\"" + std::string(before - 1, 'a') + R"(\u00e9\ud83d\ude00z")";
      auto big = cursor(text, 1000);
      REQUIRE(big.read_string({"s"}, out, 1 << 20, truncated));
      CHECK_FALSE(truncated);
      CHECK(out == std::string(before - 1, 'a') + "\xC3\xA9\xF0\x9F\x98\x80z");
      CHECK(big.at_end());
      CHECK(big.offset() == text.size());
    }
  }

  TEST_CASE("skip_value: any JSON value, nested, with its syntax checked") {
    const std::string value = R"( {"a": [1, -2.5e+3, 0.0, true, false, null, "s\"}]"], "b": {}, "c": [[], [{}]], "d": -0} )";
    for (const std::size_t piece : {1, 3, 1000}) {
      CAPTURE(piece);
      auto c = cursor(value + ",7", piece);
      REQUIRE(c.skip_value({"x"}));
      CHECK(c.offset() == value.size() - 1);  // just after the value's last byte
      CHECK(c.peek_after_space() == ',');
    }
    for (const char* scalar : {"0", "-1", "1e5", "1E-5", "\"\"", "true", "null", "[]", "{}"}) {
      CAPTURE(scalar);
      auto c = cursor(scalar);
      CHECK(c.skip_value({"x"}));
      CHECK(c.at_end());
    }
    auto deep = cursor(std::string(256, '[') + std::string(256, ']'));
    CHECK(deep.skip_value({"x"}));
  }

  TEST_CASE("skip_value: invalid numbers, literals, separators and nesting past the limit") {
    CHECK(skip_error("[1.]") == "parse_error: t.json: x: at byte 1: an invalid number");
    CHECK(skip_error("01") == "parse_error: t.json: x: at byte 0: an invalid number");
    CHECK(skip_error("-") == "parse_error: t.json: x: at byte 0: an invalid number");
    CHECK(skip_error("1e+") == "parse_error: t.json: x: at byte 0: an invalid number");
    CHECK(skip_error("[nul]") == "parse_error: t.json: x: at byte 1: expected a value, found 'nul'");
    CHECK(skip_error("") == "parse_error: t.json: x: at byte 0: expected a value, found the end of the text");
    CHECK(skip_error("[1 2]") == "parse_error: t.json: x: at byte 3: expected ',' or ']', found '2'");
    CHECK(skip_error("{\"a\":1]") == "parse_error: t.json: x: at byte 6: expected ',' or '}', found ']'");
    CHECK(skip_error("{\"a\" 1}") == "parse_error: t.json: x: at byte 5: expected ':', found '1'");
    CHECK(skip_error("{1:2}") == "parse_error: t.json: x: at byte 1: expected a string, found '1'");
    CHECK(skip_error("[1,") == "parse_error: t.json: x: at byte 3: expected a value, found the end of the text");
    CHECK(skip_error(std::string(257, '[')) ==
          "parse_error: t.json: x: at byte 256: values nest more than 256 levels deep");
  }

  TEST_CASE("messages: no path part for an empty path, the decompressed text named; the first error wins") {
    auto c = cursor("abc", 7, true);
    CHECK_FALSE(c.fail({}, 2, "first"));
    CHECK(c.failure().to_string() == "parse_error: t.json: at byte 2 of the decompressed text: first");
    CHECK_FALSE(c.fail({"p"}, 0, "second", xlamem::errc::invalid_argument));
    CHECK(c.failure().to_string() == "parse_error: t.json: at byte 2 of the decompressed text: first");
    auto d = cursor("abc");
    CHECK_FALSE(d.fail(json_path{"p"}.at(1), d.offset(), "what", xlamem::errc::invalid_argument));
    CHECK(d.failure().to_string() == "invalid_argument: t.json: p[1]: at byte 0: what");
    CHECK(d.describe_next() == "'abc'");
    auto e = cursor("");
    CHECK(e.describe_next() == "the end of the text");
    CHECK(e.at_end());
    CHECK(e.peek() == -1);
  }

  TEST_CASE("the text source's error wins over what the cursor then finds") {
    int calls = 0;
    text_source failing = [&calls]() -> xlamem::result<std::string_view> {
      if (calls++ == 0) return std::string_view("[1, 2");
      return xlamem::make_error(xlamem::errc::parse_error, "t.json.gz: gzip: CRC-32 mismatch");
    };
    json_cursor c(failing, "t.json.gz", true);
    CHECK(c.peek() == '[');  // the first refill takes the piece, then meets the error
    CHECK(c.failed());
    CHECK(c.source_failed());
    CHECK(c.failure().to_string() == "parse_error: t.json.gz: gzip: CRC-32 mismatch");
    CHECK_FALSE(c.fail({"a"}, 3, "expected ',' or ']'"));
    CHECK(c.failure().to_string() == "parse_error: t.json.gz: gzip: CRC-32 mismatch");
    CHECK(calls == 2);  // never asked again once it failed
  }

  TEST_CASE("decoded_text: plain text as it is, gzip and zlib decompressed, both limits") {
    using xlamem::detail::decoded_text;
    const std::string json = R"({"a": [1, 2, 3], "b": "text"})";
    const auto read_all = [](decoded_text& d) {
      std::string out;
      auto source = d.source();
      for (;;) {
        auto piece = source();
        REQUIRE_MESSAGE(piece.has_value(), piece.error().to_string());
        if (piece->empty()) return out;
        out.append(*piece);
      }
    };
    decoded_text plain(xlamem::memory_byte_source(json), "a.json", 1000);
    REQUIRE(plain.start().has_value());
    CHECK_FALSE(plain.compressed());
    CHECK(read_all(plain) == json);

    const std::string gz = xlamem::test::gzip_member(xlamem::test::stored_deflate(json, 7), json);
    decoded_text g(xlamem::memory_byte_source(gz), "a.json.gz", 1000);
    REQUIRE(g.start().has_value());
    CHECK(g.compressed());
    CHECK(read_all(g) == json);

    const std::string z = xlamem::test::zlib_stream(xlamem::test::stored_deflate(json), json);
    decoded_text zl(xlamem::memory_byte_source(z), "a.json.z", 1000);
    REQUIRE(zl.start().has_value());
    CHECK(zl.compressed());
    CHECK(read_all(zl) == json);

    decoded_text one(xlamem::memory_byte_source("7"), "one", 10);  // shorter than the two bytes that tell
    REQUIRE(one.start().has_value());
    CHECK_FALSE(one.compressed());
    CHECK(read_all(one) == "7");

    decoded_text over(xlamem::memory_byte_source(json), "a.json", 10);
    auto started = over.start();
    auto piece = started ? over.source()() : xlamem::result<std::string_view>(started.error());
    REQUIRE_FALSE(piece.has_value());
    CHECK(piece.error().to_string() == "resource_exhausted: a.json: input is larger than the limit of 10 bytes");

    // Small compressed, large decompressed: the decompressed size is bounded too.
    const std::string big(5000, ' ');
    xlamem::test::fixed_huffman_block b;
    b.literal(' ');
    for (int k = 0; k < 4999 / 258; ++k) b.match(258, 1);
    b.match(4999 % 258, 1);
    const std::string stored = xlamem::test::gzip_member(b.finish(), big);
    REQUIRE(stored.size() < 200);
    decoded_text bomb(xlamem::memory_byte_source(stored), "b.json.gz", 4096 + 64);
    REQUIRE(bomb.start().has_value());
    auto source = bomb.source();
    xlamem::result<std::string_view> r = std::string_view();
    std::size_t total = 0;
    do {
      r = source();
      if (r) total += r->size();
    } while (r && !r->empty());
    REQUIRE_FALSE(r.has_value());
    CHECK(total <= 4096 + 64);
    CHECK(r.error().to_string() == "resource_exhausted: b.json.gz: gzip: decompresses to more than the limit of 4160 bytes");
  }
}
