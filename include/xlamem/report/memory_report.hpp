// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory report of one compiled program as typed data: what `xlamem plan` prints, the
/// page draws and `diff` compares, and what the Python package returns. One report type
/// serves a plan xlamem made (`report/plan_report.hpp`) and XLA's own buffer assignment
/// (`io/report/dump_report.hpp`); both fill the parts they know (the timeline, the statistics, the
/// heaps, the allocations) and call `build_report`, the one function that derives the rest.
///
/// One peak: `peak` is the most device bytes in use at one time by the definition of
/// `passes/memory_usage.hpp`, and `stats.peak_memory_in_bytes` is set to it, so the two never
/// differ. For xlamem's plans it equals `buffer_assignment`'s own `peak_memory_in_bytes` (the
/// same definition). XLA's own `peak_memory_in_bytes` is another figure: XLA:CPU reports
/// argument + output - alias + constant bytes (not a peak of the run), XLA:GPU a heap replay
/// that also counts constants (docs/xla-fidelity.md, docs/diagnosis.md).
///
/// Also per memory space (each device colour and the host colour, `memory_spaces`), the
/// temporary heaps against their lower bounds, fragmentation at the peak, the buffers live
/// then (largest first, with their sources) and the whole timeline. `visit_fields` lists the
/// fields the report's JSON shows (`io/codec/json.hpp` writes it). Plain values; nothing prints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/passes/memory_stats.hpp"
#include "xlamem/passes/memory_usage.hpp"
#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem::report {

/// One temporary heap: its size against its lower bound.
struct heap_summary {
  std::int64_t allocation = 0;
  std::int64_t color = 0;
  std::int64_t size = 0;
  std::int64_t lower_bound = 0;  ///< the most bytes live in it at one time (with alignment, for xlamem's plans)
  std::size_t buffers = 0;
  std::string solver;            ///< the packer that placed it ("xla" for XLA's own plan)
};

/// One value placed in an allocation.
struct report_value {
  std::int64_t value = 0;  ///< dataflow value id (XLA's id for XLA's plan)
  std::string name;
  std::int64_t offset = 0;
  std::int64_t size = 0;
};

/// One allocation with XLA's predicates and its values.
struct report_allocation {
  std::int64_t index = 0;
  std::int64_t size = 0;
  std::int64_t color = 0;
  buffer_kind kind = buffer_kind::temp;
  bool is_entry_parameter = false;
  std::int64_t parameter_number = -1;          ///< when `is_entry_parameter`
  std::vector<std::int64_t> parameter_index;   ///< the parameter's leaf, when `is_entry_parameter`
  bool is_parameter_aliased_with_output = false;
  bool maybe_live_out = false;
  bool is_constant = false;
  bool is_thread_local = false;
  bool is_preallocated_temp = false;
  std::string emulated_copy_of;                ///< an emulated output copy: the leaf it copies
  std::vector<report_value> values;
};

/// One value's live range on the schedule (closed).
struct report_live_range {
  std::int64_t value = 0;
  std::string name;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t size = 0;
};

/// The peak of one memory space (colour): device colours, and the host colour apart.
struct memory_space_peak {
  std::int64_t color = 0;
  bool host = false;
  std::int64_t bytes = 0;  ///< most bytes in use at one time (constants and thread-local left out)
  std::int64_t time = 0;   ///< the first time with that many
};

/// One instruction that moves bytes from one memory space to another (host offloading;
/// `report/memory_transfers.hpp` finds them in a module).
struct memory_transfer {
  std::string instruction;
  std::string opcode;
  std::int64_t from_color = 0;
  std::int64_t to_color = 0;
  std::int64_t bytes = 0;
  std::int64_t time = -1;  ///< its step in the schedule; -1 when it is not there (in a loop body)
  op_source source;
};

/// A compiled program's memory for people.
struct memory_report {
  std::string file;         ///< what was read (in a dump folder: the module chosen)
  std::string module;
  std::string description;  ///< "xlamem plan (solver search, alignment 64)" or "XLA's buffer assignment ..."
  bool from_xla = false;    ///< XLA's own plan, not replanned
  std::size_t instructions = 0;  ///< instructions (xlamem's plans) or schedule steps (XLA's)
  bool scheduled = true;
  double planning_seconds = 0;   ///< 0 for XLA's plan
  compiled_memory_stats stats;   ///< XLA's figures; `peak_memory_in_bytes` is `peak.bytes`
  memory_timeline timeline;
  peak_info peak;                ///< device memory
  std::vector<memory_space_peak> memory_spaces;  ///< by colour, ascending
  std::vector<heap_summary> heaps;
  std::vector<fragmentation> fragmentation_at_peak;  ///< of each heap, largest first
  std::vector<report_allocation> allocations;
  std::vector<report_live_range> live_ranges;
  std::vector<memory_transfer> transfers;  ///< between memory spaces, in module order (from a module only)
  std::string xla_table;         ///< the allocation table in XLA's dump format (filled by the readers of io/)

  /// Host memory's entry of `memory_spaces`, or null when the program has no host allocation.
  [[nodiscard]] const memory_space_peak* host_space() const noexcept {
    for (const auto& m : memory_spaces) {
      if (m.host) return &m;
    }
    return nullptr;
  }
  /// The peak of host memory (0 when nothing lives there).
  [[nodiscard]] std::int64_t host_peak() const noexcept {
    const auto* h = host_space();
    return h != nullptr ? h->bytes : 0;
  }
  /// Bytes the transfers move into host memory (`to_host`) or out of it, each instruction once
  /// (a loop body's once, however often the loop runs).
  [[nodiscard]] std::int64_t transferred_bytes(bool to_host) const noexcept {
    std::int64_t sum = 0;
    for (const auto& t : transfers) {
      if ((to_host ? t.to_color : t.from_color) == timeline.host_color) sum += t.bytes;
    }
    return sum;
  }

  /// The instruction running at `time`, or "" outside the schedule.
  [[nodiscard]] std::string instruction_at(std::int64_t time) const {
    return time >= 0 && time < static_cast<std::int64_t>(timeline.schedule.size())
               ? timeline.schedule[static_cast<std::size_t>(time)]
               : std::string();
  }
};

namespace detail {
/// `memory_space_usages` from `uses = uses_of(t)`.
[[nodiscard]] inline std::map<std::int64_t, std::vector<std::int64_t>> memory_space_usages(const memory_timeline& t,
                                                                                         const allocation_uses& uses) {
  const auto horizon = t.horizon();
  std::map<std::int64_t, std::vector<std::int64_t>> out;
  for (std::size_t n = 0; n < t.allocations.size(); ++n) {
    const auto& a = t.allocations[n];
    auto& total = out[a.color];
    if (total.empty()) total.assign(static_cast<std::size_t>(horizon) + 1, 0);
    if (a.kind == buffer_kind::constant || a.kind == buffer_kind::embedded) continue;
    add_usage(total, uses[n]);
  }
  for (auto& [color, total] : out) to_steps(total);
  return out;
}
/// `memory_space_peaks` from `uses = uses_of(t)`.
[[nodiscard]] inline std::vector<memory_space_peak> memory_space_peaks(const memory_timeline& t, const allocation_uses& uses) {
  std::vector<memory_space_peak> out;
  for (const auto& [color, usage] : memory_space_usages(t, uses)) {
    const auto p = first_peak(usage);
    out.push_back({color, color == t.host_color, p.bytes, p.time});
  }
  return out;
}
}  // namespace detail

/// Bytes in use in every memory space of `t` at every time 0 .. horizon()-1, by colour
/// (constants and thread-local allocations left out), by `allocation_usage` as for the device
/// total.
[[nodiscard]] inline std::map<std::int64_t, std::vector<std::int64_t>> memory_space_usages(const memory_timeline& t) {
  return detail::memory_space_usages(t, detail::uses_of(t));
}

/// Bytes in use in memory space `color` at every time (all zero for a colour without allocations).
[[nodiscard]] inline std::vector<std::int64_t> memory_space_usage(const memory_timeline& t, std::int64_t color) {
  auto all = memory_space_usages(t);
  const auto it = all.find(color);
  return it != all.end() ? std::move(it->second) : std::vector<std::int64_t>(static_cast<std::size_t>(t.horizon()), 0);
}

/// The peak of every memory space of `t` that has allocations, by colour.
[[nodiscard]] inline std::vector<memory_space_peak> memory_space_peaks(const memory_timeline& t) {
  return detail::memory_space_peaks(t, detail::uses_of(t));
}

/// Completes a report whose parts are filled (the timeline, the statistics, the heaps, the
/// allocations): the peak, the memory spaces, fragmentation at the peak, and
/// `stats.peak_memory_in_bytes`. Every report is built here.
[[nodiscard]] inline memory_report build_report(memory_report r) {
  const auto uses = detail::uses_of(r.timeline);  // each allocation's use, for both peaks
  r.peak = detail::find_peak(r.timeline, uses);
  r.memory_spaces = detail::memory_space_peaks(r.timeline, uses);
  r.fragmentation_at_peak = report::fragmentation_at_peak(r.timeline, r.peak);
  r.stats.peak_memory_in_bytes = r.peak.bytes;
  return r;
}

/// Bytes by kind, as the JSON names them ("parameter": ..., "output": ...).
struct kind_bytes_view {
  const kind_bytes* bytes = nullptr;
};
template <class F>
void visit_fields(const kind_bytes_view& v, F&& f) {
  for (std::size_t k = 0; k < buffer_kind_count; ++k) f(name_of(static_cast<buffer_kind>(k)), (*v.bytes)[k]);
}

/// The peak with the instruction running then and every buffer live then.
struct peak_view {
  const memory_report* report = nullptr;
};
template <class F>
void visit_fields(const peak_view& v, F&& f) {
  const auto& r = *v.report;
  f("time", r.peak.time);
  f("bytes", r.peak.bytes);
  f("instruction", r.instruction_at(r.peak.time));
  f("bytes_by_kind", kind_bytes_view{&r.peak.by_kind});
  std::vector<const timeline_buffer*> live;
  for (const auto i : r.peak.live) live.push_back(&r.timeline.buffers[i]);
  f("buffers", live);
}

template <class F>
void visit_fields(const heap_summary& h, F&& f) {
  f("allocation", h.allocation);
  f("color", h.color);
  f("size", h.size);
  f("lower_bound", h.lower_bound);
  f("buffers", h.buffers);
  f("solver", h.solver);
}

template <class F>
void visit_fields(const report_value& v, F&& f) {
  f("value", v.value);
  f("name", v.name);
  f("offset", v.offset);
  f("size", v.size);
}

template <class F>
void visit_fields(const report_allocation& a, F&& f) {
  f("index", a.index);
  f("size", a.size);
  f("color", a.color);
  f("kind", name_of(a.kind));
  f("is_entry_parameter", a.is_entry_parameter);
  if (a.is_entry_parameter) {
    f("parameter_number", a.parameter_number);
    f("parameter_index", a.parameter_index);
  }
  f("is_parameter_aliased_with_output", a.is_parameter_aliased_with_output);
  f("maybe_live_out", a.maybe_live_out);
  f("is_constant", a.is_constant);
  f("is_thread_local", a.is_thread_local);
  f("is_preallocated_temp", a.is_preallocated_temp);
  if (!a.emulated_copy_of.empty()) f("emulated_copy_of", a.emulated_copy_of);
  f("values", a.values);
}

template <class F>
void visit_fields(const report_live_range& r, F&& f) {
  f("value", r.value);
  f("name", r.name);
  f("start", r.start);
  f("end", r.end);
  f("size", r.size);
}

template <class F>
void visit_fields(const memory_transfer& t, F&& f) {
  f("instruction", t.instruction);
  f("opcode", t.opcode);
  f("from_color", t.from_color);
  f("to_color", t.to_color);
  f("bytes", t.bytes);
  f("time", t.time);
  if (!t.source.empty()) f("source", t.source);
}

template <class F>
void visit_fields(const memory_space_peak& m, F&& f) {
  f("color", m.color);
  f("host", m.host);
  f("bytes", m.bytes);
  f("time", m.time);
}

/// The report's JSON fields (after the command, which the writer puts first).
template <class F>
void visit_fields(const memory_report& r, F&& f) {
  f("file", r.file);
  f("module", r.module);
  f("origin", std::string_view(r.from_xla ? "xla" : "xlamem"));
  f("description", r.description);
  f("instructions", r.instructions);
  f("is_scheduled", r.scheduled);
  f("planning_seconds", r.planning_seconds);
  f("compiled_memory_stats", r.stats);
  f("peak", peak_view{&r});
  f("memory_spaces", r.memory_spaces);
  f("temp_heaps", r.heaps);
  f("fragmentation_at_peak", r.fragmentation_at_peak);
  f("schedule", r.timeline.schedule);
  f("buffers", r.timeline.buffers);
  f("allocations", r.allocations);
  f("live_ranges", r.live_ranges);
  f("transfers", r.transfers);
}

}  // namespace xlamem::report
