// SPDX-License-Identifier: Apache-2.0
// `xlamem diff A B`: two compilations of one program (before and after a code change, a flag,
// an upgrade). Each side is anything `plan` reads (module, XLA's buffer-assignment dump, dump
// folder). Prints the delta of every statistic and of the peak, and the buffers behind it,
// matched by name, op_name and shape (report/memory_timeline.hpp), with their sources.
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "report.hpp"

namespace xlamem::cli {
namespace {

using json = nlohmann::ordered_json;

/// Modules are planned with XLA's best fit: deterministic, so identical modules give identical plans.
load_options xla_solver() {
  load_options o;
  o.solver = "xla";
  return o;
}

struct diff_options {
  load_options before = xla_solver(), after;
  bool json = false;
  std::size_t top = 12;
};

std::string signed_bytes(std::int64_t d) {
  if (d == 0) return "0 B";
  return (d > 0 ? "+" : "") + report::human_bytes(d);
}

std::string percent(std::int64_t before, std::int64_t after) {
  if (before == 0) return after == 0 ? "" : "(new)";
  return fmt::format("({:+.1f}%)", 100.0 * static_cast<double>(after - before) / static_cast<double>(before));
}

std::string source_of(const report::op_source& s) {
  if (s.empty()) return "";
  const auto loc = s.location();
  return loc.empty() ? s.op_name : loc + " " + s.op_name;
}

json change_json(const report::buffer_change& c) {
  json j{{"name", c.name},        {"shape_before", c.shape_before}, {"shape_after", c.shape_after},
         {"size_before", c.size_before}, {"size_after", c.size_after},     {"delta", c.delta()},
         {"at_peak_before", c.at_peak_before}, {"at_peak_after", c.at_peak_after}};
  if (!c.source.empty()) {
    j["source"] = {{"op_name", c.source.op_name}, {"source_file", c.source.source_file},
                   {"source_line", c.source.source_line}};
  }
  return j;
}

int run_diff(diff_options o) {
  o.after.solver = o.before.solver;
  o.after.alignment = o.before.alignment;
  o.after.backend = o.before.backend;
  o.after.time_limit = o.before.time_limit;
  o.after.replan = o.before.replan;
  o.after.module_name = o.before.module_name;
  if (o.before.file == "-" && o.after.file == "-") return fail("diff", "only one of A and B can be '-' (standard input)");
  auto a = load_plan(o.before);
  if (!a) return fail("diff", a.error());
  auto b = load_plan(o.after);
  if (!b) return fail("diff", b.error());
  const auto d = report::diff_timelines(a->timeline, b->timeline);
  struct row {
    const char* name;
    std::int64_t before, after;
  };
  const row rows[] = {
      {"peak", d.peak_before.bytes, d.peak_after.bytes},
      {"argument", a->stats.argument_size_in_bytes, b->stats.argument_size_in_bytes},
      {"output", a->stats.output_size_in_bytes, b->stats.output_size_in_bytes},
      {"alias", a->stats.alias_size_in_bytes, b->stats.alias_size_in_bytes},
      {"temp", a->stats.temp_size_in_bytes, b->stats.temp_size_in_bytes},
      {"host temp", a->stats.host_temp_size_in_bytes, b->stats.host_temp_size_in_bytes},
      {"all allocations", a->stats.total_allocation_bytes, b->stats.total_allocation_bytes},
  };
  if (o.json) {
    json j;
    j["command"] = "diff";
    j["files"] = {a->file, b->file};
    j["identical"] = d.identical();
    json stats;
    for (const auto& r : rows) {
      std::string key = r.name;
      for (auto& c : key) c = c == ' ' ? '_' : c;
      stats[key] = {{"before", r.before}, {"after", r.after}, {"delta", r.after - r.before}};
    }
    j["stats"] = std::move(stats);
    j["peak"] = {{"time_before", d.peak_before.time}, {"time_after", d.peak_after.time}};
    j["unchanged_buffers"] = d.unchanged;
    for (const auto* part : {"changed", "added", "removed"}) {
      const auto& list = std::string(part) == "changed" ? d.changed : std::string(part) == "added" ? d.added : d.removed;
      json arr = json::array();
      for (const auto& c : list) arr.push_back(change_json(c));
      j[part] = std::move(arr);
    }
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  fmt::print("xlamem diff: {} ({}) -> {} ({})\n", a->file, a->module, b->file, b->module);
  if (d.identical()) {
    fmt::print("no change: the same peak ({}), statistics and buffers ({} matched)\n", bytes_text(d.peak_after.bytes),
               d.unchanged);
    return 0;
  }
  fmt::print("  {:<16} {:>12} {:>12} {:>12} {}\n", "", "before", "after", "delta", "");
  for (const auto& r : rows) {
    if (r.before == 0 && r.after == 0) continue;
    fmt::print("  {:<16} {:>12} {:>12} {:>12} {}\n", r.name, report::human_bytes(r.before), report::human_bytes(r.after),
               signed_bytes(r.after - r.before), percent(r.before, r.after));
  }
  auto running = [](const plan_view& v, std::int64_t t) {
    return t < static_cast<std::int64_t>(v.timeline.schedule.size()) ? v.timeline.schedule[static_cast<std::size_t>(t)]
                                                                      : std::string("?");
  };
  fmt::print("  peak at time {} ({}) -> time {} ({})\n", d.peak_before.time, running(*a, d.peak_before.time),
             d.peak_after.time, running(*b, d.peak_after.time));
  fmt::print("buffers: {} unchanged, {} changed, {} new, {} gone\n", d.unchanged, d.changed.size(), d.added.size(),
             d.removed.size());
  std::vector<const report::buffer_change*> all;
  for (const auto& c : d.changed) all.push_back(&c);
  for (const auto& c : d.added) all.push_back(&c);
  for (const auto& c : d.removed) all.push_back(&c);
  std::stable_sort(all.begin(), all.end(), [](const auto* x, const auto* y) {
    return std::llabs(x->delta()) > std::llabs(y->delta());
  });
  if (all.empty()) return 0;
  const auto n = std::min(o.top, all.size());
  fmt::print("largest changes ({} of {}; * = live at the peak after):\n", n, all.size());
  for (std::size_t k = 0; k < n; ++k) {
    const auto& c = *all[k];
    const std::string shapes = c.shape_before.empty()  ? "new " + c.shape_after
                               : c.shape_after.empty() ? "gone (was " + c.shape_before + ")"
                               : c.shape_before == c.shape_after ? c.shape_after
                                                                 : c.shape_before + " -> " + c.shape_after;
    std::string line = fmt::format("  {:>11} {}{:<28} {:<36} {}", signed_bytes(c.delta()), c.at_peak_after ? "*" : " ",
                                   c.name, shapes, source_of(c.source));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  }
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<diff_options>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare the memory of two compilations of one program: the delta of every statistic and of the "
      "peak, and the buffers behind it (matched by name, op_name and shape) with their sources");
  cmd->add_option("A", opts->before.file, "the first compilation: module, *-buffer-assignment.txt, dump folder or '-'")
      ->required();
  cmd->add_option("B", opts->after.file, "the second compilation, read the same way")->required();
  cmd->add_option("--module", opts->before.module_name, "in dump folders: the module whose file name contains this");
  cmd->add_flag("--replan", opts->before.replan, "in dump folders: plan the modules rather than read XLA's plan");
  cmd->add_option("--solver", opts->before.solver, solver_help() + ". Default here: xla (deterministic, so identical modules give identical plans)");
  cmd->add_option("--time-limit", opts->before.time_limit, "seconds for the search solver (default 1)");
  cmd->add_option("--backend", opts->before.backend, "whose buffer rules plan the modules: cpu (default) or gpu")
      ->check(backend_check());
  cmd->add_option("--top", opts->top, "how many changed buffers to list (default 12)");
  cmd->add_flag("--json", opts->json, "print one JSON object: stats, peak, changed, added, removed");
  cmd->callback([opts, &ctx] { ctx.exit_code = run_diff(*opts); });
}

}  // namespace xlamem::cli
