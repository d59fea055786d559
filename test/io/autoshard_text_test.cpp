// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/autoshard/autoshard_text.hpp on a hand-made answer: the summary line by
// line (fits or not, bound known or not, collectives that ran), names made safe, and the JSON fields.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "xlamem/io/autoshard/autoshard_text.hpp"
#include "xlamem/io/codec/json.hpp"

using namespace xlamem;

namespace {

// Five entry instructions (seven operations) sharded on data=2,model=4: a 3 MiB peak at dot.1,
// two all-gathers and an all-reduce, the bound equal to the cost.
autoshard::module_answer answer() {
  autoshard::module_answer a;
  a.program.entry_ops = 5;
  a.program.program.ops.resize(7);
  auto& r = a.result;
  r.solve.status = solve_status::optimal;
  r.solve.feasible = true;
  r.solve.cost = sharding::wide_cost(2'500'000);
  r.solve.lower_bound = sharding::wide_cost(2'500'000);
  r.solve.gap = 0.0;
  r.solve.seconds = 0.5;
  r.peak_bytes = std::int64_t{3} << 20;
  r.compute_seconds = 0.0015;
  r.communication_seconds = 0.00025;
  r.collectives[static_cast<std::size_t>(sharding::collective_kind::all_gather)] = {2, 0.0002, 1048576};
  r.collectives[static_cast<std::size_t>(sharding::collective_kind::all_reduce)] = {1, 0.00005, 4096};
  a.specs.parameters = {{"x", "P('data', None)"}, {"w", "P(None, 'model')"}};
  a.specs.outputs = {{"y", "P('data', 'model')"}};
  a.peak_instruction = "dot.1";
  a.least_peak = std::int64_t{1} << 20;
  a.largest = {{"w", "f32[1024,1024]", std::int64_t{4} << 20, std::int64_t{1} << 20, "P(None, 'model')"}};
  a.strategies = 42;
  a.edges = 17;
  return a;
}

}  // namespace

TEST_SUITE("io/autoshard_text") {
  TEST_CASE("the summary: sizes, status, the peak against the limit, times, collectives, bound, specs, largest arrays") {
    const auto a = answer();
    const autoshard_report x{"step.hlo", "data=2,model=4", "cpu-host-8", std::int64_t{8} << 20, 2, &a, std::string("out.hlo")};
    CHECK(autoshard_text(x) ==
          "step.hlo: 5 instructions on mesh data=2,model=4 (cpu-host-8), 42 strategies, 17 edges\n"
          "status:        optimal\n"
          "peak:          3.00 MiB per device at 'dot.1', limit 8.00 MiB (fits)\n"
          "time:          compute 1.500 ms, communication 0.250 ms per device (predicted)\n"
          "  all-gather              2 x    1.00 MiB sent  0.200 ms\n"
          "  all-reduce              1 x    4.00 KiB sent  0.050 ms\n"
          "lower bound:   2.500 ms (gap 0.00 %)\n"
          "arguments:\n"
          "  x                        P('data', None)\n"
          "  w                        P(None, 'model')\n"
          "results:\n"
          "  y                        P('data', 'model')\n"
          "largest arrays:\n"
          "  w                        f32[1024,1024]         4.00 MiB ->   1.00 MiB  P(None, 'model')\n"
          "wrote out.hlo\n");
  }

  TEST_CASE("the summary's variants: no limit, over the limit with the floor, an unknown bound, no collectives, no output") {
    auto a = answer();
    a.result.solve.feasible = false;
    a.result.solve.status = solve_status::no_answer;
    a.result.solve.lower_bound.reset();
    a.result.solve.gap.reset();
    a.result.collectives = {};
    const autoshard_report x{"step.hlo", "x=8", "tpu", std::int64_t{2} << 20, 2, &a, std::nullopt};
    const auto text = autoshard_text(x);
    CHECK(text.find("status:        no_answer\n") != std::string::npos);
    CHECK(text.find("peak:          3.00 MiB per device at 'dot.1', limit 2.00 MiB (over the limit)\n"
                    "               no sharding on this mesh holds less than 1.00 MiB per device\n") != std::string::npos);
    CHECK(text.find("per device (predicted)\nlower bound:   unknown\narguments:\n") != std::string::npos);
    CHECK(text.find("sent") == std::string::npos);
    CHECK(text.find("wrote") == std::string::npos);
    autoshard_report unlimited = x;
    unlimited.memory_limit = std::numeric_limits<std::int64_t>::max();
    CHECK(autoshard_text(unlimited).find(", limit none (over the limit)\n") != std::string::npos);
  }

  TEST_CASE("names from the module reach the terminal only escaped, and the JSON escapes them") {
    auto a = answer();
    a.peak_instruction = "evil\x1b]0;x\x07";
    a.specs.parameters[0].name = "p\x1b[2J";
    a.largest[0].spec = "P(\x9b" "31m)";
    const autoshard_report x{"step.hlo", "x=8", "tpu", std::int64_t{8} << 20, 2, &a, std::nullopt};
    const auto text = autoshard_text(x);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\x07') == std::string::npos);
    CHECK(text.find("at 'evil\\x1b]0;x\\x07'") != std::string::npos);
    CHECK(text.find("  p\\x1b[2J") != std::string::npos);
    // Escaped before padding: the spec still starts in column 27, as for a plain name.
    CHECK(text.find("  p\\x1b[2J" + std::string(24 - 8, ' ') + " P") != std::string::npos);
    CHECK(text.find("P(\\x9b31m)") != std::string::npos);
    const auto json = to_json(x);
    CHECK(json.find("\"peak_instruction\":\"evil\\u001b]0;x\\u0007\"") != std::string::npos);
    CHECK(json.find('\x1b') == std::string::npos);
  }

  TEST_CASE("the JSON: every field in order, null for no limit and an unknown bound, instructions only when listed") {
    auto a = answer();
    const autoshard_report x{"step.hlo", "data=2,model=4", "cpu-host-8", std::int64_t{8} << 20, 2, &a, std::string("out.hlo")};
    CHECK(to_json(x) ==
          R"j({"file":"step.hlo","mesh":"data=2,model=4","machine":"cpu-host-8","memory_limit":8388608,"status":"optimal",)j"
          R"j("fits":true,"peak_bytes":3145728,"peak_instruction":"dot.1","least_peak_bytes":1048576,)j"
          R"j("compute_seconds":0.0015,"communication_seconds":0.00025,)j"
          R"j("collectives":[{"kind":"all-gather","count":2,"seconds":0.0002,"bytes_sent":1048576.0},)j"
          R"j({"kind":"all-reduce","count":1,"seconds":5e-05,"bytes_sent":4096.0}],)j"
          R"j("cost_ns":"2500000","lower_bound_ns":"2500000","gap":0.0,)j"
          R"j("parameters":[{"name":"x","spec":"P('data', None)"},{"name":"w","spec":"P(None, 'model')"}],)j"
          R"j("outputs":[{"name":"y","spec":"P('data', 'model')"}],)j"
          R"j("largest":[{"name":"w","shape":"f32[1024,1024]","bytes":4194304,"shard_bytes":1048576,"spec":"P(None, 'model')"}],)j"
          R"j("operations":7,"strategies":42,"edges":17,"seconds":0.5,"time_limit":2.0,"output":"out.hlo"})j");
    a.result.solve.lower_bound.reset();
    a.result.solve.gap.reset();
    a.instructions = {{"dot.1", "P('data', 'model')"}};
    autoshard_report y = x;
    y.memory_limit = std::numeric_limits<std::int64_t>::max();
    y.output = std::nullopt;
    const auto json = to_json(y);
    CHECK(json.find(R"j("memory_limit":null,)j") != std::string::npos);
    CHECK(json.find(R"j("lower_bound_ns":null,"gap":null,)j") != std::string::npos);
    CHECK(json.find(R"j("instructions":[{"name":"dot.1","spec":"P('data', 'model')"}],"operations":7,)j") != std::string::npos);
    CHECK(json.ends_with(R"j("output":null})j"));
  }
}
