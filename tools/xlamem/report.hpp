// SPDX-License-Identifier: Apache-2.0
// The memory report of one compiled program, whatever it was read from (an optimised HLO
// module that xlamem plans, XLA's own `*-buffer-assignment.txt`, or a `--xla_dump_to`
// folder), and its writers: the summary for people, JSON, the HTML page and the SVG. `plan`
// and `diff` share them; the computations themselves are in include/xlamem/report/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xlamem/error.hpp"
#include "xlamem/passes/memory_stats.hpp"
#include "xlamem/report/memory_timeline.hpp"

namespace xlamem::cli {

/// What to read and, for a module, how to plan it.
struct load_options {
  std::string file;         ///< module, buffer-assignment dump, dump folder, or '-'
  std::string module_name;  ///< in a folder: the module whose file name contains this
  bool replan = false;      ///< plan the module even where XLA's buffer assignment is beside it
  std::string solver = "search";
  std::string backend = "cpu";  ///< whose rules plan a module: "cpu" (XLA:CPU) or "gpu" (XLA:GPU, NVIDIA)
  std::int64_t alignment = 0;   ///< of temporaries; 0: the backend's (64 for cpu, 256 for gpu)
  double time_limit = 1.0;
};

/// The alignment `o` plans with: its own, else its backend's.
[[nodiscard]] inline std::int64_t alignment_of(const load_options& o) {
  if (o.alignment != 0) return o.alignment;
  return o.backend == "gpu" ? 256 : 64;
}

/// One temporary heap: its size against its lower bound.
struct heap_summary {
  std::int64_t allocation = 0;
  std::int64_t color = 0;
  std::int64_t size = 0;
  std::int64_t lower_bound = 0;
  std::size_t buffers = 0;
  std::string solver;
};

/// A compiled program's memory, ready for the writers.
struct plan_view {
  std::string file;       ///< the file actually read (in a folder: the module chosen)
  std::string origin;     ///< "xlamem plan (solver search, alignment 64)" or "XLA's buffer assignment ..."
  bool from_xla = false;  ///< XLA's own plan, not replanned
  std::string module;
  std::size_t instructions = 0;
  bool scheduled = true;
  double seconds = 0;     ///< planning time (0 for XLA's plan)
  compiled_memory_stats stats;
  report::memory_timeline timeline;
  report::peak_info peak;
  std::vector<report::fragmentation> fragmentation;
  std::vector<heap_summary> heaps;
  std::string xla_table;  ///< the allocation table in XLA's dump format (--dump xla)
  nlohmann::ordered_json details;  ///< plan-specific JSON (allocations, live ranges)
};

/// Reads and (for a module) plans. Errors name FILE:LINE:COL.
result<plan_view> load_plan(const load_options& o);

/// The summary for people: at most about 30 lines with `top` buffers.
std::string summary_text(const plan_view& v, std::size_t top);
/// Everything, as one JSON object.
nlohmann::ordered_json plan_json(const plan_view& v);
/// The self-contained interactive page.
std::string plan_html(const plan_view& v, std::size_t top);
/// The whole-memory view as a static SVG (io/svg.hpp).
std::string plan_svg(const plan_view& v);

/// One buffer's JSON, as every writer spells it.
nlohmann::ordered_json buffer_json(const report::memory_timeline& t, std::size_t i);
/// A byte count for people with the exact figure: "2.06 MiB (2157968 B)".
std::string bytes_text(std::int64_t b);

}  // namespace xlamem::cli
