// SPDX-License-Identifier: Apache-2.0
/// @file
/// An auto-sharding answer for people and programs (`xlamem autoshard`): `autoshard_text`
/// writes the summary (status, the predicted per-device peak and its instruction, compute and
/// communication time, collectives by kind, the arguments' and results' PartitionSpecs, the
/// largest arrays' layouts, the bound and gap); `visit_fields` of `autoshard_report` gives its
/// JSON (`io/codec/json.hpp`). Instruction names come from the input: the text is made safe for a
/// terminal, and the JSON escapes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/autoshard/autoshard.hpp"
#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/sharding/collectives.hpp"
#include "xlamem/sharding/solver.hpp"

namespace xlamem {

/// One auto-sharding run, as reported.
struct autoshard_report {
  std::string file;
  std::string mesh;      ///< "x=2,y=4"
  std::string machine;   ///< the preset's name
  std::int64_t memory_limit = 0;
  double time_limit = 0;
  const autoshard::module_answer* answer = nullptr;
  std::optional<std::string> output;  ///< where the annotated module went
};

/// The collectives of one kind in an answer.
struct autoshard_collective {
  std::string kind;  ///< "all-gather", ...
  const sharding::collective_total* total = nullptr;
};

template <class F>
void visit_fields(const autoshard_collective& x, F&& f) {
  f("kind", x.kind);
  f("count", x.total->count);
  f("seconds", x.total->seconds);
  f("bytes_sent", x.total->bytes_sent);
}

template <class F>
void visit_fields(const autoshard::named_spec& x, F&& f) {
  f("name", x.name);
  f("spec", x.spec);
}

template <class F>
void visit_fields(const autoshard::array_choice& x, F&& f) {
  f("name", x.name);
  f("shape", x.shape);
  f("bytes", x.bytes);
  f("shard_bytes", x.shard_bytes);
  f("spec", x.spec);
}

namespace detail {
/// The collectives of `a` that ran at least once, in `collective_kind` order.
[[nodiscard]] inline std::vector<autoshard_collective> collectives_of(const autoshard::module_answer& a) {
  std::vector<autoshard_collective> out;
  for (std::size_t k = 0; k < a.result.collectives.size(); ++k) {
    if (a.result.collectives[k].count == 0) continue;
    out.push_back({std::string(sharding::to_string(static_cast<sharding::collective_kind>(k))), &a.result.collectives[k]});
  }
  return out;
}
}  // namespace detail

/// The JSON fields of a run.
template <class F>
void visit_fields(const autoshard_report& x, F&& f) {
  const auto& a = *x.answer;
  const auto& r = a.result.solve;
  f("file", x.file);
  f("mesh", x.mesh);
  f("machine", x.machine);
  f("memory_limit", x.memory_limit == std::numeric_limits<std::int64_t>::max() ? std::optional<std::int64_t>()
                                                                               : std::optional<std::int64_t>(x.memory_limit));
  f("status", std::string(to_string(r.status)));
  f("fits", r.feasible);
  f("peak_bytes", a.result.peak_bytes);
  f("peak_instruction", a.peak_instruction);
  f("least_peak_bytes", a.least_peak);
  f("compute_seconds", a.result.compute_seconds);
  f("communication_seconds", a.result.communication_seconds);
  f("collectives", detail::collectives_of(a));
  f("cost_ns", r.cost.to_string());
  f("lower_bound_ns", r.lower_bound ? std::optional<std::string>(r.lower_bound->to_string()) : std::nullopt);
  f("gap", r.gap);
  f("parameters", a.specs.parameters);
  f("outputs", a.specs.outputs);
  f("largest", a.largest);
  if (!a.instructions.empty()) f("instructions", a.instructions);
  f("operations", a.program.program.op_count());
  f("strategies", a.strategies);
  f("edges", a.edges);
  f("seconds", r.seconds);
  f("time_limit", x.time_limit);
  f("output", x.output);
}

/// The run for people.
[[nodiscard]] inline std::string autoshard_text(const autoshard_report& x) {
  const auto& a = *x.answer;
  const auto& r = a.result.solve;
  std::string s = x.file + ": " + std::to_string(a.program.entry_ops) + " instructions on mesh " + x.mesh + " (" +
                  x.machine + "), " + std::to_string(a.strategies) + " strategies, " + std::to_string(a.edges) +
                  " edges\n";
  s += "status:        " + std::string(to_string(r.status)) + "\n";
  const bool limited = x.memory_limit != std::numeric_limits<std::int64_t>::max();
  s += "peak:          " + human_bytes(a.result.peak_bytes) + " per device at '" + a.peak_instruction + "', limit " +
       (limited ? human_bytes(x.memory_limit) : std::string("none")) + (r.feasible ? " (fits)" : " (over the limit)") + "\n";
  if (!r.feasible) {
    s += "               no sharding on this mesh holds less than " + human_bytes(a.least_peak) + " per device\n";
  }
  s += "time:          compute " + fixed(a.result.compute_seconds * 1e3, 3) + " ms, communication " +
       fixed(a.result.communication_seconds * 1e3, 3) + " ms per device (predicted)\n";
  for (const auto& c : detail::collectives_of(a)) {
    s += "  " + pad_right(c.kind, 20) + pad_left(std::to_string(c.total->count), 5) + " x  " +
         pad_left(human_bytes(static_cast<std::int64_t>(c.total->bytes_sent)), 10) + " sent  " +
         fixed(c.total->seconds * 1e3, 3) + " ms\n";
  }
  if (r.lower_bound && r.gap) {
    s += "lower bound:   " + fixed(r.lower_bound->to_double() * 1e-6, 3) + " ms (gap " + fixed(100.0 * *r.gap, 2) + " %)\n";
  } else {
    s += "lower bound:   unknown\n";
  }
  s += "arguments:\n";
  for (const auto& p : a.specs.parameters) s += "  " + pad_right(terminal_text(p.name), 24) + " " + p.spec + "\n";
  s += "results:\n";
  for (const auto& p : a.specs.outputs) s += "  " + pad_right(terminal_text(p.name), 24) + " " + p.spec + "\n";
  s += "largest arrays:\n";
  for (const auto& c : a.largest) {
    s += "  " + pad_right(terminal_text(c.name), 24) + " " + pad_right(terminal_text(c.shape), 20) + " " + pad_left(human_bytes(c.bytes), 10) +
         " -> " + pad_left(human_bytes(c.shard_bytes), 10) + "  " + c.spec + "\n";
  }
  if (x.output) s += "wrote " + *x.output + "\n";
  // Names come from the module: escaped before padding (so the columns hold) and all again.
  return terminal_text(s);
}

}  // namespace xlamem
