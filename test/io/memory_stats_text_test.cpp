// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/xla/memory_stats_text.hpp: XLA's `CompiledMemoryStats::DebugString()`
// and the JSON object under JAX's attribute names.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "xlamem/io/xla/memory_stats_text.hpp"
#include "xlamem/passes/memory_stats.hpp"

TEST_SUITE("io/memory_stats_text") {
  using xlamem::compiled_memory_stats;

  TEST_CASE("all zero: the ten fields of DebugString, the twelve of the JSON, in order") {
    const compiled_memory_stats s;
    CHECK(xlamem::memory_stats_text(s) ==
          "CompiledMemoryStats(generated_code_size_in_bytes=0, argument_size_in_bytes=0, output_size_in_bytes=0, "
          "alias_size_in_bytes=0, temp_size_in_bytes=0, host_generated_code_size_in_bytes=0, "
          "host_argument_size_in_bytes=0, host_output_size_in_bytes=0, host_alias_size_in_bytes=0, "
          "host_temp_size_in_bytes=0)");
    CHECK(xlamem::memory_stats_json(s) ==
          "{\"generated_code_size_in_bytes\": 0, \"argument_size_in_bytes\": 0, \"output_size_in_bytes\": 0, "
          "\"alias_size_in_bytes\": 0, \"temp_size_in_bytes\": 0, \"host_generated_code_size_in_bytes\": 0, "
          "\"host_argument_size_in_bytes\": 0, \"host_output_size_in_bytes\": 0, \"host_alias_size_in_bytes\": 0, "
          "\"host_temp_size_in_bytes\": 0, \"peak_memory_in_bytes\": 0, \"total_allocation_bytes\": 0}");
  }

  TEST_CASE("values of every size and sign as written, each under its own name; the peak only in the JSON") {
    compiled_memory_stats s;
    s.argument_size_in_bytes = INT64_MAX;
    s.temp_size_in_bytes = -1;
    s.host_temp_size_in_bytes = 1234567890123;
    s.peak_memory_in_bytes = 42;
    s.total_allocation_bytes = 7;
    const auto text = xlamem::memory_stats_text(s);
    CHECK(text.find("argument_size_in_bytes=9223372036854775807, ") != std::string::npos);
    CHECK(text.find(" temp_size_in_bytes=-1, ") != std::string::npos);
    CHECK(text.find("host_temp_size_in_bytes=1234567890123)") != std::string::npos);
    CHECK(text.find("peak") == std::string::npos);  // XLA's DebugString has no peak
    CHECK(text.find("total_allocation") == std::string::npos);
    const auto json = xlamem::memory_stats_json(s);
    CHECK(json.find("\"argument_size_in_bytes\": 9223372036854775807, ") != std::string::npos);
    CHECK(json.find("\"host_temp_size_in_bytes\": 1234567890123, \"peak_memory_in_bytes\": 42, \"total_allocation_bytes\": 7}") !=
          std::string::npos);
    CHECK(json.front() == '{');
    CHECK(json.back() == '}');
  }
}
