// SPDX-License-Identifier: Apache-2.0
/// @file
/// A lower bound on the optimal peak stronger than max live bytes, with a certificate: a time
/// window whose buffers alone cannot be packed under a capacity.
///
/// Why it is a bound: take the buffers meeting a window of consecutive sections and clip
/// their live intervals to the window. Every placement of the whole problem, restricted to
/// them, is a placement of that subproblem (clipping only removes conflicts), so the
/// subproblem's optimum is at most the whole problem's. When the exact search proves the
/// subproblem infeasible at capacity C, the whole problem needs more than C, and, its optimum
/// being a multiple of `packing_granule(p)`, at least C + granule. Max live bytes is the
/// window of one section with the search replaced by a sum, so this bound is never below it.
///
/// Windows are tried around the fullest sections first, doubling their width from one
/// section; each is solved by `minimize_peak`, whose proven lower bound (exhausted decision
/// searches) is the window's bound, within a quarter of the time left.
///
/// `window_survey` answers the converse question, whether any window can certify more than a
/// capacity: a window inside a feasible one is feasible too (its relaxation), so a staircase
/// over (first, end) sections finds every maximal feasible window (each with a placement, a
/// certificate re-checked by `validate`) and the windows left open (timed out, or proven
/// infeasible, which is a bound); every window either lies in a feasible one or contains an
/// open one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"

namespace xlamem {

/// Options of `strong_lower_bound`.
struct strong_bound_options {
  double time_limit = 5.0;  ///< seconds for all proofs together (0: none tried; infinity: no limit)
  std::size_t windows = 8;          ///< fullest sections used as window centres
  std::size_t max_width = 64;       ///< widest window, in sections (widths double from 1)
  std::size_t max_buffers = 400;    ///< windows meeting more buffers are not tried
};

/// The bound and its certificate.
struct strong_bound_result {
  std::int64_t lower_bound = 0;  ///< proven lower bound on the optimal peak
  std::int64_t max_live = 0;     ///< `lower_bound(p)` (max live bytes, rounded to the granule)
  bool improved = false;         ///< lower_bound > max_live
  /// When improved: the window (times [window_begin, window_end)) whose buffers, clipped to
  /// it, were proven (exhausted search) to need `lower_bound`, and how many buffers it holds.
  std::int64_t window_begin = 0, window_end = 0;
  std::size_t window_buffers = 0;
  std::size_t proofs = 0;  ///< windows searched
  double seconds = 0.0;
};

namespace detail {
/// Whether buffer i of `p` takes part in the window of sections [a, b) of `g`.
inline bool meets_window(const packing_problem& p, const interval_graph& g, std::size_t i, std::size_t a,
                         std::size_t b) {
  return p.buffers[i].size > 0 && static_cast<std::size_t>(g.first_section(i)) < b &&
         static_cast<std::size_t>(g.last_section(i)) > a;
}

/// The times [t0, t1) that sections [a, b) of `g` span (the first starts at the earliest lower).
inline std::pair<std::int64_t, std::int64_t> window_times(const packing_problem& p, const interval_graph& g,
                                                          std::size_t a, std::size_t b) {
  std::int64_t t0 = 0;
  if (a > 0) {
    t0 = g.section_end_time(a - 1);
  } else {
    for (std::size_t i = 0; i < p.buffers.size(); ++i) t0 = i == 0 ? p.buffers[i].lower : std::min(t0, p.buffers[i].lower);
  }
  return {t0, g.section_end_time(b - 1)};
}
}  // namespace detail

/// The relaxation of `p` to sections [first, end) of `g` (`interval_graph(p)`): the buffers
/// meeting them, in their order in `p`, live intervals clipped to the window's times. Its
/// optimum is at most p's.
/// @pre first < end <= g.section_count().
[[nodiscard]] inline packing_problem window_relaxation(const packing_problem& p, const interval_graph& g,
                                                       std::size_t first, std::size_t end) {
  const auto [t0, t1] = detail::window_times(p, g, first, end);
  packing_problem sub;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    if (!detail::meets_window(p, g, i, first, end)) continue;
    auto c = p.buffers[i];
    c.lower = std::max(c.lower, t0);
    c.upper = std::min(c.upper, t1);
    sub.buffers.push_back(std::move(c));
  }
  return sub;
}

/// The windows [first, end) of sections of `g` (`interval_graph(p)`) that `strong_lower_bound`
/// tries, in its order: around each of the `o.windows` fullest sections, widths doubling from
/// one section to `o.max_width`, while a window meets at most `o.max_buffers` buffers; each
/// window once. A bound from them needs one of them not to pack, so placements of windows
/// containing them all (a certificate) show that no time limit lets it beat max live.
[[nodiscard]] inline std::vector<std::pair<std::size_t, std::size_t>> strong_bound_windows(
    const packing_problem& p, const interval_graph& g, const strong_bound_options& o = {}) {
  const std::size_t sections = g.section_count();
  std::vector<std::size_t> centres(sections);
  std::iota(centres.begin(), centres.end(), std::size_t{0});
  std::stable_sort(centres.begin(), centres.end(),
                   [&](std::size_t x, std::size_t y) { return g.section_bytes(x) > g.section_bytes(y); });
  centres.resize(std::min(centres.size(), o.windows));
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const auto c : centres) {
    for (std::size_t width = 1; width <= std::max<std::size_t>(o.max_width, 1); width *= 2) {
      const std::size_t a = c >= width / 2 ? c - width / 2 : 0;
      const std::size_t b = std::min(sections, a + width);
      std::size_t meeting = 0;
      for (std::size_t i = 0; i < p.buffers.size(); ++i) meeting += detail::meets_window(p, g, i, a, b) ? 1 : 0;
      if (meeting > o.max_buffers) break;  // wider windows around c meet at least as many
      if (std::find(out.begin(), out.end(), std::pair{a, b}) == out.end()) out.emplace_back(a, b);
      if (b == sections && a == 0) break;
    }
  }
  return out;
}

/// Raises max live bytes by window proofs (the windows of `strong_bound_windows`) within
/// `o.time_limit`. Errors: the problem is malformed.
[[nodiscard]] inline result<strong_bound_result> strong_lower_bound(const packing_problem& p,
                                                                   const strong_bound_options& o = {}) {
  if (auto ok = validate_problem(p); !ok) return ok.error();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  if (const char* bad = time_limit_error(o.time_limit)) return make_error(errc::invalid_argument, bad);
  const auto until = deadline_after(start, o.time_limit);
  const bool has_deadline = until.has_value();
  const auto deadline = until.value_or(start);
  auto time_left = [&] { return std::chrono::duration<double>(deadline - clock::now()).count(); };
  strong_bound_result out;
  out.max_live = lower_bound(p);
  out.lower_bound = out.max_live;
  const interval_graph g(p);
  const auto granule = packing_granule(p);
  for (const auto& [a, b] : strong_bound_windows(p, g, o)) {
    if (has_deadline && time_left() <= 0) break;
    const auto sub = window_relaxation(p, g, a, b);
    minimize_options mo;
    // A share of what is left, so that later windows still get a chance.
    mo.time_limit = has_deadline ? std::max(0.001, time_left() / 4) : std::numeric_limits<double>::infinity();
    const auto r = minimize_peak(sub, mo);
    if (!r) return r.error();
    ++out.proofs;
    const auto bound = (r->lower_bound + granule - 1) / granule * granule;
    if (bound > out.lower_bound) {
      out.lower_bound = bound;
      out.improved = true;
      std::tie(out.window_begin, out.window_end) = detail::window_times(p, g, a, b);
      out.window_buffers = sub.buffers.size();
    }
  }
  out.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return out;
}

/// Options of `window_survey`.
struct window_survey_options {
  std::int64_t capacity = -1;        ///< the capacity decided per window (< 0: `lower_bound(p)`)
  double seconds_per_window = 10.0;  ///< decision search limit per window (infinity: none)
  /// Seconds for the whole survey (infinity: none); windows left are open.
  double time_limit = std::numeric_limits<double>::infinity();
  /// Placements of the whole problem (any peak) tried on each window before searching: a
  /// window where one of them, restricted, stays under the capacity needs no search.
  std::vector<placement> hints;
};

/// One window [first, end) (sections) decided at the survey's capacity.
struct window_verdict {
  std::size_t first = 0, end = 0;
  std::size_t buffers = 0;
  solve_status status = solve_status::no_answer;
  placement solution;  ///< feasible: a placement of `window_relaxation(p, g, first, end)`
  double seconds = 0.0;
};

/// What `window_survey` proved.
struct window_survey_result {
  std::int64_t capacity = 0;
  /// Every window lies inside one of these, or contains one of `open` (never both needed).
  std::vector<window_verdict> feasible;  ///< maximal feasible windows, with validated placements
  std::vector<window_verdict> open;      ///< minimal windows not shown feasible, and every infeasible one
  /// capacity + granule when some window was proven infeasible (a certified bound), else 0.
  std::int64_t lower_bound = 0;
  bool complete = false;  ///< the staircase reached the last section (no total time-out)
  std::size_t searches = 0;
  double seconds = 0.0;
};

namespace detail {
/// The minimal open windows of `open`: one containing another open one says nothing more,
/// unless it was proven infeasible (it is then the bound's certificate).
[[nodiscard]] inline std::vector<window_verdict> minimal_open_windows(std::vector<window_verdict> open) {
  std::vector<window_verdict> out;
  for (std::size_t i = 0; i < open.size(); ++i) {
    bool contains_other = false;
    if (open[i].status == solve_status::infeasible) {
      out.push_back(std::move(open[i]));
      continue;
    }
    for (std::size_t j = 0; j < open.size() && !contains_other; ++j) {
      contains_other = j != i && open[i].first <= open[j].first && open[j].end <= open[i].end &&
                       (open[i].first != open[j].first || open[i].end != open[j].end || j < i);
    }
    if (!contains_other) out.push_back(std::move(open[i]));
  }
  return out;
}
}  // namespace detail

/// Decides every window of consecutive sections at `o.capacity` by a staircase: for each
/// first section, the window grows while it packs (`pack_within`, then `minimize_peak`, half
/// of `seconds_per_window` each), and the first one that does not is open. The end never
/// moves back, because a window inside a feasible one is feasible, so at most 2 * sections
/// searches are run. Feasible placements are checked with `validate` before they count.
/// Errors: the problem is malformed.
[[nodiscard]] inline result<window_survey_result> window_survey(const packing_problem& p,
                                                                const window_survey_options& o = {}) {
  for (const double limit : {o.time_limit, o.seconds_per_window}) {
    if (const char* bad = time_limit_error(limit)) return make_error(errc::invalid_argument, bad);
  }
  if (auto ok = validate_problem(p); !ok) return ok.error();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  window_survey_result out;
  out.capacity = o.capacity >= 0 ? o.capacity : lower_bound(p);
  const interval_graph g(p);
  const std::size_t n = g.section_count();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  auto decide = [&](std::size_t a, std::size_t b) -> result<window_verdict> {
    window_verdict v;
    v.first = a;
    v.end = b;
    const auto sub = window_relaxation(p, g, a, b);
    v.buffers = sub.buffers.size();
    for (const auto& h : o.hints) {
      if (h.offsets.size() != p.buffers.size()) continue;
      placement restricted;
      for (std::size_t i = 0; i < p.buffers.size(); ++i) {
        if (detail::meets_window(p, g, i, a, b)) restricted.offsets.push_back(h.offsets[i]);  // as in `sub`
      }
      if (validate(sub, restricted) && peak_of(sub, restricted) <= out.capacity) {
        v.status = solve_status::feasible;
        v.solution = std::move(restricted);
        return v;
      }
    }
    search_options so;
    so.capacity = out.capacity;
    so.time_limit = o.seconds_per_window;
    if (std::isfinite(o.time_limit)) {
      const double left = o.time_limit - elapsed();
      if (left <= 0) {
        v.status = solve_status::no_answer;
        return v;
      }
      so.time_limit = std::min(so.time_limit, left);
    }
    // Half of the budget to the decision search at the capacity, half to `minimize_peak`:
    // with slack under the capacity its probes at lower targets often find a placement the
    // decision search misses (J's window [1, 55): timed out in 60 s, 945 of 966 granules in 20 s).
    const double budget = so.time_limit;
    if (std::isfinite(budget)) so.time_limit = budget / 2;
    auto r = pack_within(sub, so);
    if (!r) return r.error();
    ++out.searches;
    v.status = r->status;
    v.seconds = r->seconds;
    placement found = std::move(r->solution);
    if (v.status == solve_status::no_answer && std::isfinite(budget)) {
      minimize_options mo;
      mo.time_limit = budget / 2;
      auto m = minimize_peak(sub, mo);
      if (!m) return m.error();
      v.seconds += m->seconds;
      if (has_answer(m->status) && m->peak <= out.capacity) {
        v.status = solve_status::feasible;
        found = std::move(m->solution);
      } else if (m->lower_bound > out.capacity) {
        v.status = solve_status::infeasible;  // an exhausted decision search above the capacity
      }
    }
    if (v.status == solve_status::feasible) {
      // Only a placement that checks out is a certificate.
      if (!validate(sub, found) || peak_of(sub, found) > out.capacity) v.status = solve_status::no_answer;
      else v.solution = std::move(found);
    }
    return v;
  };
  std::size_t a = 0, b = 0;  // [a, b) is known feasible (empty when a == b)
  window_verdict held;       // the placement of [a, b) once shown
  bool held_valid = false;
  std::vector<window_verdict> open;
  while (a < n) {
    if (b == n) {
      out.complete = true;
      break;
    }
    if (elapsed() >= o.time_limit) break;  // never for infinity
    auto v = decide(a, b + 1);
    if (!v) return v.error();
    if (v->status == solve_status::feasible) {
      held = std::move(*v);
      held_valid = true;
      ++b;
      continue;
    }
    if (v->status == solve_status::infeasible) {
      // p's optimum exceeds the capacity and is a multiple of its granule.
      const auto granule = packing_granule(p);
      out.lower_bound = (out.capacity / granule + 1) * granule;
    }
    // [a, b) is maximal for this first section; it is new unless the previous one ends at b.
    if (held_valid && held.first == a && (out.feasible.empty() || out.feasible.back().end < b)) {
      out.feasible.push_back(std::move(held));
    }
    held_valid = false;
    open.push_back(std::move(*v));
    ++a;
    if (b < a) b = a;
  }
  if (n == 0) out.complete = true;
  // The last window grown (all of [a, n) when complete) is maximal too.
  if (held_valid && held.first == a && (out.feasible.empty() || out.feasible.back().end < b)) {
    out.feasible.push_back(std::move(held));
  }
  out.open = detail::minimal_open_windows(std::move(open));
  out.seconds = elapsed();
  return out;
}

}  // namespace xlamem
