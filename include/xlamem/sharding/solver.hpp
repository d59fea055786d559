// SPDX-License-Identifier: Apache-2.0
/// @file
/// The anytime solver of the sharding problem under a memory limit: `solve(problem, options)`.
///
/// 1. Presolve (sharding/presolve.hpp) shrinks the problem, usually by two orders of magnitude
///    on XLA's requests (follow constraints and aliases merge whole chains of instructions).
/// 2. A first assignment within the limit at once: every variable at its smallest total usage,
///    repaired if that is still too much.
/// 3. The memory limit relaxed with Lagrange multipliers, each relaxed problem solved by TRW-S
///    (sharding/lagrangian.hpp): a lower bound, and from every labelling a candidate made to fit
///    (`repair_memory`) and polished (`improve_single`).
/// 4. Large-neighbourhood search with exact subproblems (sharding/neighbourhood_search.hpp) on
///    the best assignment until the time limit.
/// With N threads, thread 0 runs 3 then 4 and the others run 4 from the start with their own
/// seeds; every thread adopts the best assignment any thread has published when it is better
/// than its own (checked about four times a second).
///
/// The result is the best assignment found within the limit (or, when none fits, the one with
/// the least excess), its exact cost on the original problem, and a lower bound on the optimum.
/// The time limit is wall-clock and covers everything from the call to the return; the search
/// stops a little before it to leave time for mapping the answer back, and presolve early enough
/// that freeing its work, when it is cut short, ends by then.
///
/// Reproducible runs: with a work limit (`solve_options::work_limit`, steps of relaxation and
/// search) every decision of the search is paced in steps instead of by the clock, so with one
/// thread the answer is a function of the problem, the seed and the work limit alone, on any
/// machine at any load, unless the time limit comes first (the status then says `time_limit`).
/// With several threads a work limit bounds the work but the threads' interleaving still varies.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/lagrangian.hpp"
#include "xlamem/sharding/local_moves.hpp"
#include "xlamem/sharding/neighbourhood_search.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/solve_status.hpp"

namespace xlamem::sharding {

/// What `solve` reports while it runs.
struct solve_progress {
  double seconds = 0;          ///< since the call
  bool feasible = false;       ///< an assignment within the limit is known
  wide_cost best_cost;         ///< the best such assignment's cost (presolved, exact)
  double lower_bound = 0;      ///< the best lower bound so far
};

struct solve_options {
  /// Wall-clock seconds for the whole call; 0: the first answer, at once; infinity: none
  /// (deadline.hpp).
  double time_limit = 10.0;
  /// When set, the end of the call instead of `time_limit` from its start (a caller that spent
  /// part of its limit before, reading the problem, passes the end of its own limit).
  solve_deadline deadline;
  /// When the caller's work began (a front end's start, its reading included): the time limit
  /// and every time reported count from it. None: the start of the call.
  std::optional<solve_clock::time_point> started;
  /// Threads to search with (1: only the calling thread).
  unsigned threads = 1;
  /// Seed of the random choices (thread k uses seed + k).
  std::uint64_t seed = 1;
  /// Steps of relaxation and neighbourhood search, all threads together, after which the call
  /// returns its best answer; set, the search is paced in steps, so one thread repeats exactly
  /// (see the file comment). None: only the time limit ends the search.
  std::optional<std::uint64_t> work_limit;
  /// Called from the calling thread about every `progress_interval` seconds, if set.
  std::function<void(const solve_progress&)> progress;
  double progress_interval = 1.0;
};

struct solve_result {
  /// optimal: proven (cost equals the lower bound); time_limit / work_limit: the best
  /// assignment within the memory limit when that limit (or a cancellation) ended the search;
  /// infeasible: proven that no assignment fits the memory limit without a forbidden choice;
  /// no_answer: none found (`feasible` and `forbidden_choices` say what the answer breaks).
  solve_status status = solve_status::no_answer;
  bool cancelled = false;         ///< the deadline's cancellation flag ended the search
  assignment strategies;          ///< one strategy per node of the original problem
  wide_cost cost;                 ///< exact cost of `strategies` on the original problem
  bool feasible = false;          ///< within the memory limit at every time step
  std::size_t forbidden_choices = 0;  ///< node strategies and edge pairs at or above forbidden_cost
  wide_cost peak;                 ///< the largest total usage at any time step
  /// No assignment within the limit costs less. Empty when unknown: the answer is over the
  /// limit or forbidden, or the bound contradicted the answer (see `internal_error`).
  std::optional<wide_cost> lower_bound;
  std::optional<double> gap;      ///< (cost - lower_bound) / cost when the bound is known, 0 when optimal
  /// A contradiction the solver caught in itself (a lower bound above the exact cost of the
  /// answer: a bug in the relaxation or TRW-S); the answer stands, the bound is dropped.
  std::string internal_error;
  double seconds = 0;             ///< wall-clock time of the call
  double seconds_to_first_feasible = -1;  ///< -1 when none was found
  double seconds_to_best = -1;    ///< when the returned assignment was found
  presolved::statistics presolve; ///< what presolve did
  std::size_t variables = 0;      ///< variables left after presolve
  std::uint64_t relaxation_steps = 0;
  neighbourhood_search::statistics search;
};

namespace detail {

/// The best assignment any thread has found, shared under a mutex.
class incumbent {
 public:
  explicit incumbent(solve_clock::time_point start) : start_(start) {}

  /// Offers an assignment; keeps it when it fits and is cheaper (or is the first that fits).
  void offer(const assignment_state& st) {
    const bool fits = st.fits();
    std::lock_guard lock(mutex_);
    if (!better(fits, st.cost(), st.excess())) return;
    if (fits && !fits_) first_feasible_ = seconds();
    fits_ = fits;
    cost_ = st.cost();
    excess_ = st.excess();
    labels_ = st.labels();
    found_at_ = seconds();
    cost_atomic_.store(fits ? cost_ : std::numeric_limits<cost_type>::max(), std::memory_order_relaxed);
  }
  /// Copies the incumbent into `st` when it is better than `st`.
  bool adopt_if_better(assignment_state& st, const search_model& m) {
    if (cost_atomic_.load(std::memory_order_relaxed) >= (st.fits() ? st.cost() : std::numeric_limits<cost_type>::max())) {
      return false;
    }
    std::vector<std::uint32_t> labels;
    {
      std::lock_guard lock(mutex_);
      labels = labels_;
    }
    st = assignment_state(m, std::move(labels));
    return true;
  }
  /// The labelling of the relaxation at its best bound, for the searches to compare with.
  void set_guide(const std::vector<std::uint32_t>& labels) {
    std::lock_guard lock(mutex_);
    guide_ = labels;
    guide_version_.fetch_add(1, std::memory_order_relaxed);
  }
  /// The guide when it changed since `version` (which is updated), else nothing.
  bool guide_if_newer(std::uint64_t& version, std::vector<std::uint32_t>& out) const {
    const auto v = guide_version_.load(std::memory_order_relaxed);
    if (v == version) return false;
    std::lock_guard lock(mutex_);
    out = guide_;
    version = v;
    return true;
  }
  void offer_bound(double b) {
    double cur = bound_.load(std::memory_order_relaxed);
    while (b > cur && !bound_.compare_exchange_weak(cur, b, std::memory_order_relaxed)) {}
  }
  [[nodiscard]] double bound() const noexcept { return bound_.load(std::memory_order_relaxed); }
  /// The cost the relaxation steers toward: the best fitting cost, else a large guess.
  [[nodiscard]] double target() const {
    const cost_type c = cost_atomic_.load(std::memory_order_relaxed);
    return c == std::numeric_limits<cost_type>::max() ? 0.0 : static_cast<double>(c);
  }
  struct snapshot {
    bool fits = false;
    cost_type cost = 0;
    std::vector<std::uint32_t> labels;
    double first_feasible = -1, found_at = -1;
  };
  [[nodiscard]] snapshot get() const {
    std::lock_guard lock(mutex_);
    return {fits_, cost_, labels_, first_feasible_, found_at_};
  }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(solve_clock::now() - start_).count();
  }

 private:
  solve_clock::time_point start_;
  mutable std::mutex mutex_;
  bool fits_ = false;
  bool any_ = false;
  cost_type cost_ = 0;
  usage_type excess_ = 0;
  std::vector<std::uint32_t> labels_;
  double first_feasible_ = -1, found_at_ = -1;
  std::atomic<cost_type> cost_atomic_{std::numeric_limits<cost_type>::max()};
  std::atomic<double> bound_{-1e300};
  std::vector<std::uint32_t> guide_;
  std::atomic<std::uint64_t> guide_version_{0};

  bool better(bool fits, cost_type cost, usage_type excess) {
    if (!any_) {
      any_ = true;
      return true;
    }
    if (fits != fits_) return fits;
    return fits ? cost < cost_ : excess < excess_;
  }
};

/// The steps of search left to all threads when the caller set a work limit (none: unlimited).
class work_budget {
 public:
  /// `cancel`, when given and set, ends the budget at once (every step of every thread takes
  /// from it, so a cancellation stops the search within one step).
  explicit work_budget(std::optional<std::uint64_t> limit, const cancellation_flag* cancel = nullptr) noexcept
      : limit_(limit), cancel_(cancel) {}
  /// Whether the search counts its steps (and paces its decisions by them).
  [[nodiscard]] bool counted() const noexcept { return limit_.has_value(); }
  [[nodiscard]] std::uint64_t limit() const noexcept { return limit_.value_or(0); }
  /// Takes one step: false, and nothing taken, when the budget is spent or the work cancelled.
  bool take() noexcept {
    if (cancel_requested(cancel_)) return false;
    if (!limit_) return true;
    std::uint64_t used = used_.load(std::memory_order_relaxed);
    while (used < *limit_ && !used_.compare_exchange_weak(used, used + 1, std::memory_order_relaxed)) {}
    return used < *limit_;
  }
  [[nodiscard]] bool spent() const noexcept { return limit_ && used_.load(std::memory_order_relaxed) >= *limit_; }

 private:
  std::optional<std::uint64_t> limit_;
  const cancellation_flag* cancel_;
  std::atomic<std::uint64_t> used_{0};
};

/// Every variable at its label of least total usage (row-weighted), ties to the cheaper label.
inline std::vector<std::uint32_t> least_usage_labels(const search_model& m) {
  std::vector<std::uint32_t> labels(m.var_count(), 0);
  const auto& rows = m.rows();
  for (std::size_t v = 0; v < m.var_count(); ++v) {
    double best = std::numeric_limits<double>::infinity();
    cost_type best_cost = std::numeric_limits<cost_type>::max();
    for (std::uint32_t s = 0; s < m.labels(v); ++s) {
      double use = 0;
      for (const auto& r : rows.runs(v)) use += static_cast<double>(rows.usage(r, s)) * static_cast<double>(r.end - r.begin);
      const cost_type c = m.unary(v)[s];
      if (use < best || (use == best && c < best_cost)) {
        best = use;
        best_cost = c;
        labels[v] = s;
      }
    }
  }
  return labels;
}

/// The work of one thread: the relaxation first when `relax`, then neighbourhood search.
struct worker {
  const search_model& model;
  incumbent& best;
  work_budget& work;
  solve_clock::time_point deadline;
  std::uint64_t seed;
  bool relax;
  double relax_share;  ///< fraction of the remaining time the relaxation may use
  std::function<void()> tick;  ///< called between steps on the calling thread (progress)
  std::uint64_t relaxation_steps = 0;
  neighbourhood_search::statistics search;

  void run() {
    assignment_state state(model, least_usage_labels(model));
    if (relax) {
      if (!state.fits()) repair_memory(model, state, deadline);
      best.offer(state);
      relaxation(state);
    }
    local_search(state);
  }

  void relaxation(assignment_state& state) {
    lagrangian_relaxation lr(model);
    // Its share of the time, or, when the work is counted, of the steps.
    const auto now = solve_clock::now();
    const auto until =
        work.counted() ? deadline : now + std::chrono::duration_cast<solve_clock::duration>((deadline - now) * relax_share);
    const auto most_steps = work.counted() ? static_cast<std::uint64_t>(relax_share * static_cast<double>(work.limit()))
                                           : std::numeric_limits<std::uint64_t>::max();
    while (solve_clock::now() < until && lr.factor() > 1e-3 && relaxation_steps < most_steps && work.take()) {
      const double bound = lr.step(best.target(), 5, until);
      if (!std::isfinite(bound)) break;  // the deadline cut the step short
      ++relaxation_steps;
      if (bound > best.bound()) best.set_guide(lr.labels());
      best.offer_bound(bound);
      assignment_state candidate(model, lr.labels());
      if (!candidate.fits() && !repair_memory(model, candidate, until)) continue;
      improve_single(model, candidate, until);
      best.offer(candidate);
      if (tick) tick();
    }
    best.adopt_if_better(state, model);
  }

  void local_search(assignment_state& state) {
    neighbourhood_search lns(model, seed);
    best.adopt_if_better(state, model);
    // Each thread follows its own path; one that has not improved for `patience` takes the
    // best assignment any thread has, and one still stuck after that is kicked out of its
    // local optimum (a few variables given random labels that fit). The pace is wall-clock
    // nanoseconds, or this thread's steps when the work is counted (so that it repeats).
    const auto start = solve_clock::now();
    const auto elapsed = [&]() -> std::int64_t {
      return work.counted() ? static_cast<std::int64_t>(lns.stats().steps) : (solve_clock::now() - start).count();
    };
    const auto nanoseconds = [](auto d) { return std::chrono::duration_cast<solve_clock::duration>(d).count(); };
    const std::int64_t patience = work.counted() ? std::max<std::int64_t>(64, static_cast<std::int64_t>(work.limit() / 50))
                                                 : std::max(nanoseconds(std::chrono::milliseconds(500)), (deadline - start).count() / 50);
    const std::int64_t sync_every = work.counted() ? 16 : nanoseconds(std::chrono::milliseconds(250));
    std::int64_t last_gain = 0, next_sync = 0;
    std::uint64_t guide_version = 0;
    std::vector<std::uint32_t> guide;
    std::mt19937_64 rng(seed * 7919 + 1);
    while (solve_clock::now() < deadline && work.take()) {
      if (lns.step(state, deadline) > 0 && state.fits()) {
        best.offer(state);
        last_gain = elapsed();
      }
      const auto now = elapsed();
      if (now < next_sync) continue;
      next_sync = now + sync_every;
      best.offer(state);
      if (best.guide_if_newer(guide_version, guide)) lns.set_guide(guide);
      if (tick) tick();
      if (now - last_gain < patience) continue;
      if (best.adopt_if_better(state, model)) {
        last_gain = now;
      } else if (now - last_gain >= 2 * patience) {
        kick(state, rng);
        last_gain = now;
      }
    }
    best.offer(state);
    search = lns.stats();
  }

  /// Gives a random connected handful of variables random labels that fit.
  void kick(assignment_state& state, std::mt19937_64& rng) {
    const std::size_t n = model.var_count();
    if (n == 0) return;
    std::vector<std::uint32_t> group{static_cast<std::uint32_t>(rng() % n)};
    const std::size_t want = std::min<std::size_t>(n, 4 + rng() % 12);
    for (std::size_t h = 0; h < group.size() && group.size() < want; ++h) {
      for (const auto& a : model.arcs(group[h])) {
        if (group.size() >= want) break;
        if (std::find(group.begin(), group.end(), a.other) == group.end()) group.push_back(a.other);
      }
    }
    for (const auto v : group) {
      const auto s = static_cast<std::uint32_t>(rng() % model.labels(v));
      if (state.fits_with(v, s)) state.set(v, s);
    }
  }
};

/// The first answer, in one pass: every node at its strategy of least usage, ties to the
/// cheaper. Within the memory limit whenever any assignment is (each time step then carries the
/// least usage it can).
template <sharding_problem P>
assignment least_usage_assignment(const P& p) {
  using T = problem_traits<P>;
  assignment a(T::node_count(p), 0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t s = 1; s < T::strategy_count(p, i); ++s) {
      const usage_type u = T::node_usage(p, i, s), best = T::node_usage(p, i, a[i]);
      if (u < best || (u == best && T::node_cost(p, i, s) < T::node_cost(p, i, a[i]))) a[i] = s;
    }
  }
  return a;
}

/// Puts `a`, scored on `p`, in `out` with its status (before any bound is known).
inline void take_answer(solve_result& out, assignment a, const evaluation& scored) {
  out.strategies = std::move(a);
  out.cost = scored.cost;
  out.feasible = scored.feasible;
  out.forbidden_choices = scored.forbidden_choices;
  out.peak = scored.peak_usage;
  out.status = out.forbidden_choices > 0 || !out.feasible ? solve_status::no_answer : solve_status::time_limit;
}

/// True when `a` is a better answer than `b`: within the limit and permitted first, then cheaper.
inline bool better_answer(const evaluation& a, const evaluation& b) {
  if (a.allowed() != b.allowed()) return a.allowed();
  if (a.forbidden_choices != b.forbidden_choices) return a.forbidden_choices < b.forbidden_choices;
  if (a.feasible != b.feasible) return a.feasible;
  return a.feasible ? a.cost < b.cost : a.peak_usage < b.peak_usage;
}

/// What branch and bound over every variable settled, when there are few variables.
enum class exact_outcome { unknown, optimal, nothing_fits };

/// Branch and bound over every variable when there are few: when it finishes, the incumbent
/// is optimal, or no assignment fits.
inline exact_outcome solve_small_exactly(const search_model& m, incumbent& best, solve_clock::time_point deadline) {
  constexpr std::size_t max_vars = 48;
  constexpr std::uint64_t node_limit = 200000;
  if (m.var_count() > max_vars) return exact_outcome::unknown;
  assignment_state state(m, least_usage_labels(m));
  best.offer(state);
  std::vector<std::uint32_t> all(m.var_count());
  for (std::uint32_t v = 0; v < all.size(); ++v) all[v] = v;
  subproblem_search search(m);
  const auto out = search.improve(state, all, node_limit, deadline);
  best.offer(state);
  if (!out.complete) return exact_outcome::unknown;
  return state.fits() ? exact_outcome::optimal : exact_outcome::nothing_fits;
}

/// Checks what the solver relies on: nonnegative costs and usages, a nonnegative limit, edge
/// ends in range, at least one strategy per node, finite costs whose sum fits in 62 bits.
template <sharding_problem P>
result<void> check_solvable(const P& p) {
  using T = problem_traits<P>;
  const std::size_t n = T::node_count(p);
  if (T::usage_limit(p) < 0) return error(errc::invalid_argument, "the usage limit is negative");
  double finite_total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = T::strategy_count(p, i);
    if (k == 0) return error(errc::invalid_argument, "node " + std::to_string(i) + " has no strategy");
    cost_type hi = 0;
    for (std::size_t s = 0; s < k; ++s) {
      const cost_type c = T::node_cost(p, i, s);
      if (c < 0) return error(errc::invalid_argument, "node " + std::to_string(i) + " strategy " + std::to_string(s) + ": negative cost");
      if (T::node_usage(p, i, s) < 0) {
        return error(errc::invalid_argument, "node " + std::to_string(i) + " strategy " + std::to_string(s) + ": negative usage");
      }
      if (!is_forbidden(c)) hi = std::max(hi, c);
    }
    finite_total += static_cast<double>(hi);
  }
  for (std::size_t e = 0; e < T::edge_count(p); ++e) {
    const auto [a, b] = T::edge_nodes(p, e);
    if (a >= n || b >= n) return error(errc::invalid_argument, "edge " + std::to_string(e) + ": node out of range");
    cost_type hi = 0;
    for (std::size_t x = 0; x < T::strategy_count(p, a); ++x) {
      for (std::size_t y = 0; y < T::strategy_count(p, b); ++y) {
        const cost_type c = T::edge_cost(p, e, x, y);
        if (c < 0) return error(errc::invalid_argument, "edge " + std::to_string(e) + ": negative cost");
        if (!is_forbidden(c)) hi = std::max(hi, c);
      }
    }
    finite_total += static_cast<double>(hi);
  }
  if (finite_total >= 4.0e18) {
    return error(errc::out_of_range, "the largest finite costs sum to more than 4e18; scale the costs down");
  }
  return {};
}

/// The lower bound, gap and status of the scored answer `out` (cost, feasibility and forbidden
/// choices set) from `bound`, the relaxation's best bound with the presolve constant, and `proven` when
/// exact search showed the answer optimal. `optimal` only on a proof. A bound above the answer's
/// exact cost is a bug, not a proof: it is reported in `internal_error` and the bound is left
/// unknown (it was once clamped to the cost, which turned a wrong bound into "optimal").
inline void settle_bound(solve_result& out, double bound, bool proven) {
  out.lower_bound.reset();
  out.gap.reset();
  if (!out.feasible || out.forbidden_choices > 0) return;
  wide_cost lower;  // 0 without a positive bound: costs are nonnegative
  if (std::isfinite(bound) && bound > 0) {
    // Less a margin for the rounding of the bound's floating-point sums, then rounded up: the
    // optimum is an integer at least the exact bound.
    lower = wide_cost(static_cast<std::int64_t>(std::min(std::ceil(bound - 1e-9 * std::abs(bound)), 9.0e18)));
  }
  if (lower > out.cost) {
    out.internal_error = "the lower bound " + lower.to_string() + " is above the cost " + out.cost.to_string() +
                         " of the answer (a bug in the relaxation: please report it); the bound is unknown";
    return;
  }
  if (proven) lower = out.cost;
  out.lower_bound = lower;
  const double c = out.cost.to_double();
  out.gap = c > 0 ? (c - lower.to_double()) / c : 0.0;
  if (lower == out.cost) out.status = solve_status::optimal;
}

}  // namespace detail

/// Solves `p` within `options.time_limit` seconds (see the file comment).
template <sharding_problem P>
[[nodiscard]] result<solve_result> solve(const P& p, const solve_options& options = {}) {
  const auto start = options.started.value_or(solve_clock::now());
  if (auto ok = detail::check_solvable(p); !ok) return ok.error();
  if (const char* bad = time_limit_error(options.time_limit)) return error(errc::invalid_argument, bad);
  const auto limit = std::chrono::duration<double>(std::min(options.time_limit, 1e7));
  const auto end = options.deadline ? *options.deadline : start + std::chrono::duration_cast<solve_clock::duration>(limit);

  // A first answer at once; scoring it also measures what mapping back and scoring the final
  // answer will cost. Leave that time twice over, plus 2 % of the limit (at most 0.5 s).
  solve_result out;
  const auto scoring_start = solve_clock::now();
  auto first = detail::least_usage_assignment(p);
  auto first_score = evaluate(p, first);
  if (!first_score) return first_score.error().with_context("sharding solver (internal)");
  const auto scoring = solve_clock::now() - scoring_start;
  detail::take_answer(out, std::move(first), *first_score);
  if (out.feasible && out.forbidden_choices == 0) {
    out.seconds_to_first_feasible = out.seconds_to_best = std::chrono::duration<double>(solve_clock::now() - start).count();
  }
  const double span = std::chrono::duration<double>(end - start).count();
  const auto deadline = end - 2 * scoring -
                        std::chrono::duration_cast<solve_clock::duration>(std::chrono::duration<double>(std::min(0.5, 0.02 * span)));
  const auto stop_early = [&] {
    out.cancelled = options.deadline.cancelled();
    out.seconds = std::chrono::duration<double>(solve_clock::now() - start).count();
    return out;
  };

  presolved pre = presolve(p, solve_deadline(deadline, options.deadline.cancel));
  if (!pre.complete || solve_clock::now() >= deadline) return stop_early();
  out.presolve = pre.stats;
  out.variables = pre.var_count();
  const search_model model(pre);
  // The search reads only the model; what maps its answer back stays.
  pre.edges = std::vector<var_edge>{};
  pre.terms = std::vector<memory_term>{};
  if (solve_clock::now() >= deadline) return stop_early();
  detail::incumbent best(start);
  detail::work_budget work(options.work_limit, options.deadline.cancel);
  const auto exact = detail::solve_small_exactly(model, best, deadline);
  const bool proven = exact == detail::exact_outcome::optimal;

  auto last_tick = solve_clock::now();
  const auto tick = [&] {
    if (!options.progress) return;
    const auto now = solve_clock::now();
    if (std::chrono::duration<double>(now - last_tick).count() < options.progress_interval) return;
    last_tick = now;
    const auto snap = best.get();
    options.progress({best.seconds(), snap.fits, pre.constant_cost + snap.cost, pre.constant_cost.to_double() + best.bound()});
  };
  const unsigned threads = std::max(1u, options.threads);
  std::vector<detail::worker> workers;
  workers.reserve(threads);
  for (unsigned k = 0; k < threads; ++k) {
    workers.push_back({model, best, work, deadline, options.seed + k, k == 0, threads == 1 ? 0.3 : 0.5,
                       k == 0 ? std::function<void()>(tick) : std::function<void()>{}, 0, {}});
  }
  if (exact == detail::exact_outcome::unknown) {
    std::vector<std::jthread> pool;
    for (unsigned k = 1; k < threads; ++k) pool.emplace_back([&w = workers[k]] { w.run(); });
    workers[0].run();
  }
  for (const auto& w : workers) {
    out.relaxation_steps += w.relaxation_steps;
    out.search.steps += w.search.steps;
    out.search.improvements += w.search.improvements;
    out.search.nodes += w.search.nodes;
  }

  const auto snap = best.get();
  auto found = pre.expand(snap.labels);
  auto scored = evaluate(p, found);
  if (!scored) return scored.error().with_context("sharding solver (internal)");
  const bool searched_better = !detail::better_answer(*first_score, *scored);
  if (searched_better) detail::take_answer(out, std::move(found), *scored);
  if (out.status == solve_status::time_limit && work.spent()) out.status = solve_status::work_limit;
  // Proofs that nothing is allowed: presolve found every assignment forbidden, or branch and
  // bound over every variable finished without one within the memory limit.
  if (out.status == solve_status::no_answer && (!pre.has_permitted_assignment || exact == detail::exact_outcome::nothing_fits)) {
    out.status = solve_status::infeasible;
  }
  out.cancelled = options.deadline.cancelled();
  detail::settle_bound(out, pre.constant_cost.to_double() + best.bound(), proven);
  if (snap.first_feasible >= 0 && (out.seconds_to_first_feasible < 0 || snap.first_feasible < out.seconds_to_first_feasible)) {
    out.seconds_to_first_feasible = snap.first_feasible;
  }
  if (searched_better) out.seconds_to_best = snap.found_at;
  out.seconds = std::chrono::duration<double>(solve_clock::now() - start).count();
  return out;
}

}  // namespace xlamem::sharding
