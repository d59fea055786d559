// SPDX-License-Identifier: Apache-2.0
/// @file
/// The sharding-strategy problem under a memory limit (XLA's auto-sharding problem, published as
/// Google's IOPDDL contest): nodes with strategies, each of a cost and a memory usage, live on a
/// half-open interval of time steps; edges between two nodes with a cost per pair of strategies;
/// one usage limit that the chosen strategies of the nodes live at a time step must respect.
///
/// The solver and the evaluator see a problem only through `problem_traits<P>` (the primary
/// template forwards to member functions of the same names), so XLA's request, the IOPDDL file
/// (`sharding::problem`, below) and a user's own compiler all fit. Costs at or above
/// `forbidden_cost` mark forbidden choices (XLA encodes aliases and "follow" constraints that
/// way); totals can exceed 64 bits and are summed in `wide_cost`.
#pragma once

#include <algorithm>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace xlamem::sharding {

/// The cost of one choice (a node's strategy, or a pair of strategies on an edge).
using cost_type = std::int64_t;
/// The memory usage of one strategy.
using usage_type = std::int64_t;

/// Costs at or above this mark a forbidden choice (10^18, as XLA writes them).
inline constexpr cost_type forbidden_cost = 1'000'000'000'000'000'000;

/// True when `c` marks a forbidden choice.
[[nodiscard]] constexpr bool is_forbidden(cost_type c) noexcept { return c >= forbidden_cost; }

/// A half-open interval of time steps `[lower, upper)`; empty (`lower >= upper`) means the node
/// uses no memory at any time (IOPDDL writes `[0, 0]`).
struct live_interval {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  [[nodiscard]] constexpr bool empty() const noexcept { return lower >= upper; }
  [[nodiscard]] constexpr bool contains(std::int64_t t) const noexcept { return lower <= t && t < upper; }
  friend constexpr bool operator==(const live_interval&, const live_interval&) = default;
};

/// A signed 128-bit sum of costs: exact for any number of 64-bit terms a problem can hold
/// (the contest's totals reach 10^22). Portable (two words), so no compiler extension leaks
/// into users' builds.
class wide_cost {
 public:
  constexpr wide_cost() noexcept = default;
  constexpr wide_cost(std::int64_t v) noexcept  // NOLINT(google-explicit-constructor): a cost is a sum
      : lo_(static_cast<std::uint64_t>(v)), hi_(v < 0 ? ~std::uint64_t{0} : 0) {}

  constexpr wide_cost& operator+=(const wide_cost& o) noexcept {
    const std::uint64_t lo = lo_ + o.lo_;
    hi_ += o.hi_ + (lo < lo_ ? 1 : 0);
    lo_ = lo;
    return *this;
  }
  constexpr wide_cost& operator-=(const wide_cost& o) noexcept { return *this += -o; }
  [[nodiscard]] constexpr wide_cost operator-() const noexcept {
    wide_cost r;
    r.lo_ = ~lo_ + 1;
    r.hi_ = ~hi_ + (r.lo_ == 0 ? 1 : 0);
    return r;
  }
  [[nodiscard]] friend constexpr wide_cost operator+(wide_cost a, const wide_cost& b) noexcept { return a += b; }
  [[nodiscard]] friend constexpr wide_cost operator-(wide_cost a, const wide_cost& b) noexcept { return a -= b; }

  [[nodiscard]] constexpr bool negative() const noexcept { return (hi_ >> 63) != 0; }

  friend constexpr std::strong_ordering operator<=>(const wide_cost& a, const wide_cost& b) noexcept {
    const auto ah = static_cast<std::int64_t>(a.hi_);
    const auto bh = static_cast<std::int64_t>(b.hi_);
    if (ah != bh) return ah <=> bh;
    return a.lo_ <=> b.lo_;
  }
  friend constexpr bool operator==(const wide_cost&, const wide_cost&) noexcept = default;

  /// True when the value fits in `int64_t`.
  [[nodiscard]] constexpr bool fits_int64() const noexcept {
    return hi_ == (static_cast<std::int64_t>(lo_) < 0 ? ~std::uint64_t{0} : 0);
  }
  /// The value as `int64_t`; meaningful only when `fits_int64()`.
  [[nodiscard]] constexpr std::int64_t to_int64() const noexcept { return static_cast<std::int64_t>(lo_); }

  /// The nearest double (for ratios and gaps).
  [[nodiscard]] double to_double() const noexcept {
    if (negative()) return -(-*this).to_double();
    return static_cast<double>(hi_) * 18446744073709551616.0 + static_cast<double>(lo_);
  }

  /// Decimal digits, with a leading '-' when negative.
  [[nodiscard]] std::string to_string() const {
    if (negative()) return "-" + (-*this).to_string();
    std::uint64_t hi = hi_, lo = lo_;
    std::string digits;
    do {  // divide the 128-bit magnitude by 10, one 32-bit limb at a time
      std::uint64_t rem = 0;
      std::uint32_t limbs[4] = {static_cast<std::uint32_t>(hi >> 32), static_cast<std::uint32_t>(hi),
                                static_cast<std::uint32_t>(lo >> 32), static_cast<std::uint32_t>(lo)};
      for (auto& l : limbs) {
        const std::uint64_t cur = (rem << 32) | l;
        l = static_cast<std::uint32_t>(cur / 10);
        rem = cur % 10;
      }
      hi = (std::uint64_t{limbs[0]} << 32) | limbs[1];
      lo = (std::uint64_t{limbs[2]} << 32) | limbs[3];
      digits += static_cast<char>('0' + rem);
    } while (hi != 0 || lo != 0);
    std::reverse(digits.begin(), digits.end());
    return digits;
  }

 private:
  std::uint64_t lo_ = 0;
  std::uint64_t hi_ = 0;
};

/// A type with the member functions the primary `problem_traits` forwards to.
template <class P>
concept has_problem_members = requires(const P& p, std::size_t i) {
  p.node_count();
  p.strategy_count(i);
  p.node_cost(i, i);
  p.node_usage(i, i);
  p.interval(i);
  p.edge_count();
  p.edge_nodes(i);
  p.edge_cost(i, i, i);
  p.usage_limit();
};

/// How a pass reads a sharding problem. The primary template forwards to members of the same
/// names (and, for a type without them, declares nothing, so that `sharding_problem` is false
/// and overloads on it stay out of the way); specialise it to adapt a type without them.
/// Indices are dense: nodes `0..node_count-1`, strategies of node i `0..strategy_count(i)-1`,
/// edges `0..edge_count-1`.
template <class P>
struct problem_traits {};

template <has_problem_members P>
struct problem_traits<P> {
  static std::size_t node_count(const P& p) { return p.node_count(); }
  static std::size_t strategy_count(const P& p, std::size_t node) { return p.strategy_count(node); }
  static cost_type node_cost(const P& p, std::size_t node, std::size_t s) { return p.node_cost(node, s); }
  static usage_type node_usage(const P& p, std::size_t node, std::size_t s) { return p.node_usage(node, s); }
  static live_interval interval(const P& p, std::size_t node) { return p.interval(node); }
  static std::size_t edge_count(const P& p) { return p.edge_count(); }
  static std::pair<std::size_t, std::size_t> edge_nodes(const P& p, std::size_t e) { return p.edge_nodes(e); }
  /// The cost of edge `e` when its first node takes `s_first` and its second `s_second`.
  static cost_type edge_cost(const P& p, std::size_t e, std::size_t s_first, std::size_t s_second) {
    return p.edge_cost(e, s_first, s_second);
  }
  static usage_type usage_limit(const P& p) { return p.usage_limit(); }
};

/// A type the sharding passes can read through `problem_traits`.
template <class P>
concept sharding_problem = requires(const P& p, std::size_t i) {
  { problem_traits<P>::node_count(p) } -> std::convertible_to<std::size_t>;
  { problem_traits<P>::strategy_count(p, i) } -> std::convertible_to<std::size_t>;
  { problem_traits<P>::node_cost(p, i, i) } -> std::convertible_to<cost_type>;
  { problem_traits<P>::node_usage(p, i, i) } -> std::convertible_to<usage_type>;
  { problem_traits<P>::interval(p, i) } -> std::convertible_to<live_interval>;
  { problem_traits<P>::edge_count(p) } -> std::convertible_to<std::size_t>;
  { problem_traits<P>::edge_nodes(p, i) } -> std::convertible_to<std::pair<std::size_t, std::size_t>>;
  { problem_traits<P>::edge_cost(p, i, i, i) } -> std::convertible_to<cost_type>;
  { problem_traits<P>::usage_limit(p) } -> std::convertible_to<usage_type>;
};

/// The problem held in flat arrays, as the IOPDDL reader builds it. Strategy s of node i is at
/// `strategy_offsets[i] + s` in `costs` and `usages`; edge e's matrix is row-major (first node's
/// strategy major) at `edge_offsets[e]` in `edge_costs`, `strategy_count(u) * strategy_count(v)`
/// entries. Duplicate edges between the same pair may occur; their costs add.
struct problem {
  std::string name;
  std::vector<live_interval> intervals;              ///< one per node
  std::vector<std::size_t> strategy_offsets{0};      ///< node_count + 1 entries
  std::vector<cost_type> costs;                      ///< node costs, all strategies
  std::vector<usage_type> usages;                    ///< node usages, all strategies
  std::vector<std::pair<std::size_t, std::size_t>> edges;  ///< (first, second) node of each edge
  std::vector<std::size_t> edge_offsets{0};          ///< edge_count + 1 entries
  std::vector<cost_type> edge_costs;                 ///< all edge matrices
  usage_type limit = std::numeric_limits<usage_type>::max();  ///< no limit by default

  [[nodiscard]] std::size_t node_count() const noexcept { return intervals.size(); }
  [[nodiscard]] std::size_t strategy_count(std::size_t i) const noexcept {
    return strategy_offsets[i + 1] - strategy_offsets[i];
  }
  [[nodiscard]] cost_type node_cost(std::size_t i, std::size_t s) const noexcept {
    return costs[strategy_offsets[i] + s];
  }
  [[nodiscard]] usage_type node_usage(std::size_t i, std::size_t s) const noexcept {
    return usages[strategy_offsets[i] + s];
  }
  [[nodiscard]] live_interval interval(std::size_t i) const noexcept { return intervals[i]; }
  [[nodiscard]] std::size_t edge_count() const noexcept { return edges.size(); }
  [[nodiscard]] std::pair<std::size_t, std::size_t> edge_nodes(std::size_t e) const noexcept { return edges[e]; }
  [[nodiscard]] cost_type edge_cost(std::size_t e, std::size_t s_first, std::size_t s_second) const noexcept {
    return edge_costs[edge_offsets[e] + s_first * strategy_count(edges[e].second) + s_second];
  }
  [[nodiscard]] usage_type usage_limit() const noexcept { return limit; }

  /// Appends a node with the given strategies (`node_costs.size() == node_usages.size()`).
  std::size_t add_node(live_interval live, const std::vector<cost_type>& node_costs,
                       const std::vector<usage_type>& node_usages) {
    intervals.push_back(live);
    costs.insert(costs.end(), node_costs.begin(), node_costs.end());
    usages.insert(usages.end(), node_usages.begin(), node_usages.end());
    strategy_offsets.push_back(costs.size());
    return intervals.size() - 1;
  }
  /// Appends an edge with its row-major matrix (`strategy_count(u) * strategy_count(v)` costs).
  std::size_t add_edge(std::size_t u, std::size_t v, const std::vector<cost_type>& matrix) {
    edges.emplace_back(u, v);
    edge_costs.insert(edge_costs.end(), matrix.begin(), matrix.end());
    edge_offsets.push_back(edge_costs.size());
    return edges.size() - 1;
  }
};
static_assert(sharding_problem<problem>);

/// A solution: one strategy index per node (the contest's `[s0, s1, ...]`).
using assignment = std::vector<std::size_t>;

}  // namespace xlamem::sharding
