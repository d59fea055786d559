// SPDX-License-Identifier: Apache-2.0
/// @file
/// The presolved sharding problem in flat arrays for the search: label costs, the edges of
/// every variable (each matrix stored in both orientations so that "the costs of my labels
/// given a neighbour's label" is one contiguous row), and the memory rows; plus
/// `assignment_state`, an assignment with its exact cost and the load on every memory row,
/// updated in O(degree + runs * log rows) per label change.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "xlamem/sharding/memory_rows.hpp"
#include "xlamem/sharding/presolve.hpp"

namespace xlamem::sharding {

class search_model {
 public:
  /// One end of an edge seen from a variable: the neighbour, and the matrix whose row `s` holds
  /// the edge's costs for this variable's label `s` against each neighbour label.
  struct arc {
    std::uint32_t other = 0;
    std::uint32_t edge = 0;
    std::size_t matrix = 0;  ///< offset of this orientation's matrix in `oriented_`
  };

  /// Forbidden entries left by presolve (a pair of labels each permitted alone) become the
  /// finite `penalty()`, more than any assignment without them costs, so that the search can
  /// add costs in 64 bits and still prefers every permitted assignment.
  explicit search_model(const presolved& p) : rows_(p) {
    const std::size_t n = p.var_count();
    penalty_ = forbidden_penalty(p);
    label_offset_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) label_offset_[v + 1] = label_offset_[v] + p.labels(v);
    unary_.reserve(label_offset_[n]);
    for (std::size_t v = 0; v < n; ++v) {
      for (const cost_type c : p.unary[v]) unary_.push_back(soften(c));
    }
    std::vector<std::size_t> degree(n, 0);
    for (const auto& e : p.edges) {
      ++degree[e.a];
      ++degree[e.b];
    }
    arc_offset_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) arc_offset_[v + 1] = arc_offset_[v] + degree[v];
    arcs_.resize(arc_offset_[n]);
    std::vector<std::size_t> fill(arc_offset_.begin(), arc_offset_.end() - 1);
    edges_.reserve(p.edges.size());
    for (std::uint32_t id = 0; id < p.edges.size(); ++id) {
      const auto& e = p.edges[id];
      const std::size_t ka = p.labels(e.a), kb = p.labels(e.b);
      const std::size_t forward = oriented_.size();
      for (const cost_type c : e.cost) oriented_.push_back(soften(c));
      const std::size_t backward = oriented_.size();
      oriented_.resize(backward + ka * kb);
      for (std::size_t x = 0; x < ka; ++x) {
        for (std::size_t y = 0; y < kb; ++y) oriented_[backward + y * ka + x] = oriented_[forward + x * kb + y];
      }
      arcs_[fill[e.a]++] = {e.b, id, forward};
      arcs_[fill[e.b]++] = {e.a, id, backward};
      edges_.push_back({e.a, e.b, forward});
    }
  }

  [[nodiscard]] std::size_t var_count() const noexcept { return label_offset_.size() - 1; }
  [[nodiscard]] std::size_t labels(std::size_t v) const noexcept { return label_offset_[v + 1] - label_offset_[v]; }
  [[nodiscard]] std::span<const cost_type> unary(std::size_t v) const noexcept {
    return {unary_.data() + label_offset_[v], labels(v)};
  }
  [[nodiscard]] std::span<const arc> arcs(std::size_t v) const noexcept {
    return {arcs_.data() + arc_offset_[v], arc_offset_[v + 1] - arc_offset_[v]};
  }
  /// Row `s` of an arc's matrix: the costs against each label of `a.other`.
  [[nodiscard]] const cost_type* row(const arc& a, std::size_t s) const noexcept {
    return oriented_.data() + a.matrix + s * labels(a.other);
  }
  [[nodiscard]] cost_type arc_cost(const arc& a, std::size_t s, std::size_t other_label) const noexcept {
    return row(a, s)[other_label];
  }
  [[nodiscard]] std::size_t edge_count() const noexcept { return edges_.size(); }
  /// Edge `e`'s ends and its cost for labels `sa`, `sb` of its first and second variable.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> edge_ends(std::size_t e) const noexcept {
    return {edges_[e].a, edges_[e].b};
  }
  [[nodiscard]] cost_type edge_cost(std::size_t e, std::size_t sa, std::size_t sb) const noexcept {
    return oriented_[edges_[e].matrix + sa * labels(edges_[e].b) + sb];
  }
  [[nodiscard]] const memory_rows& rows() const noexcept { return rows_; }
  /// What a forbidden entry costs in this model.
  [[nodiscard]] cost_type penalty() const noexcept { return penalty_; }
  /// True when `c` (a cost read from this model) stands for a forbidden choice.
  [[nodiscard]] bool is_penalty(cost_type c) const noexcept { return c >= penalty_; }

 private:
  struct edge_rec {
    std::uint32_t a, b;
    std::size_t matrix;
  };
  memory_rows rows_;
  std::vector<std::size_t> label_offset_;
  std::vector<cost_type> unary_;
  std::vector<std::size_t> arc_offset_;
  std::vector<arc> arcs_;
  std::vector<edge_rec> edges_;
  std::vector<cost_type> oriented_;
  cost_type penalty_ = forbidden_cost;

  [[nodiscard]] cost_type soften(cost_type c) const noexcept { return is_forbidden(c) ? penalty_ : c; }

  /// One more than the most any permitted assignment can cost, bounded so that a sum over
  /// every variable and edge still fits in 63 bits.
  static cost_type forbidden_penalty(const presolved& p) {
    const double cap = 4.0e18 / static_cast<double>(p.var_count() + p.edges.size() + 1);
    double total = 1;
    const auto add_max = [&](const std::vector<cost_type>& costs) {
      cost_type hi = 0;
      for (const cost_type c : costs) if (!is_forbidden(c)) hi = std::max(hi, c);
      total += static_cast<double>(hi);
    };
    for (const auto& u : p.unary) add_max(u);
    for (const auto& e : p.edges) add_max(e.cost);
    return static_cast<cost_type>(std::min(total, cap));
  }
};

/// An assignment of labels with its exact cost (without the presolve's constant) and the load
/// on every memory row.
class assignment_state {
 public:
  assignment_state(const search_model& m, std::vector<std::uint32_t> labels)
      : model_(&m), labels_(std::move(labels)), load_(m.rows(), loads(m, labels_)) {
    for (std::size_t v = 0; v < labels_.size(); ++v) cost_ += m.unary(v)[labels_[v]];
    for (std::size_t e = 0; e < m.edge_count(); ++e) {
      const auto [a, b] = m.edge_ends(e);
      cost_ += m.edge_cost(e, labels_[a], labels_[b]);
    }
  }

  [[nodiscard]] const std::vector<std::uint32_t>& labels() const noexcept { return labels_; }
  [[nodiscard]] std::uint32_t label(std::size_t v) const noexcept { return labels_[v]; }
  /// The cost of the presolved variables (all finite: presolve left no forbidden entry, or
  /// the caller accepts saturated sums).
  [[nodiscard]] cost_type cost() const noexcept { return cost_; }
  /// Largest load minus capacity over the rows: within the limit when <= 0.
  [[nodiscard]] usage_type excess() const noexcept { return load_.max(); }
  [[nodiscard]] bool fits() const noexcept { return load_.max() <= 0; }
  [[nodiscard]] const load_tracker& load() const noexcept { return load_; }
  [[nodiscard]] load_tracker& load() noexcept { return load_; }

  /// The change in cost if `v` took label `s`.
  [[nodiscard]] cost_type delta(std::size_t v, std::uint32_t s) const noexcept {
    const std::uint32_t old = labels_[v];
    if (s == old) return 0;
    cost_type d = model_->unary(v)[s] - model_->unary(v)[old];
    for (const auto& a : model_->arcs(v)) {
      const std::uint32_t o = labels_[a.other];
      d += model_->arc_cost(a, s, o) - model_->arc_cost(a, old, o);
    }
    return d;
  }
  /// True when `v` can take label `s` within the limit (the others unchanged).
  [[nodiscard]] bool fits_with(std::size_t v, std::uint32_t s) const {
    const std::uint32_t old = labels_[v];
    const auto& rows = model_->rows();
    for (const auto& r : rows.runs(v)) {
      const usage_type d = rows.usage(r, s) - rows.usage(r, old);
      if (d > 0 && load_.max(r.begin, r.end) + d > 0) return false;
    }
    return true;
  }
  /// Gives `v` label `s`.
  void set(std::size_t v, std::uint32_t s) {
    const std::uint32_t old = labels_[v];
    if (s == old) return;
    cost_ += delta(v, s);
    const auto& rows = model_->rows();
    for (const auto& r : rows.runs(v)) load_.add(r.begin, r.end, rows.usage(r, s) - rows.usage(r, old));
    labels_[v] = s;
  }

 private:
  const search_model* model_;
  std::vector<std::uint32_t> labels_;
  load_tracker load_;
  cost_type cost_ = 0;

  /// The load of every row under `labels`, by a difference array: O(runs + rows).
  static std::vector<usage_type> loads(const search_model& m, const std::vector<std::uint32_t>& labels) {
    const auto& rows = m.rows();
    std::vector<usage_type> load(rows.row_count() + 1, 0);
    for (std::size_t v = 0; v < labels.size(); ++v) {
      for (const auto& r : rows.runs(v)) {
        load[r.begin] += rows.usage(r, labels[v]);
        load[r.end] -= rows.usage(r, labels[v]);
      }
    }
    for (std::size_t r = 1; r < load.size(); ++r) load[r] += load[r - 1];
    load.pop_back();
    return load;
  }
};

}  // namespace xlamem::sharding
