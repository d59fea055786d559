// SPDX-License-Identifier: Apache-2.0
// Bounds that are checked, never trusted: 2,000 generated problems per shape and limit (trees and
// grids of 10-40 nodes, dense graphs of 10-20: the sizes the exact oracle settles in CI time; on
// dense graphs it takes 0.2 s a problem at 30 nodes and 2 s at 35, GLPK's branch and bound 3 s
// at 40; tight and loose memory limits; forbidden pairs that survive presolve), each solved
// exactly by an oracle written here independently of the library (enumeration when the strategy
// product is small, else depth-first branch and bound), against which the parts are checked one
// by one: every TRW-S bound and every Lagrangian bound is at most the optimum, TRW-S is exact on
// trees without the limit, the neighbourhood search reaches the optimum, `solve` says `optimal`
// only at the optimum and its bound is at most the optimum. And a bound above the cost is
// reported as an internal error, never as a proof.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/sharding/sharding_text.hpp"
#include "xlamem/sharding/lagrangian.hpp"
#include "xlamem/sharding/local_moves.hpp"
#include "xlamem/sharding/neighbourhood_search.hpp"
#include "xlamem/sharding/presolve.hpp"
#include "xlamem/sharding/solver.hpp"
#include "xlamem/sharding/trws.hpp"

namespace sh = xlamem::sharding;

namespace {

enum class graph_kind { tree, grid, dense };

struct shape {
  graph_kind graph = graph_kind::tree;
  bool tight = false;  ///< the limit near the least usage's peak, else near the most usage's
};

// A random problem of `nodes` nodes: every usage depends on the strategy (so presolve cannot
// eliminate a node for being memory-free), 8 % of the edge entries forbidden (2 % on dense graphs,
// where a node has ten times the edges: at 8 % most dense graphs of 30 nodes and more have no
// allowed assignment at all), a few forbidden node strategies.
sh::problem generate(std::uint64_t seed, shape s, std::size_t nodes) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const std::int64_t steps = std::max<std::int64_t>(4, static_cast<std::int64_t>(nodes) / 3);
  sh::problem p;
  std::vector<std::size_t> k(nodes);
  for (std::size_t i = 0; i < nodes; ++i) {
    k[i] = static_cast<std::size_t>(uniform(2, s.graph == graph_kind::dense ? 3 : 4));
    std::vector<sh::cost_type> c(k[i]);
    std::vector<sh::usage_type> u(k[i]);
    for (std::size_t x = 0; x < k[i]; ++x) {
      c[x] = chance(0.03) ? sh::forbidden_cost : uniform(0, 1000);
      u[x] = uniform(1, 60);
    }
    sh::live_interval live;
    if (!chance(0.1)) {
      live.lower = uniform(0, steps - 1);
      live.upper = uniform(live.lower + 1, steps);
    }
    p.add_node(live, c, u);
  }
  const auto edge = [&](std::size_t a, std::size_t b) {
    std::vector<sh::cost_type> m(k[a] * k[b]);
    for (auto& c : m) c = chance(s.graph == graph_kind::dense ? 0.02 : 0.08) ? sh::forbidden_cost : uniform(0, 1000);
    p.add_edge(a, b, m);
  };
  if (s.graph == graph_kind::tree) {
    for (std::size_t i = 1; i < nodes; ++i) edge(static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(i) - 1)), i);
  } else if (s.graph == graph_kind::grid) {
    const std::size_t width = 4;
    for (std::size_t i = 1; i < nodes; ++i) {
      if (i % width != 0) edge(i - 1, i);
      if (i >= width) edge(i - width, i);
    }
  } else {
    for (std::size_t a = 0; a < nodes; ++a) {
      for (std::size_t b = a + 1; b < nodes; ++b) if (chance(0.4)) edge(a, b);
    }
  }
  // The limit between the peaks of the least and the most usage of every node.
  const auto peak = [&](bool most) {
    sh::usage_type top = 0;
    for (std::int64_t t = 0; t < steps; ++t) {
      sh::usage_type load = 0;
      for (std::size_t i = 0; i < nodes; ++i) {
        if (!p.intervals[i].contains(t)) continue;
        sh::usage_type u = p.node_usage(i, 0);
        for (std::size_t x = 1; x < k[i]; ++x) u = most ? std::max(u, p.node_usage(i, x)) : std::min(u, p.node_usage(i, x));
        load += u;
      }
      top = std::max(top, load);
    }
    return top;
  };
  const sh::usage_type lo = peak(false), hi = peak(true);
  const double share = s.tight ? 0.25 * std::uniform_real_distribution<double>(0, 1)(rng)
                               : 0.6 + 0.4 * std::uniform_real_distribution<double>(0, 1)(rng);
  p.limit = lo + static_cast<sh::usage_type>(share * static_cast<double>(hi - lo));
  return p;
}

// The cost of `a` on `p` when it uses no forbidden choice and keeps the limit, else nothing.
std::optional<std::int64_t> allowed_cost(const sh::problem& p, const sh::assignment& a) {
  std::int64_t cost = 0;
  for (std::size_t i = 0; i < p.node_count(); ++i) {
    if (sh::is_forbidden(p.node_cost(i, a[i]))) return std::nullopt;
    cost += p.node_cost(i, a[i]);
  }
  for (std::size_t e = 0; e < p.edge_count(); ++e) {
    const auto c = p.edge_cost(e, a[p.edges[e].first], a[p.edges[e].second]);
    if (sh::is_forbidden(c)) return std::nullopt;
    cost += c;
  }
  std::int64_t horizon = 0;
  for (const auto& iv : p.intervals) horizon = std::max(horizon, iv.upper);
  for (std::int64_t t = 0; t < horizon; ++t) {
    sh::usage_type load = 0;
    for (std::size_t i = 0; i < p.node_count(); ++i) if (p.intervals[i].contains(t)) load += p.node_usage(i, a[i]);
    if (load > p.limit) return std::nullopt;
  }
  return cost;
}

// The exact optimum, by enumeration (when the strategy product is at most `enumerate_up_to`)
// or by depth-first branch and bound: nodes in breadth-first order, each node's strategies
// cheapest first against the nodes already chosen. The breadth-first search also gives a
// spanning forest, and the open nodes (every node from the current depth on) are whole subtrees
// of it; the bound is the exact least cost of those subtrees ignoring memory, by dynamic
// programming from the leaves: each open node's strategies cost their own cost plus the edges to
// the chosen nodes (exact), the tree edges to its children (exact, with the children's subtree
// costs), and for each other edge to a later node that edge's cheapest entry in the strategy's
// row (edge costs are nonnegative). On a tree the bound is the exact optimum without the limit,
// so the search only branches where memory forces it. Memory counts every open node at its least
// usage. Under a limit a second bound prices memory: for prices λ_t >= 0 per time step, every
// assignment within the limit costs at least its cost plus Σ_t λ_t (load_t - limit), which is
// the same dynamic programme with each strategy's cost raised by its usage times the prices over
// its live range (a Lagrangian relaxation of the limit); the prices come from subgradient steps
// at the root. `limit` replaces the problem's limit.
class oracle {
 public:
  struct answer {
    std::optional<std::int64_t> cost;
    sh::assignment strategies;
    bool enumerated = false;
    bool frontier = false;  ///< the frontier programme bounded the search, not the spanning forest
  };

  // `frontier`: whether the search may use the frontier programme where it is small.
  static answer solve(const sh::problem& p, sh::usage_type limit, std::optional<std::int64_t> upper = std::nullopt,
                      bool frontier = true) {
    double product = 1;
    for (std::size_t i = 0; i < p.node_count(); ++i) product *= static_cast<double>(p.strategy_count(i));
    if (product <= enumerate_up_to) return enumerate(p, limit);
    oracle o(p, limit);
    if (frontier) o.use_frontier_if_small();
    // No allowed answer costs more than every node's and edge's dearest allowed entry together,
    // so with no answer known that sum + 1 still prunes (and proves there is none when nothing is
    // found below it).
    o.best_ = upper ? *upper + 1 : o.most_allowed_cost() + 1;
    if (limit < std::numeric_limits<sh::usage_type>::max()) o.price_memory(upper);
    o.search(0, 0);
    answer out;
    if (o.found_) out = {o.best_, o.best_strategies_, false};
    out.frontier = o.frontier_;
    return out;
  }

 private:
  static constexpr double enumerate_up_to = 4096;
  static constexpr double frontier_states_up_to = 1 << 14;  // frontier labellings x the next node's strategies
  static constexpr std::int64_t blocked = std::int64_t{1} << 50;  // a forbidden choice
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  struct neighbour {
    std::size_t other, edge;
    bool first;  ///< this node is the edge's first node
  };

  const sh::problem& p_;
  sh::usage_type limit_;
  std::vector<std::size_t> order_, position_;
  std::vector<std::vector<neighbour>> adjacent_;
  std::vector<std::vector<std::int64_t>> partial_;  ///< own cost + edges to chosen nodes, per strategy
  std::vector<std::vector<std::int64_t>> ahead_;    ///< cheapest entries of non-tree edges to later nodes, per strategy
  std::vector<std::vector<neighbour>> children_;    ///< tree edges to later nodes
  std::vector<std::size_t> parent_at_;              ///< the tree parent's position (roots: none)
  std::vector<std::vector<std::int64_t>> subtree_;  ///< the bound's table: least subtree cost per strategy
  std::vector<std::vector<double>> priced_;         ///< memory's price of each strategy: usage x Σ λ over its range
  std::vector<std::vector<double>> priced_subtree_; ///< the priced bound's table
  double priced_chosen_ = 0;                         ///< the chosen strategies' prices
  double price_offset_ = 0;                          ///< limit x Σ λ
  bool pricing_ = false;
  // The frontier programme (see use_frontier_if_small): a level per position 0..n.
  struct frontier_level {
    std::vector<std::size_t> nodes;   ///< chosen nodes with an edge to an open one
    std::vector<std::size_t> stride;  ///< the mixed radix of their labels
    std::size_t states = 1;
    std::vector<std::size_t> from;    ///< per node of the next level: its index here, or none for this level's node
    std::vector<std::pair<std::size_t, neighbour>> edges;  ///< this level's node to a frontier node (index, edge)
  };
  bool frontier_ = false;
  std::vector<frontier_level> levels_;
  std::vector<std::vector<std::int64_t>> exact_;  ///< least cost of the open nodes per frontier labelling, no limit
  std::vector<std::vector<double>> priced_exact_; ///< the same with memory priced
  std::vector<sh::usage_type> load_, least_, scratch_;
  sh::assignment chosen_, best_strategies_;
  std::int64_t best_ = 0;
  bool found_ = false;

  oracle(const sh::problem& p, sh::usage_type limit)
      : p_(p), limit_(limit), position_(p.node_count()), adjacent_(p.node_count()), partial_(p.node_count()),
        ahead_(p.node_count()), children_(p.node_count()), parent_at_(p.node_count(), none),
        subtree_(p.node_count()), priced_(p.node_count()), priced_subtree_(p.node_count()), least_(p.node_count()),
        chosen_(p.node_count(), 0) {
    const std::size_t n = p.node_count();
    for (std::size_t e = 0; e < p.edge_count(); ++e) {
      adjacent_[p.edges[e].first].push_back({p.edges[e].second, e, true});
      adjacent_[p.edges[e].second].push_back({p.edges[e].first, e, false});
    }
    std::vector<bool> seen(n, false);
    for (std::size_t root = 0; root < n; ++root) {  // breadth first, every component
      if (seen[root]) continue;
      seen[root] = true;
      order_.push_back(root);
      for (std::size_t h = order_.size() - 1; h < order_.size(); ++h) {
        for (const auto& nb : adjacent_[order_[h]]) {
          if (!seen[nb.other]) {
            seen[nb.other] = true;
            order_.push_back(nb.other);
            children_[order_[h]].push_back(nb);
            parent_at_[nb.other] = h;
          }
        }
      }
    }
    for (std::size_t d = 0; d < n; ++d) position_[order_[d]] = d;
    std::int64_t horizon = 0;
    for (const auto& iv : p.intervals) horizon = std::max(horizon, iv.upper);
    load_.assign(static_cast<std::size_t>(horizon), 0);
    for (std::size_t i = 0; i < n; ++i) {
      partial_[i].resize(p.strategy_count(i));
      least_[i] = p.node_usage(i, 0);
      for (std::size_t s = 0; s < p.strategy_count(i); ++s) {
        partial_[i][s] = sh::is_forbidden(p.node_cost(i, s)) ? blocked : p.node_cost(i, s);
        least_[i] = std::min(least_[i], p.node_usage(i, s));
      }
      for (auto t = p.intervals[i].lower; t < p.intervals[i].upper; ++t) load_[static_cast<std::size_t>(t)] += least_[i];
    }
    for (std::size_t i = 0; i < n; ++i) {
      ahead_[i].assign(p.strategy_count(i), 0);
      subtree_[i].assign(p.strategy_count(i), 0);
      priced_[i].assign(p.strategy_count(i), 0.0);
      priced_subtree_[i].assign(p.strategy_count(i), 0.0);
      for (const auto& nb : adjacent_[i]) {
        if (position_[nb.other] < position_[i] || is_tree_edge(i, nb)) continue;
        for (std::size_t s = 0; s < p.strategy_count(i); ++s) {
          std::int64_t least = blocked;
          for (std::size_t t = 0; t < p.strategy_count(nb.other); ++t) least = std::min(least, pair_cost(nb, s, t));
          ahead_[i][s] += least;
        }
      }
    }
  }

  // When the nodes' own order keeps few chosen nodes next to open ones (a grid row by row), the
  // bound is a frontier dynamic programme instead of the spanning forest: at position d the
  // frontier is the chosen nodes with an edge to an open one, and a table holds, per labelling of
  // the frontier, the least cost of every open node without the limit. That is exact, so with a
  // prefix chosen the bound is one lookup and the search branches only where memory forces it.
  void use_frontier_if_small() {
    const std::size_t n = p_.node_count();
    std::vector<std::size_t> last(n, 0);  // each node's last neighbour
    for (std::size_t v = 0; v < n; ++v) {
      for (const auto& nb : adjacent_[v]) last[v] = std::max(last[v], nb.other);
    }
    std::vector<frontier_level> levels(n + 1);
    for (std::size_t d = 0; d <= n; ++d) {
      auto& level = levels[d];
      double product = 1;
      for (std::size_t v = 0; v < d; ++v) {
        if (last[v] < d) continue;
        level.nodes.push_back(v);
        level.stride.push_back(level.states);
        level.states *= p_.strategy_count(v);
        product *= static_cast<double>(p_.strategy_count(v));
      }
      if (product * (d < n ? static_cast<double>(p_.strategy_count(d)) : 1.0) > frontier_states_up_to) return;
      if (d == n) break;
      for (const auto& nb : adjacent_[d]) {
        if (nb.other > d) continue;
        const auto at = std::find(level.nodes.begin(), level.nodes.end(), nb.other) - level.nodes.begin();
        level.edges.emplace_back(static_cast<std::size_t>(at), nb);
      }
    }
    for (std::size_t d = 0; d < n; ++d) {
      for (const std::size_t v : levels[d + 1].nodes) {
        const auto at = std::find(levels[d].nodes.begin(), levels[d].nodes.end(), v);
        levels[d].from.push_back(v == d ? none : static_cast<std::size_t>(at - levels[d].nodes.begin()));
      }
    }
    frontier_ = true;
    levels_ = std::move(levels);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::iota(position_.begin(), position_.end(), std::size_t{0});
    frontier_tables(exact_);
  }

  void decode(std::size_t d, std::size_t state, std::vector<std::size_t>& labels) const {
    const auto& level = levels_[d];
    labels.resize(level.nodes.size());
    for (std::size_t j = level.nodes.size(); j-- > 0;) {
      labels[j] = state / level.stride[j];
      state %= level.stride[j];
    }
  }

  // The next level's state after labelling position d's node `s`, the frontier's labels given.
  std::size_t next_state(std::size_t d, const std::vector<std::size_t>& labels, std::size_t s) const {
    const auto& level = levels_[d];
    std::size_t next = 0;
    for (std::size_t m = 0; m < level.from.size(); ++m) next += levels_[d + 1].stride[m] * (level.from[m] == none ? s : labels[level.from[m]]);
    return next;
  }

  std::size_t chosen_state(std::size_t d) const {
    std::size_t state = 0;
    for (std::size_t j = 0; j < levels_[d].nodes.size(); ++j) state += levels_[d].stride[j] * chosen_[levels_[d].nodes[j]];
    return state;
  }

  // The tables from the last position back; with `price`, each strategy's cost raised by its price.
  template <class T>
  void frontier_tables(std::vector<std::vector<T>>& table, const std::vector<std::vector<double>>* price = nullptr) const {
    const std::size_t n = p_.node_count();
    table.assign(n + 1, {});
    table[n].assign(1, 0);
    std::vector<std::size_t> labels;
    for (std::size_t d = n; d-- > 0;) {
      table[d].assign(levels_[d].states, static_cast<T>(blocked));
      for (std::size_t state = 0; state < levels_[d].states; ++state) {
        decode(d, state, labels);
        for (std::size_t s = 0; s < p_.strategy_count(d); ++s) {
          T c = sh::is_forbidden(p_.node_cost(d, s)) ? static_cast<T>(blocked) : static_cast<T>(p_.node_cost(d, s));
          if (price) c += static_cast<T>((*price)[d][s]);
          for (const auto& [j, nb] : levels_[d].edges) c += static_cast<T>(pair_cost(nb, s, labels[j]));
          c += table[d + 1][next_state(d, labels, s)];
          table[d][state] = std::min(table[d][state], std::min(c, static_cast<T>(blocked)));
        }
      }
    }
  }

  // The labelling the priced tables chose, position by position.
  sh::assignment frontier_traceback() const {
    sh::assignment labels(p_.node_count(), 0);
    std::vector<std::size_t> frontier;
    std::size_t state = 0;
    for (std::size_t d = 0; d < p_.node_count(); ++d) {
      decode(d, state, frontier);
      double least = std::numeric_limits<double>::infinity();
      std::size_t pick = 0, next = 0;
      for (std::size_t s = 0; s < p_.strategy_count(d); ++s) {
        double c = static_cast<double>(sh::is_forbidden(p_.node_cost(d, s)) ? blocked : p_.node_cost(d, s)) + priced_[d][s];
        for (const auto& [j, nb] : levels_[d].edges) c += static_cast<double>(pair_cost(nb, s, frontier[j]));
        const auto to = next_state(d, frontier, s);
        c += priced_exact_[d + 1][to];
        if (c < least) {
          least = c;
          pick = s;
          next = to;
        }
      }
      labels[d] = static_cast<std::uint32_t>(pick);
      state = next;
    }
    return labels;
  }

  // The search's step in frontier mode: the open nodes' exact least cost is one lookup.
  void frontier_search(std::size_t depth, std::int64_t cost) {
    const std::size_t v = depth;
    const std::size_t state = chosen_state(depth);
    if (exact_[depth][state] >= blocked || cost + exact_[depth][state] >= best_) return;
    if (pricing_ && priced_out(static_cast<double>(cost) + priced_chosen_ + priced_exact_[depth][state] - price_offset_)) return;
    std::vector<std::size_t> frontier;
    decode(depth, state, frontier);
    std::vector<std::size_t> next(p_.strategy_count(v)), by_cost(p_.strategy_count(v));
    for (std::size_t s = 0; s < next.size(); ++s) next[s] = next_state(depth, frontier, s);
    const auto bound = [&](std::size_t s) { return partial_[v][s] + exact_[depth + 1][next[s]]; };
    std::iota(by_cost.begin(), by_cost.end(), std::size_t{0});
    std::sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) { return bound(a) < bound(b); });
    for (const auto s : by_cost) {
      const auto c = partial_[v][s];
      if (c >= blocked || bound(s) >= blocked || cost + bound(s) >= best_ || !fits(v, s)) continue;
      if (pricing_ && priced_out(static_cast<double>(cost + c) + priced_chosen_ + priced_[v][s] + priced_exact_[depth + 1][next[s]] - price_offset_)) continue;
      chosen_[v] = s;
      choose(v, s, 1);
      search(depth + 1, cost + c);
      choose(v, s, -1);
    }
  }

  std::int64_t most_allowed_cost() const {
    std::int64_t total = 0;
    const auto dearest = [](std::int64_t most, sh::cost_type c) { return sh::is_forbidden(c) ? most : std::max<std::int64_t>(most, c); };
    for (std::size_t i = 0; i < p_.node_count(); ++i) {
      std::int64_t most = 0;
      for (std::size_t s = 0; s < p_.strategy_count(i); ++s) most = dearest(most, p_.node_cost(i, s));
      total += most;
    }
    for (std::size_t e = 0; e < p_.edge_count(); ++e) {
      std::int64_t most = 0;
      for (std::size_t a = 0; a < p_.strategy_count(p_.edges[e].first); ++a) {
        for (std::size_t b = 0; b < p_.strategy_count(p_.edges[e].second); ++b) most = dearest(most, p_.edge_cost(e, a, b));
      }
      total += most;
    }
    return total;
  }

  bool is_tree_edge(std::size_t v, const neighbour& nb) const {
    return std::any_of(children_[v].begin(), children_[v].end(), [&](const neighbour& c) { return c.edge == nb.edge; });
  }

  // The least cost of the open nodes (positions from `depth` on) without the limit, given the
  // chosen ones: subtree tables from the last position back, summed over the open subtrees' roots.
  // With `price`, each strategy's cost is raised by its price (the table holds doubles then).
  template <class T>
  T open_bound(std::size_t depth, std::vector<std::vector<T>>& table, const std::vector<std::vector<double>>* price = nullptr) {
    T total = 0;
    for (std::size_t d = p_.node_count(); d-- > depth;) {
      const std::size_t v = order_[d];
      auto& row = table[v];
      for (std::size_t s = 0; s < row.size(); ++s) {
        T c = static_cast<T>(partial_[v][s] + ahead_[v][s]);
        if (price) c += static_cast<T>((*price)[v][s]);
        for (const auto& child : children_[v]) {
          const auto& below = table[child.other];
          T least = blocked;
          for (std::size_t t = 0; t < below.size(); ++t) least = std::min(least, static_cast<T>(pair_cost(child, s, t)) + below[t]);
          c += least;
        }
        row[s] = std::min(c, static_cast<T>(blocked));
      }
      if (parent_at_[v] == none || parent_at_[v] < depth) total += *std::min_element(row.begin(), row.end());
    }
    return total;
  }

  // Prices for the limit by projected subgradient steps on the whole problem (nothing chosen):
  // each step labels every node by the priced table (parents first), raises the price where that
  // labelling's load exceeds the limit and lowers it where it is under. The best prices stay.
  void price_memory(std::optional<std::int64_t> upper) {
    std::vector<double> lambda(load_.size(), 0.0), kept = lambda;
    double best = frontier_ ? static_cast<double>(exact_[0][0]) : static_cast<double>(open_bound(0, subtree_));
    double theta = 1.0;
    int stale = 0;
    for (int step = 0; step < 60 && best < static_cast<double>(blocked); ++step) {
      set_prices(lambda);
      if (frontier_) frontier_tables(priced_exact_, &priced_);
      const double bound = (frontier_ ? priced_exact_[0][0] : open_bound(0, priced_subtree_, &priced_)) - price_offset_;
      if (bound > best + 1e-9) {
        best = bound;
        kept = lambda;
        stale = 0;
      } else if (++stale >= 4) {
        theta /= 2;
        stale = 0;
      }
      std::vector<double> excess(load_.size(), -static_cast<double>(limit_));
      const auto labels = frontier_ ? frontier_traceback() : traceback();
      for (std::size_t i = 0; i < labels.size(); ++i) {
        for (auto t = p_.intervals[i].lower; t < p_.intervals[i].upper; ++t) excess[static_cast<std::size_t>(t)] += static_cast<double>(p_.node_usage(i, labels[i]));
      }
      double norm = 0;
      for (std::size_t t = 0; t < excess.size(); ++t) {
        if (lambda[t] > 0 || excess[t] > 0) norm += excess[t] * excess[t];
      }
      if (norm == 0) break;
      // Toward the known answer; without one, toward the cap on any allowed answer's cost, so that
      // a limit no allowed labelling keeps is proven quickly (the priced bound passes the cap).
      const double target = upper ? static_cast<double>(*upper) : static_cast<double>(best_);
      const double move = theta * std::max(target - bound, 1.0) / norm;
      for (std::size_t t = 0; t < lambda.size(); ++t) lambda[t] = std::max(0.0, lambda[t] + move * excess[t]);
    }
    set_prices(kept);
    if (frontier_) frontier_tables(priced_exact_, &priced_);
    pricing_ = true;
  }

  void set_prices(const std::vector<double>& lambda) {
    price_offset_ = 0;
    for (const double l : lambda) price_offset_ += l * static_cast<double>(limit_);
    for (std::size_t i = 0; i < p_.node_count(); ++i) {
      double range = 0;
      for (auto t = p_.intervals[i].lower; t < p_.intervals[i].upper; ++t) range += lambda[static_cast<std::size_t>(t)];
      for (std::size_t s = 0; s < priced_[i].size(); ++s) priced_[i][s] = range * static_cast<double>(p_.node_usage(i, s));
    }
  }

  // The labelling the priced table chose (after open_bound(0, priced_subtree_, ...)): roots at
  // their least entry, children at their least entry given the parent's label.
  sh::assignment traceback() const {
    sh::assignment labels(p_.node_count(), 0);
    for (const std::size_t v : order_) {
      const auto& row = priced_subtree_[v];
      if (parent_at_[v] == none) labels[v] = static_cast<std::uint32_t>(std::min_element(row.begin(), row.end()) - row.begin());
      for (const auto& child : children_[v]) {
        const auto& below = priced_subtree_[child.other];
        std::size_t pick = 0;
        for (std::size_t t = 1; t < below.size(); ++t) {
          if (static_cast<double>(pair_cost(child, labels[v], t)) + below[t] < static_cast<double>(pair_cost(child, labels[v], pick)) + below[pick]) pick = t;
        }
        labels[child.other] = static_cast<std::uint32_t>(pick);
      }
    }
    return labels;
  }

  // Whether a priced bound of `bound` rules out an answer below the best: answers cost whole
  // units, so any below the best costs at most best - 1.
  bool priced_out(double bound) const { return bound > static_cast<double>(best_) - 1 + 1e-6; }

  std::int64_t pair_cost(const neighbour& nb, std::size_t mine, std::size_t theirs) const {
    const auto c = nb.first ? p_.edge_cost(nb.edge, mine, theirs) : p_.edge_cost(nb.edge, theirs, mine);
    return sh::is_forbidden(c) ? blocked : c;
  }

  // Whether memory can still hold the open nodes, each at the least usage of the strategies its
  // subtree table still allows (after open_bound), beside the chosen ones.
  bool open_nodes_fit(std::size_t depth) {
    scratch_ = load_;
    for (std::size_t d = depth; d < p_.node_count(); ++d) {
      const std::size_t v = order_[d];
      auto least = std::numeric_limits<sh::usage_type>::max();
      for (std::size_t s = 0; s < subtree_[v].size(); ++s) {
        if (subtree_[v][s] < blocked) least = std::min(least, p_.node_usage(v, s));
      }
      if (least == std::numeric_limits<sh::usage_type>::max()) return false;
      for (auto t = p_.intervals[v].lower; t < p_.intervals[v].upper; ++t) scratch_[static_cast<std::size_t>(t)] += least - least_[v];
    }
    return std::all_of(scratch_.begin(), scratch_.end(), [&](sh::usage_type load) { return load <= limit_; });
  }

  bool fits(std::size_t v, std::size_t s) const {
    const auto extra = p_.node_usage(v, s) - least_[v];
    for (auto t = p_.intervals[v].lower; t < p_.intervals[v].upper; ++t) {
      if (load_[static_cast<std::size_t>(t)] + extra > limit_) return false;
    }
    return true;
  }

  void choose(std::size_t v, std::size_t s, int sign) {
    const auto extra = sign * (p_.node_usage(v, s) - least_[v]);
    for (auto t = p_.intervals[v].lower; t < p_.intervals[v].upper; ++t) load_[static_cast<std::size_t>(t)] += extra;
    priced_chosen_ += sign * priced_[v][s];
    for (const auto& nb : adjacent_[v]) {
      if (position_[nb.other] <= position_[v]) continue;
      auto& row = partial_[nb.other];
      for (std::size_t x = 0; x < row.size(); ++x) row[x] += sign * pair_cost(nb, s, x);
    }
  }

  void search(std::size_t depth, std::int64_t cost) {
    const std::size_t n = p_.node_count();
    if (depth == n) {
      if (cost < best_) {
        best_ = cost;
        best_strategies_ = chosen_;
        found_ = true;
      }
      return;
    }
    if (frontier_) return frontier_search(depth, cost);
    const std::int64_t open = open_bound(depth, subtree_);
    if (open >= blocked || cost + open >= best_) return;  // an open subtree has no allowed labelling, or no better one
    if (!open_nodes_fit(depth)) return;
    double priced_open = 0;
    if (pricing_) {
      priced_open = open_bound(depth, priced_subtree_, &priced_);
      if (priced_out(static_cast<double>(cost) + priced_chosen_ + priced_open - price_offset_)) return;
    }
    // The node at `depth` roots an open subtree: its strategies' bounds are its table's entries
    // plus the other open subtrees' least costs.
    const std::size_t v = order_[depth];
    const auto row = subtree_[v];  // a copy: deeper calls overwrite the table
    const std::int64_t others = open - *std::min_element(row.begin(), row.end());
    const auto priced_row = priced_subtree_[v];
    const double priced_others = pricing_ ? priced_open - *std::min_element(priced_row.begin(), priced_row.end()) : 0.0;
    std::vector<std::size_t> by_cost(p_.strategy_count(v));
    std::iota(by_cost.begin(), by_cost.end(), std::size_t{0});
    std::sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) { return row[a] < row[b]; });
    for (const auto s : by_cost) {
      const auto c = partial_[v][s];
      if (c >= blocked || row[s] >= blocked || cost + row[s] + others >= best_ || !fits(v, s)) continue;
      if (pricing_ && priced_out(static_cast<double>(cost) + priced_chosen_ + priced_row[s] + priced_others - price_offset_)) continue;
      chosen_[v] = s;
      choose(v, s, 1);
      search(depth + 1, cost + c);
      choose(v, s, -1);
    }
  }

  static answer enumerate(const sh::problem& p, sh::usage_type limit) {
    sh::problem q = p;
    q.limit = limit;
    answer out;
    out.enumerated = true;
    sh::assignment a(p.node_count(), 0);
    for (;;) {
      const auto c = allowed_cost(q, a);
      if (c && (!out.cost || *c < *out.cost)) {
        out.cost = c;
        out.strategies = a;
      }
      std::size_t i = 0;
      for (; i < a.size(); ++i) {
        if (++a[i] < p.strategy_count(i)) break;
        a[i] = 0;
      }
      if (i == a.size()) return out;
    }
  }
};

}  // namespace

namespace {

// Problems per shape, and how long `solve` may take on each: most are settled by its exact
// search in milliseconds; the few it does not finish run to this limit.
constexpr int per_shape = 2000;
constexpr double solve_seconds = 0.02;
// The second solve's time, for the oracle's upper bound only (see upper_bound_for_oracle).
constexpr double retry_seconds = 1.0;
// Steps the lone neighbourhood search gets to reach the optimum: a few milliseconds. Most take
// under 60; with 1,000 it missed 13 of 1,597 tight grids of 10-40 nodes, with 5,000 4 of them.
constexpr std::uint64_t search_steps = 5000;

// What the checks of one shape found, for the message.
struct figures {
  int problems = 0, enumerated = 0, without_answer = 0, forbidden_after_presolve = 0;
  int proven = 0, proven_infeasible = 0, solved_to_optimum = 0, not_found_in_time = 0, search_reached = 0, search_runs = 0, tree_exact = 0, tree_runs = 0;
  std::uint64_t search_steps_to_optimum = 0;
};

constexpr double tolerance = 1e-9;  // relative, the margin `solve` takes off its bound

bool at_most(double bound, std::int64_t optimum) {
  return bound <= static_cast<double>(optimum) + tolerance * std::abs(static_cast<double>(optimum)) + 1e-6;
}

// TRW-S on the presolved model without the limit: every bound at most the optimum without the
// limit, and on trees (presolve keeps a tree a tree) equal to it once the messages settle.
void check_trws(const sh::search_model& m, double constant, std::int64_t free_optimum, bool tree, figures& f) {
  sh::trws t(m);
  double bound = 0;
  for (int pass = 0; pass < 30; ++pass) {
    t.iterate();
    bound = constant + t.lower_bound();
    REQUIRE_MESSAGE(at_most(bound, free_optimum), "TRW-S bound ", bound, " above the optimum ", free_optimum, " at pass ", pass);
  }
  if (!tree) return;
  ++f.tree_runs;
  if (bound >= static_cast<double>(free_optimum) - 1e-6 * static_cast<double>(free_optimum) - 1e-6) ++f.tree_exact;
}

// The Lagrangian relaxation steered toward the optimum: every step's bound at most the optimum.
void check_lagrangian(const sh::search_model& m, double constant, std::int64_t optimum) {
  sh::lagrangian_relaxation lr(m);
  for (int step = 0; step < 25; ++step) {
    const double bound = constant + lr.step(static_cast<double>(optimum) - constant);
    REQUIRE_MESSAGE(at_most(bound, optimum), "Lagrangian bound ", bound, " above the optimum ", optimum, " at step ", step);
  }
}

// Neighbourhood search from every variable at label 0 (repaired to fit): the steps it takes to
// reach the optimum, its answers mapped back and scored here.
void check_search(const sh::problem& p, const sh::presolved& pre, const sh::search_model& m, std::int64_t optimum,
                  std::uint64_t seed, figures& f) {
  sh::assignment_state st(m, std::vector<std::uint32_t>(m.var_count(), 0));
  if (!st.fits()) (void)sh::repair_memory(m, st, xlamem::solve_clock::now() + std::chrono::seconds(10));
  sh::neighbourhood_search lns(m, seed);
  const auto constant = pre.constant_cost.to_int64();
  ++f.search_runs;
  for (std::uint64_t step = 0; step < search_steps; ++step) {
    if (st.fits() && constant + st.cost() == optimum) {
      ++f.search_reached;
      f.search_steps_to_optimum += step;
      break;
    }
    (void)lns.step(st);
  }
  if (!st.fits() || m.is_penalty(st.cost())) return;
  const auto scored = allowed_cost(p, pre.expand(st.labels()));
  REQUIRE_MESSAGE(scored, "the search's answer maps back to an allowed assignment");
  CHECK(*scored == constant + st.cost());
  CHECK(*scored >= optimum);
}

// `solve`: optimal only at the optimum, its bound at most the optimum, its cost exact.
void check_solve(const sh::problem& p, const sh::solve_result& r, const std::optional<std::int64_t>& optimum, figures& f) {
  CHECK_MESSAGE(r.internal_error.empty(), r.internal_error);
  if (r.status == xlamem::solve_status::infeasible) {  // a proof: the oracle found none either
    CHECK_FALSE(optimum);
    ++f.proven_infeasible;
  }
  if (!optimum) {
    CHECK_FALSE((r.feasible && r.forbidden_choices == 0));
    CHECK(r.status != xlamem::solve_status::optimal);
    CHECK_FALSE(r.lower_bound);
    return;
  }
  if (!r.feasible || r.forbidden_choices != 0) {  // the time ran out first: no claim may be made
    ++f.not_found_in_time;
    CHECK(r.status != xlamem::solve_status::optimal);
    CHECK_FALSE(r.lower_bound);
    return;
  }
  const auto scored = allowed_cost(p, r.strategies);
  REQUIRE(scored);
  CHECK(sh::wide_cost(*scored) == r.cost);
  REQUIRE(r.lower_bound);
  CHECK(*r.lower_bound <= sh::wide_cost(*optimum));
  if (r.status == xlamem::solve_status::optimal) {
    ++f.proven;
    CHECK(r.cost == sh::wide_cost(*optimum));
    CHECK(*r.lower_bound == r.cost);
    CHECK(*r.gap == 0.0);
  }
  if (r.cost == sh::wide_cost(*optimum)) ++f.solved_to_optimum;
}

bool has_forbidden_entry(const sh::presolved& pre) {
  for (const auto& e : pre.edges) {
    if (std::any_of(e.cost.begin(), e.cost.end(), [](sh::cost_type c) { return sh::is_forbidden(c); })) return true;
  }
  return false;
}

// The time the solve under test gets; XLAMEM_TEST_BOUNDS_SOLVE_SECONDS replaces it (a tiny
// value shows the test's length does not hang on the solver finding answers in time).
double first_solve_seconds() {
  const char* text = std::getenv("XLAMEM_TEST_BOUNDS_SOLVE_SECONDS");
  return text != nullptr ? std::atof(text) : solve_seconds;
}

// An upper bound for the oracle: the solve's allowed answer, or one from a second solve with
// more time when the first found none and presolve does not rule one out. Without a bound the
// oracle's branch and bound on a tight 40-node grid can run for hours; the first solve's
// answer depends on the machine's speed and load, so on a slow machine the test hung.
std::optional<std::int64_t> upper_bound_for_oracle(const sh::problem& p, const sh::presolved& pre,
                                                   const sh::solve_result& r, std::uint64_t seed) {
  if (r.feasible && r.forbidden_choices == 0) return allowed_cost(p, r.strategies);
  if (!pre.has_permitted_assignment) return std::nullopt;
  sh::solve_options o;
  o.time_limit = retry_seconds;
  o.seed = seed;
  const auto again = sh::solve(p, o);
  REQUIRE(again);
  if (again->feasible && again->forbidden_choices == 0) return allowed_cost(p, again->strategies);
  return std::nullopt;
}

// `count` problems of shape `s`, `min_nodes` to `max_nodes` nodes, each checked part by part.
figures check_shape(shape s, int count, std::size_t min_nodes, std::size_t max_nodes, std::uint64_t first_seed) {
  figures f;
  for (int k = 0; k < count; ++k) {
    const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(k);
    const std::size_t nodes = min_nodes + static_cast<std::size_t>(seed % (max_nodes - min_nodes + 1));
    const auto p = generate(seed, s, nodes);
    ++f.problems;
    sh::solve_options o;
    o.time_limit = first_solve_seconds();
    o.seed = seed;
    const auto r = sh::solve(p, o);
    REQUIRE(r);
    const auto pre = sh::presolve(p);
    const auto best = oracle::solve(p, p.limit, upper_bound_for_oracle(p, pre, *r, seed));
    f.enumerated += best.enumerated;
    INFO("seed ", seed, ", ", nodes, " nodes, optimum ", best.cost ? std::to_string(*best.cost) : "none");
    check_solve(p, *r, best.cost, f);
    if (!pre.has_permitted_assignment) {
      CHECK_FALSE(best.cost);
      ++f.without_answer;
      continue;
    }
    f.forbidden_after_presolve += has_forbidden_entry(pre);
    const sh::search_model m(pre);
    const double constant = pre.constant_cost.to_double();
    const auto free = oracle::solve(p, std::numeric_limits<sh::usage_type>::max(), best.cost);
    if (!free.cost) {  // presolve's arc consistency found no contradiction, yet no labelling avoids every forbidden choice
      CHECK_FALSE(best.cost);
      ++f.without_answer;
      continue;
    }
    check_trws(m, constant, *free.cost, s.graph == graph_kind::tree, f);
    if (!best.cost) {
      ++f.without_answer;
      continue;
    }
    check_lagrangian(m, constant, *best.cost);
    check_search(p, pre, m, *best.cost, seed, f);
  }
  // One search from one start, without the solver's restarts and kicks: it may stall in a local
  // optimum now and then at 30-40 variables (about 1 in 400 on tight grids); more than 1 in 200 is
  // a regression.
  CHECK_MESSAGE(200 * (f.search_runs - f.search_reached) <= f.search_runs, "the neighbourhood search missed the optimum in ",
                f.search_runs - f.search_reached, " of ", f.search_runs, " problems");
  return f;
}

void report(const std::string& name, const figures& f) {
  MESSAGE(name, ": ", f.problems, " problems (", f.enumerated, " enumerated, ", f.without_answer,
          " without an allowed assignment, ", f.forbidden_after_presolve, " with forbidden pairs after presolve); solve: ",
          f.solved_to_optimum, " at the optimum, ", f.proven, " proven, ", f.proven_infeasible, " proven infeasible (the oracle agreeing), ", f.not_found_in_time,
          " without an allowed answer in ", first_solve_seconds(), " s; search: ", f.search_reached, " of ", f.search_runs,
          " reached the optimum (", f.search_runs > 0 ? static_cast<double>(f.search_steps_to_optimum) / std::max(1, f.search_reached) : 0.0,
          " steps on average); TRW-S exact on ", f.tree_exact, " of ", f.tree_runs, " trees");
}

}  // namespace

TEST_SUITE("sharding/bounds") {
  TEST_CASE("the oracle's branch and bound agrees with enumeration") {
    int frontier = 0;
    for (std::uint64_t seed = 1; seed <= 600; ++seed) {
      const shape s{static_cast<graph_kind>(seed % 3), seed % 2 == 0};
      const auto p = generate(seed, s, 5 + seed % 2);  // at most 4^6 = 4096 assignments
      sh::problem big = p;  // the same problem, made too large to enumerate by a lone node
      big.add_node({0, 0}, std::vector<sh::cost_type>(5000, 0), std::vector<sh::usage_type>(5000, 0));
      const auto small = oracle::solve(p, p.limit);
      REQUIRE(small.enumerated);
      // Both bounds: the frontier programme (small here) and the spanning forest.
      for (const bool allow_frontier : {true, false}) {
        const auto searched = oracle::solve(big, p.limit, std::nullopt, allow_frontier);
        REQUIRE_FALSE(searched.enumerated);
        CHECK(searched.frontier == allow_frontier);
        frontier += searched.frontier;
        CHECK_MESSAGE(small.cost == searched.cost, "seed ", seed, allow_frontier ? ", frontier" : ", spanning forest");
      }
    }
    CHECK(frontier == 600);
  }

  TEST_CASE("the oracle's two bounds agree on grids of 20-40 nodes") {
    int agreed = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      const auto p = generate(seed, {graph_kind::grid, seed % 2 == 0}, 20 + seed % 21);
      const auto by_frontier = oracle::solve(p, p.limit);
      REQUIRE(by_frontier.frontier);
      const auto by_forest = oracle::solve(p, p.limit, by_frontier.cost, false);  // the known optimum speeds it up
      REQUIRE_FALSE(by_forest.frontier);
      // The forest's search prunes at the known optimum + 1, so it finds that optimum or a better one.
      CHECK_MESSAGE(by_forest.cost == by_frontier.cost, "seed ", seed);
      agreed += by_forest.cost == by_frontier.cost;
    }
    MESSAGE(agreed, " of 60 grids: both bounds found the same optimum");
  }

  TEST_CASE("every bound at most the optimum, optimal only when it is: trees") {
    const auto tight = check_shape({graph_kind::tree, true}, per_shape, 10, 40, 1);
    const auto loose = check_shape({graph_kind::tree, false}, per_shape, 10, 40, 100001);
    report("trees, tight limit", tight);
    report("trees, loose limit", loose);
    // TRW-S is exact on a tree: its bound settles at the optimum without the limit.
    CHECK(tight.tree_exact == tight.tree_runs);
    CHECK(loose.tree_exact == loose.tree_runs);
  }

  TEST_CASE("every bound at most the optimum, optimal only when it is: grids") {
    report("grids, tight limit", check_shape({graph_kind::grid, true}, per_shape, 10, 40, 200001));
    report("grids, loose limit", check_shape({graph_kind::grid, false}, per_shape, 10, 40, 300001));
  }

  TEST_CASE("every bound at most the optimum, optimal only when it is: dense graphs") {
    report("dense, tight limit", check_shape({graph_kind::dense, true}, per_shape, 10, 20, 400001));
    report("dense, loose limit", check_shape({graph_kind::dense, false}, per_shape, 10, 20, 500001));
  }

  TEST_CASE("a bound above the cost is an internal error, never a proof") {
    sh::solve_result r;
    r.feasible = true;
    r.cost = sh::wide_cost(1000);
    r.status = xlamem::solve_status::time_limit;
    sh::detail::settle_bound(r, 1500.0, false);
    CHECK_FALSE(r.lower_bound);
    CHECK_FALSE(r.gap);
    CHECK(r.status == xlamem::solve_status::time_limit);
    CHECK(r.internal_error.find("the lower bound 1500 is above the cost 1000") != std::string::npos);
    // The text and the JSON say the bound is unknown and print no gap.
    sh::problem p;
    p.add_node({0, 1}, {1000}, {1});
    p.limit = 5;
    const xlamem::sharding_report report{"p.json", &p, &r, 1, 1.0, 0.0, std::nullopt, std::nullopt, 1};
    const auto text = xlamem::sharding_text(report);
    CHECK(text.find("lower bound: unknown") != std::string::npos);
    CHECK(text.find("gap") == std::string::npos);
    CHECK(text.find("optimal") == std::string::npos);
    CHECK(text.find("internal error: the lower bound 1500") != std::string::npos);
    const auto json = xlamem::json_document("shard", report, 0);
    CHECK(json.find("\"lower_bound\": null") != std::string::npos);
    CHECK(json.find("\"gap\": null") != std::string::npos);
    CHECK(json.find("\"internal_error\": \"the lower bound 1500") != std::string::npos);
    // A bound at the cost proves it (less the rounding margin, rounded up), a bound below it
    // gives the gap, none is 0.
    r.internal_error.clear();
    sh::detail::settle_bound(r, 1000.0, false);
    CHECK(r.status == xlamem::solve_status::optimal);
    CHECK(*r.lower_bound == r.cost);
    r.status = xlamem::solve_status::time_limit;
    sh::detail::settle_bound(r, 750.5, false);  // the optimum is an integer: at least 751
    CHECK(*r.lower_bound == sh::wide_cost(751));
    CHECK(*r.gap == doctest::Approx(0.249));
    CHECK(r.status == xlamem::solve_status::time_limit);
    sh::detail::settle_bound(r, -1e300, false);
    CHECK(*r.lower_bound == sh::wide_cost(0));
    sh::detail::settle_bound(r, -1e300, true);
    CHECK(r.status == xlamem::solve_status::optimal);
    // Over the limit: no bound is claimed.
    r.feasible = false;
    r.status = xlamem::solve_status::no_answer;
    sh::detail::settle_bound(r, 10.0, false);
    CHECK_FALSE(r.lower_bound);
    CHECK(r.status == xlamem::solve_status::no_answer);
  }
}
