// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/memory_stats.hpp.
#include <doctest/doctest.h>

#include "support/planning_helpers.hpp"

TEST_SUITE("planning/memory_stats") {
  using namespace xlamem::test::planning_helpers;

  TEST_CASE("DebugString has XLA's ten fields in XLA's order") {
    compiled_memory_stats s;
    s.generated_code_size_in_bytes = 2;
    s.argument_size_in_bytes = 3;
    s.output_size_in_bytes = 5;
    s.alias_size_in_bytes = 7;
    s.temp_size_in_bytes = 11;
    s.host_generated_code_size_in_bytes = 13;
    s.host_argument_size_in_bytes = 17;
    s.host_output_size_in_bytes = 19;
    s.host_alias_size_in_bytes = 23;
    s.host_temp_size_in_bytes = 29;
    s.peak_memory_in_bytes = 31;
    s.total_allocation_bytes = 37;
    CHECK(xlamem::memory_stats_text(s) ==
          "CompiledMemoryStats(generated_code_size_in_bytes=2, argument_size_in_bytes=3, output_size_in_bytes=5, "
          "alias_size_in_bytes=7, temp_size_in_bytes=11, host_generated_code_size_in_bytes=13, "
          "host_argument_size_in_bytes=17, host_output_size_in_bytes=19, host_alias_size_in_bytes=23, "
          "host_temp_size_in_bytes=29)");
    CHECK(xlamem::memory_stats_json(s) ==
          "{\"generated_code_size_in_bytes\": 2, \"argument_size_in_bytes\": 3, \"output_size_in_bytes\": 5, "
          "\"alias_size_in_bytes\": 7, \"temp_size_in_bytes\": 11, \"host_generated_code_size_in_bytes\": 13, "
          "\"host_argument_size_in_bytes\": 17, \"host_output_size_in_bytes\": 19, \"host_alias_size_in_bytes\": 23, "
          "\"host_temp_size_in_bytes\": 29, \"peak_memory_in_bytes\": 31, \"total_allocation_bytes\": 37}");
    CHECK(s.device_footprint() == 2 + 3 + 5 - 7 + 11);
  }

  TEST_CASE("PopulateBufferStatsFromAllocations: classes, host, constants and thread-local nowhere") {
    using xlamem::allocation_flags;
    std::vector<allocation_flags> a(7);
    a[0].size = 100, a[0].is_entry_parameter = true;
    a[1].size = 40, a[1].is_entry_parameter = true, a[1].is_parameter_aliased_with_output = true, a[1].maybe_live_out = true;
    a[2].size = 8, a[2].maybe_live_out = true;
    a[3].size = 1000;  // temp
    a[4].size = 4, a[4].is_constant = true;
    a[5].size = 4, a[5].is_thread_local = true;
    a[6].size = 64, a[6].color = xlamem::host_memory_space, a[6].is_entry_parameter = true;
    const auto s = xlamem::stats_from_allocations(a);
    CHECK(s.argument_size_in_bytes == 140);
    CHECK(s.alias_size_in_bytes == 40);
    CHECK(s.output_size_in_bytes == 48);
    CHECK(s.temp_size_in_bytes == 1000);
    CHECK(s.host_argument_size_in_bytes == 64);
    CHECK(s.host_temp_size_in_bytes == 0);
    CHECK(s.total_allocation_bytes == 100 + 40 + 8 + 1000 + 4);  // the thread-local 4 B not
  }
}

