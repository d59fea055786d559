// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/dump_report.hpp.
#include <doctest/doctest.h>

#include "support/report_helpers.hpp"

TEST_SUITE("io/dump_report") {
  using namespace xlamem::test::report_helpers;

  TEST_CASE("the timeline of XLA's own dump equals that of xlamem's XLA-exact plan, step by step") {
    // `--solver xla` reproduces XLA's buffer assignment byte for byte on the corpus
    // (docs/xla-fidelity.md), so reading XLA's dump must give the same memory at every step.
    // (XLA:CPU's own peak_memory_in_bytes is argument + output - alias + constant, not a peak.)
    const fs::path dir = fs::path(XLAMEM_TEST_SOURCE_DIR) / "data" / "xla-oracle";
    int checked = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(e.path())) {
        const auto name = f.path().filename().string();
        constexpr std::string_view suffix = ".cpu_after_optimizations-buffer-assignment.txt";
        if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
        INFO(name);
        auto d = xlamem::read_buffer_assignment_dump(f.path());
        REQUIRE(d);
        const auto t = timeline_of(*d);
        CHECK(t.allocations.size() == d->allocations.size());
        const auto module = f.path().string().substr(0, f.path().string().size() - std::string_view("-buffer-assignment.txt").size()) + ".txt";
        auto m = xlamem::hlo::read_module_file(module);
        REQUIRE(m);
        xlamem::buffer_assignment_options o;
        o.solver = *xlamem::find_solver("xla");
        auto a = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, o);
        REQUIRE(a);
        // XLA's plan read from its dump and xlamem's XLA-exact plan: the same bytes in use at
        // every step, by kind.
        const auto mine = timeline_of(*m, *a);
        CHECK(t.horizon() == mine.horizon());
        CHECK(usage_over_time(t) == usage_over_time(mine));
        CHECK(find_peak(t).bytes == find_peak(mine).bytes);
        CHECK(find_peak(t).time == find_peak(mine).time);
        ++checked;
      }
    }
    CHECK(checked == 15);
    // Sources come from the metadata of "Used values".
    auto d = xlamem::read_buffer_assignment_dump(dir / "mlp_train_step" /
                                                 "jit_mlp_train_step.cpu_after_optimizations-buffer-assignment.txt");
    REQUIRE(d);
    bool any_source = false;
    for (const auto& b : timeline_of(*d).buffers) any_source = any_source || !b.source.op_name.empty();
    CHECK(any_source);
  }
}
