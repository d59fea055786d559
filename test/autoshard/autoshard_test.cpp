// SPDX-License-Identifier: Apache-2.0
// Tests for autoshard/autoshard.hpp, io/autoshard/autoshard_text.hpp and `parse_byte_size`: the bundled
// training step sharded on 2x4 under limits from loose to impossible (the least peak any
// sharding reaches is a floor no answer goes below, and an answer exists exactly above it); the
// peak's instruction, the largest arrays, the write-back; the summary and JSON, with names from
// the module made safe; sizes as people write them.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "xlamem/autoshard/autoshard.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/autoshard/autoshard_text.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/codec/text_format.hpp"

using namespace xlamem;
using namespace xlamem::sharding;

namespace {

hlo::module training_step() {
  auto m = hlo::read_module_file(std::string(XLAMEM_TEST_SOURCE_DIR) + "/../examples/autoshard/mlp_train_step.hlo");
  REQUIRE_MESSAGE(m, m.error().to_string());
  return std::move(*m);
}

autoshard::module_answer shard(hlo::module& m, std::int64_t limit, bool write_back = false) {
  auto mesh = parse_mesh("2x4");
  REQUIRE(mesh);
  auto machine = machine_for("cpu-host-8", *mesh);
  REQUIRE(machine);
  autoshard::module_options o;
  o.shard.memory_limit = limit;
  o.shard.solve.time_limit = 2;
  o.shard.solve.threads = 1;
  auto a = autoshard::auto_shard_module(m, *mesh, *machine, o, write_back);
  REQUIRE_MESSAGE(a, a.error().to_string());
  return std::move(*a);
}

}  // namespace

TEST_SUITE("autoshard/autoshard") {
  TEST_CASE("the training step under limits from loose to impossible") {
    auto m = training_step();
    const auto loose = shard(m, std::numeric_limits<std::int64_t>::max());
    CHECK(loose.result.solve.feasible);
    CHECK(loose.least_peak > 0);
    CHECK(loose.least_peak <= loose.result.peak_bytes);
    CHECK(loose.program.entry_ops == 39);
    // Weights of 16 MiB each: 64 MiB of weights and updates; on 8 devices at least 8 MiB.
    CHECK(loose.least_peak >= (64 << 20) / 8);
    for (const std::int64_t limit : {std::int64_t{40} << 20, std::int64_t{20} << 20}) {
      CAPTURE(limit);
      const auto a = shard(m, limit);
      CHECK(a.result.solve.feasible);
      CHECK(a.result.peak_bytes <= limit);
      CHECK(a.result.peak_bytes >= a.least_peak);
    }
    const auto impossible = shard(m, loose.least_peak - 1);
    CHECK_FALSE(impossible.result.solve.feasible);
    CHECK_FALSE(has_answer(impossible.result.solve.status));
    CHECK(impossible.result.peak_bytes >= impossible.least_peak);  // a bound no answer goes below
  }

  TEST_CASE("the peak's instruction, the largest arrays and the write-back") {
    auto m = training_step();
    const auto a = shard(m, std::int64_t{20} << 20, true);
    CHECK_FALSE(a.peak_instruction.empty());
    REQUIRE(a.largest.size() == 8);
    CHECK(a.largest[0].bytes == 16 << 20);
    for (std::size_t i = 1; i < a.largest.size(); ++i) CHECK(a.largest[i].bytes <= a.largest[i - 1].bytes);
    CHECK(a.largest[0].shape == "f32[1024,4096]");
    REQUIRE(a.specs.parameters.size() == 4);
    CHECK(a.specs.outputs.size() == 3);
    std::size_t annotated = 0;
    for (const auto id : m[m.entry].instructions) annotated += m[id].find_attribute("sharding").has_value();
    CHECK(annotated == 38);  // every array instruction; the root tuple has none
  }

  TEST_CASE("the summary and the JSON; names from the module are made safe") {
    auto m = training_step();
    auto a = shard(m, std::int64_t{20} << 20);
    a.specs.parameters[0].name = "evil\x1b[31m";
    autoshard_report r{"step.hlo", "x=2,y=4", "cpu-host-8", std::int64_t{20} << 20, 2, &a, std::nullopt};
    const std::string text = autoshard_text(r);
    CHECK(text.find("step.hlo: 39 instructions on mesh x=2,y=4 (cpu-host-8)") == 0);
    CHECK(text.find("limit 20.0 MiB (fits)") != std::string::npos);
    CHECK(text.find('\x1b') == std::string::npos);
    const std::string json = json_document("autoshard", r);
    CHECK(json.find("\"peak_instruction\"") != std::string::npos);
    CHECK(json.find("\"memory_limit\": 20971520") != std::string::npos);
    CHECK(json.find("\\u001b") != std::string::npos);
    r.memory_limit = std::numeric_limits<std::int64_t>::max();
    CHECK(autoshard_text(r).find("limit none") != std::string::npos);
    CHECK(json_document("autoshard", r).find("\"memory_limit\": null") != std::string::npos);
  }

  TEST_CASE("parse_byte_size reads sizes as people write them") {
    CHECK(parse_byte_size("16GiB") == std::int64_t{16} << 30);
    CHECK(parse_byte_size(" 1.5 MiB ") == std::int64_t{3} << 19);
    CHECK(parse_byte_size("8GB") == std::int64_t{8000000000});
    CHECK(parse_byte_size("512kib") == std::int64_t{512} << 10);
    CHECK(parse_byte_size("1000000") == 1000000);
    CHECK(parse_byte_size("7 B") == 7);
    CHECK_FALSE(parse_byte_size(""));
    CHECK_FALSE(parse_byte_size("GiB"));
    CHECK_FALSE(parse_byte_size("-1GiB"));
    CHECK_FALSE(parse_byte_size("12 parsecs"));
    CHECK_FALSE(parse_byte_size("1e30"));
    CHECK_FALSE(parse_byte_size("9000000TiB"));
  }
}
