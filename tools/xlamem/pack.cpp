// SPDX-License-Identifier: Apache-2.0
// `xlamem pack FILE.csv`: static buffer packing of a MiniMalloc-format CSV (issue 4). Prints a
// short report whose last line is `peak=<bytes> lower_bound=<bytes> optimal=<yes|no>
// seconds=<s>`, or one JSON object with `--json`. Exit status: 0 placement found, 1 capacity
// proven infeasible, 2 time-out without a placement, 3 bad input. Solvers: the vocabulary
// `plan` shares (commands.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "xlamem/io/interval_csv.hpp"
#include "xlamem/io/svg.hpp"
#include "xlamem/packing/packing.hpp"

namespace xlamem::cli {
namespace {

struct pack_options {
  std::string file;
  std::int64_t capacity = -1;
  double time_limit = 10.0;
  std::string solver = "search";
  std::string output;
  std::string svg;
  bool json = false;
  std::uint64_t seed = 0;
};

std::string human_bytes(std::int64_t b) {
  const auto q = xlamem::detail::in_binary_units(b);
  return b < 1024 ? fmt::format("{} B", b) : fmt::format("{:.2f} {} ({} B)", q.value, q.unit, b);
}

int fail_input(const std::string& message) { return fail("pack", message); }

/// The fast placements of the shared vocabulary, one line per solver (search is separate:
/// it decides feasibility and proves bounds). A solver added to packing/ is one more line.
using heuristic_fn = placement (*)(const packing_problem&, const interval_graph&);
struct heuristic_entry {
  solver_id id;
  heuristic_fn place;
};
constexpr heuristic_entry heuristics[] = {
    {solver_id::heuristic, [](const packing_problem& p, const interval_graph& g) { return portfolio_fit{}.place(p, g); }},
    {solver_id::xla, [](const packing_problem& p, const interval_graph& g) { return xla_best_fit{}.place(p, g); }},
    {solver_id::first_fit, [](const packing_problem& p, const interval_graph& g) { return first_fit{}.place(p, g); }},
    {solver_id::skyline, [](const packing_problem& p, const interval_graph& g) { return skyline_fit{}.place(p, g); }},
};

int run_pack(const pack_options& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto solver = parse_solver(o.solver);
  if (!solver) return fail_input(unknown_solver_message(o.solver));
  if (auto problem = time_limit_problem(o.time_limit)) return fail_input(*problem);
  if (o.capacity < -1) return fail_input(fmt::format("--capacity {} is negative; give 0 or more bytes", o.capacity));
  const std::string name = display_name(o.file);
  auto text = read_input(o.file);
  if (!text) return fail("pack", text.error());
  auto read = read_interval_csv(*text, name);
  if (!read) return fail("pack", read.error());
  const packing_problem& p = read->problem;
  if (auto ok = validate_problem(p); !ok) return fail_input(name + ": " + ok.error().message());

  const interval_graph g(p);
  const std::int64_t lb0 = lower_bound(p);
  // XLA best fit as a baseline row costs time in the number of conflicting pairs; on compiler
  // traces far above the portfolio's limit it would dominate the run, so it is skipped there
  // (the report says so) unless it is the solver asked for.
  const bool xla_baseline = *solver == solver_id::xla || g.edge_count() <= portfolio_fit{}.xla_edge_limit;
  const std::int64_t xla_peak = xla_baseline ? peak_of(p, xla_best_fit{}.place(p, g)) : -1;

  search_status status = search_status::timed_out;
  placement solution;
  std::int64_t bound = lb0;
  std::uint64_t nodes = 0;
  if (*solver == solver_id::search) {
    if (o.capacity >= 0) {
      search_options so;
      so.capacity = o.capacity;
      so.time_limit_seconds = o.time_limit;
      so.seed = o.seed;
      auto r = pack_within(p, so);
      if (!r) return fail("pack", r.error());
      status = r->status;
      solution = std::move(r->solution);
      nodes = r->nodes;
    } else {
      minimize_options mo;
      mo.time_limit_seconds = o.time_limit;
      mo.seed = o.seed;
      auto r = minimize_peak(p, mo);
      if (!r) return fail("pack", r.error());
      status = r->status;
      solution = std::move(r->solution);
      bound = r->lower_bound;
      nodes = r->nodes;
    }
  } else {
    for (const auto& h : heuristics) {
      if (h.id == *solver) solution = h.place(p, g);
    }
    status = (o.capacity < 0 || peak_of(p, solution) <= o.capacity) ? search_status::feasible
             : lb0 > o.capacity                                    ? search_status::infeasible
                                                                   : search_status::timed_out;
  }
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  const bool placed = status == search_status::feasible;
  if (placed) {
    if (auto ok = validate(p, solution); !ok) return fail_input("internal error: invalid placement: " + ok.error().message());
  }
  const std::int64_t peak = placed ? peak_of(p, solution) : 0;
  if (placed && peak <= bound) bound = peak;
  const bool optimal = placed && peak == bound;
  const std::string solver_name(name_of(*solver));

  if (placed && !o.output.empty()) {
    if (auto ok = write_interval_csv_file(o.output, p, &solution); !ok) return fail("pack", ok.error());
  }
  if (placed && !o.svg.empty()) {
    layout_svg_options so;
    so.title = fmt::format("{}: {} buffers, peak {} B, lower bound {} B{}", name, p.buffers.size(), peak, bound,
                           optimal ? " (optimal)" : "");
    so.capacity = o.capacity;
    if (auto ok = write_svg_file(o.svg, layout_svg(layout_of(p, solution), so)); !ok) return fail("pack", ok.error());
  }
  const char* status_name = placed ? "placed" : status == search_status::infeasible ? "infeasible" : "timed_out";
  if (o.json) {
    nlohmann::ordered_json j;
    j["command"] = "pack";
    j["file"] = name;
    j["buffers"] = p.buffers.size();
    j["solver"] = solver_name;
    j["status"] = status_name;
    j["peak"] = placed ? nlohmann::ordered_json(peak) : nlohmann::ordered_json(nullptr);
    j["lower_bound"] = bound;
    j["optimal"] = optimal;
    j["seconds"] = seconds;
    j["xla_best_fit_peak"] = xla_baseline ? nlohmann::ordered_json(xla_peak) : nlohmann::ordered_json(nullptr);
    j["nodes"] = nodes;
    if (o.capacity >= 0) j["capacity"] = o.capacity;
    fmt::print("{}\n", j.dump(1));
  } else {
    std::int64_t t0 = 0, t1 = 0;
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      t0 = i == 0 ? p.buffers[i].lower : std::min(t0, p.buffers[i].lower);
      t1 = i == 0 ? p.buffers[i].upper : std::max(t1, p.buffers[i].upper);
    }
    fmt::print("{}: {} buffers, time [{}, {}), {} sections, {} conflicts\n", name, p.buffers.size(), t0, t1,
               g.section_count(), g.edge_count());
    fmt::print("  lower bound (max live bytes)   {}\n", human_bytes(lb0));
    if (xla_baseline) {
      fmt::print("  XLA best fit (baseline)        {}  {:+.1f}% over the bound\n", human_bytes(xla_peak),
                 lb0 > 0 ? 100.0 * static_cast<double>(xla_peak - lb0) / static_cast<double>(lb0) : 0.0);
    } else {
      fmt::print("  XLA best fit (baseline)        skipped: {} conflicting pairs (over {}; --solver xla runs it)\n",
                 g.edge_count(), portfolio_fit{}.xla_edge_limit);
    }
    if (o.capacity >= 0) fmt::print("  capacity                       {}\n", human_bytes(o.capacity));
    if (placed) {
      const std::string versus_xla =
          xla_baseline && xla_peak > 0
              ? fmt::format(", {:.1f}% below XLA best fit",
                            100.0 * static_cast<double>(xla_peak - peak) / static_cast<double>(xla_peak))
              : std::string();
      fmt::print("  {:<30} {}  {:+.1f}% over the bound{}{}\n", solver_name + " peak", human_bytes(peak),
                 lb0 > 0 ? 100.0 * static_cast<double>(peak - lb0) / static_cast<double>(lb0) : 0.0, versus_xla,
                 optimal ? " (optimal)" : "");
    } else if (status == search_status::infeasible) {
      fmt::print("  no placement fits the capacity (proven)\n");
    } else {
      fmt::print("  no placement found within the time limit ({:.1f} s)\n", o.time_limit);
    }
    if (nodes != 0) fmt::print("  search nodes                   {}\n", nodes);
    if (placed && !o.output.empty()) fmt::print("  wrote {}\n", o.output);
    if (placed && !o.svg.empty()) fmt::print("  wrote {}\n", o.svg);
    if (placed) {
      fmt::print("peak={} lower_bound={} optimal={} seconds={:.3f}\n", peak, bound, optimal ? "yes" : "no", seconds);
    } else {
      fmt::print("peak=none lower_bound={} optimal=no seconds={:.3f}\n", bound, seconds);
    }
  }
  if (placed) return 0;
  return status == search_status::infeasible ? 1 : 2;
}

}  // namespace

void add_pack_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<pack_options>();
  auto* cmd = app.add_subcommand(
      "pack", "Pack buffers with live intervals into the least memory (MiniMalloc CSV: id,lower,upper,size)");
  cmd->add_option("FILE", opts->file,
                  "input CSV (id,lower,upper,size[,alignment]; live on [lower, upper)); '-' reads standard input")
      ->required();
  cmd->add_option("--capacity", opts->capacity,
                  "decide whether everything fits under BYTES (exit 1 when proven impossible)");
  cmd->add_option("--time-limit", opts->time_limit, "seconds for the search (default 10)");
  cmd->add_option("--solver", opts->solver, solver_help());
  cmd->add_option("--output", opts->output, "write the placement as CSV with an offset column");
  cmd->add_option("--svg", opts->svg, "draw the placement (time on x, offset on y)");
  cmd->add_flag("--json", opts->json, "print one JSON object instead of the report");
  cmd->add_option("--seed", opts->seed, "varies the search's branching orders (default 0)");
  cmd->callback([opts, &ctx] { ctx.exit_code = run_pack(*opts); });
}

}  // namespace xlamem::cli
