// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory report for people, as text: `summary_text` (what `xlamem plan` prints: about 20
/// lines with the statistics, the peak and the instruction running then, each heap against
/// its lower bound, fragmentation at the peak and the largest buffers live then with their
/// sources) and `diff_text` (what `xlamem diff` prints). JSON is `io/codec/json.hpp`'s
/// `json_document` of the report or the diff.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "xlamem/io/xla/memory_stats_text.hpp"
#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/io/report/views.hpp"
#include "xlamem/report/diff.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem {

namespace detail {

/// "parameter 101 KiB, output 10.0 KiB, temp 128 KiB", or "nothing".
[[nodiscard]] inline std::string kind_bytes_text(const report::kind_bytes& k) {
  std::string s;
  for (std::size_t i = 0; i < report::buffer_kind_count; ++i) {
    if (k[i] == 0) continue;
    s += (s.empty() ? "" : ", ") + std::string(report::name_of(static_cast<report::buffer_kind>(i))) + " " +
         human_bytes(k[i]);
  }
  return s.empty() ? "nothing" : s;
}

/// The summary's heading, statistics, peak, heaps and fragmentation lines.
[[nodiscard]] inline std::string summary_head(const report::memory_report& r) {
  const auto& st = r.stats;
  std::string s = r.module + ": " + std::to_string(r.instructions) + (r.from_xla ? " steps" : " instructions") + ", " +
                  r.description;
  if (!r.from_xla) s += ", planned in " + fixed(r.planning_seconds * 1e3, 1) + " ms";
  s += r.scheduled ? "\n" : " (not scheduled: module order)\n";
  s += memory_stats_text(st) + "\n";
  s += "memory: argument " + human_bytes(st.argument_size_in_bytes) + ", output " + human_bytes(st.output_size_in_bytes) +
       ", alias " + human_bytes(st.alias_size_in_bytes) + ", temp " + human_bytes(st.temp_size_in_bytes) +
       "; all allocations " + human_bytes(st.total_allocation_bytes) + "\n";
  const auto running = r.instruction_at(r.peak.time);
  s += "peak: " + bytes_text(r.peak.bytes) + " at time " + std::to_string(r.peak.time) + " of " +
       std::to_string(r.timeline.horizon() - 1) + ", while running " + (running.empty() ? "?" : running) + "\n";
  s += "  live then: " + kind_bytes_text(r.peak.by_kind) + "\n";
  for (const auto& m : r.memory_spaces) {
    if (r.memory_spaces.size() < 2 || m.bytes == 0) continue;  // one memory space: the peak says it all
    s += "  memory space " + std::to_string(m.color) + (m.host ? " (host)" : "") + ": peak " + human_bytes(m.bytes) +
         " at time " + std::to_string(m.time) + "\n";
  }
  if (!r.transfers.empty()) {
    std::size_t to_host = 0, from_host = 0;
    for (const auto& t : r.transfers) {
      to_host += t.to_color == r.timeline.host_color ? 1 : 0;
      from_host += t.from_color == r.timeline.host_color ? 1 : 0;
    }
    s += "transfers: " + human_bytes(r.transferred_bytes(true)) + " to host memory in " + std::to_string(to_host) +
         " instructions, " + human_bytes(r.transferred_bytes(false)) + " from it in " + std::to_string(from_host) +
         " (each instruction counted once)\n";
  }
  std::size_t shown = 0;
  for (const auto& h : r.heaps) {
    if (++shown > 2) break;
    s += "temporary heap" + (r.heaps.size() > 1 ? " (memory space " + std::to_string(h.color) + ")" : std::string()) +
         ": " + human_bytes(h.size) + ", lower bound " + human_bytes(h.lower_bound) + " (" +
         fixed(h.lower_bound > 0 ? static_cast<double>(h.size) / static_cast<double>(h.lower_bound) : 1.0, 3) + "x), " +
         std::to_string(h.buffers) + (h.buffers == 1 ? " buffer, " : " buffers, ") + h.solver + "\n";
  }
  if (r.heaps.size() > 2) s += "  (" + std::to_string(r.heaps.size() - 2) + " more heaps: --json lists them)\n";
  if (!r.fragmentation_at_peak.empty()) {
    const auto& f = r.fragmentation_at_peak.front();
    s += "fragmentation at the peak: " + human_bytes(f.wasted) + " of the " + human_bytes(f.heap_size) + " heap unused (" +
         percent_of(f.wasted, f.heap_size, 0) + "%), largest free hole " + human_bytes(f.largest_hole) + " at offset " +
         std::to_string(f.hole_offset) + "\n";
  } else {
    s += "fragmentation at the peak: no temporary heap\n";
  }
  return s;
}

}  // namespace detail

/// The summary of `r` with the `top` largest buffers live at the peak.
[[nodiscard]] inline std::string summary_text(const report::memory_report& r, std::size_t top = 10) {
  const auto& t = r.timeline;
  std::string s = detail::summary_head(r);
  const auto n = std::min(top, r.peak.live.size());
  s += "largest buffers live at the peak (" + std::to_string(n) + " of " + std::to_string(r.peak.live.size()) + "):\n";
  bool any_source = false;
  for (std::size_t k = 0; k < n; ++k) any_source = any_source || !t.buffers[r.peak.live[k]].source.empty();
  s += trim_right("  " + pad_left("size", 10) + "  " + pad_right("kind", 9) + "  " + pad_right("buffer", 28) + "  " +
                  pad_right("shape", 22) + (any_source ? "  source" : "")) +
       "\n";
  for (std::size_t k = 0; k < n; ++k) {
    const auto& b = t.buffers[r.peak.live[k]];
    std::string line = "  " + pad_left(human_bytes(b.size), 10) + "  " + pad_right(report::name_of(b.kind), 9) + "  " +
                       pad_right(clip(b.name, 28), 28) + "  " + pad_right(clip(b.shape, 22), 22);
    if (any_source) line += "  " + clip(report::source_text(b.source, 2), 60);
    s += trim_right(std::move(line)) + "\n";
  }
  if (!any_source && n > 0) s += "  (no sources: the module has no metadata; XLA dumps it unless --xla_dump_disable_metadata)\n";
  s += "more: --dump xla (XLA's allocation table), --json (everything), --html OUT.html, --svg OUT.svg\n";
  return terminal_text(s);  // names, shapes and sources come from the input
}

namespace detail {

inline std::string signed_bytes(std::int64_t d) {
  if (d == 0) return "0 B";
  return (d > 0 ? "+" : "") + human_bytes(d);
}

inline std::string change_percent(std::int64_t before, std::int64_t after) {
  if (before == 0) return after == 0 ? "" : "(new)";
  return "(" + percent_of(after - before, before, 1, true) + "%)";
}

}  // namespace detail

/// The diff of two reports for people, with the `top` largest buffer changes.
[[nodiscard]] inline std::string diff_text(const report::memory_report_diff& d, std::size_t top = 12) {
  std::string s = "xlamem diff: " + d.file_before + " (" + d.module_before + ") -> " + d.file_after + " (" +
                  d.module_after + ")\n";
  const auto& b = d.buffers;
  if (d.identical()) {
    return terminal_text(s + "no change: the same peak (" + bytes_text(b.peak_after.bytes) +
                         "), statistics and buffers (" + std::to_string(b.unchanged) + " matched)\n");
  }
  auto row = [](std::string_view name, const std::string& before, const std::string& after, const std::string& delta,
                const std::string& note) {
    return "  " + pad_right(name, 16) + " " + pad_left(before, 12) + " " + pad_left(after, 12) + " " + pad_left(delta, 12) +
           " " + note + "\n";
  };
  s += row("", "before", "after", "delta", "");
  for (const auto& st : d.stats) {
    if (st.before == 0 && st.after == 0) continue;
    s += row(st.name, human_bytes(st.before), human_bytes(st.after), detail::signed_bytes(st.delta()),
             detail::change_percent(st.before, st.after));
  }
  auto running = [](const std::string& name) { return name.empty() ? std::string("?") : name; };
  s += "  peak at time " + std::to_string(b.peak_before.time) + " (" + running(d.peak_instruction_before) + ") -> time " +
       std::to_string(b.peak_after.time) + " (" + running(d.peak_instruction_after) + ")\n";
  s += "buffers: " + std::to_string(b.unchanged) + " unchanged, " + std::to_string(b.changed.size()) + " changed, " +
       std::to_string(b.added.size()) + " new, " + std::to_string(b.removed.size()) + " gone\n";
  const auto all = d.largest_changes();
  if (all.empty()) return terminal_text(s);
  const auto n = std::min(top, all.size());
  s += "largest changes (" + std::to_string(n) + " of " + std::to_string(all.size()) + "; * = live at the peak after):\n";
  for (std::size_t k = 0; k < n; ++k) {
    const auto& c = *all[k];
    const std::string shapes = c.shape_before.empty()              ? "new " + c.shape_after
                               : c.shape_after.empty()             ? "gone (was " + c.shape_before + ")"
                               : c.shape_before == c.shape_after ? c.shape_after
                                                                 : c.shape_before + " -> " + c.shape_after;
    s += trim_right("  " + pad_left(detail::signed_bytes(c.delta()), 11) + " " + (c.at_peak_after ? "*" : " ") +
                    pad_right(c.name, 28) + " " + pad_right(shapes, 36) + " " + report::source_text(c.source)) +
         "\n";
  }
  return terminal_text(s);  // names, shapes, sources and file names come from the input
}

}  // namespace xlamem
