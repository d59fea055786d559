// SPDX-License-Identifier: Apache-2.0
// Tests for io/sharding/iopddl_json.hpp: the format's example.json, key order, whitespace and unknown
// keys, gzip and zlib input, every kind of malformed input with the JSON path and byte offset its
// message names, and the eleven shared instances read and evaluated against bench/sharding/iopddl_eval.py.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/deflate_writer.hpp"
#include "support/common.hpp"
#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/sharding/evaluate.hpp"

using namespace xlamem;

namespace {

// Two nodes (2 and 1 strategies), one edge: the smallest problem with every field.
const std::string base =
    R"({"problem":{"name":"t","nodes":{"intervals":[[0,2],[1,3]],"costs":[[1,2],[3]],"usages":[[4,5],[6]]},)"
    R"("edges":{"nodes":[[0,1]],"costs":[[7,8]]},"usage_limit":10}})";

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

// The error of reading `text`, as "code: message".
std::string error_of(std::string_view text) {
  auto r = parse_iopddl(text, "t.json");
  return r ? std::string("no error") : r.error().to_string();
}

// "t.json: PATH: at byte N: WHAT", N the offset of `anchor` in `text`.
std::string at(const std::string& text, std::string_view anchor, std::string_view path, std::string_view what,
               std::string_view code = "invalid_argument") {
  const auto pos = text.find(anchor);
  REQUIRE_MESSAGE(pos != std::string::npos, anchor);
  std::string m = std::string(code) + ": t.json: ";
  if (!path.empty()) m += std::string(path) + ": ";
  return m + "at byte " + std::to_string(pos) + ": " + std::string(what);
}

std::string example_path() {
  const auto dir = test::shared_data_dir();
  return dir.empty() ? std::string() : (dir / "iopddl" / "example.json").string();
}

}  // namespace

TEST_CASE("the small problem reads into the flat arrays") {
  auto r = parse_iopddl(base, "t.json");
  REQUIRE_MESSAGE(r, r.error().to_string());
  const sharding::problem& p = *r;
  CHECK(p.name == "t");
  REQUIRE(p.node_count() == 2);
  CHECK(p.intervals[0] == sharding::live_interval{0, 2});
  CHECK(p.intervals[1] == sharding::live_interval{1, 3});
  CHECK(p.strategy_offsets == std::vector<std::size_t>{0, 2, 3});
  CHECK(p.costs == std::vector<sharding::cost_type>{1, 2, 3});
  CHECK(p.usages == std::vector<sharding::usage_type>{4, 5, 6});
  REQUIRE(p.edge_count() == 1);
  CHECK(p.edges[0] == std::pair<std::size_t, std::size_t>{0, 1});
  CHECK(p.edge_cost(0, 1, 0) == 8);
  CHECK(p.usage_limit() == 10);
}

TEST_CASE("example.json reads as the format describes it") {
  const std::string path = example_path();
  if (path.empty()) {
    MESSAGE("skipped: ../shared/data is absent (set XLAMEM_SHARED_DATA to its location)");
    return;
  }
  auto r = read_iopddl(path);
  REQUIRE_MESSAGE(r, r.error().to_string());
  const sharding::problem& p = *r;
  CHECK(p.name == "example");
  REQUIRE(p.node_count() == 5);
  CHECK(p.intervals[2] == sharding::live_interval{50, 120});
  CHECK(p.strategy_count(2) == 3);
  CHECK(p.node_cost(2, 1) == 45);
  CHECK(p.node_usage(1, 0) == 25);
  REQUIRE(p.edge_count() == 5);
  CHECK(p.edge_nodes(2) == std::pair<std::size_t, std::size_t>{1, 3});
  CHECK(p.edge_cost(2, 1, 0) == 20);  // [90, 10, 20, 80] is indexed s_1 * 2 + s_3
  CHECK(p.usage_limit() == 50);
}

TEST_CASE("keys in any order, whitespace anywhere, unknown keys skipped") {
  const std::string text =
      " \n{ \"version\" : [1, 2.5e3, -0.25, {\"deep\": [null, true, false, \"s\\\"\\u00e9\"]}] ,\r\n"
      "\t\"problem\" : {\n  \"usage_limit\" : 10 ,\n  \"edges\" : { \"costs\" : [ [ 7 , 8 ] ] , \"nodes\" : [ [0 , 1] ],"
      " \"note\": {} },\n  \"nodes\" : {\"usages\":[[4,5],[6]],\"extra\":[],\"costs\":[[1,2],[3]],\n"
      "\"intervals\":[[0,2],\t[1,3]]},\n  \"name\" : \"na\\u00efve \\ud83d\\ude00\", \"z\": -1\n} } \n";
  auto r = parse_iopddl(text, "t.json");
  REQUIRE_MESSAGE(r, r.error().to_string());
  auto want = parse_iopddl(base, "t.json");
  REQUIRE(want);
  CHECK(r->name == "na\xC3\xAFve \xF0\x9F\x98\x80");
  CHECK(r->intervals == want->intervals);
  CHECK(r->costs == want->costs);
  CHECK(r->usages == want->usages);
  CHECK(r->strategy_offsets == want->strategy_offsets);
  CHECK(r->edges == want->edges);
  CHECK(r->edge_costs == want->edge_costs);
  CHECK(r->edge_offsets == want->edge_offsets);
  CHECK(r->limit == 10);
  // No name, empty intervals ([0, 0] uses no memory; lo == hi is allowed), no edges.
  auto bare = parse_iopddl(
      R"({"problem":{"nodes":{"intervals":[[0,0],[5,5]],"costs":[[1],[2]],"usages":[[0],[3]]},"edges":{"nodes":[],"costs":[]},"usage_limit":0}})");
  REQUIRE_MESSAGE(bare, bare.error().to_string());
  CHECK(bare->name.empty());
  CHECK(bare->intervals[0].empty());
  CHECK(bare->edge_count() == 0);
}

TEST_CASE("numbers of every length, across the reader's window boundaries, read exactly") {
  // One node whose cost row holds values of 1 to 19 digits (and int64's largest), each padded
  // by a varying run of spaces so that over a megabyte of text every number meets the end of
  // the 256 KiB window at some digit; the usages and an out-of-range value take the checked path.
  std::vector<std::int64_t> values;
  std::string row;
  std::int64_t power = 1;
  for (std::size_t i = 0; values.size() < 60000; ++i) {
    const std::size_t digits = 1 + i % 19;
    power = digits == 1 ? 1 : power * 10;
    const std::int64_t v = i % 97 == 0 ? std::numeric_limits<std::int64_t>::max() : power + static_cast<std::int64_t>(i % 9);
    if (!row.empty()) row += ',';
    row.append(i % 23, ' ');
    row += std::to_string(v);
    values.push_back(v);
  }
  std::string usage_row = "[";
  for (std::size_t i = 0; i < values.size(); ++i) usage_row += i == 0 ? "-0" : ",0";
  usage_row += "]";
  const std::string text = R"({"problem":{"nodes":{"intervals":[[0,1]],"costs":[[)" + row + R"(]],"usages":[)" + usage_row +
                           R"(]},"edges":{"nodes":[],"costs":[]},"usage_limit":1}})";
  REQUIRE(text.size() > 4 * (std::size_t{1} << 18));
  auto r = parse_iopddl(text, "t.json");
  REQUIRE_MESSAGE(r, r.error().to_string());
  CHECK(r->costs == values);
  CHECK(r->usages == std::vector<std::int64_t>(values.size(), 0));
  const auto big = replaced(text, "9223372036854775807", "9223372036854775808");
  CHECK(error_of(big) == at(big, "9223372036854775808", "problem.nodes.costs[0][0]",
                            "'9223372036854775808' is out of the range of int64", "parse_error"));
}

TEST_CASE("gzip and zlib input is told apart by its first bytes") {
  auto want = parse_iopddl(base, "t.json");
  REQUIRE(want);
  const std::string gz = test::gzip_member(test::stored_deflate(base, 50), base);
  auto g = parse_iopddl(gz, "t.json.gz");
  REQUIRE_MESSAGE(g, g.error().to_string());
  CHECK(g->edge_costs == want->edge_costs);
  CHECK(g->costs == want->costs);
  const std::string z = test::zlib_stream(test::stored_deflate(base), base);
  auto zr = parse_iopddl(z, "t.json.z");
  REQUIRE_MESSAGE(zr, zr.error().to_string());
  CHECK(zr->usages == want->usages);
  // Two gzip members split the text anywhere.
  const std::string two = test::gzip_member(test::stored_deflate(base.substr(0, 77)), base.substr(0, 77)) +
                          test::gzip_member(test::stored_deflate(base.substr(77)), base.substr(77));
  auto m = parse_iopddl(two, "t.json.gz");
  REQUIRE_MESSAGE(m, m.error().to_string());
  CHECK(m->edges == want->edges);
  // Offsets in messages count the decompressed text.
  const std::string bad = replaced(base, "[[7,8]]", "[[7,-8]]");
  auto e = parse_iopddl(test::gzip_member(test::stored_deflate(bad, 30), bad), "t.json.gz");
  REQUIRE_FALSE(e);
  CHECK(e.error().message() == "t.json.gz: problem.edges.costs[0][1]: at byte " + std::to_string(bad.find("-8")) +
                                   " of the decompressed text: cost -8 is negative");
}

TEST_CASE("sizes that disagree are errors naming the row and its offset") {
  std::string t = replaced(base, "\"costs\":[[7,8]]", "\"costs\":[[7,8,9]]");
  CHECK(error_of(t) == at(t, "[7,8,9]", "problem.edges.costs[0]", "3 cost values, but the matrix of nodes 0 and 1 is 2 x 1"));
  t = replaced(base, "\"usages\":[[4,5],[6]]", "\"usages\":[[4],[6]]");
  CHECK(error_of(t) == at(t, "[4]", "problem.nodes.usages[0]", "1 usage values, but problem.nodes.costs[0] has 2 cost values"));
  t = replaced(replaced(base, "\"costs\":[[1,2],[3]]", "\"costs\":[[1,2],[]]"), "[[4,5],[6]]", "[[4,5],[]]");
  CHECK(error_of(t) == at(t, "[]]", "problem.nodes.costs[1]", "node 1 has no strategy"));
  t = replaced(base, "\"costs\":[[1,2],[3]]", "\"costs\":[[1,2]]");
  CHECK(error_of(t) == at(t, "[[1,2]]", "problem.nodes.costs", "1 rows, but problem.nodes.intervals has 2 nodes"));
  t = replaced(base, "\"usages\":[[4,5],[6]]", "\"usages\":[[4,5],[6],[7]]");
  CHECK(error_of(t) == at(t, "[[4,5],[6],[7]]", "problem.nodes.usages", "3 rows, but problem.nodes.intervals has 2 nodes"));
  t = replaced(base, "\"costs\":[[7,8]]", "\"costs\":[[7,8],[9,9]]");
  CHECK(error_of(t) == at(t, "[[7,8],[9,9]]", "problem.edges.costs", "2 rows, but problem.edges.nodes has 1 edges"));
  t = replaced(base, "[[0,1]]", "[[0,2]]");
  CHECK(error_of(t) == at(t, "[0,2]]", "problem.edges.nodes[0][1]", "node 2 is out of range (the problem has 2 nodes)"));
  t = replaced(base, "[[0,1]]", "[[0,-1]]");
  CHECK(error_of(t) == at(t, "-1", "problem.edges.nodes[0][1]", "node index -1 is negative"));
  t = replaced(base, "[[0,1]]", "[[0,1,1]]");
  CHECK(error_of(t) == at(t, "1]]", "problem.edges.nodes[0]", "an edge is [u, v]: more than 2 nodes", "parse_error"));
}

TEST_CASE("values the problem cannot have are errors naming the value") {
  std::string t = replaced(base, "[[4,5],[6]]", "[[4,-5],[6]]");
  CHECK(error_of(t) == at(t, "-5", "problem.nodes.usages[0][1]", "usage -5 is negative"));
  t = replaced(base, "[[1,2],[3]]", "[[1,-2],[3]]");
  CHECK(error_of(t) == at(t, "-2", "problem.nodes.costs[0][1]", "cost -2 is negative"));
  t = replaced(base, "[[7,8]]", "[[-7,8]]");
  CHECK(error_of(t) == at(t, "-7", "problem.edges.costs[0][0]", "cost -7 is negative"));
  t = replaced(base, "[[0,2],[1,3]]", "[[0,2],[4,3]]");
  CHECK(error_of(t) == at(t, "[4,3]", "problem.nodes.intervals[1]", "lo 4 is above hi 3"));
  // A negative start is refused whatever the end, and an end before the start is refused too.
  const std::pair<std::string, std::string> intervals[] = {
      {"[-2,3]", "lo -2 is negative (time steps start at 0)"}, {"[-5,-1]", "lo -5 is negative (time steps start at 0)"},
      {"[-1,-3]", "lo -1 is negative (time steps start at 0)"}, {"[3,-3]", "lo 3 is above hi -3"}};
  for (const auto& [interval, what] : intervals) {
    t = replaced(base, "[1,3]]", interval + "]");
    CHECK(error_of(t) == at(t, interval, "problem.nodes.intervals[1]", what));
  }
  // In gzip input the offset counts the decompressed text.
  t = replaced(base, "[[0,2],[1,3]]", "[[0,2],[-7,3]]");
  auto gz = parse_iopddl(test::gzip_member(test::stored_deflate(t, 40), t), "t.json.gz");
  REQUIRE_FALSE(gz);
  CHECK(gz.error().message() == "t.json.gz: problem.nodes.intervals[1]: at byte " + std::to_string(t.find("[-7,3]")) +
                                    " of the decompressed text: lo -7 is negative (time steps start at 0)");
  t = replaced(base, "\"usage_limit\":10", "\"usage_limit\":-1");
  CHECK(error_of(t).starts_with("invalid_argument: t.json: problem.usage_limit: at byte "));
  // The largest int64 is a cost like any other; int64's lowest is negative.
  t = replaced(base, "[[1,2],[3]]", "[[1,9223372036854775807],[3]]");
  CHECK(error_of(t) == "no error");
  t = replaced(base, "[[1,2],[3]]", "[[1,-9223372036854775808],[3]]");
  CHECK(error_of(t) == at(t, "-9223372036854775808", "problem.nodes.costs[0][1]", "cost -9223372036854775808 is negative"));
}

TEST_CASE("numbers that are not int64 integers are parse errors quoting the number") {
  const auto number_error = [](std::string_view number, std::string_view what) {
    const std::string t = replaced(base, "[[1,2],[3]]", "[[1," + std::string(number) + "],[3]]");
    CHECK(error_of(t) == at(t, number, "problem.nodes.costs[0][1]", what, "parse_error"));
  };
  number_error("2.5", "'2.5' is not an integer (fractions and exponents are not allowed)");
  number_error("2.0", "'2.0' is not an integer (fractions and exponents are not allowed)");
  number_error("1e3", "'1e3' is not an integer (fractions and exponents are not allowed)");
  number_error("1E+3", "'1E+3' is not an integer (fractions and exponents are not allowed)");
  number_error("9223372036854775808", "'9223372036854775808' is out of the range of int64");
  number_error("-9223372036854775809", "'-9223372036854775809' is out of the range of int64");
  number_error("123456789012345678901234567890", "'123456789012345678901234567890' is out of the range of int64");
  number_error("02", "'02' is not a JSON number (a leading zero)");
  number_error("\"2\"", "expected an integer, found '\"'");
  number_error("true", "expected an integer, found 'true'");
  number_error("-", "expected an integer, found '-'");
  number_error("+2", "expected an integer, found '+2'");
}

TEST_CASE("missing and repeated keys, syntax errors, truncation and trailing text") {
  std::string t = replaced(base, ",\"usage_limit\":10", "");
  CHECK(error_of(t) == at(t, "{\"name\"", "problem.usage_limit", "the key is missing", "parse_error"));
  t = replaced(base, ",\"usages\":[[4,5],[6]]", "");
  CHECK(error_of(t) == at(t, "{\"intervals\"", "problem.nodes.usages", "the key is missing", "parse_error"));
  t = replaced(base, "\"costs\":[[7,8]]", "\"weights\":[[7,8]]");
  CHECK(error_of(t) == at(t, "{\"nodes\":[[0,1]]", "problem.edges.costs", "the key is missing", "parse_error"));
  t = R"({"other": {"problem": 1}})";
  CHECK(error_of(t) == "parse_error: t.json: at byte " + std::to_string(t.size()) + ": the key 'problem' is missing");
  t = replaced(base, "\"usage_limit\":10", "\"usage_limit\":10,\"usage_limit\":11");
  CHECK(error_of(t) == at(t, "\"usage_limit\":11", "problem.usage_limit", "the key appears twice", "parse_error"));
  t = replaced(base, "\"costs\":[[1,2],[3]]", "\"costs\":[[1,2],[3]],\"costs\":[[1,2],[3]]");
  CHECK(error_of(t) == at(t, "\"costs\":[[1,2],[3]],\"usages", "problem.nodes.costs", "the key appears twice", "parse_error"));

  CHECK(error_of("") == "parse_error: t.json: at byte 0: expected an object '{', found the end of the text");
  CHECK(error_of("[1]") == "parse_error: t.json: at byte 0: expected an object '{', found '['");
  t = base + " x";
  CHECK(error_of(t) == "parse_error: t.json: at byte " + std::to_string(base.size() + 1) +
                           ": trailing characters after the JSON value: 'x'");
  CHECK(error_of(base + "{}").starts_with("parse_error: t.json: at byte " + std::to_string(base.size()) + ": trailing"));
  CHECK(error_of(base.substr(0, 60)) == "parse_error: t.json: problem.nodes: at byte 60: the text ends inside a string");
  CHECK(error_of(base.substr(0, 55)) ==
        "parse_error: t.json: problem.nodes.intervals[1]: at byte 55: expected ',' or ']', found the end of the text");
  CHECK(error_of(base.substr(0, 54)) ==
        "parse_error: t.json: problem.nodes.intervals[1][1]: at byte 54: expected an integer, found the end of the text");
  CHECK(error_of(R"({"problem":{"name":"abc)") == "parse_error: t.json: problem.name: at byte 23: the text ends inside a string");
  t = replaced(base, "\"name\":\"t\"", "\"name\" \"t\"");
  CHECK(error_of(t) == at(t, "\"t\"", "problem", "expected ':' after a key, found '\"'", "parse_error"));
  t = replaced(base, "\"name\":\"t\",", "\"name\":\"t\" ");
  CHECK(error_of(t) == at(t, "\"nodes\"", "problem", "expected ',' or '}', found '\"'", "parse_error"));
  t = replaced(base, "[[0,2],[1,3]]", "[[0,2] [1,3]]");
  CHECK(error_of(t) == at(t, "[1,3]", "problem.nodes.intervals", "expected ',' or ']', found '['", "parse_error"));
  t = replaced(base, "[[0,2],[1,3]]", "[[0,2],[1]]");
  CHECK(error_of(t) == at(t, "[1]", "problem.nodes.intervals[1]", "an interval is [lo, hi]: 1 values", "parse_error"));
  t = replaced(base, "[[0,2],[1,3]]", "[[0,2,3],[1,3]]");
  CHECK(error_of(t) == at(t, "3],", "problem.nodes.intervals[0]", "an interval is [lo, hi]: more than 2 values", "parse_error"));
  t = replaced(base, "\"name\":\"t\"", "\"name\":\"a\tb\"");
  CHECK(error_of(t) == at(t, "\tb", "problem.name", "a control character inside a string", "parse_error"));
  t = replaced(base, "\"name\":\"t\"", "\"name\":\"\\x\"");
  CHECK(error_of(t) == at(t, "\\x", "problem.name", "an invalid escape in a string", "parse_error"));
  t = replaced(base, "\"name\":\"t\"", "\"name\":\"\\ud83d\"");
  CHECK(error_of(t).ends_with("an unpaired surrogate in a string"));
  t = replaced(base, "\"name\":\"t\"", "\"junk\":[1,2.]");
  CHECK(error_of(t) == at(t, "2.]", "problem.junk", "an invalid number", "parse_error"));
  t = replaced(base, "\"name\":\"t\"", "\"junk\":nul");
  CHECK(error_of(t) == at(t, "nul", "problem.junk", "expected a value, found 'nul'", "parse_error"));
  t = replaced(base, "\"name\":\"t\"", "\"deep\":" + std::string(300, '[') + std::string(300, ']'));
  CHECK(error_of(t) == "parse_error: t.json: problem.deep: at byte " + std::to_string(t.find('[') + 256) +
                           ": values nest more than 256 levels deep");
  t = replaced(base, "\"name\":\"t\"", "\"deep\":" + std::string(200, '[') + std::string(200, ']'));
  CHECK(error_of(t) == "no error");
  t = replaced(base, "\"name\":\"t\"", "\"name\":\"" + std::string(iopddl_max_name_bytes + 1, 'n') + "\"");
  CHECK(error_of(t) == at(t, "\"nnn", "problem.name", "the name is longer than 65536 bytes", "resource_exhausted"));
}

TEST_CASE("truncated or corrupt gzip, and inputs over the limit") {
  const std::string gz = test::gzip_member(test::stored_deflate(base, 40), base);
  auto r = parse_iopddl(std::string_view(gz).substr(0, gz.size() - 30), "t.json.gz");
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "parse_error: t.json.gz: gzip: truncated: the compressed input ends at byte " +
                                     std::to_string(gz.size() - 30) + " inside a deflate block");
  r = parse_iopddl(std::string_view(gz).substr(0, gz.size() - 3), "t.json.gz");
  REQUIRE_FALSE(r);
  CHECK(r.error().message() == "t.json.gz: gzip: truncated: the compressed input ends at byte " +
                                   std::to_string(gz.size() - 3) + " inside a trailer");
  std::string corrupt = gz;
  corrupt[gz.size() - 6] = static_cast<char>(corrupt[gz.size() - 6] ^ 4);
  r = parse_iopddl(corrupt, "t.json.gz");
  REQUIRE_FALSE(r);
  CHECK(r.error().message() == "t.json.gz: gzip: CRC-32 mismatch (the data is corrupt) at byte " +
                                   std::to_string(gz.size() - 8) + " of the compressed input");

  r = parse_iopddl(base, "t.json", input_limits{100});
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "resource_exhausted: t.json: input is larger than the limit of 100 bytes");
  // Small compressed, large decompressed: the decompressed size is bounded too.
  const std::string padded = base + std::string(5000, ' ');
  test::fixed_huffman_block b;
  for (const char c : base) b.literal(static_cast<unsigned char>(c));
  b.literal(' ');
  for (int k = 0; k < 4999 / 258; ++k) b.match(258, 1);
  b.match(4999 % 258, 1);
  const std::string bomb = test::gzip_member(b.finish(), padded);
  REQUIRE(bomb.size() < 1000);
  REQUIRE(parse_iopddl(bomb, "t.json.gz"));
  r = parse_iopddl(bomb, "t.json.gz", input_limits{1000});
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "resource_exhausted: t.json.gz: gzip: decompresses to more than the limit of 1000 bytes");
}

TEST_CASE("files: regular files only, bounded, gzip by content not name") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = (dir / "xlamem_iopddl_test.json").string();
  const std::string gz = test::gzip_member(test::stored_deflate(base), base);
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(gz.data(), 1, gz.size(), f);
    std::fclose(f);
  }
  auto r = read_iopddl(path);
  REQUIRE_MESSAGE(r, r.error().to_string());
  CHECK(r->costs == std::vector<sharding::cost_type>{1, 2, 3});
  r = read_iopddl(path, input_limits{10});
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "resource_exhausted: " + path + ": input is larger than the limit of 10 bytes");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  r = read_iopddl_stream(f, "<stdin>");
  std::fclose(f);
  REQUIRE_MESSAGE(r, r.error().to_string());
  CHECK(r->edge_costs == std::vector<sharding::cost_type>{7, 8});
  std::filesystem::remove(path);

  r = read_iopddl(path);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::not_found);
  r = read_iopddl(dir.string());
  REQUIRE_FALSE(r);
  CHECK(r.error().to_string() == "invalid_argument: " + dir.string() + ": is a directory, not a regular file");
}

namespace {
struct expected_evaluation {
  const char* cost;
  const char* node_cost;
  const char* edge_cost;
  std::size_t forbidden;
  std::int64_t peak_usage;
  std::int64_t peak_time;
  std::optional<std::int64_t> first_over_limit;
};
struct expected_instance {
  const char* letter;
  std::size_t nodes, edges, strategies, edge_costs;
  std::int64_t usage_limit;
  expected_evaluation zero, least_usage;
};
// From `python3 bench/sharding/iopddl_eval.py ../shared/data/iopddl/*.json.gz` (Python's json and
// integers, a difference map for the usage): strategy 0 everywhere, and the first strategy of
// least usage of each node.
const expected_instance instances[] = {
    {"A", 34932, 54801, 213736, 5938641, 472141920,
     {"6916000000020231139720", "5712000000000004208542", "1204000000020226931178", 6916, 2149598636, 16566, 0},
     {"6546000000061623391442", "5736000000000000251116", "810000000061623140326", 6546, 429571388, 16566, std::nullopt}},
    {"B", 816, 1096, 10188, 236126, 14392528,
     {"1000000000657849255", "1000000000000180560", "657668695", 1, 44346928, 215, 99},
     {"35000000001339941579", "21000000000000102580", "14000000001339838999", 35, 13084116, 215, std::nullopt}},
    {"D", 40958, 68635, 360118, 9705329, 26844807168,
     {"4217702623946", "12967711963", "4204734911983", 0, 76759156696, 5216, 19},
     {"3205000011371437412829", "115000000012083210988", "3090000011359354201841", 3205, 24404368392, 5216, std::nullopt}},
    {"G", 816, 1023, 10071, 212622, 14392528,
     {"9000000002307013723", "9000000000000268012", "2306745711", 9, 80075852, 215, 99},
     {"13000000000437641412", "93996", "13000000000437547416", 13, 13084112, 215, std::nullopt}},
    {"K", 34932, 49674, 213864, 2682446, 472141920,
     {"1300000000021718286624", "96000000000002947112", "1204000000021715339512", 1300, 4115519912, 16566, 0},
     {"930000000063170607368", "120000000000000266358", "810000000063170341010", 930, 429430072, 16566, std::nullopt}},
    {"L", 28526, 44512, 259166, 7881921, 300736672,
     {"4134000000007953641446", "3570000000000014032785", "564000000007939608661", 4134, 1169123136, 13352, 0},
     {"4149000000050575791035", "3691000000000012631005", "458000000050563160030", 4149, 273396652, 13352, std::nullopt}},
    {"M", 32894, 47067, 266004, 4796846, 24616128512,
     {"5504860803348", "255299731", "5504605503617", 0, 94764750072, 4187, 12},
     {"2696000008928467754854", "423958", "2696000008928467330896", 2696, 22378296408, 4187, std::nullopt}},
    {"P", 65335, 100547, 182682, 1000666, 179269173248,
     {"2202302096509", "123065545", "2202179030964", 0, 162971972510, 7310, std::nullopt},
     {"693000002202115097665", "102301", "693000002202114995364", 693, 162971972510, 7310, std::nullopt}},
    {"Q", 56833, 91053, 423768, 7934192, 34645164032,
     {"8523927320652", "81050834", "8523846269818", 0, 97219409436, 5407, 1531},
     {"976000004136790967732", "3000000000000513845", "973000004136790453887", 976, 31495601300, 5407, std::nullopt}},
    {"S", 28526, 38826, 247778, 5129531, 300736672,
     {"664000000021762841437", "60000000000016767377", "604000000021746074060", 664, 2192810580, 13352, 0},
     {"534000000053438003476", "60000000000015828179", "474000000053422175297", 534, 273396640, 13352, std::nullopt}},
    {"V", 816, 1023, 23734, 1621857, 14392528,
     {"9000000000774208499", "9000000000000259742", "773948757", 9, 80075852, 215, 99},
     {"42000000002060978388", "21000000000048572321", "21000000002012406067", 42, 13139244, 215, std::nullopt}},
};

void check_evaluation(const sharding::problem& p, const sharding::assignment& a, const expected_evaluation& want) {
  auto e = sharding::evaluate(p, a);
  REQUIRE_MESSAGE(e, e.error().to_string());
  CHECK(e->cost.to_string() == want.cost);
  CHECK(e->node_cost.to_string() == want.node_cost);
  CHECK(e->edge_cost.to_string() == want.edge_cost);
  CHECK(e->forbidden_choices == want.forbidden);
  CHECK(e->peak_usage == sharding::wide_cost(want.peak_usage));
  CHECK(e->peak_time == want.peak_time);
  CHECK(e->first_over_limit == want.first_over_limit);
  CHECK(e->feasible == !want.first_over_limit.has_value());
}
}  // namespace

TEST_CASE("the eleven shared instances read, and evaluate as Python's json computes them") {
  XLAMEM_REQUIRE_SHARED_DATA(dir);
  for (const auto& want : instances) {
    const std::string name = std::string("asplos-2025-iopddl-") + want.letter;
    CAPTURE(name);
    auto r = read_iopddl((dir / "iopddl" / (name + ".json.gz")).string());
    REQUIRE_MESSAGE(r, r.error().to_string());
    const sharding::problem& p = *r;
    CHECK(p.name == name);
    CHECK(p.node_count() == want.nodes);
    CHECK(p.edge_count() == want.edges);
    CHECK(p.costs.size() == want.strategies);
    CHECK(p.usages.size() == want.strategies);
    CHECK(p.edge_costs.size() == want.edge_costs);
    CHECK(p.usage_limit() == want.usage_limit);
    check_evaluation(p, sharding::assignment(p.node_count(), 0), want.zero);
    sharding::assignment least(p.node_count(), 0);
    for (std::size_t i = 0; i < p.node_count(); ++i) {
      for (std::size_t s = 1; s < p.strategy_count(i); ++s) {
        if (p.node_usage(i, s) < p.node_usage(i, least[i])) least[i] = s;
      }
    }
    check_evaluation(p, least, want.least_usage);
  }
}
