// SPDX-License-Identifier: Apache-2.0
/// @file
/// The named packing solvers, in one table (`packing_solvers`), and `solve`: the front door
/// of packing for every front end. The command line's `--solver` parser and its help, the
/// planner's temporary-heap packer (`buffer_assignment_options::solver`) and the Python
/// package all read the table, so adding a solver is one row: a name, older spellings, one
/// line of help, its family and the function that runs it (LLVM's `PassRegistry.def` is the
/// model: one table in the library, none in the tools).
///
/// `solve(problem, solver, options)` validates the problem once, builds its interval graph
/// once, runs the solver, checks the placement and reports the status (the words of every
/// solver, solve_status.hpp: optimal, feasible, time_limit, infeasible, no_answer), the peak, the best proven lower bound, the
/// search nodes and the seconds spent. It prints nothing.
///
/// The time limit is a wall-clock contract for every solver, not only the search: `solve`
/// gives the solver a deadline early enough to leave time for what comes after it (checking
/// the placement, and placing everything with the O(n log n) fallback, `sweep`, when the
/// solver had placed nothing by then); that reserve is measured, a multiple of what computing
/// the simple lower bound (a sweep over the buffers in time order) took. A run the deadline
/// cut short is reported so (`solve_result::stopped_by_time_limit`, with `fallback` naming the
/// fallback when it placed), with the best placement found and its gap to the lower bound.
/// A cancellation flag set during the solve (`solve_options::deadline.cancel`) ends the work as
/// the deadline does, and `solve_result::cancelled` says so.
/// What cannot be cut is the O(n log n) floor: validating the problem, the interval graph,
/// the simple bound, the sweep and the final check (about 2 microseconds per buffer on the
/// machine of docs/benchmarks.md); a limit below that is overrun by it.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/name_table.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"
#include "xlamem/packing/xla_best_fit.hpp"

namespace xlamem {

/// How a solver works; it decides how `solve` reports it and how the planner uses it for a
/// temporary heap.
enum class solver_family : std::uint8_t {
  xla,        ///< XLA's heap simulator (best fit): the planner places a heap exactly as XLA does
  heuristic,  ///< one greedy pass: no proof; cut short by the time limit
  search,     ///< anytime exact search within a time limit: proves bounds and infeasibility
};

/// Options of `solve`.
struct solve_options {
  std::int64_t capacity = -1;        ///< >= 0: decide whether everything fits under it; < 0: minimise the peak
  /// Wall-clock seconds for the whole solve, every solver; 0: the quickest placement (a
  /// deadline already passed); infinity: none (deadline.hpp).
  double time_limit = 10.0;
  /// When set, the deadline instead of `time_limit`: a front end that counts its
  /// reading in the limit sets it from its own start. `solve` hands each solver its deadline
  /// here, moved earlier by the reserve. Its `cancel` flag, with or without a time, stops the
  /// solve early when another thread sets it (deadline.hpp).
  solve_deadline deadline;
  /// When the caller's work began (a front end's start, its reading included): the time limit
  /// and the seconds reported count from it. None: the start of the call.
  std::optional<solve_clock::time_point> started;
  std::uint64_t seed = 0;            ///< varies the search's branching orders
  bool xla_baseline = true;          ///< also place with XLA's best fit, as a baseline figure
};

/// What one run of a solver found, before `solve` checks and completes it.
struct solver_outcome {
  solve_status status = solve_status::feasible;  ///< with an answer (`has_answer`): `solution` is a placement
  placement solution;
  std::int64_t lower_bound = 0;  ///< a proven lower bound on the optimal peak (0: none of its own)
  std::uint64_t nodes = 0;       ///< search nodes visited
  bool stopped_by_time_limit = false;  ///< the deadline ended the work (`solution`: the best so far, if any)
  /// Seconds from the solver's call to its first placement and to `solution`; -1: the end of
  /// the call (a one-pass solver's only placement) or none.
  double seconds_to_first_feasible = -1;
  double seconds_to_best = -1;
};

/// A solver's entry point: the problem (validated), its interval graph and the options.
using solver_function = result<solver_outcome> (*)(const packing_problem&, const interval_graph&, const solve_options&);

/// One row of the solver table.
struct named_solver {
  static constexpr std::string_view kind = "solver";
  std::string_view name;
  std::string_view aliases;  ///< older spellings still accepted, comma-separated
  std::string_view help;     ///< one line for `--help`
  solver_family family = solver_family::heuristic;
  solver_function run = nullptr;
};

namespace detail {

/// A `packing_heuristic` as a solver: one pass. One that keeps a deadline may stop without a
/// placement (`solve` then falls back).
template <packing_heuristic H>
result<solver_outcome> run_heuristic(const packing_problem& p, const interval_graph& g, const solve_options& o) {
  if constexpr (deadline_heuristic<H>) {
    auto r = H{}.place_by(p, g, o.deadline);
    solver_outcome out;
    out.stopped_by_time_limit = !r.complete;
    if (r.solution) out.solution = std::move(*r.solution);
    else out.status = solve_status::no_answer;
    return out;
  } else {
    return solver_outcome{solve_status::feasible, H{}.place(p, g), 0, 0};
  }
}

/// The anytime search: a decision under a capacity (`pack_within`), else the minimisation
/// of the peak (`minimize_peak`).
inline result<solver_outcome> run_search(const packing_problem& p, const interval_graph& g, const solve_options& o) {
  if (o.capacity >= 0) {
    search_options so;
    so.capacity = o.capacity;
    so.time_limit = o.time_limit;
    so.deadline = o.deadline;
    so.seed = o.seed;
    auto r = pack_within(p, g, so);
    return solver_outcome{r.status, std::move(r.solution), 0, r.nodes,
                          r.status == solve_status::no_answer && deadline_passed(o.deadline),
                          r.seconds_to_first_feasible, r.seconds_to_best};
  }
  minimize_options mo;
  mo.time_limit = o.time_limit;
  mo.deadline = o.deadline;
  mo.seed = o.seed;
  auto r = minimize_peak(p, g, mo);
  return solver_outcome{r.status,  std::move(r.solution),        r.lower_bound,    r.nodes,
                        r.stopped_by_time_limit, r.seconds_to_first_feasible, r.seconds_to_best};
}

}  // namespace detail

/// The solvers, the default first. Adding one is one row here.
inline constexpr std::array<named_solver, 7> packing_solvers{{
    {"search", "auto,best", "exact/anytime search within the time limit (the default)", solver_family::search,
     &detail::run_search},
    {"heuristic", "portfolio", "the best of the fast heuristics", solver_family::heuristic,
     &detail::run_heuristic<portfolio_fit>},
    {"xla", "xla-best-fit", "XLA's best fit (its heap simulator's default)", solver_family::xla,
     &detail::run_heuristic<xla_best_fit>},
    {"first-fit", "", "first fit, largest buffer first", solver_family::heuristic, &detail::run_heuristic<first_fit>},
    {"skyline", "", "skyline fit", solver_family::heuristic, &detail::run_heuristic<skyline_fit>},
    {"stack", "", "stacking in decreasing live range, O(n log n) on any input", solver_family::heuristic,
     &detail::run_heuristic<stack_fit>},
    {"sweep", "", "an allocator run over time with best fit, O(n log n) on any input", solver_family::heuristic,
     &detail::run_heuristic<sweep_fit>},
}};

/// A solver table: `packing_solvers`, or a table of one's own (`with_solver`).
using solver_table = name_table<named_solver>;

/// `table` with `row` added at the end: a front end's (or a test's) own solver, in one row.
template <std::size_t N>
[[nodiscard]] constexpr std::array<named_solver, N + 1> with_solver(const std::array<named_solver, N>& table,
                                                                    const named_solver& row) {
  std::array<named_solver, N + 1> out{};
  std::copy(table.begin(), table.end(), out.begin());
  out[N] = row;
  return out;
}

/// The solver named `name` (its name or one of its aliases) in `table`, or null.
[[nodiscard]] constexpr const named_solver* find_solver(std::string_view name,
                                                        solver_table table = packing_solvers) noexcept {
  return table.find(name);
}

/// The names of `table`: "search, heuristic, xla, first-fit or skyline".
[[nodiscard]] inline std::string solver_names(solver_table table = packing_solvers) { return table.names(); }

/// The solver named `name` in `table`, or `errc::invalid_argument` listing the names.
[[nodiscard]] inline result<named_solver> parse_solver(std::string_view name, solver_table table = packing_solvers) {
  return table.parse(name);
}

/// Every solver with its help and aliases: "search (exact/anytime ...); heuristic (the best of
/// the fast heuristics; also portfolio); ...".
[[nodiscard]] inline std::string solvers_help(solver_table table = packing_solvers) { return table.help(); }

/// What `solve` found.
struct solve_result {
  /// optimal: placed at the lower bound; feasible: placed, the solver finished; time_limit:
  /// placed, the deadline (or a cancellation) ended the work; infeasible: proven not to fit the
  /// capacity; no_answer: no placement within the capacity (solve_status.hpp).
  solve_status status = solve_status::no_answer;
  xlamem::placement placement;                       ///< valid when placed
  std::int64_t peak = 0;                             ///< of `placement` (0 when not placed)
  std::int64_t lower_bound = 0;                      ///< best proven bound on the optimal peak (at most `peak`)
  std::optional<double> gap;                         ///< (peak - lower_bound) / peak when placed; 0 when optimal
  std::int64_t max_live = 0;                         ///< the simple bound: most bytes live at one time (`lower_bound(p)`)
  std::int64_t xla_best_fit_peak = -1;               ///< XLA's best fit as a baseline; -1: not run
  bool xla_baseline_out_of_time = false;             ///< the baseline was started and cut by its share of the time
  bool stopped_by_time_limit = false;                ///< the time limit ended the solver's work early
  bool cancelled = false;                            ///< the deadline's cancellation flag was set: the work was cut short
  std::string_view fallback;                         ///< the solver that placed instead of it ("sweep"), else empty
  std::uint64_t nodes = 0;                           ///< search nodes visited
  double seconds = 0.0;                              ///< wall-clock time of the whole solve
  double seconds_to_first_feasible = -1;             ///< from the start to the first placement; -1: none
  double seconds_to_best = -1;                       ///< from the start to `placement`; -1: none
  std::size_t sections = 0;                          ///< of the interval graph
  std::size_t conflicts = 0;                         ///< conflicting buffer pairs
  /// A contradiction `solve` caught in a solver (a lower bound above the peak of its own valid
  /// placement: a bug); the placement stands, the solver's bound is dropped for the simple one.
  std::string internal_error;

  [[nodiscard]] bool placed() const noexcept { return has_answer(status); }
  [[nodiscard]] bool optimal() const noexcept { return status == solve_status::optimal; }
};

/// Packs `p` with `solver` within the time limit (see the file's comment). XLA's best fit runs
/// as a baseline (`o.xla_baseline`), with a quarter of the time, unless the problem has more
/// conflicting pairs than the heuristic portfolio gives it (`portfolio_fit::xla_edge_limit`)
/// and `solver` is not XLA's own. A heuristic's placement above `o.capacity` is `infeasible`
/// when even the lower bound is above it, else `no_answer`. @returns the problem's validation
/// error, or `errc::internal` when the solver returns an invalid placement.
[[nodiscard]] inline result<solve_result> solve(const packing_problem& p, const named_solver& solver,
                                                const solve_options& o = {}) {
  const auto start = o.started.value_or(solve_clock::now());
  const auto deadline = deadline_or_after(o.deadline, start, o.time_limit);
  if (const char* bad = time_limit_error(o.time_limit)) return make_error(errc::invalid_argument, bad);
  if (auto ok = validate_problem(p); !ok) return ok.error();
  if (solver.run == nullptr) return make_error(errc::invalid_argument, "solver '" + std::string(solver.name) + "' has no function");
  const interval_graph g(p);
  solve_result out;
  out.sections = g.section_count();
  out.conflicts = g.edge_count();
  const auto bound_started = solve_clock::now();
  out.max_live = lower_bound(p);
  const bool is_xla = solver.family == solver_family::xla;
  // XLA's best fit and first fit have nothing in hand when cut short; the search and the
  // portfolio hold the sweep's placement, the skyline stacks what it has left.
  const bool may_fall_back = is_xla || solver.run == &detail::run_heuristic<first_fit>;
  // What follows the solver is a sweep over the buffers in time order like the simple bound
  // just computed, so it is reserved as a multiple of that bound's time (measured on 10^6
  // buffers of both generators: the final check 2.5 times it, the fallback sweep 6 times;
  // 12 leaves room for a loaded machine).
  const auto bound_time = solve_clock::now() - bound_started;
  solve_options inner = o;
  inner.deadline = deadline_before(deadline, (may_fall_back ? 12 : 3) * bound_time + std::chrono::milliseconds(5));
  // XLA's best fit costs time in the number of conflicting pairs: on compiler traces far above
  // the portfolio's limit it would dominate the solve, so it is left out there.
  if (o.xla_baseline && !is_xla && g.edge_count() <= portfolio_fit{}.xla_edge_limit) {
    solve_deadline share = inner.deadline;  // its time replaced, its flag kept
    if (inner.deadline) {
      const auto now = solve_clock::now();
      share.time = now + std::max(*inner.deadline - now, solve_clock::duration::zero()) / 4;
    }
    const auto x = xla_best_fit{}.place_by(p, g, share);
    if (x.complete) out.xla_best_fit_peak = peak_of(p, *x.solution);
    else out.xla_baseline_out_of_time = true;
  }
  const auto run_started = solve_clock::now();
  auto run = solver.run(p, g, inner);
  if (!run) return run.error();
  auto since_start = [&](solve_clock::time_point t) { return std::chrono::duration<double>(t - start).count(); };
  const double run_offset = since_start(run_started);
  if (run->seconds_to_first_feasible < 0) {  // a one-pass solver: its placement came at the end
    run->seconds_to_first_feasible = run->seconds_to_best = since_start(solve_clock::now());
  } else {
    run->seconds_to_first_feasible += run_offset;
    run->seconds_to_best += run_offset;
  }
  out.stopped_by_time_limit = run->stopped_by_time_limit;
  // The search's time-out under a capacity is an answer (undecided); any other solver's is not.
  if (run->status == solve_status::no_answer && run->stopped_by_time_limit && solver.family != solver_family::search) {
    auto swept = detail::sweep_in_time(p);  // nothing where an offset is fixed: then the stacking
    out.fallback = swept ? sweep_fit{}.name() : stack_fit{}.name();
    run->solution = swept ? std::move(*swept) : stack_fit{}.place(p, g);
    run->status = solve_status::feasible;
    run->seconds_to_first_feasible = run->seconds_to_best = since_start(solve_clock::now());
  }
  if (is_xla && o.xla_baseline) {
    if (run->stopped_by_time_limit) out.xla_baseline_out_of_time = true;
    else if (has_answer(run->status)) out.xla_best_fit_peak = peak_of(p, run->solution);
  }
  out.status = run->status;
  out.nodes = run->nodes;
  out.lower_bound = std::max(out.max_live, run->lower_bound);
  if (has_answer(out.status) && o.capacity >= 0 && peak_of(p, run->solution) > o.capacity) {
    out.status = out.max_live > o.capacity ? solve_status::infeasible : solve_status::no_answer;
  }
  if (out.placed()) {
    if (auto ok = validate(p, run->solution); !ok) {
      return make_error(errc::internal, "solver '" + std::string(solver.name) + "' returned an invalid placement: " +
                                            ok.error().message());
    }
    out.placement = std::move(run->solution);
    out.peak = peak_of(p, out.placement);
    if (out.lower_bound > out.peak) {  // never clamped: a wrong bound would read as a proof
      out.internal_error = "solver '" + std::string(solver.name) + "' claimed the lower bound " +
                           std::to_string(out.lower_bound) + " above the peak " + std::to_string(out.peak) +
                           " of its own placement (a bug: please report it); the simple bound stands";
      out.lower_bound = out.max_live;
    }
    if (out.peak == out.lower_bound) out.stopped_by_time_limit = false;  // optimal: nothing was left to do
    out.status = answer_status(out.peak == out.lower_bound, out.stopped_by_time_limit);
    out.gap = out.peak == 0 ? 0.0 : static_cast<double>(out.peak - out.lower_bound) / static_cast<double>(out.peak);
    out.seconds_to_first_feasible = run->seconds_to_first_feasible;
    out.seconds_to_best = run->seconds_to_best;
  }
  out.cancelled = deadline.cancelled();
  out.seconds = std::chrono::duration<double>(solve_clock::now() - start).count();
  return out;
}

/// Packs `p` with the solver named `solver` in `table`. @returns also the unknown-name error of
/// `parse_solver`.
[[nodiscard]] inline result<solve_result> solve(const packing_problem& p, std::string_view solver,
                                                const solve_options& o = {}, solver_table table = packing_solvers) {
  auto s = parse_solver(solver, table);
  if (!s) return s.error();
  return solve(p, *s, o);
}

}  // namespace xlamem
