// SPDX-License-Identifier: Apache-2.0
// `xlamem pack FILE.csv`: static buffer packing of a MiniMalloc-format CSV with a solver of
// the library's table (packing/solvers.hpp). Prints a short report whose last line is
// `peak=<bytes> lower_bound=<bytes> optimal=<yes|no> seconds=<s> status=<status>`, or one JSON
// object with `--json`. `--time-limit` is wall-clock from the start of the command, reading
// included. Exit status: 0 placement found (status optimal, feasible or time_limit), 1 capacity
// proven infeasible, 2 no placement by the time limit (no_answer), 3 bad input.
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/packing/packing_report.hpp"

namespace xlamem::cli {
namespace {

struct pack_options {
  std::string file;
  std::string solver = std::string(packing_solvers.front().name);
  solve_options solve;
  std::string output;
  std::string svg;
  bool json = false;
};

int run_pack(const pack_options& o, const cancellation_flag* cancel) {
  const auto start = solve_clock::now();
  const auto solver = parse_solver(o.solver);
  if (!solver) return fail("pack", solver.error());
  if (auto problem = time_limit_problem(o.solve.time_limit)) return fail("pack", *problem);
  if (o.solve.capacity < -1) return fail("pack", fmt::format("--capacity {} is negative; give 0 or more bytes", o.solve.capacity));
  const std::string name = display_name(o.file);
  auto text = read_input(o.file);
  if (!text) return fail("pack", text.error());
  auto read = read_interval_csv(*text, name);
  if (!read) return fail("pack", read.error());
  solve_options options = o.solve;
  options.started = start;  // the reading counts, in the limit and the seconds reported
  options.deadline.cancel = cancel;
  auto result = solve(read->problem, *solver, options);
  if (!result) {
    const bool internal = result.error().code() == errc::internal;
    return fail("pack", (internal ? "internal error: " : name + ": ") + result.error().message());
  }
  // A bound that contradicted a placement: the output shows the simple bound; a build with
  // assertions stops here, so that the tests cannot miss it.
  if (!result->internal_error.empty()) fmt::print(stderr, "xlamem pack: internal error: {}\n", result->internal_error);
  assert(result->internal_error.empty());
  const packing_report report{name, &read->problem, solver->name, o.solve, std::move(*result)};
  const bool placed = report.result.placed();
  if (placed && !o.output.empty()) {
    if (auto ok = write_interval_csv_file(o.output, read->problem, &report.result.placement); !ok) return fail("pack", ok.error());
  }
  if (placed && !o.svg.empty()) {
    if (auto ok = write_svg_file(o.svg, packing_svg(report)); !ok) return fail("pack", ok.error());
  }
  if (o.json) {
    fmt::print("{}\n", json_document("pack", report));
  } else {
    fmt::print("{}", packing_text(report));
    if (placed && !o.output.empty()) fmt::print("  wrote {}\n", o.output);
    if (placed && !o.svg.empty()) fmt::print("  wrote {}\n", o.svg);
    fmt::print("{}", packing_result_line(report.result));
  }
  if (placed) return 0;
  return report.result.status == solve_status::infeasible ? 1 : 2;
}

}  // namespace

void add_pack_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<pack_options>();
  auto* cmd = app.add_subcommand(
      "pack", "Pack buffers with live intervals into the least memory (MiniMalloc CSV: id,lower,upper,size)");
  cmd->add_option("FILE", opts->file,
                  "input CSV (id,lower,upper,size[,alignment]; live on [lower, upper)); '-' reads standard input")
      ->required();
  cmd->add_option("--capacity", opts->solve.capacity,
                  "decide whether everything fits under BYTES (exit 1 when proven impossible)");
  cmd->add_option("--time-limit", opts->solve.time_limit, "wall-clock seconds for the whole command, reading included, kept by every solver "
                  "(default 10; 0: the quickest placement; inf: no limit; a solver not done by then gives its "
                  "best placement, or the sweep's: status time_limit)");
  cmd->add_option("--solver", opts->solver, solver_help());
  cmd->add_option("--output", opts->output, "write the placement as CSV with an offset column");
  cmd->add_option("--svg", opts->svg, "draw the placement (time on x, offset on y)");
  cmd->add_flag("--json", opts->json, "print one JSON object instead of the report");
  cmd->add_option("--seed", opts->solve.seed, "varies the search's branching orders (default 0)");
  cmd->callback([opts, &ctx] { ctx.exit_code = run_pack(*opts, ctx.cancel); });
}

}  // namespace xlamem::cli
