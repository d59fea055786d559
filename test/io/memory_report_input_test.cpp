// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/report/memory_report_input.hpp, the front door of the memory report: the
// report of an HLO text, of XLA's dump (text or file with its siblings), of a dump folder, with
// the backend and solver by name; errors name the place.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "support/common.hpp"
#include "xlamem/io/report/memory_report_input.hpp"

TEST_SUITE("io/memory_report_input") {
  using namespace xlamem;
  namespace fs = std::filesystem;

  TEST_CASE("a module, a dump and a folder of one program: XLA's plan and xlamem's XLA-exact plan agree") {
    const fs::path dir = xlamem::test::oracle_data_dir() / "mlp_train_step";
    const std::string stem = (dir / "jit_mlp_train_step.cpu_after_optimizations").string();
    report_request r;
    r.solver = "xla";
    auto mine = read_memory_report(stem + ".txt", r);
    REQUIRE_MESSAGE(mine.has_value(), (mine ? std::string() : mine.error().to_string()));
    CHECK_FALSE(mine->from_xla);
    CHECK(mine->description == "xlamem plan (solver xla, alignment 64)");
    CHECK(mine->xla_table.find("allocation 0:") != std::string::npos);
    // Asked not to, the plan's table is not written; the rest of the report is the same.
    report_request no_table = r;
    no_table.xla_table = false;
    auto lean = read_memory_report(stem + ".txt", no_table);
    REQUIRE(lean.has_value());
    CHECK(lean->xla_table.empty());
    CHECK(lean->peak.bytes == mine->peak.bytes);
    CHECK(lean->timeline.buffers.size() == mine->timeline.buffers.size());
    auto xla = read_memory_report(stem + "-buffer-assignment.txt", r);
    REQUIRE(xla.has_value());
    CHECK(xla->from_xla);
    CHECK(xla->module == "jit_mlp_train_step.cpu_after_optimizations");
    CHECK(xla->description == "XLA's buffer assignment (as XLA planned it, no replanning)");
    CHECK(xla->xla_table.rfind("BufferAssignment:", 0) == 0);
    CHECK(xla->peak.bytes == mine->peak.bytes);
    CHECK(xla->stats.temp_size_in_bytes == mine->stats.temp_size_in_bytes);
    CHECK(xla->stats.peak_memory_in_bytes == xla->peak.bytes);
    CHECK_FALSE(xla->live_ranges.empty());
    REQUIRE(xla->heaps.size() == 1);
    CHECK(xla->heaps.front().solver == "xla");
    bool sourced = false;  // the module beside the dump gives the sources
    for (const auto& b : xla->timeline.buffers) sourced = sourced || !b.source.empty();
    CHECK(sourced);
    auto folder = read_memory_report(dir.string(), r);
    REQUIRE(folder.has_value());
    CHECK(folder->from_xla);
    report_request replan = r;
    replan.replan = true;
    auto planned = read_memory_report(dir.string(), replan);
    REQUIRE(planned.has_value());
    CHECK_FALSE(planned->from_xla);
    CHECK(planned->peak.bytes == xla->peak.bytes);
  }

  TEST_CASE("text: XLA's dump is told by its first line, anything else is a module") {
    report_request r;
    auto m = report_from_text("HloModule m, is_scheduled=true\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n", "<stdin>", r);
    REQUIRE(m.has_value());
    CHECK(m->file == "<stdin>");
    CHECK(m->description == "xlamem plan (solver search, alignment 64)");
    CHECK(m->stats.argument_size_in_bytes == 16);
    const auto dump = xlamem::test::read_text(xlamem::test::oracle_data_dir() / "while_dus" /
                                              "jit_while_dus.cpu_after_optimizations-buffer-assignment.txt");
    auto x = report_from_text(dump, "<stdin>", r);
    REQUIRE(x.has_value());
    CHECK(x->from_xla);
  }

  TEST_CASE("errors name the request, the file and the place") {
    report_request r;
    r.solver = "nope";
    auto s = plan_report("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n", "m.hlo", r);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message().find("unknown solver 'nope'") == 0);
    r.solver = "search";
    r.backend = "tpu";
    CHECK(plan_report("garbage", "m.hlo", r).error().message().find("unknown backend 'tpu'") == 0);
    r.backend = "cpu";
    CHECK(plan_report("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} nonsense(0)\n}\n", "m.hlo", r)
              .error().message().find("m.hlo:3:") == 0);
    CHECK(read_memory_report("/nonexistent/x.hlo", r).error().message().find("/nonexistent/x.hlo") == 0);
    report_request named = r;
    named.module_name = "no_such_module";
    auto folder = read_memory_report((xlamem::test::oracle_data_dir() / "while_dus").string(), named);
    REQUIRE_FALSE(folder.has_value());
    CHECK(folder.error().message().find("no module named like 'no_such_module' (modules: jit_while_dus") != std::string::npos);
    const auto empty = fs::temp_directory_path() / "xlamem-empty-dump-folder";
    fs::create_directories(empty);
    CHECK(read_memory_report(empty.string(), r).error().message().find("is it an --xla_dump_to folder?") != std::string::npos);
  }
}
