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
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"

namespace xlamem {

/// Options of `strong_lower_bound`.
struct strong_bound_options {
  double time_limit_seconds = 5.0;  ///< for all proofs together (<= 0: none)
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
/// The buffers meeting sections [a, b) of `g`, clipped to the window's times.
inline packing_problem window_problem(const packing_problem& p, const interval_graph& g, std::size_t a,
                                      std::size_t b, std::int64_t t0, std::int64_t t1) {
  packing_problem sub;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& buf = p.buffers[i];
    if (buf.size <= 0) continue;
    if (static_cast<std::size_t>(g.first_section(i)) >= b || static_cast<std::size_t>(g.last_section(i)) <= a) continue;
    auto c = buf;
    c.lower = std::max(c.lower, t0);
    c.upper = std::min(c.upper, t1);
    sub.buffers.push_back(std::move(c));
  }
  return sub;
}
}  // namespace detail

/// Raises max live bytes by window proofs within `o.time_limit_seconds`. Errors: the problem
/// is malformed.
[[nodiscard]] inline result<strong_bound_result> strong_lower_bound(const packing_problem& p,
                                                                   const strong_bound_options& o = {}) {
  if (auto ok = validate_problem(p); !ok) return ok.error();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const bool has_deadline = o.time_limit_seconds > 0;
  const auto deadline = start + std::chrono::duration_cast<clock::duration>(
                                    std::chrono::duration<double>(has_deadline ? o.time_limit_seconds : 0.0));
  auto time_left = [&] { return std::chrono::duration<double>(deadline - clock::now()).count(); };
  strong_bound_result out;
  out.max_live = lower_bound(p);
  out.lower_bound = out.max_live;
  const interval_graph g(p);
  const std::size_t sections = g.section_count();
  const auto granule = packing_granule(p);
  std::int64_t t_min = 0;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) t_min = i == 0 ? p.buffers[i].lower : std::min(t_min, p.buffers[i].lower);
  std::vector<std::size_t> centres(sections);
  std::iota(centres.begin(), centres.end(), std::size_t{0});
  std::stable_sort(centres.begin(), centres.end(),
                   [&](std::size_t x, std::size_t y) { return g.section_bytes(x) > g.section_bytes(y); });
  centres.resize(std::min(centres.size(), o.windows));
  for (const auto c : centres) {
    for (std::size_t width = 1; width <= std::max<std::size_t>(o.max_width, 1); width *= 2) {
      if (has_deadline && time_left() <= 0) break;
      const std::size_t a = c >= width / 2 ? c - width / 2 : 0;
      const std::size_t b = std::min(sections, a + width);
      const std::int64_t t0 = a == 0 ? t_min : g.section_end_time(a - 1);
      const std::int64_t t1 = g.section_end_time(b - 1);
      const auto sub = detail::window_problem(p, g, a, b, t0, t1);
      if (sub.buffers.size() > o.max_buffers) break;
      minimize_options mo;
      // A share of what is left, so that later windows still get a chance.
      mo.time_limit_seconds = has_deadline ? std::max(0.001, time_left() / 4) : 0.0;
      const auto r = minimize_peak(sub, mo);
      if (!r) return r.error();
      ++out.proofs;
      const auto bound = (r->lower_bound + granule - 1) / granule * granule;
      if (bound > out.lower_bound) {
        out.lower_bound = bound;
        out.improved = true;
        out.window_begin = t0;
        out.window_end = t1;
        out.window_buffers = sub.buffers.size();
      }
      if (b == sections && a == 0) break;
    }
  }
  out.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return out;
}

}  // namespace xlamem
