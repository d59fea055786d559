// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/buffer_assignment_fidelity.hpp.
#include <doctest/doctest.h>

#include "support/planning_helpers.hpp"

TEST_SUITE("planning/fidelity") {
  using namespace xlamem::test::planning_helpers;

  TEST_CASE("the XLA oracle corpus: bytes, every allocation, live ranges and temp equal XLA's") {
    const fs::path root = oracle_dir();
    REQUIRE_MESSAGE(!root.empty(), "test/data/xla-oracle not found (set XLAMEM_ORACLE_DATA to its location)");
    int programs = 0, temp_exact = 0;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      const auto hlo = entry.path() / ("jit_" + name + ".cpu_after_optimizations.txt");
      if (!fs::is_regular_file(hlo)) continue;
      const auto xla = read_flat_json(entry.path() / "memory_analysis.json");
      const module m = read(hlo);
      buffer_assignment_options xo;
      xo.solver = *xlamem::find_solver("xla");
      const auto x = plan(m, xo);
      const auto d = plan(m);
      CHECK(x.stats().argument_size_in_bytes == xla.at("argument_size_in_bytes"));
      CHECK(x.stats().output_size_in_bytes == xla.at("output_size_in_bytes"));
      CHECK(x.stats().alias_size_in_bytes == xla.at("alias_size_in_bytes"));
      CHECK(x.stats().host_argument_size_in_bytes == xla.at("host_argument_size_in_bytes"));
      CHECK(x.stats().host_output_size_in_bytes == xla.at("host_output_size_in_bytes"));
      CHECK(d.stats().temp_size_in_bytes <= x.stats().temp_size_in_bytes);
      CHECK(d.stats().temp_size_in_bytes <= xla.at("temp_size_in_bytes"));
      // Every value's live range equals XLA's HloLiveRange (the dump's order is XLA's hash
      // order, so the lines are compared as sets).
      CHECK(buffer_live_ranges(xlamem::live_range_text(m, x.liveness())) ==
            buffer_live_ranges(slurp(entry.path() / ("jit_" + name + ".cpu_after_optimizations-live-range.txt"))));
      // As many allocations as XLA made (parameters, outputs, constants, thread-local, temp).
      std::size_t xla_allocations = 0;
      {
        std::istringstream dump(slurp(entry.path() / ("jit_" + name + ".cpu_after_optimizations-buffer-assignment.txt")));
        for (std::string line; std::getline(dump, line);) xla_allocations += line.rfind("allocation ", 0) == 0 ? 1 : 0;
      }
      CHECK(x.allocations().size() == xla_allocations);
      // Every allocation other than the temporary one holds the same values as XLA's, with
      // the same size and kind (allocation numbers differ, so they are compared as sets).
      const auto dump = xlamem::read_buffer_assignment_dump(
          entry.path() / ("jit_" + name + ".cpu_after_optimizations-buffer-assignment.txt"));
      REQUIRE(dump.has_value());
      CHECK(non_temp_allocations(*dump) == non_temp_allocations(m, x));
      // And every value of the temporary allocation sits at XLA's offset.
      CHECK(temp_values(*dump) == temp_values(m, x));
      CHECK(x.stats().temp_size_in_bytes == xla.at("temp_size_in_bytes"));
      if (x.stats().temp_size_in_bytes == xla.at("temp_size_in_bytes")) ++temp_exact;
      ++programs;
    }
    MESSAGE("oracle programs: " << programs << ", temp equal to XLA's with XLA best fit: " << temp_exact);
    CHECK(programs >= 15);
  }
}
