// SPDX-License-Identifier: Apache-2.0
/// @file
/// How buffer assignment packs a temporary heap: a `temp_packer` is a callable that places a
/// validated `packing_problem` and returns a valid placement. `named_temp_packer` makes one
/// of any row of the solver table (`packing/solvers.hpp`), by the row's family:
///
/// - `solver_family::xla`: XLA's best fit; buffer assignment then keeps XLA's own placement of
///   the heap (its colocated best fit, the baseline it always computes).
/// - `solver_family::heuristic`: the row's placement.
/// - `solver_family::search`: the better of the heuristic portfolio and XLA's best fit, then,
///   while that is above the heap's lower bound (`temp_lower_bound`), the row's search within
///   the time budget, kept when it is strictly better.
///
/// Buffer assignment never keeps a placement above XLA's best fit.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/packing/aligned_lower_bound.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/solvers.hpp"
#include "xlamem/packing/xla_best_fit.hpp"

namespace xlamem {

/// A temporary-heap packing policy: `p(problem)` returns a valid placement of a problem that
/// `validate_problem` accepts, or an error.
template <class P>
concept temp_packer = requires(const P& p, const packing_problem& problem) {
  { p(problem) } -> std::same_as<result<placement>>;
  { p.name() } -> std::convertible_to<std::string_view>;
};
static_assert(temp_packer<xla_best_fit_packer>);  // packing/xla_best_fit.hpp

/// A row of the solver table as a temporary-heap packer (see the file comment).
struct named_temp_packer {
  named_solver solver = packing_solvers.front();
  /// The search family's budget per heap, seconds: 0 the heuristics' placement (the quickest
  /// answer), infinity none; negative or NaN refused (deadline.hpp).
  double time_limit = 1.0;
  /// Once set (by another thread), the heuristics and the search stop as at a deadline and
  /// the heap gets the best placement in hand (deadline.hpp); null: never.
  const cancellation_flag* cancel = nullptr;

  [[nodiscard]] std::string_view name() const noexcept { return solver.name; }
  /// Whether buffer assignment keeps XLA's own placement of the heap.
  [[nodiscard]] bool places_as_xla() const noexcept { return solver.family == solver_family::xla; }

  [[nodiscard]] result<placement> operator()(const packing_problem& p) const {
    if (const char* bad = time_limit_error(time_limit)) return make_error(errc::invalid_argument, bad);
    if (auto ok = validate_problem(p); !ok) return ok.error();
    if (solver.run == nullptr) return make_error(errc::invalid_argument, "solver '" + std::string(solver.name) + "' has no function");
    const interval_graph g(p);
    solve_deadline watch;  // no time limit: only the cancellation flag
    watch.cancel = cancel;
    if (solver.family != solver_family::search) {
      solve_options o;
      o.deadline = watch;
      auto r = solver.run(p, g, o);
      if (!r) return r.error();
      if (!has_answer(r->status)) return stack_fit{}.place(p, g);  // cancelled before a placement
      return std::move(r->solution);
    }
    placement best = std::move(*portfolio_fit{}.place_by(p, g, watch).solution);  // the sweep's at least
    auto best_peak = peak_of(p, best);
    // XLA's best fit is quadratic in the temporaries live together: above the portfolio's
    // limit of conflicting pairs it is left out, as the portfolio leaves it out.
    if (g.edge_count() <= portfolio_fit{}.xla_edge_limit) {
      auto xla = xla_best_fit{}.place_by(p, g, watch);
      if (xla.complete && peak_of(p, *xla.solution) < best_peak) {
        best_peak = peak_of(p, *xla.solution);
        best = std::move(*xla.solution);
      }
    }
    if (time_limit > 0 && best_peak > temp_lower_bound(p)) {
      solve_options o;
      o.time_limit = time_limit;
      o.deadline = watch;
      o.xla_baseline = false;
      auto r = solver.run(p, g, o);
      if (r && has_answer(r->status) && validate(p, r->solution) && peak_of(p, r->solution) < best_peak) {
        best = std::move(r->solution);
      }
    }
    return best;
  }
};
static_assert(temp_packer<named_temp_packer>);

}  // namespace xlamem
