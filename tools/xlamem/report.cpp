// SPDX-License-Identifier: Apache-2.0
// Loading a compiled program's memory (module, XLA dump, dump folder) and the summary and JSON
// writers of the report. See report.hpp.
#include "report.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "commands.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/buffer_assignment_dump.hpp"
#include "xlamem/io/buffer_assignment_text.hpp"
#include "xlamem/io/memory_stats_text.hpp"
#include "xlamem/packing/packing.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/report/dump_timeline.hpp"
#include "xlamem/report/plan_timeline.hpp"

namespace xlamem::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using assignment = buffer_assignment<hlo::module>;

constexpr std::string_view dump_suffix = "-buffer-assignment.txt";
constexpr std::string_view module_suffix = "after_optimizations.txt";

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// A fast heuristic of packing/ as a temporary-heap packer (XLA's best fit stays its floor).
template <class Heuristic>
struct heuristic_temp_packer {
  std::string_view label;
  [[nodiscard]] std::string_view name() const noexcept { return label; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const {
    if (auto ok = validate_problem(p); !ok) return ok.error();
    const interval_graph g(p);
    return Heuristic{}.place(p, g);
  }
};

/// The packers of `plan`, one line per solver of the shared vocabulary.
result<assignment> run_assignment(const hlo::module& m, buffer_assignment_options opts, solver_id id) {
  switch (id) {
    case solver_id::xla: opts.solver = solver_kind::xla; return assignment::run(m, opts);
    case solver_id::heuristic: opts.solver = solver_kind::heuristic; return assignment::run(m, opts);
    case solver_id::first_fit: return assignment::run(m, opts, heuristic_temp_packer<first_fit>{"first-fit"});
    case solver_id::skyline: return assignment::run(m, opts, heuristic_temp_packer<skyline_fit>{"skyline"});
    default: opts.solver = solver_kind::search; return assignment::run(m, opts);
  }
}

/// Sources by instruction name from a module's metadata.
report::source_table sources_of(const hlo::module& m) {
  report::source_table s;
  for (const auto& i : m.instructions) {
    auto src = report::source_of(m, i);
    if (!src.empty()) s.emplace(i.name, std::move(src));
  }
  return s;
}

void finish(plan_view& v) {
  v.peak = report::find_peak(v.timeline);
  v.fragmentation = report::fragmentation_at_peak(v.timeline, v.peak);
}

result<plan_view> plan_module(const std::string& file, const std::string& text, const load_options& o) {
  auto id = parse_solver(o.solver);
  if (!id) return error(errc::invalid_argument, unknown_solver_message(o.solver));
  if (o.backend != "cpu" && o.backend != "gpu") {
    return error(errc::invalid_argument, "--backend " + o.backend + ": unknown backend (expected cpu or gpu)");
  }
  auto m = hlo::parse_module(text, display_name(file));
  if (!m) return m.error();
  buffer_assignment_options opts;
  opts.alignment = alignment_of(o);
  opts.time_limit_seconds = o.time_limit;
  if (o.backend == "gpu") {
    // XLA:GPU's aliasing rules, and its one cross-colour rule: temporaries of colour 0 may fill
    // free gaps of the colour-1 (collective memory) heap (BufferAssigner::AllowCrossColorReuse).
    m->backend = hlo::xla_backend::gpu;
    opts.can_use_allocation = {{0, 1}};
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto a = run_assignment(*m, opts, *id);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a) return a.error().with_context(display_name(file));
  if (auto ok = a->validate(*m); !ok) {
    return error(errc::internal, display_name(file) + ": internal error, invalid plan: " + ok.error().message());
  }
  plan_view v;
  v.file = display_name(file);
  v.origin = fmt::format("xlamem plan (solver {}, alignment {}{})", name_of(*id), opts.alignment,
                         o.backend == "gpu" ? ", XLA:GPU rules" : "");
  v.module = m->name;
  v.instructions = m->instructions.size();
  v.scheduled = m->is_scheduled;
  v.seconds = seconds;
  v.stats = a->stats();
  v.timeline = report::timeline_of(*m, *a);
  for (const auto& h : a->heaps()) {
    v.heaps.push_back({static_cast<std::int64_t>(h.allocation), h.color, h.size, h.lower_bound, h.problem.buffers.size(),
                       h.solver});
  }
  v.xla_table = buffer_assignment_text(*m, *a);
  // The plan's own detail: every allocation and live range, as before.
  const auto& la = a->liveness();
  const auto& df = a->dataflow();
  json allocs = json::array();
  for (const auto& al : a->allocations()) {
    json x;
    x["index"] = al.index;
    x["size"] = al.size();
    x["color"] = al.color();
    x["kind"] = report::name_of(report::kind_of(al.flags()));
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
    for (const auto& val : al.values) {
      vals.push_back({{"value", val.value}, {"name", la.value_name(*m, val.value, false)}, {"offset", val.offset},
                      {"size", val.size}});
    }
    x["values"] = std::move(vals);
    allocs.push_back(std::move(x));
  }
  v.details["allocations"] = std::move(allocs);
  json ranges = json::array();
  for (std::uint32_t val = 0; val < df.values().size(); ++val) {
    if (!la.has_range(val)) continue;
    ranges.push_back({{"value", val}, {"name", la.value_name(*m, val, false)}, {"start", la.range(val).start},
                      {"end", la.range(val).end}, {"size", df.get(val).bytes}});
  }
  v.details["live_ranges"] = std::move(ranges);
  finish(v);
  return v;
}

result<plan_view> xla_plan(const std::string& file, const std::string& text, const report::source_table* sources) {
  result<buffer_assignment_dump> d = error(errc::internal, "");
  if (file == "-") d = parse_buffer_assignment_dump(text, "<stdin>");
  else d = read_buffer_assignment_dump(file);
  if (!d) return d.error();
  plan_view v;
  v.file = display_name(file);
  v.from_xla = true;
  v.origin = "XLA's buffer assignment (as XLA planned it, no replanning)";
  std::string stem = fs::path(file).filename().string();
  if (ends_with(stem, dump_suffix)) stem.resize(stem.size() - dump_suffix.size());
  v.module = stem;
  v.timeline = report::timeline_of(*d, sources);
  v.timeline.module = stem;
  v.instructions = v.timeline.schedule.size();
  const auto s = d->stats();
  v.stats.argument_size_in_bytes = s.compiled.argument_size_in_bytes;
  v.stats.output_size_in_bytes = s.compiled.output_size_in_bytes;
  v.stats.alias_size_in_bytes = s.compiled.alias_size_in_bytes;
  v.stats.temp_size_in_bytes = s.compiled.temp_size_in_bytes;
  v.stats.host_argument_size_in_bytes = s.compiled.host_argument_size_in_bytes;
  v.stats.host_output_size_in_bytes = s.compiled.host_output_size_in_bytes;
  v.stats.host_alias_size_in_bytes = s.compiled.host_alias_size_in_bytes;
  v.stats.host_temp_size_in_bytes = s.compiled.host_temp_size_in_bytes;
  v.stats.total_allocation_bytes = static_cast<std::int64_t>(s.total);
  finish(v);
  v.stats.peak_memory_in_bytes = v.peak.bytes;
  for (const auto& a : v.timeline.allocations) {
    if (!a.is_heap) continue;
    heap_summary h{a.index, a.color, a.size, report::live_bytes_bound(v.timeline, a), 0, "xla"};
    for (const auto& b : v.timeline.buffers) h.buffers += b.allocation == a.index ? 1 : 0;
    v.heaps.push_back(h);
  }
  v.xla_table = text;
  return v;
}

/// The module and dump files of one module in a dump folder, by stem.
struct dump_entry {
  std::string stem;
  fs::path module, assignment;
  std::uintmax_t size = 0;
};

result<plan_view> load_folder(const load_options& o) {
  std::vector<dump_entry> entries;
  auto entry = [&](const std::string& stem) -> dump_entry& {
    for (auto& e : entries) {
      if (e.stem == stem) return e;
    }
    entries.push_back({stem, {}, {}, 0});
    return entries.back();
  };
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(o.file, ec)) {
    const auto name = f.path().filename().string();
    if (ends_with(name, dump_suffix)) {
      auto& e = entry(name.substr(0, name.size() - dump_suffix.size()));
      e.assignment = f.path();
    } else if (ends_with(name, module_suffix)) {
      auto& e = entry(name.substr(0, name.size() - 4));
      e.module = f.path();
      e.size = f.file_size(ec);
    }
  }
  if (ec) return error(errc::not_found, o.file + ": cannot list the folder: " + ec.message());
  std::vector<const dump_entry*> fit;
  for (const auto& e : entries) {
    if (o.module_name.empty() || e.stem.find(o.module_name) != std::string::npos) fit.push_back(&e);
  }
  if (fit.empty()) {
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.stem;
    if (entries.empty()) {
      return error(errc::not_found, o.file + ": no '*" + std::string(module_suffix) + "' or '*" +
                                        std::string(dump_suffix) + "' files (is it an --xla_dump_to folder?)");
    }
    return error(errc::not_found, o.file + ": no module named like '" + o.module_name + "' (modules: " + names + ")");
  }
  // The largest module: by module text, else by dump text.
  for (auto* e : fit) {
    if (e->size == 0 && !e->assignment.empty()) const_cast<dump_entry*>(e)->size = fs::file_size(e->assignment, ec);
  }
  const auto* best = *std::max_element(fit.begin(), fit.end(), [](const dump_entry* a, const dump_entry* b) {
    return std::tie(a->size, b->stem) < std::tie(b->size, a->stem);
  });
  if (!best->assignment.empty() && !(o.replan && !best->module.empty())) {
    report::source_table sources;
    if (!best->module.empty()) {
      if (auto text = read_input(best->module.string()); text) {
        if (auto m = hlo::parse_module(*text, best->module.string()); m) sources = sources_of(*m);
      }
    }
    auto text = read_input(best->assignment.string());
    if (!text) return text.error();
    return xla_plan(best->assignment.string(), *text, &sources);
  }
  auto text = read_input(best->module.string());
  if (!text) return text.error();
  return plan_module(best->module.string(), *text, o);
}

}  // namespace

result<plan_view> load_plan(const load_options& o) {
  if (auto problem = time_limit_problem(o.time_limit)) return error(errc::invalid_argument, *problem);
  std::error_code ec;
  if (o.file != "-" && fs::is_directory(o.file, ec)) return load_folder(o);
  auto text = read_input(o.file);
  if (!text) return text.error();
  const bool is_dump = ends_with(o.file, dump_suffix) || std::string_view(*text).substr(0, 17) == "BufferAssignment:";
  if (!is_dump) return plan_module(o.file, *text, o);
  // XLA's plan; the module beside it (same stem) gives the sources when it parses.
  report::source_table sources;
  if (o.file != "-" && ends_with(o.file, dump_suffix)) {
    const std::string module = o.file.substr(0, o.file.size() - dump_suffix.size()) + ".txt";
    if (fs::is_regular_file(module, ec)) {
      if (auto mt = read_input(module); mt) {
        if (auto m = hlo::parse_module(*mt, module); m) sources = sources_of(*m);
      }
    }
  }
  return xla_plan(o.file, *text, &sources);
}

std::string bytes_text(std::int64_t b) {
  return b < 1024 ? fmt::format("{} B", b) : fmt::format("{} ({} B)", report::human_bytes(b), b);
}

json buffer_json(const report::memory_timeline& t, std::size_t i) {
  const auto& b = t.buffers[i];
  json j;
  j["name"] = b.name;
  j["shape"] = b.shape;
  j["size"] = b.size;
  j["kind"] = report::name_of(b.kind);
  j["allocation"] = b.allocation;
  j["offset"] = b.offset;
  j["start"] = b.start;
  j["end"] = b.end;
  if (!b.source.empty()) {
    j["source"] = {{"op_name", b.source.op_name}, {"source_file", b.source.source_file},
                   {"source_line", b.source.source_line}};
  }
  return j;
}

namespace {

std::string kind_bytes_text(const report::kind_bytes& k) {
  std::string s;
  for (std::size_t i = 0; i < report::buffer_kind_count; ++i) {
    if (k[i] == 0) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", report::name_of(static_cast<report::buffer_kind>(i)),
                     report::human_bytes(k[i]));
  }
  return s.empty() ? "nothing" : s;
}

std::string clip(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

/// "model.py:42 train_step/dot_general": the location and the op_name's last two components.
std::string source_text(const report::op_source& s) {
  if (s.empty()) return "";
  std::string op = s.op_name;
  // jit(f)/jit(main)/transpose(jvp(g))/dot_general: the tail says what it is.
  std::size_t cut = op.size();
  for (int parts = 0; parts < 2 && cut != std::string::npos && cut > 0; ++parts) cut = op.rfind('/', cut - 1);
  if (cut != std::string::npos && cut < op.size()) op = op.substr(cut + 1);
  const auto loc = s.location();
  return loc.empty() ? op : loc + " " + op;
}

}  // namespace

std::string summary_text(const plan_view& v, std::size_t top) {
  const auto& st = v.stats;
  const auto& t = v.timeline;
  std::string s;
  s += fmt::format("{}: {} {}, {}", v.module, v.instructions, v.from_xla ? "steps" : "instructions", v.origin);
  if (!v.from_xla) s += fmt::format(", planned in {:.1f} ms", v.seconds * 1e3);
  s += v.scheduled ? "\n" : " (not scheduled: module order)\n";
  s += memory_stats_text(st) + "\n";
  s += fmt::format("memory: argument {}, output {}, alias {}, temp {}; all allocations {}\n",
                   report::human_bytes(st.argument_size_in_bytes), report::human_bytes(st.output_size_in_bytes),
                   report::human_bytes(st.alias_size_in_bytes), report::human_bytes(st.temp_size_in_bytes),
                   report::human_bytes(st.total_allocation_bytes));
  const auto running = v.peak.time < static_cast<std::int64_t>(t.schedule.size())
                           ? t.schedule[static_cast<std::size_t>(v.peak.time)]
                           : std::string("?");
  s += fmt::format("peak: {} at time {} of {}, while running {}\n", bytes_text(v.peak.bytes), v.peak.time,
                   t.horizon() - 1, running);
  s += fmt::format("  live then: {}", kind_bytes_text(v.peak.by_kind));
  if (!v.from_xla && v.stats.peak_memory_in_bytes != v.peak.bytes) {
    s += fmt::format(" (peak_memory_in_bytes {} counts in-place updates twice)", v.stats.peak_memory_in_bytes);
  }
  s += "\n";
  std::size_t shown = 0;
  for (const auto& h : v.heaps) {
    if (++shown > 2) break;
    s += fmt::format("temporary heap{}: {}, lower bound {} ({:.3f}x), {} buffer{}, {}\n",
                     v.heaps.size() > 1 ? fmt::format(" (memory space {})", h.color) : std::string(),
                     report::human_bytes(h.size), report::human_bytes(h.lower_bound),
                     h.lower_bound > 0 ? static_cast<double>(h.size) / static_cast<double>(h.lower_bound) : 1.0,
                     h.buffers, h.buffers == 1 ? "" : "s", h.solver);
  }
  if (v.heaps.size() > 2) s += fmt::format("  ({} more heaps: --json lists them)\n", v.heaps.size() - 2);
  if (!v.fragmentation.empty()) {
    const auto& f = v.fragmentation.front();
    s += fmt::format("fragmentation at the peak: {} of the {} heap unused ({:.0f}%), largest free hole {} at offset {}\n",
                     report::human_bytes(f.wasted), report::human_bytes(f.heap_size),
                     f.heap_size > 0 ? 100.0 * static_cast<double>(f.wasted) / static_cast<double>(f.heap_size) : 0.0,
                     report::human_bytes(f.largest_hole), f.hole_offset);
  } else {
    s += "fragmentation at the peak: no temporary heap\n";
  }
  const auto n = std::min(top, v.peak.live.size());
  s += fmt::format("largest buffers live at the peak ({} of {}):\n", n, v.peak.live.size());
  bool any_source = false;
  for (std::size_t k = 0; k < n; ++k) any_source = any_source || !t.buffers[v.peak.live[k]].source.empty();
  std::string header = fmt::format("  {:>10}  {:<9}  {:<28}  {:<22}{}", "size", "kind", "buffer", "shape",
                                   any_source ? "  source" : "");
  while (!header.empty() && header.back() == ' ') header.pop_back();
  s += header + "\n";
  for (std::size_t k = 0; k < n; ++k) {
    const auto& b = t.buffers[v.peak.live[k]];
    std::string line = fmt::format("  {:>10}  {:<9}  {:<28}  {:<22}", report::human_bytes(b.size), report::name_of(b.kind),
                                   clip(b.name, 28), clip(b.shape, 22));
    if (any_source) line += "  " + clip(source_text(b.source), 60);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  if (!any_source && n > 0) s += "  (no sources: the module has no metadata; XLA dumps it unless --xla_dump_disable_metadata)\n";
  s += "more: --dump xla (XLA's allocation table), --json (everything), --html OUT.html, --svg OUT.svg\n";
  return s;
}

json plan_json(const plan_view& v) {
  json j;
  j["command"] = "plan";
  j["file"] = v.file;
  j["module"] = v.module;
  j["origin"] = v.from_xla ? "xla" : "xlamem";
  j["description"] = v.origin;
  j["instructions"] = v.instructions;
  j["is_scheduled"] = v.scheduled;
  j["planning_seconds"] = v.seconds;
  json stats;
  v.stats.for_each_field([&](const char* name, std::int64_t x) { stats[name] = x; }, true);
  j["compiled_memory_stats"] = std::move(stats);
  json peak;
  peak["time"] = v.peak.time;
  peak["bytes"] = v.peak.bytes;
  peak["instruction"] = v.peak.time < static_cast<std::int64_t>(v.timeline.schedule.size())
                            ? v.timeline.schedule[static_cast<std::size_t>(v.peak.time)]
                            : "";
  json by_kind;
  for (std::size_t k = 0; k < report::buffer_kind_count; ++k) {
    by_kind[std::string(report::name_of(static_cast<report::buffer_kind>(k)))] = v.peak.by_kind[k];
  }
  peak["bytes_by_kind"] = std::move(by_kind);
  json live = json::array();
  for (const auto i : v.peak.live) live.push_back(buffer_json(v.timeline, i));
  peak["buffers"] = std::move(live);
  j["peak"] = std::move(peak);
  json heaps = json::array();
  for (const auto& h : v.heaps) {
    heaps.push_back({{"allocation", h.allocation}, {"color", h.color}, {"size", h.size}, {"lower_bound", h.lower_bound},
                     {"buffers", h.buffers}, {"solver", h.solver}});
  }
  j["temp_heaps"] = std::move(heaps);
  json frag = json::array();
  for (const auto& f : v.fragmentation) {
    frag.push_back({{"allocation", f.allocation}, {"heap_size", f.heap_size}, {"live_bytes", f.live_bytes},
                    {"wasted", f.wasted}, {"largest_hole", f.largest_hole}, {"hole_offset", f.hole_offset}});
  }
  j["fragmentation_at_peak"] = std::move(frag);
  j["schedule"] = v.timeline.schedule;
  json buffers = json::array();
  for (std::size_t i = 0; i < v.timeline.buffers.size(); ++i) buffers.push_back(buffer_json(v.timeline, i));
  j["buffers"] = std::move(buffers);
  for (const auto& [k, x] : v.details.items()) j[k] = x;
  if (!j.contains("allocations")) {
    json allocs = json::array();
    for (const auto& a : v.timeline.allocations) {
      allocs.push_back({{"index", a.index}, {"size", a.size}, {"color", a.color}, {"kind", report::name_of(a.kind)},
                        {"is_preallocated_temp", a.is_heap}});
    }
    j["allocations"] = std::move(allocs);
  }
  return j;
}

}  // namespace xlamem::cli
