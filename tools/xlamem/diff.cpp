// SPDX-License-Identifier: Apache-2.0
// `xlamem diff A B`: two compilations of one program (before and after a code change, a flag,
// an upgrade). Each side is anything `plan` reads (module, XLA's buffer-assignment dump, dump
// folder). Prints the delta of every statistic and of the peak, and the buffers behind it,
// matched by name, op_name and shape (report/diff.hpp), with their sources.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/report/diff.hpp"

namespace xlamem::cli {
namespace {

struct diff_options {
  std::string before, after;
  report_request request = [] {
    report_request r;
    r.solver = "xla";  // deterministic, so identical modules give identical plans
    r.xla_table = false;  // a diff never prints it
    return r;
  }();
  bool json = false;
  std::size_t top = 12;
};

int run_diff(const diff_options& o) {
  if (o.before == "-" && o.after == "-") return fail("diff", "only one of A and B can be '-' (standard input)");
  auto a = load_report(o.before, o.request);
  if (!a) return fail("diff", a.error());
  auto b = load_report(o.after, o.request);
  if (!b) return fail("diff", b.error());
  const auto d = report::diff(*a, *b);
  fmt::print("{}", o.json ? json_document("diff", d) + "\n" : diff_text(d, o.top));
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<diff_options>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare the memory of two compilations of one program: the delta of every statistic and of the "
      "peak, and the buffers behind it (matched by name, op_name and shape) with their sources");
  cmd->add_option("A", opts->before, "the first compilation: module, *-buffer-assignment.txt, dump folder or '-'")
      ->required();
  cmd->add_option("B", opts->after, "the second compilation, read the same way")->required();
  auto& r = opts->request;
  cmd->add_option("--module", r.module_name, "in dump folders: the module whose file name contains this");
  cmd->add_flag("--replan", r.replan, "in dump folders: plan the modules rather than read XLA's plan");
  cmd->add_option("--solver", r.solver,
                  solver_help() + ". Default here: xla (deterministic, so identical modules give identical plans)");
  cmd->add_option("--time-limit", r.time_limit, "seconds for the search solver per heap (default 1; 0: heuristics only; inf: no limit)");
  cmd->add_option("--backend", r.backend, "whose buffer rules plan the modules: cpu (default) or gpu")
      ->check(backend_check());
  cmd->add_option("--top", opts->top, "how many changed buffers to list (default 12)");
  cmd->add_flag("--json", opts->json, "print one JSON object: stats, peak, changed, added, removed");
  cmd->callback([opts, &ctx] {
    opts->request.cancel = ctx.cancel;
    ctx.exit_code = run_diff(*opts);
  });
}

}  // namespace xlamem::cli
