// SPDX-License-Identifier: Apache-2.0
/// @file
/// What `solve` (`packing/solvers.hpp`) found, for people and programs: `packing_text` (the
/// problem's size, the lower bound, XLA's best fit as a baseline, the solver's peak against
/// both), `packing_result_line` (`peak=... lower_bound=... optimal=... seconds=...`, one line
/// a script can read), `packing_svg` (the placement drawn) and the JSON fields of a
/// `packing_report` (`io/codec/json.hpp`'s `json_document`).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/io/codec/svg.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/solvers.hpp"

namespace xlamem {

/// The rectangles of a packing placement, labelled with the buffer ids.
[[nodiscard]] inline std::vector<layout_rect> layout_of(const packing_problem& p, const placement& s) {
  std::vector<layout_rect> rects;
  rects.reserve(p.buffers.size());
  for (std::size_t i = 0; i < p.buffers.size() && i < s.offsets.size(); ++i) {
    const auto& b = p.buffers[i];
    rects.push_back({b.lower, b.upper, s.offsets[i], b.size, b.id.empty() ? std::to_string(i) : b.id});
  }
  return rects;
}


/// One solve of one problem, as reported.
struct packing_report {
  std::string file;                         ///< how the input is named
  const packing_problem* problem = nullptr; ///< the problem solved
  std::string_view solver;                  ///< the solver's name
  solve_options options;
  solve_result result;
};

/// A solve's status word (solve_status.hpp): "optimal" (placed at the lower bound),
/// "feasible" (placed, the solver finished), "time_limit" (placed, but the time limit ended the
/// work: the best placement found, perhaps the fallback's), "infeasible" (proven under the
/// capacity) or "no_answer" (no placement under the capacity by the time limit).
[[nodiscard]] inline std::string_view status_name(const solve_result& r) noexcept { return to_string(r.status); }

/// The JSON fields of a report: buffers, solver, status (`status_name`), peak (null when not
/// placed), lower_bound, optimal, gap ((peak - lower_bound) / peak, null when not placed),
/// seconds, seconds_to_first_feasible and seconds_to_best (-1: none), fallback (the solver that placed instead, null when
/// none), xla_best_fit_peak (null when not run or out of time), nodes, and the capacity when
/// one was given.
template <class F>
void visit_fields(const packing_report& r, F&& f) {
  const auto& s = r.result;
  f("file", r.file);
  f("buffers", r.problem->buffers.size());
  f("solver", r.solver);
  f("status", status_name(s));
  f("peak", s.placed() ? std::optional<std::int64_t>(s.peak) : std::nullopt);
  f("lower_bound", s.lower_bound);
  f("optimal", s.optimal());
  f("gap", s.gap);
  f("seconds", s.seconds);
  f("seconds_to_first_feasible", s.seconds_to_first_feasible);
  f("seconds_to_best", s.seconds_to_best);
  f("fallback", s.fallback.empty() ? std::nullopt : std::optional<std::string_view>(s.fallback));
  f("xla_best_fit_peak", s.xla_best_fit_peak >= 0 ? std::optional<std::int64_t>(s.xla_best_fit_peak) : std::nullopt);
  f("nodes", s.nodes);
  if (r.options.capacity >= 0) f("capacity", r.options.capacity);
}

/// The report for people, one fact a line.
[[nodiscard]] inline std::string packing_text(const packing_report& r) {
  const auto& p = *r.problem;
  const auto& s = r.result;
  std::int64_t t0 = 0, t1 = 0;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    t0 = i == 0 ? p.buffers[i].lower : std::min(t0, p.buffers[i].lower);
    t1 = i == 0 ? p.buffers[i].upper : std::max(t1, p.buffers[i].upper);
  }
  std::string out = r.file + ": " + std::to_string(p.buffers.size()) + " buffers, time [" + std::to_string(t0) + ", " +
                    std::to_string(t1) + "), " + std::to_string(s.sections) + " sections, " +
                    std::to_string(s.conflicts) + " conflicts\n";
  auto line = [&](std::string_view what, const std::string& text) { out += "  " + pad_right(what, 30) + " " + text + "\n"; };
  line("lower bound (max live bytes)", bytes_text(s.max_live));
  if (s.xla_best_fit_peak >= 0) {
    line("XLA best fit (baseline)", bytes_text(s.xla_best_fit_peak) + "  " +
                                        percent_of(s.xla_best_fit_peak - s.max_live, s.max_live, 1, true) + "% over the bound");
  } else if (s.xla_baseline_out_of_time) {
    line("XLA best fit (baseline)", "stopped by the time limit (" + fixed(r.options.time_limit, 1) + " s)");
  } else {
    line("XLA best fit (baseline)", "skipped: " + std::to_string(s.conflicts) + " conflicting pairs (over " +
                                        std::to_string(portfolio_fit{}.xla_edge_limit) + "; --solver xla runs it)");
  }
  if (r.options.capacity >= 0) line("capacity", bytes_text(r.options.capacity));
  if (s.placed()) {
    const std::string versus_xla =
        s.xla_best_fit_peak > 0
            ? ", " + percent_of(s.xla_best_fit_peak - s.peak, s.xla_best_fit_peak, 1) + "% below XLA best fit"
            : std::string();
    line(std::string(r.solver) + " peak", bytes_text(s.peak) + "  " + percent_of(s.peak - s.max_live, s.max_live, 1, true) +
                                              "% over the bound" + versus_xla + (s.optimal() ? " (optimal)" : ""));
    if (s.stopped_by_time_limit) {
      out += "  stopped by the time limit (" + fixed(r.options.time_limit, 1) + " s): " +
             (s.fallback.empty() ? std::string("the best placement found so far")
                                 : "placed by the fallback '" + std::string(s.fallback) + "' (O(n log n)), as " +
                                       std::string(r.solver) + " had not finished") +
             "\n";
    }
  } else if (s.status == solve_status::infeasible) {
    out += "  no placement fits the capacity (proven)\n";
  } else {
    out += "  no placement found within the time limit (" + fixed(r.options.time_limit, 1) + " s)\n";
  }
  if (s.nodes != 0) line("search nodes", std::to_string(s.nodes));
  return terminal_text(out);  // the file name comes from the user
}

/// `peak=<bytes|none> lower_bound=<bytes> optimal=<yes|no> seconds=<s> status=<status_name>`.
[[nodiscard]] inline std::string packing_result_line(const solve_result& s) {
  return "peak=" + (s.placed() ? std::to_string(s.peak) : std::string("none")) + " lower_bound=" +
         std::to_string(s.lower_bound) + " optimal=" + (s.optimal() ? "yes" : "no") + " seconds=" + fixed(s.seconds, 3) +
         " status=" + std::string(status_name(s)) + "\n";
}

/// The placement drawn (time on x, offset on y), with the capacity when one was given.
[[nodiscard]] inline std::string packing_svg(const packing_report& r) {
  const auto& s = r.result;
  layout_svg_options o;
  o.title = r.file + ": " + std::to_string(r.problem->buffers.size()) + " buffers, peak " + std::to_string(s.peak) +
            " B, lower bound " + std::to_string(s.lower_bound) + " B" + (s.optimal() ? " (optimal)" : "");
  o.capacity = r.options.capacity;
  return layout_svg(layout_of(*r.problem, s.placement), o);
}

}  // namespace xlamem
