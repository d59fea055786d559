// SPDX-License-Identifier: Apache-2.0
// Issue 21 regression tests: every input that crashed, gave a silent wrong answer or used
// unbounded time or memory now gets a clear error naming the file and place, or the right
// answer. One test per finding; the fuzz harnesses in fuzz/ keep looking for new ones.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "hlo_generators.hpp"
#include "xlamem/checked.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/buffer_assignment_dump.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/interval_csv.hpp"
#include "xlamem/io/memory_terms_csv.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/dataflow.hpp"

namespace {

using namespace xlamem;
namespace fs = std::filesystem;

std::string module_with(std::string_view entry_body) {
  return "HloModule m\n\nENTRY e {\n" + std::string(entry_body) + "}\n";
}

std::string parse_error(std::string_view text, std::string_view name = "t.hlo") {
  auto m = hlo::parse_module(text, name);
  REQUIRE_MESSAGE(!m.has_value(), "expected a parse error");
  CHECK(m.error().code() == errc::parse_error);
  return m.error().message();
}

fs::path temp_file(const std::string& name, std::string_view text) {
  const auto p = fs::temp_directory_path() / ("xlamem-reliability-" + name);
  std::ofstream(p, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  return p;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

TEST_SUITE("reliability/checked") {
  TEST_CASE("checked_add and checked_mul refuse what does not fit, signed and unsigned") {
    CHECK(checked_add<std::uint64_t>(UINT64_MAX - 1, 1) == UINT64_MAX);
    CHECK(!checked_add<std::uint64_t>(UINT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MAX, 1));
    CHECK(!checked_add<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_add<std::int64_t>(INT64_MIN, INT64_MAX) == -1);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 62, 4) == std::nullopt);
    CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 31, std::uint64_t{1} << 32) == std::uint64_t{1} << 63);
    CHECK(checked_mul<std::int64_t>(INT64_MIN, 1) == INT64_MIN);
    CHECK(!checked_mul<std::int64_t>(INT64_MIN, -1));
    CHECK(checked_mul<std::int64_t>(-3, 4) == -12);
    std::uint64_t total = 0;
    CHECK(checked_accumulate(total, max_total_bytes, max_total_bytes));
    CHECK(!checked_accumulate(total, std::uint64_t{1}, max_total_bytes));
    CHECK(total == max_total_bytes);
  }

  TEST_CASE("quote_token keeps a bounded prefix of a token") {
    CHECK(quote_token("abc") == "'abc'");
    const std::string big(5'000'000, 'x');
    const auto q = quote_token(big);
    CHECK(q.size() < max_quoted_chars + 8);
    CHECK(contains(q, "\xE2\x80\xA6"));
    CHECK(quote_token("a\nb\x01") == "'a\\nb?'");
  }
}

TEST_SUITE("reliability/hlo") {
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
    o.solver = solver_kind::xla;
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

TEST_SUITE("reliability/input") {
  TEST_CASE("readers take only regular files, within the size limit") {
    const std::string dir = fs::temp_directory_path().string();
    auto r = read_input_file(dir);
    REQUIRE(!r);
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(contains(r.error().message(), dir + ": is a directory"));
    if (fs::exists("/dev/zero")) {
      r = read_input_file("/dev/zero");
      REQUIRE(!r);
      CHECK(contains(r.error().message(), "/dev/zero: is not a regular file"));
      CHECK(!hlo::read_module_file("/dev/zero"));
      CHECK(!read_interval_csv_file("/dev/zero"));
      CHECK(!read_memory_terms_csv_file("/dev/zero"));
      CHECK(!read_buffer_assignment_dump("/dev/zero"));
    }
    r = read_input_file(dir + "/xlamem-no-such-file");
    REQUIRE(!r);
    CHECK(r.error().code() == errc::not_found);
    const auto f = temp_file("limit.txt", std::string(100, 'a'));
    r = read_input_file(f.string(), input_limits{99});
    REQUIRE(!r);
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(contains(r.error().message(), "larger than the limit of 99 bytes"));
    r = read_input_file(f.string(), input_limits{100});
    REQUIRE(r.has_value());
    CHECK(r->size() == 100);
    auto m = hlo::read_module_file(dir);
    REQUIRE(!m);
    CHECK(contains(m.error().message(), "is a directory"));
    fs::remove(f);
  }
}

TEST_SUITE("reliability/interval_csv") {
  TEST_CASE("a UTF-8 byte-order mark is skipped; duplicate ids are refused with the line") {
    auto r = read_interval_csv("\xEF\xBB\xBFid,lower,upper,size\na,0,2,8\nb,1,3,8\n", "bom.csv");
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    CHECK(r->problem.buffers.size() == 2);
    auto d = read_interval_csv("id,lower,upper,size\na,0,2,8\nb,1,3,8\na,2,4,8\n", "dup.csv");
    REQUIRE(!d);
    CHECK(contains(d.error().message(), "dup.csv:4:1: duplicate id 'a' (first given on line 2)"));
  }

  TEST_CASE("sizes summing above 2^60 are refused (pack used to end in an internal error)") {
    std::string text = "id,lower,upper,size\n";
    for (int k = 0; k < 16; ++k) text += std::to_string(k) + ",0,2,1152921504606846976\n";
    auto r = read_interval_csv(text, "big.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "big.csv:2:"));  // the first alone plus its alignment
    CHECK(contains(r.error().message(), "2^60"));
    auto ok = read_interval_csv("id,lower,upper,size\n0,0,2,576460752303423487\n1,0,2,576460752303423487\n", "ok.csv");
    REQUIRE_MESSAGE(ok.has_value(), ok.error().to_string());
  }

  TEST_CASE("a line never holds more fields than the header names, and quoted tokens are bounded") {
    auto r = read_interval_csv("id,lower,upper,size\n0,0,2,8" + std::string(100000, ',') + "\n", "wide.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "wide.csv:2:"));
    CHECK(r.error().message().size() < 200);
    r = read_interval_csv("id,lower,upper,size\n0,0,2," + std::string(1000000, '9') + "\n", "long.csv");
    REQUIRE(!r);
    CHECK(r.error().message().size() < 200);
  }
}

TEST_SUITE("reliability/memory_terms_csv") {
  TEST_CASE("ids are mapped densely: a huge id costs nothing and is reported as a missing id") {
    auto r = read_memory_terms_csv("id,first,last\n100000000,0,1\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv: ids must be 0..0 with none missing; id 0 is missing"));
    auto ok = read_memory_terms_csv("# any order\n2,5,5\n0,0,3\n1,2,9\n", "t.csv");
    REQUIRE(ok.has_value());
    REQUIRE(ok->size() == 3);
    CHECK((*ok)[0].first == 0);
    CHECK((*ok)[1].last == 9);
    CHECK((*ok)[2].first == 5);
  }

  TEST_CASE("numbers are range-checked so that last + 1 cannot overflow") {
    auto r = read_memory_terms_csv("id,first,last\n0,0,9223372036854775807\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:2:5: last '9223372036854775807' is out of range (limit 2^60)"));
    r = read_memory_terms_csv("0,0,99999999999999999999\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "out of range"));
    r = read_memory_terms_csv("0,-5,3\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "starts before time 0"));
    r = read_memory_terms_csv("0,0,3\n0,1,2\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:2:1: id 0 repeats line 1"));
    r = read_memory_terms_csv("0,0\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "t.csv:1:"));
    r = read_memory_terms_csv("0,0,1,2\n", "t.csv");
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "found more"));
  }

  TEST_CASE("a file with no rows, a directory or /dev/zero is refused") {
    const auto empty = temp_file("empty.csv", "id,first,last\n");
    auto r = read_memory_terms_csv_file(empty.string());
    REQUIRE(!r);
    CHECK(contains(r.error().message(), "no primitives"));
    fs::remove(empty);
    CHECK(!read_memory_terms_csv_file(fs::temp_directory_path().string()));
  }
}

TEST_SUITE("reliability/dataflow") {
  TEST_CASE("a call chain of 2x10^4 computations propagates down and back up, and plans (no recursion)") {
    constexpr std::size_t depth = 20000;
    auto m = hlo::parse_module(test::call_chain_module(depth), "chain.hlo");
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    auto a = dataflow_analysis<hlo::module>::run(*m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    // Values: the entry parameter, one negate per computation, the last one's copy.
    CHECK(a->values().size() == depth + 2);
    const auto entry_root = (*m)[m->entry].root;
    const auto last = *m->find_instruction("c" + std::to_string(depth), "r");
    const auto& set = a->value_set(entry_root, {});
    REQUIRE(set.size() == 1);
    CHECK(a->get(set[0]).defining.instruction == last);
    // The deepest parameter holds the entry's parameter, passed down through every level.
    const auto deep_param = *m->find_instruction("c" + std::to_string(depth), "p");
    const auto entry_param = (*m)[m->entry].parameters[0];
    REQUIRE(a->value_set(deep_param, {}).size() == 1);
    CHECK(a->get(a->value_set(deep_param, {})[0]).defining.instruction == entry_param);
    buffer_assignment_options o;
    o.solver = solver_kind::xla;
    auto plan = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().to_string());
    CHECK(plan->validate(*m).has_value());
  }
}
