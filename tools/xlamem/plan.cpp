// SPDX-License-Identifier: Apache-2.0
// `xlamem plan FILE`: the memory of a compiled program for people. FILE is an optimised HLO
// module (planned here), XLA's own `*-buffer-assignment.txt` (XLA's plan as it is), or an
// `--xla_dump_to` folder (the module named by --module, else the largest). Prints a summary of
// at most about 30 lines; `--dump xla` the allocation table in XLA's format, `--json`
// everything, `--html OUT` an interactive page, `--svg OUT` the whole-memory picture.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "commands.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/report/memory_report_page.hpp"
#include "xlamem/io/report/memory_report_text.hpp"

namespace xlamem::cli {
namespace {

struct plan_options {
  std::string file;
  report_request request;
  std::string dump;
  bool json = false;
  std::string svg;
  std::string html;
  std::size_t top = 10;
};

int run_plan(const plan_options& o) {
  if (!o.dump.empty() && o.dump != "xla") {
    return fail("plan", fmt::format("--dump {}: unknown format (expected xla)", o.dump));
  }
  auto request = o.request;
  request.xla_table = o.dump == "xla";  // only --dump xla prints it: not built for nothing
  request.value_lists = o.json || !o.html.empty();  // the summary, the table and the picture show neither
  auto r = load_report(o.file, request);
  if (!r) return fail("plan", r.error());
  if (!o.svg.empty()) {
    if (auto ok = write_file(o.svg, report_svg(*r)); !ok) return fail("plan", ok.error());
  }
  if (!o.html.empty()) {
    if (auto ok = write_file(o.html, report_page(*r, std::max<std::size_t>(o.top, 20))); !ok) return fail("plan", ok.error());
  }
  if (o.json) {
    fmt::print("{}\n", json_document("plan", *r));
    return 0;
  }
  if (o.dump == "xla") {
    fmt::print("{}", r->xla_table);
    return 0;
  }
  fmt::print("{}", summary_text(*r, o.top));
  if (!o.html.empty()) fmt::print("wrote {} (open it in a browser)\n", o.html);
  if (!o.svg.empty()) fmt::print("wrote {}\n", o.svg);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<plan_options>();
  auto* cmd = app.add_subcommand(
      "plan",
      "The memory of a compiled program: peak, what is live then and where it comes from, the "
      "temporary heap and its fragmentation (--dump xla: XLA's allocation table; --json; --html; --svg)");
  cmd->add_option("FILE", opts->file,
                  "optimised HLO module ('-': standard input), XLA's *-buffer-assignment.txt, or an "
                  "--xla_dump_to folder")
      ->required();
  auto& r = opts->request;
  cmd->add_option("--module", r.module_name, "in a dump folder: the module whose file name contains this");
  cmd->add_flag("--replan", r.replan,
                "in a dump folder: plan the module with xlamem even where XLA's buffer assignment is there");
  cmd->add_option("--backend", r.backend,
                  "whose buffer rules plan a module: cpu (XLA:CPU, the default) or gpu (XLA:GPU on NVIDIA: "
                  "its fusion sharing rules, in-place all-reduce, alignment 256)")
      ->check(backend_check());
  cmd->add_option("--alignment", r.alignment,
                  "alignment of temporaries in bytes: a power of two (default 64 with --backend cpu, 256 with "
                  "gpu; XLA:GPU before mid-2025 used 128)")
      ->check([](const std::string& s) -> std::string {
        std::int64_t a = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), a);
        if (ec != std::errc() || end != s.data() + s.size() || a <= 0 || (a & (a - 1)) != 0) {
          return s + " is not a power of two; allowed: 1, 2, 4, 8, ... bytes (64 is CPU-like, 256 GPU-like)";
        }
        return {};
      });
  cmd->add_option("--solver", r.solver, solver_help());
  cmd->add_option("--time-limit", r.time_limit, "seconds for the search solver per heap (default 1; 0: heuristics only; inf: no limit)");
  cmd->add_option("--dump", opts->dump, "print a table instead of the summary: xla (XLA's buffer-assignment format)");
  cmd->add_flag("--json", opts->json,
                "print everything as JSON: compiled_memory_stats, peak, memory_spaces, temp_heaps, "
                "fragmentation_at_peak, buffers, allocations, live_ranges");
  cmd->add_option("--top", opts->top, "how many buffers live at the peak to list (default 10)");
  cmd->add_option("--html", opts->html, "write an interactive page (one self-contained HTML file) here");
  cmd->add_option("--svg", opts->svg, "write the whole-memory picture (memory over time) here");
  cmd->callback([opts, &ctx] {
    opts->request.cancel = ctx.cancel;
    ctx.exit_code = run_plan(*opts);
  });
}

}  // namespace xlamem::cli
