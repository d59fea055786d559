// SPDX-License-Identifier: Apache-2.0
/// @file
/// Packing policies for the temporary heap of buffer assignment (`temp_packer`): a callable
/// that places a validated `packing_problem` and returns a valid placement.
///
/// - `xla_best_fit_packer` (`packing/xla_best_fit.hpp`): XLA's heap simulator
///   (`GlobalDecreasingSizeBestFitHeap` in its spatial and temporal orders, keeping the smaller:
///   `ChooseBestHeapAlgorithm`), the baseline.
/// - `heuristic_packer`: the project's fast heuristic portfolio (`portfolio_fit`), which
///   includes XLA's best fit and is never worse.
/// - `search_packer`: the project's best solver: the anytime exact search (`minimize_peak`)
///   under a time budget when the packing engine provides it, else the heuristic portfolio; the
///   result is never above XLA best fit's (the better of the two is kept).
///
/// `solver_kind` names them for options and the command line ("xla", "heuristic", "search").
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/packing/aligned_lower_bound.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"
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

/// The heuristic portfolio (never worse than XLA best fit).
struct heuristic_packer {
  [[nodiscard]] std::string_view name() const noexcept { return "heuristic"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const { return place(p, portfolio_fit{}); }
};
static_assert(temp_packer<heuristic_packer>);

namespace detail {
/// `minimize_peak(p, o)` when the packing engine declares it (found by ADL at instantiation).
template <class Problem, class Options>
std::optional<placement> try_minimize_peak(const Problem& p, const Options& o) {
  if constexpr (requires { minimize_peak(p, o); }) {
    auto r = minimize_peak(p, o);
    if (r && r->status == search_status::feasible) return std::move(r->solution);
    return std::nullopt;
  } else {
    (void)p, (void)o;
    return std::nullopt;
  }
}
}  // namespace detail

/// The best solver: exact search with a time budget, started from the heuristic portfolio;
/// never above XLA best fit.
struct search_packer {
  double time_limit_seconds = 1.0;  ///< wall-clock budget of the search (<= 0: heuristic only)

  [[nodiscard]] std::string_view name() const noexcept { return "search"; }
  [[nodiscard]] result<placement> operator()(const packing_problem& p) const {
    if (auto ok = validate_problem(p); !ok) return ok.error();
    const interval_graph g(p);
    placement best = portfolio_fit{}.place(p, g);
    auto best_peak = peak_of(p, best);
    const placement xla = xla_best_fit{}.place(p, g);
    if (peak_of(p, xla) < best_peak) {
      best = xla;
      best_peak = peak_of(p, xla);
    }
    if (time_limit_seconds > 0 && best_peak > temp_lower_bound(p)) {
      minimize_options o;
      o.time_limit_seconds = time_limit_seconds;
      if (auto s = detail::try_minimize_peak(p, o); s && validate(p, *s) && peak_of(p, *s) < best_peak) {
        best = std::move(*s);
      }
    }
    return best;
  }
};
static_assert(temp_packer<search_packer>);

/// The packers by name.
enum class solver_kind {
  xla,        ///< `xla_best_fit_packer`
  heuristic,  ///< `heuristic_packer`
  search,     ///< `search_packer` (the default)
};

/// Parses "xla" (also "xla-best-fit"), "heuristic" (also "portfolio"), "search" (also "best").
[[nodiscard]] inline result<solver_kind> parse_solver_kind(std::string_view s) {
  if (s == "xla" || s == "xla-best-fit") return solver_kind::xla;
  if (s == "heuristic" || s == "portfolio") return solver_kind::heuristic;
  if (s == "search" || s == "best") return solver_kind::search;
  return make_error(errc::invalid_argument,
                    "unknown solver '" + std::string(s) + "' (expected xla, heuristic or search)");
}

/// The name `parse_solver_kind` reads back.
[[nodiscard]] constexpr std::string_view name_of(solver_kind k) noexcept {
  switch (k) {
    case solver_kind::xla: return "xla";
    case solver_kind::heuristic: return "heuristic";
    default: return "search";
  }
}

}  // namespace xlamem
