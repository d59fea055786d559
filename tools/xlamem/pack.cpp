// SPDX-License-Identifier: Apache-2.0
// `xlamem pack FILE.csv`: static buffer packing of a MiniMalloc-format CSV (issue 4). Prints a
// short report whose last line is `peak=<bytes> lower_bound=<bytes> optimal=<yes|no>
// seconds=<s>`, or one JSON object with `--json`. Exit status: 0 placement found, 1 capacity
// proven infeasible, 2 time-out without a placement, 3 bad input.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
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

int fail_input(const std::string& message) {
  std::fprintf(stderr, "xlamem pack: error: %s\n", message.c_str());
  return exit_bad_input;
}

int run_pack(const pack_options& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto read = read_interval_csv_file(o.file);
  if (!read) return fail_input(read.error().to_string());
  const packing_problem& p = read->problem;
  if (auto ok = validate_problem(p); !ok) return fail_input(o.file + ": " + ok.error().to_string());
  if (o.time_limit < 0) return fail_input("--time-limit must not be negative");
  if (o.capacity < -1) return fail_input("--capacity must not be negative");

  const interval_graph g(p);
  const std::int64_t lb0 = lower_bound(p);
  const placement xla = xla_best_fit{}.place(p, g);
  const std::int64_t xla_peak = peak_of(p, xla);

  search_status status = search_status::timed_out;
  placement solution;
  std::int64_t bound = lb0;
  std::uint64_t nodes = 0;
  auto heuristic = [&](const auto& h) {
    solution = h.place(p, g);
    status = (o.capacity < 0 || peak_of(p, solution) <= o.capacity) ? search_status::feasible
             : lb0 > o.capacity                                    ? search_status::infeasible
                                                                   : search_status::timed_out;
  };
  if (o.solver == "search" || o.solver == "auto") {
    if (o.capacity >= 0) {
      search_options so;
      so.capacity = o.capacity;
      so.time_limit_seconds = o.time_limit;
      so.seed = o.seed;
      auto r = pack_within(p, so);
      if (!r) return fail_input(r.error().to_string());
      status = r->status;
      solution = std::move(r->solution);
      nodes = r->nodes;
    } else {
      minimize_options mo;
      mo.time_limit_seconds = o.time_limit;
      mo.seed = o.seed;
      auto r = minimize_peak(p, mo);
      if (!r) return fail_input(r.error().to_string());
      status = r->status;
      solution = std::move(r->solution);
      bound = r->lower_bound;
      nodes = r->nodes;
    }
  } else if (o.solver == "portfolio" || o.solver == "heuristic") {
    heuristic(portfolio_fit{});
  } else if (o.solver == "xla-best-fit" || o.solver == "xla") {
    heuristic(xla_best_fit{});
  } else if (o.solver == "first-fit") {
    heuristic(first_fit{});
  } else if (o.solver == "skyline") {
    heuristic(skyline_fit{});
  } else {
    return fail_input("unknown solver '" + o.solver +
                      "' (expected search, portfolio, xla-best-fit, first-fit or skyline)");
  }
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  const bool placed = status == search_status::feasible;
  if (placed) {
    if (auto ok = validate(p, solution); !ok) {
      std::fprintf(stderr, "xlamem pack: internal error: invalid placement: %s\n", ok.error().to_string().c_str());
      return exit_bad_input;
    }
  }
  const std::int64_t peak = placed ? peak_of(p, solution) : 0;
  if (placed && peak <= bound) bound = peak;
  const bool optimal = placed && peak == bound;

  if (placed && !o.output.empty()) {
    if (auto ok = write_interval_csv_file(o.output, p, &solution); !ok) return fail_input(ok.error().to_string());
  }
  if (placed && !o.svg.empty()) {
    layout_svg_options so;
    so.title = fmt::format("{}: {} buffers, peak {} B, lower bound {} B{}", o.file, p.buffers.size(), peak, bound,
                           optimal ? " (optimal)" : "");
    so.capacity = o.capacity;
    if (auto ok = write_svg_file(o.svg, layout_svg(layout_of(p, solution), so)); !ok) {
      return fail_input(ok.error().to_string());
    }
  }
  const char* status_name = placed ? "placed" : status == search_status::infeasible ? "infeasible" : "timed_out";
  if (o.json) {
    nlohmann::json j;
    j["file"] = o.file;
    j["buffers"] = p.buffers.size();
    j["solver"] = o.solver;
    j["status"] = status_name;
    j["peak"] = placed ? nlohmann::json(peak) : nlohmann::json(nullptr);
    j["lower_bound"] = bound;
    j["optimal"] = optimal;
    j["seconds"] = seconds;
    j["xla_best_fit_peak"] = xla_peak;
    j["nodes"] = nodes;
    if (o.capacity >= 0) j["capacity"] = o.capacity;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::int64_t t0 = 0, t1 = 0;
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      t0 = i == 0 ? p.buffers[i].lower : std::min(t0, p.buffers[i].lower);
      t1 = i == 0 ? p.buffers[i].upper : std::max(t1, p.buffers[i].upper);
    }
    std::printf("%s: %zu buffers, time [%lld, %lld), %zu sections, %zu conflicts\n", o.file.c_str(),
                p.buffers.size(), static_cast<long long>(t0), static_cast<long long>(t1), g.section_count(),
                g.edge_count());
    std::printf("  lower bound (max live bytes)   %s\n", human_bytes(lb0).c_str());
    std::printf("  XLA best fit (baseline)        %s  %+.1f%% over the bound\n", human_bytes(xla_peak).c_str(),
                lb0 > 0 ? 100.0 * static_cast<double>(xla_peak - lb0) / static_cast<double>(lb0) : 0.0);
    if (o.capacity >= 0) std::printf("  capacity                       %s\n", human_bytes(o.capacity).c_str());
    if (placed) {
      std::printf("  %-30s %s  %+.1f%% over the bound, %.1f%% below XLA best fit%s\n",
                  (o.solver + " peak").c_str(), human_bytes(peak).c_str(),
                  lb0 > 0 ? 100.0 * static_cast<double>(peak - lb0) / static_cast<double>(lb0) : 0.0,
                  xla_peak > 0 ? 100.0 * static_cast<double>(xla_peak - peak) / static_cast<double>(xla_peak) : 0.0,
                  optimal ? " (optimal)" : "");
    } else if (status == search_status::infeasible) {
      std::printf("  no placement fits the capacity (proven)\n");
    } else {
      std::printf("  no placement found within the time limit (%.1f s)\n", o.time_limit);
    }
    if (nodes != 0) std::printf("  search nodes                   %llu\n", static_cast<unsigned long long>(nodes));
    if (placed && !o.output.empty()) std::printf("  wrote %s\n", o.output.c_str());
    if (placed && !o.svg.empty()) std::printf("  wrote %s\n", o.svg.c_str());
    if (placed) {
      std::printf("peak=%lld lower_bound=%lld optimal=%s seconds=%.3f\n", static_cast<long long>(peak),
                  static_cast<long long>(bound), optimal ? "yes" : "no", seconds);
    } else {
      std::printf("peak=none lower_bound=%lld optimal=no seconds=%.3f\n", static_cast<long long>(bound), seconds);
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
  cmd->add_option("file", opts->file, "input CSV (id,lower,upper,size[,alignment]; live on [lower, upper))")
      ->required();
  cmd->add_option("--capacity", opts->capacity,
                  "decide whether everything fits under BYTES (exit 1 when proven impossible)");
  cmd->add_option("--time-limit", opts->time_limit, "seconds for the search (default 10)");
  cmd->add_option("--solver", opts->solver,
                  "search (default: exact/anytime search), portfolio, xla-best-fit, first-fit, skyline");
  cmd->add_option("--output", opts->output, "write the placement as CSV with an offset column");
  cmd->add_option("--svg", opts->svg, "draw the placement (time on x, offset on y)");
  cmd->add_flag("--json", opts->json, "print one JSON object instead of the report");
  cmd->add_option("--seed", opts->seed, "varies the search's branching orders (default 0)");
  cmd->callback([opts, &ctx] { ctx.exit_code = run_pack(*opts); });
}

}  // namespace xlamem::cli
