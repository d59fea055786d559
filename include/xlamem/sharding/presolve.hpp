// SPDX-License-Identifier: Apache-2.0
/// @file
/// Presolve for the sharding problem: exact reductions that shrink a problem before the search,
/// each one undone by `presolved::expand`.
///
///  - forbidden strategies (node cost >= forbidden_cost) and strategies that every strategy of
///    some neighbour forbids (arc consistency over the forbidden edge entries) are removed;
///  - an edge that fixes one node's strategy as a function of the other's (XLA's "follow"
///    constraints and aliases) merges the dependent node into the other: its costs, memory and
///    edges move over, composed with that function;
///  - a node left with one strategy is folded into its neighbours' costs and the base load;
///  - duplicate edges are summed;
///  - a node whose memory does not depend on its choice (no live interval, or the same usage for
///    every strategy) and that has at most two neighbours is eliminated exactly (bucket
///    elimination): its best strategy for each choice of its neighbours is recorded and its cost
///    moves into a neighbour's costs or into a new edge between the two.
///
/// What remains is a `presolved` problem over "variables" (each decides one or more original
/// nodes), with memory "terms" (a variable's usage per label over a live interval), edges with
/// cost matrices, and a base load (memory whose amount no choice changes).
///
/// Work is O(size of the cost matrices) per pass over the edges; passes repeat only while
/// domains shrink, so the whole is near linear in the input in practice (each pass removes at
/// least one label).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/deadline.hpp"
#include "xlamem/sharding/problem.hpp"

namespace xlamem::sharding {

/// `a + b` for costs that are nonnegative, saturating at `forbidden_cost`.
[[nodiscard]] constexpr cost_type add_costs(cost_type a, cost_type b) noexcept {
  if (a >= forbidden_cost || b >= forbidden_cost) return forbidden_cost;
  const cost_type s = a + b;  // both below 10^18: no overflow
  return s >= forbidden_cost ? forbidden_cost : s;
}

/// A memory term of a presolved variable: over `[lower, upper)` the variable uses
/// `usage[label]`.
struct memory_term {
  std::uint32_t var = 0;
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  std::vector<usage_type> usage;
};

/// Memory whose amount no choice changes, over `[lower, upper)`.
struct fixed_load {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  usage_type amount = 0;
};

/// An edge between two presolved variables, `cost[label_a * size(b) + label_b]`.
struct var_edge {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::vector<cost_type> cost;
};

/// The problem after presolve, and how to map its solutions back.
class presolved {
 public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  /// One original node decided by a variable: `strategy[label]` is the node's strategy.
  struct member {
    std::uint32_t node = 0;
    std::vector<std::uint32_t> strategy;
  };

  /// Variables (alive ones only after `compact()`): their label costs and members.
  std::vector<std::vector<cost_type>> unary;
  std::vector<std::vector<member>> members;
  std::vector<memory_term> terms;
  std::vector<var_edge> edges;
  std::vector<fixed_load> base_load;
  /// The cost every solution pays whatever it chooses (folded fixed choices).
  wide_cost constant_cost;
  usage_type limit = std::numeric_limits<usage_type>::max();
  std::size_t original_nodes = 0;
  /// False when some node has no strategy left that avoids a forbidden choice.
  bool has_permitted_assignment = true;
  std::string infeasibility;  ///< why, when `has_permitted_assignment` is false
  /// False when the deadline passed before presolve finished: then nothing else is usable.
  bool complete = true;

  /// Counts of what each reduction did, for the solver's log.
  struct statistics {
    std::size_t labels_removed = 0;
    std::size_t merged = 0;
    std::size_t fixed = 0;
    std::size_t eliminated = 0;
    std::size_t duplicate_edges = 0;
  } stats;

  [[nodiscard]] std::size_t var_count() const noexcept { return unary.size(); }
  [[nodiscard]] std::size_t labels(std::size_t v) const noexcept { return unary[v].size(); }

  /// The original problem's assignment for labels of the (compacted) variables.
  [[nodiscard]] assignment expand(const std::vector<std::uint32_t>& labels) const {
    assignment out(original_nodes, 0);
    std::vector<std::uint32_t> value(eliminated_value_count_, none);
    for (std::size_t v = 0; v < labels.size(); ++v) set_members(members[v], labels[v], out);
    for (std::size_t k = 0; k < compact_ids_.size(); ++k) {
      if (compact_ids_[k] != none) value[k] = labels[compact_ids_[k]];
    }
    for (auto it = eliminations_.rbegin(); it != eliminations_.rend(); ++it) {
      const auto& e = *it;
      std::size_t row = 0;
      if (e.a != none) row = value[e.a];
      if (e.b != none) row = row * e.b_size + value[e.b];
      const std::uint32_t label = e.best[row];
      value[e.var] = label;
      set_members(e.members, label, out);
    }
    for (const auto& f : fixed_) set_members(f, 0, out);
    return out;
  }

  // --- used by presolve() ---
  struct elimination {
    std::uint32_t var = 0, a = none, b = none;
    std::size_t b_size = 1;
    std::vector<std::uint32_t> best;
    std::vector<member> members;
  };
  std::vector<elimination> eliminations_;
  std::vector<std::vector<member>> fixed_;
  std::vector<std::uint32_t> compact_ids_;  ///< presolve-time variable id -> compacted id or none
  std::size_t eliminated_value_count_ = 0;

 private:
  static void set_members(const std::vector<member>& ms, std::uint32_t label, assignment& out) {
    for (const auto& m : ms) out[m.node] = m.strategy[label];
  }
};

namespace detail {

/// The working state of presolve: variables that can die, edges that can die, incidence lists
/// cleaned lazily.
class presolver {
 public:
  using member = presolved::member;
  static constexpr std::uint32_t none = presolved::none;

  template <sharding_problem P>
  presolver(const P& p, solve_deadline deadline) : watch_(building_deadline(deadline)) {
    const auto build_start = solve_clock::now();
    using T = problem_traits<P>;
    const std::size_t n = T::node_count(p);
    out_.original_nodes = n;
    out_.limit = T::usage_limit(p);
    unary_.resize(n);
    members_.resize(n);
    alive_.assign(n, true);
    var_terms_.resize(n);
    var_edges_.resize(n);
    degree_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = T::strategy_count(p, i);
      if (watch_.passed(k)) return;
      auto& u = unary_[i];
      u.resize(k);
      std::vector<usage_type> use(k);
      member m{static_cast<std::uint32_t>(i), std::vector<std::uint32_t>(k)};
      for (std::size_t s = 0; s < k; ++s) {
        u[s] = std::min(T::node_cost(p, i, s), forbidden_cost);
        use[s] = T::node_usage(p, i, s);
        m.strategy[s] = static_cast<std::uint32_t>(s);
      }
      members_[i].push_back(std::move(m));
      const live_interval live = T::interval(p, i);
      if (!live.empty()) add_term(static_cast<std::uint32_t>(i), live.lower, live.upper, std::move(use));
    }
    const std::size_t m = T::edge_count(p);
    edges_.reserve(m);
    for (std::size_t e = 0; e < m; ++e) {
      const auto [a, b] = T::edge_nodes(p, e);
      const std::size_t ka = unary_[a].size(), kb = unary_[b].size();
      if (watch_.passed(ka * kb)) return;
      std::vector<cost_type> c(ka * kb);
      for (std::size_t x = 0; x < ka; ++x) {
        for (std::size_t y = 0; y < kb; ++y) c[x * kb + y] = std::min(T::edge_cost(p, e, x, y), forbidden_cost);
      }
      if (a == b) {  // a self-edge is a cost on the diagonal
        for (std::size_t x = 0; x < ka; ++x) unary_[a][x] = add_costs(unary_[a][x], c[x * kb + x]);
        continue;
      }
      add_edge(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), std::move(c));
    }
    // Freeing the lists takes about as long as building them: the rounds stop that long (and a
    // fifth more) before the deadline, so that a presolve cut short is gone by then.
    if (deadline) watch_ = deadline_watch(deadline_before(deadline, (solve_clock::now() - build_start) * 6 / 5));
  }

  presolved run() {
    for (int round = 0; !watch_.seen_passed(); ++round) {
      bool changed = propagate_forbidden();
      if (!out_.has_permitted_assignment) break;
      changed |= merge_dependent();
      changed |= fold_fixed();
      if (!changed) break;
    }
    if (out_.has_permitted_assignment && !watch_.seen_passed()) {
      merge_duplicate_edges();
      eliminate_memory_free();
    }
    if (!watch_.seen_passed()) compact();
    out_.complete = !watch_.seen_passed();
    return std::move(out_);
  }

 private:
  struct edge_rec {
    std::uint32_t a, b;
    std::vector<cost_type> cost;
    bool alive = true;
  };
  struct term_rec {
    std::uint32_t var;
    std::int64_t lower, upper;
    std::vector<usage_type> usage;
    bool alive = true;
  };

  presolved out_;
  deadline_watch watch_;  ///< every loop stops when it passes
  std::vector<std::vector<cost_type>> unary_;
  std::vector<std::vector<member>> members_;
  std::vector<bool> alive_;
  std::vector<std::vector<std::uint32_t>> var_terms_;
  std::vector<std::vector<std::uint32_t>> var_edges_;
  std::vector<std::uint32_t> degree_;  ///< alive edges per variable (lists are cleaned lazily)
  std::vector<edge_rec> edges_;
  std::vector<term_rec> terms_;

  std::size_t k(std::uint32_t v) const { return unary_[v].size(); }

  // Building the per-variable, per-edge and per-term lists gets 5/11 of the time left: cut
  // there, freeing them (about 1.2 times as long again) still ends by the deadline.
  static solve_deadline building_deadline(solve_deadline deadline) {
    const auto now = solve_clock::now();
    if (!deadline || *deadline <= now) return deadline;
    return solve_deadline(now + (*deadline - now) / 11 * 5, deadline.cancel);  // divided first: no overflow for a far deadline
  }

  void add_term(std::uint32_t v, std::int64_t lo, std::int64_t hi, std::vector<usage_type> use) {
    var_terms_[v].push_back(static_cast<std::uint32_t>(terms_.size()));
    terms_.push_back({v, lo, hi, std::move(use), true});
  }
  std::uint32_t add_edge(std::uint32_t a, std::uint32_t b, std::vector<cost_type> c) {
    const auto id = static_cast<std::uint32_t>(edges_.size());
    edges_.push_back({a, b, std::move(c), true});
    var_edges_[a].push_back(id);
    var_edges_[b].push_back(id);
    ++degree_[a];
    ++degree_[b];
    return id;
  }
  void kill_edge(std::uint32_t e) {
    auto& ed = edges_[e];
    if (!ed.alive) return;
    ed.alive = false;
    --degree_[ed.a];
    --degree_[ed.b];
  }
  /// The alive edges of `v` (drops dead ids from its list).
  const std::vector<std::uint32_t>& incident(std::uint32_t v) {
    auto& list = var_edges_[v];
    std::erase_if(list, [&](std::uint32_t e) { return !edges_[e].alive; });
    return list;
  }
  /// Cost of edge `e` with `v`'s label `lv` and the other end's label `lo`.
  cost_type edge_at(const edge_rec& e, std::uint32_t v, std::size_t lv, std::size_t lo) const {
    return e.a == v ? e.cost[lv * k(e.b) + lo] : e.cost[lo * k(e.b) + lv];
  }

  /// Keeps only the labels of `v` flagged in `keep`, in every table that mentions `v`.
  void restrict_labels(std::uint32_t v, const std::vector<bool>& keep) {
    std::vector<std::size_t> kept;
    for (std::size_t s = 0; s < keep.size(); ++s) if (keep[s]) kept.push_back(s);
    out_.stats.labels_removed += keep.size() - kept.size();
    const auto pick = [&](auto& vec) {
      std::remove_reference_t<decltype(vec)> r;
      r.reserve(kept.size());
      for (auto s : kept) r.push_back(vec[s]);
      vec = std::move(r);
    };
    const std::size_t old_k = k(v);
    for (auto e : incident(v)) {
      auto& ed = edges_[e];
      const std::size_t ka = k(ed.a), kb = k(ed.b);
      std::vector<cost_type> c;
      if (ed.a == v) {
        c.reserve(kept.size() * kb);
        for (auto s : kept) c.insert(c.end(), ed.cost.begin() + static_cast<std::ptrdiff_t>(s * kb),
                                     ed.cost.begin() + static_cast<std::ptrdiff_t>((s + 1) * kb));
      } else {
        c.reserve(ka * kept.size());
        for (std::size_t x = 0; x < ka; ++x) for (auto s : kept) c.push_back(ed.cost[x * old_k + s]);
      }
      ed.cost = std::move(c);
    }
    pick(unary_[v]);
    for (auto t : var_terms_[v]) pick(terms_[t].usage);
    for (auto& m : members_[v]) pick(m.strategy);
  }

  /// Removes forbidden labels and labels with no permitted partner on some edge, to a fixpoint.
  bool propagate_forbidden() {
    bool changed = false;
    std::deque<std::uint32_t> queue;
    std::vector<bool> queued(unary_.size(), false);
    for (std::uint32_t v = 0; v < unary_.size(); ++v) if (alive_[v]) { queue.push_back(v); queued[v] = true; }
    while (!queue.empty() && !watch_.passed(1 + var_edges_[queue.front()].size())) {
      const std::uint32_t v = queue.front();
      queue.pop_front();
      queued[v] = false;
      std::vector<bool> keep(k(v));
      for (std::size_t s = 0; s < k(v); ++s) keep[s] = !is_forbidden(unary_[v][s]);
      for (auto e : incident(v)) {
        const auto& ed = edges_[e];
        const std::uint32_t o = ed.a == v ? ed.b : ed.a;
        for (std::size_t s = 0; s < k(v); ++s) {
          if (!keep[s]) continue;
          bool supported = false;
          for (std::size_t t = 0; t < k(o) && !supported; ++t) supported = !is_forbidden(edge_at(ed, v, s, t));
          keep[s] = supported;
        }
      }
      if (std::find(keep.begin(), keep.end(), false) == keep.end()) continue;
      if (std::find(keep.begin(), keep.end(), true) == keep.end()) {
        out_.has_permitted_assignment = false;
        out_.infeasibility = "node " + std::to_string(members_[v].front().node) +
                             ": every strategy is forbidden by its own cost or by an edge";
        return true;
      }
      restrict_labels(v, keep);
      changed = true;
      for (auto e : incident(v)) {
        const std::uint32_t o = edges_[e].a == v ? edges_[e].b : edges_[e].a;
        if (!queued[o]) { queued[o] = true; queue.push_back(o); }
      }
    }
    return changed;
  }

  /// The function `label of dep = f(label of by)` that edge `e` imposes, when every label of
  /// `by` has exactly one permitted partner.
  std::optional<std::vector<std::uint32_t>> dependence(const edge_rec& e, std::uint32_t by) const {
    const std::uint32_t dep = e.a == by ? e.b : e.a;
    std::vector<std::uint32_t> f(k(by));
    for (std::size_t s = 0; s < k(by); ++s) {
      std::uint32_t found = none;
      for (std::size_t t = 0; t < k(dep); ++t) {
        if (is_forbidden(edge_at(e, by, s, t))) continue;
        if (found != none) return std::nullopt;
        found = static_cast<std::uint32_t>(t);
      }
      if (found == none) return std::nullopt;
      f[s] = found;
    }
    return f;
  }

  /// Moves `dep` into `by` through `f` (label of dep = f[label of by]), the edge `via` between them
  /// folded into `by`'s costs.
  void merge(std::uint32_t dep, std::uint32_t by, std::uint32_t via, const std::vector<std::uint32_t>& f) {
    auto& ub = unary_[by];
    {
      auto& ed = edges_[via];
      for (std::size_t s = 0; s < ub.size(); ++s) {
        ub[s] = add_costs(ub[s], add_costs(edge_at(ed, by, s, f[s]), unary_[dep][f[s]]));
      }
      kill_edge(via);
    }
    for (auto t : var_terms_[dep]) {
      auto& tr = terms_[t];
      std::vector<usage_type> use(ub.size());
      for (std::size_t s = 0; s < ub.size(); ++s) use[s] = tr.usage[f[s]];
      tr.usage = std::move(use);
      tr.var = by;
      var_terms_[by].push_back(t);
    }
    var_terms_[dep].clear();
    for (auto& m : members_[dep]) {
      std::vector<std::uint32_t> st(ub.size());
      for (std::size_t s = 0; s < ub.size(); ++s) st[s] = m.strategy[f[s]];
      members_[by].push_back({m.node, std::move(st)});
    }
    members_[dep].clear();
    for (auto e : incident(dep)) {
      auto& ed = edges_[e];
      const std::uint32_t o = ed.a == dep ? ed.b : ed.a;
      std::vector<cost_type> c(ub.size() * k(o));
      for (std::size_t s = 0; s < ub.size(); ++s) {
        for (std::size_t t = 0; t < k(o); ++t) c[s * k(o) + t] = edge_at(ed, dep, f[s], t);
      }
      kill_edge(e);
      if (o == by) {  // a second edge between the two: now a cost on by's own labels
        for (std::size_t s = 0; s < ub.size(); ++s) ub[s] = add_costs(ub[s], c[s * k(o) + s]);
        continue;
      }
      add_edge(by, o, std::move(c));
    }
    var_edges_[dep].clear();
    alive_[dep] = false;
    unary_[dep].clear();
    ++out_.stats.merged;
  }

  /// Merges nodes fixed by a neighbour's choice (XLA's follow constraints, aliases).
  bool merge_dependent() {
    bool changed = false;
    for (std::uint32_t e = 0; e < edges_.size() && !watch_.passed(edges_[e].cost.size()); ++e) {
      if (!edges_[e].alive) continue;
      const auto a = edges_[e].a, b = edges_[e].b;
      // Merge the variable with fewer edges into the other when the edge allows it.
      const bool a_smaller = degree_[a] <= degree_[b];
      const std::uint32_t first = a_smaller ? a : b, second = a_smaller ? b : a;
      if (auto f = dependence(edges_[e], second)) {  // first = f(second)
        merge(first, second, e, *f);
        changed = true;
      } else if (auto g = dependence(edges_[e], first)) {
        merge(second, first, e, *g);
        changed = true;
      }
    }
    return changed;
  }

  /// Folds variables with one label into their neighbours and the base load.
  bool fold_fixed() {
    bool changed = false;
    for (std::uint32_t v = 0; v < unary_.size() && !watch_.passed(1 + var_edges_[v].size()); ++v) {
      if (!alive_[v] || k(v) != 1) continue;
      out_.constant_cost += wide_cost(unary_[v][0]);
      for (auto e : incident(v)) {
        auto& ed = edges_[e];
        const std::uint32_t o = ed.a == v ? ed.b : ed.a;
        for (std::size_t t = 0; t < k(o); ++t) unary_[o][t] = add_costs(unary_[o][t], edge_at(ed, v, 0, t));
        kill_edge(e);
      }
      var_edges_[v].clear();
      for (auto t : var_terms_[v]) {
        terms_[t].alive = false;
        if (terms_[t].usage[0] != 0) out_.base_load.push_back({terms_[t].lower, terms_[t].upper, terms_[t].usage[0]});
      }
      var_terms_[v].clear();
      out_.fixed_.push_back(std::move(members_[v]));
      members_[v].clear();
      alive_[v] = false;
      ++out_.stats.fixed;
      changed = true;
    }
    return changed;
  }

  /// Sums edges that join the same two variables.
  void merge_duplicate_edges() {
    for (std::uint32_t v = 0; v < unary_.size() && !watch_.passed(1 + var_edges_[v].size()); ++v) {
      if (!alive_[v]) continue;
      std::vector<std::pair<std::uint32_t, std::uint32_t>> by_other;  // (other, edge)
      for (auto e : incident(v)) {
        const auto& ed = edges_[e];
        if (ed.a != v) continue;  // each pair handled from its first end; orientation fixed below
        by_other.emplace_back(ed.b, e);
      }
      for (auto e : incident(v)) {
        const auto& ed = edges_[e];
        if (ed.b != v) continue;
        by_other.emplace_back(ed.a, e);
      }
      std::sort(by_other.begin(), by_other.end());
      for (std::size_t i = 1; i < by_other.size(); ++i) {
        if (by_other[i].first != by_other[i - 1].first) continue;
        auto& keep = edges_[by_other[i - 1].second];
        auto& drop = edges_[by_other[i].second];
        if (!keep.alive || !drop.alive) continue;
        const std::uint32_t o = by_other[i].first;
        for (std::size_t s = 0; s < k(keep.a); ++s) {
          for (std::size_t t = 0; t < k(keep.b); ++t) {
            const std::uint32_t lv = keep.a == v ? static_cast<std::uint32_t>(s) : static_cast<std::uint32_t>(t);
            const std::uint32_t lo = keep.a == v ? static_cast<std::uint32_t>(t) : static_cast<std::uint32_t>(s);
            auto& c = keep.cost[s * k(keep.b) + t];
            c = add_costs(c, edge_at(drop, v, lv, lo));
          }
        }
        (void)o;
        kill_edge(by_other[i].second);
        by_other[i].second = by_other[i - 1].second;
        ++out_.stats.duplicate_edges;
      }
    }
  }

  /// True when `v`'s memory does not depend on its label; its terms then move to the base load.
  bool make_memory_free(std::uint32_t v) {
    for (auto t : var_terms_[v]) {
      const auto& u = terms_[t].usage;
      if (std::any_of(u.begin(), u.end(), [&](usage_type x) { return x != u[0]; })) return false;
    }
    for (auto t : var_terms_[v]) {
      terms_[t].alive = false;
      if (terms_[t].usage[0] != 0) out_.base_load.push_back({terms_[t].lower, terms_[t].upper, terms_[t].usage[0]});
    }
    var_terms_[v].clear();
    return true;
  }

  /// Bucket elimination of memory-free variables with at most two neighbours, repeated while
  /// eliminating one makes another eligible.
  void eliminate_memory_free() {
    std::deque<std::uint32_t> queue;
    for (std::uint32_t v = 0; v < unary_.size(); ++v) if (alive_[v]) queue.push_back(v);
    while (!queue.empty() && !watch_.passed(1 + var_edges_[queue.front()].size())) {
      const std::uint32_t v = queue.front();
      queue.pop_front();
      if (!alive_[v] || degree_[v] > 2 || !make_memory_free(v)) continue;
      const auto list = incident(v);
      presolved::elimination rec;
      rec.var = v;
      rec.members = std::move(members_[v]);
      const std::size_t kv = k(v);
      if (list.empty()) {
        const auto best = static_cast<std::uint32_t>(std::min_element(unary_[v].begin(), unary_[v].end()) - unary_[v].begin());
        out_.constant_cost += wide_cost(unary_[v][best]);
        rec.best = {best};
      } else if (list.size() == 1) {
        auto& ed = edges_[list[0]];
        const std::uint32_t a = ed.a == v ? ed.b : ed.a;
        rec.a = a;
        rec.best.resize(k(a));
        for (std::size_t x = 0; x < k(a); ++x) {
          cost_type best = forbidden_cost;
          std::uint32_t arg = 0;
          for (std::size_t s = 0; s < kv; ++s) {
            const cost_type c = add_costs(unary_[v][s], edge_at(ed, v, s, x));
            if (c < best) { best = c; arg = static_cast<std::uint32_t>(s); }
          }
          rec.best[x] = arg;
          unary_[a][x] = add_costs(unary_[a][x], best);
        }
        kill_edge(list[0]);
        queue.push_back(a);
      } else {
        auto& e1 = edges_[list[0]];
        auto& e2 = edges_[list[1]];
        const std::uint32_t a = e1.a == v ? e1.b : e1.a;
        const std::uint32_t b = e2.a == v ? e2.b : e2.a;
        rec.a = a;
        rec.b = b;
        rec.b_size = k(b);
        std::vector<cost_type> c(k(a) * k(b));
        rec.best.resize(c.size());
        for (std::size_t x = 0; x < k(a); ++x) {
          for (std::size_t y = 0; y < k(b); ++y) {
            cost_type best = forbidden_cost;
            std::uint32_t arg = 0;
            for (std::size_t s = 0; s < kv; ++s) {
              const cost_type cs = add_costs(unary_[v][s], add_costs(edge_at(e1, v, s, x), edge_at(e2, v, s, y)));
              if (cs < best) { best = cs; arg = static_cast<std::uint32_t>(s); }
            }
            c[x * k(b) + y] = best;
            rec.best[x * k(b) + y] = arg;
          }
        }
        kill_edge(list[0]);
        kill_edge(list[1]);
        join_edge(a, b, std::move(c));
        queue.push_back(a);
        queue.push_back(b);
      }
      var_edges_[v].clear();
      alive_[v] = false;
      out_.eliminations_.push_back(std::move(rec));
      ++out_.stats.eliminated;
    }
  }

  /// Adds matrix `c` (a x b) to the edge between `a` and `b`, making one when there is none.
  void join_edge(std::uint32_t a, std::uint32_t b, std::vector<cost_type> c) {
    for (auto e : incident(a)) {
      auto& ed = edges_[e];
      if (ed.a == a && ed.b == b) {
        for (std::size_t i = 0; i < c.size(); ++i) ed.cost[i] = add_costs(ed.cost[i], c[i]);
        return;
      }
      if (ed.a == b && ed.b == a) {
        for (std::size_t x = 0; x < k(a); ++x) {
          for (std::size_t y = 0; y < k(b); ++y) ed.cost[y * k(a) + x] = add_costs(ed.cost[y * k(a) + x], c[x * k(b) + y]);
        }
        return;
      }
    }
    add_edge(a, b, std::move(c));
  }

  /// Renumbers the alive variables densely and moves everything into `out_`.
  void compact() {
    out_.compact_ids_.assign(unary_.size(), none);
    out_.eliminated_value_count_ = unary_.size();
    for (std::uint32_t v = 0; v < unary_.size(); ++v) {
      if (!alive_[v]) continue;
      out_.compact_ids_[v] = static_cast<std::uint32_t>(out_.unary.size());
      out_.unary.push_back(std::move(unary_[v]));
      out_.members.push_back(std::move(members_[v]));
    }
    for (auto& t : terms_) {
      if (!t.alive || !alive_[t.var]) continue;
      out_.terms.push_back({out_.compact_ids_[t.var], t.lower, t.upper, std::move(t.usage)});
    }
    for (auto& e : edges_) {
      if (!e.alive) continue;
      out_.edges.push_back({out_.compact_ids_[e.a], out_.compact_ids_[e.b], std::move(e.cost)});
    }
  }
};

}  // namespace detail

/// Presolves `p` (see the file comment). Never fails: a problem whose every assignment uses a
/// forbidden choice comes back with `has_permitted_assignment == false` and the reason, and one
/// whose presolve `deadline` cut short with `complete == false`.
template <sharding_problem P>
[[nodiscard]] presolved presolve(const P& p, solve_deadline deadline = std::nullopt) {
  return detail::presolver(p, deadline).run();
}

}  // namespace xlamem::sharding
