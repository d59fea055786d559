// SPDX-License-Identifier: Apache-2.0
// `xlamem plan FILE.hlo`: buffer assignment of an HLO module. Prints XLA's CompiledMemoryStats,
// an allocation table in the format of XLA's buffer-assignment dump and the buffers live at the
// peak; `--json` writes the same as JSON; `--svg OUT.svg` draws the temporary heap over time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/buffer_assignment_text.hpp"
#include "xlamem/io/memory_stats_text.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

namespace xlamem::cli {
namespace {

struct plan_options {
  std::string file;
  std::int64_t alignment = 64;
  std::string solver = "search";
  double time_limit = 1.0;
  bool json = false;
  std::string svg;
};

using assignment = buffer_assignment<hlo::module>;

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The temporary heap of each colour as rectangles: x is logical time, y the offset.
std::string heap_svg(const hlo::module& m, const assignment& a) {
  const double width = 960, plot_h = 420, left = 70, top = 56, gap = 70;  // top: title + subtitle
  const auto& heaps = a.heaps();
  const double height = top + static_cast<double>(std::max<std::size_t>(heaps.size(), 1)) * (plot_h + gap) + 10;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"15\">xlamem plan {3}: temporary heap over time</text>\n",
      width + left + 20, height, left, escape_xml(m.name));
  const double end = static_cast<double>(std::max<std::int64_t>(a.liveness().end_time(), 1)) + 1;
  if (heaps.empty()) {
    s += fmt::format("<text x=\"{}\" y=\"{}\">no temporaries</text>\n", left, top + 20);
  }
  for (std::size_t hi = 0; hi < heaps.size(); ++hi) {
    const auto& h = heaps[hi];
    const double y0 = top + static_cast<double>(hi) * (plot_h + gap);
    const double top_bytes = static_cast<double>(std::max<std::int64_t>(h.size, 1));
    auto X = [&](double t) { return left + t / end * width; };
    auto Y = [&](double bytes) { return y0 + plot_h - bytes / top_bytes * plot_h; };
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f7f7f7\" stroke=\"#999\"/>\n", left,
                     y0, width, plot_h);
    for (std::size_t k = 0; k < h.problem.buffers.size(); ++k) {
      const auto& b = h.problem.buffers[k];
      if (b.size <= 0) continue;
      const auto off = static_cast<double>(h.solution.offsets[k]);
      const double x = X(static_cast<double>(b.lower)), w = std::max(1.0, X(static_cast<double>(b.upper)) - x);
      const double y = Y(off + static_cast<double>(b.size)), hh = std::max(0.5, Y(off) - y);
      const unsigned hue = static_cast<unsigned>((k * 47) % 360);
      s += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"hsl({},60%,65%)\" "
          "stroke=\"#333\" stroke-width=\"0.3\"><title>{} size={} offset={} live=[{},{})</title></rect>\n",
          x, y, w, hh, hue, escape_xml(b.id), b.size, h.solution.offsets[k], b.lower, b.upper);
      if (w >= 7.0 * static_cast<double>(b.id.size()) && hh >= 14) {
        s += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"10\">{}</text>\n", x + 3, y + 11, escape_xml(b.id));
      }
    }
    const double lb_y = Y(static_cast<double>(h.lower_bound));
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n"
        "<text x=\"{3}\" y=\"{4:.2f}\" fill=\"#c00\" text-anchor=\"end\">lower bound {5}</text>\n",
        left, left + width, lb_y, left + width, lb_y - 3, h.lower_bound);
    s += fmt::format(
        "<text x=\"{0}\" y=\"{1}\">memory space {2}: heap {3} bytes ({4}, {5} buffers), lower bound {6}</text>\n"
        "<text x=\"{7}\" y=\"{8}\" text-anchor=\"end\">{3}</text><text x=\"{7}\" y=\"{9}\" "
        "text-anchor=\"end\">0</text>\n<text x=\"{10}\" y=\"{11}\" text-anchor=\"middle\">logical time (0 .. {12})</text>\n",
        left, y0 - 6, h.color, h.size, escape_xml(h.solver), h.problem.buffers.size(), h.lower_bound, left - 4,
        y0 + 12, y0 + plot_h, left + width / 2, y0 + plot_h + 18, a.liveness().end_time());
  }
  s += "</svg>\n";
  return s;
}

nlohmann::json to_json(const hlo::module& m, const assignment& a, const plan_options& o, double seconds) {
  using nlohmann::json;
  const auto& la = a.liveness();
  const auto& df = a.dataflow();
  json j;
  j["module"] = m.name;
  j["is_scheduled"] = m.is_scheduled;
  j["solver"] = o.solver;
  j["alignment"] = o.alignment;
  j["planning_seconds"] = seconds;
  j["compiled_memory_stats"] = json::parse(memory_stats_json(a.stats()));
  json allocs = json::array();
  for (const auto& al : a.allocations()) {
    json x;
    x["index"] = al.index;
    x["size"] = al.size();
    x["color"] = al.color();
    x["is_entry_parameter"] = al.flags().is_entry_parameter;
    if (al.flags().is_entry_parameter) {
      x["parameter_number"] = al.parameter_number;
      x["parameter_index"] = al.parameter_index;
    }
    x["is_parameter_aliased_with_output"] = al.flags().is_parameter_aliased_with_output;
    x["maybe_live_out"] = al.flags().maybe_live_out;
    x["is_constant"] = al.flags().is_constant;
    x["is_thread_local"] = al.flags().is_thread_local;
    x["is_preallocated_temp"] = al.flags().is_preallocated_temp();
    if (!al.copy_of.empty()) x["emulated_copy_of"] = al.copy_of;
    json vals = json::array();
    for (const auto& v : al.values) {
      vals.push_back({{"value", v.value}, {"name", la.value_name(m, v.value, false)}, {"offset", v.offset}, {"size", v.size}});
    }
    x["values"] = std::move(vals);
    allocs.push_back(std::move(x));
  }
  j["allocations"] = std::move(allocs);
  json ranges = json::array();
  for (std::uint32_t v = 0; v < df.values().size(); ++v) {
    if (!la.has_range(v)) continue;
    ranges.push_back({{"value", v}, {"name", la.value_name(m, v, false)}, {"start", la.range(v).start},
                      {"end", la.range(v).end}, {"size", df.get(v).bytes}});
  }
  j["live_ranges"] = std::move(ranges);
  json heaps = json::array();
  for (const auto& h : a.heaps()) {
    heaps.push_back({{"color", h.color}, {"allocation", h.allocation}, {"size", h.size},
                     {"allocation_size", a.allocations()[h.allocation].size()}, {"lower_bound", h.lower_bound},
                     {"buffers", h.problem.buffers.size()}, {"solver", h.solver}, {"seconds", h.seconds}});
  }
  j["temp_heaps"] = std::move(heaps);
  json peak = json::array();
  for (auto b : a.peak_buffers()) {
    peak.push_back({{"buffer", la.value_name(m, la.colocation().values(b).front(), false)}, {"size", a.buffer_size(b)}});
  }
  j["peak"] = {{"time", a.peak_time()}, {"bytes", a.stats().peak_memory_in_bytes}, {"buffers", std::move(peak)}};
  return j;
}

std::string to_text(const hlo::module& m, const assignment& a, const plan_options& o, double seconds) {
  const auto& la = a.liveness();
  const auto& st = a.stats();
  std::string s = fmt::format("Module {} ({} instructions, {}), solver {}, alignment {}, planned in {:.2f} ms\n", m.name,
                              m.instructions.size(), m.is_scheduled ? "scheduled" : "not scheduled: module order",
                              o.solver, o.alignment, seconds * 1e3);
  s += memory_stats_text(st) + "\n";
  s += fmt::format("peak_memory_in_bytes={} total_allocation_bytes={} (argument + output - alias + temp = {})\n",
                   st.peak_memory_in_bytes, st.total_allocation_bytes, st.device_footprint());
  for (const auto& h : a.heaps()) {
    s += fmt::format("temporary heap, memory space {}: {} bytes, lower bound {} ({:.4f}x), {} buffers, {}", h.color,
                     h.size, h.lower_bound,
                     h.lower_bound > 0 ? static_cast<double>(h.size) / static_cast<double>(h.lower_bound) : 1.0,
                     h.problem.buffers.size(), h.solver);
    // With --solver xla, tuple pointer tables sit beside the heap in its allocation, as XLA
    // lays them out.
    const auto whole = a.allocations()[h.allocation].size();
    if (whole != h.size) s += fmt::format("; with the tuple tables XLA keeps apart, {} bytes", whole);
    s += "\n";
  }
  s += "\n" + buffer_assignment_text(m, a);
  s += fmt::format("\nBuffers live at the peak (time {}, {} bytes):\n", a.peak_time(), st.peak_memory_in_bytes);
  std::int64_t cumulative = 0;
  for (auto b : a.peak_buffers()) {
    const auto v = la.colocation().values(b).front();
    const auto sl = a.slice_of(v);
    cumulative += a.buffer_size(b);
    s += fmt::format("  {}: {} bytes (cumulative: {} bytes), allocation {} offset {}\n", la.value_name(m, v, false),
                     a.buffer_size(b), cumulative, sl ? sl->allocation : 0, sl ? sl->offset : 0);
  }
  return s;
}

int run_plan(const plan_options& o) {
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "xlamem plan: error: %s\n", what.c_str());
    return exit_bad_input;
  };
  auto kind = parse_solver_kind(o.solver);
  if (!kind) return fail(kind.error().to_string());
  if (!(o.time_limit >= 0)) return fail("--time-limit must be a nonnegative number of seconds");
  auto m = hlo::read_module_file(o.file);
  if (!m) return fail(m.error().to_string());
  buffer_assignment_options opts;
  opts.alignment = o.alignment;
  opts.solver = *kind;
  opts.time_limit_seconds = o.time_limit;
  const auto t0 = std::chrono::steady_clock::now();
  auto a = assignment::run(*m, opts);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a) return fail(o.file + ": " + a.error().to_string());
  if (auto ok = a->validate(*m); !ok) return fail(o.file + ": internal error, invalid plan: " + ok.error().to_string());
  if (!o.svg.empty()) {
    std::error_code ec;
    const auto parent = std::filesystem::path(o.svg).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    std::ofstream out(o.svg, std::ios::binary);
    out << heap_svg(*m, *a);
    if (!out) return fail("cannot write " + o.svg);
  }
  const std::string text = o.json ? to_json(*m, *a, o, seconds).dump(1) + "\n" : to_text(*m, *a, o, seconds);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!o.svg.empty() && !o.json) std::fprintf(stdout, "\nwrote %s\n", o.svg.c_str());
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, context& ctx) {
  auto opts = std::make_shared<plan_options>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Buffer assignment of an HLO module: XLA's CompiledMemoryStats, an allocation table like XLA's "
      "buffer-assignment dump, the buffers live at the peak; --json, --svg picture of the temporary heap.");
  cmd->add_option("FILE", opts->file, "HLO text module (after optimizations: scheduled, fused)")->required();
  cmd->add_option("--alignment", opts->alignment, "alignment of temporaries in bytes (64 CPU-like, 256 GPU-like)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--solver", opts->solver, "temporary heap packer: xla (XLA best fit), heuristic, search (default)");
  cmd->add_option("--time-limit", opts->time_limit, "time budget of the search solver in seconds (default 1)");
  cmd->add_flag("--json", opts->json, "print JSON: compiled_memory_stats, allocations, live_ranges, temp_heaps, peak");
  cmd->add_option("--svg", opts->svg, "write a picture of the temporary heap over time to this file");
  cmd->callback([opts, &ctx] { ctx.exit_code = run_plan(*opts); });
}

}  // namespace xlamem::cli
