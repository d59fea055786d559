// SPDX-License-Identifier: Apache-2.0
/// @file
/// Sequential tree-reweighted message passing (TRW-S, after Kolmogorov 2006) on the pairwise
/// part of a sharding problem with extra per-label costs (the memory prices of a Lagrangian
/// relaxation): a lower bound on the cheapest labelling that never decreases from one pass to
/// the next, and a labelling read off each forward pass.
///
/// The bound is the reparametrised problem's sum of per-variable minima plus per-edge minima,
/// valid for any messages. Messages live in doubles (costs are exact integers far below 2^53 in
/// the sums that matter; the bound is rounded down before use). One pass costs
/// O(sum over edges of |labels a| * |labels b|).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "xlamem/deadline.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace xlamem::sharding {

class trws {
 public:
  explicit trws(const search_model& m) : model_(&m) {
    const std::size_t n = m.var_count();
    label_base_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) label_base_[v + 1] = label_base_[v] + m.labels(v);
    // One message per arc (directed edge into the arc's owner is stored at the arc): message
    // from a.other into v, over v's labels.
    msg_base_.assign(n + 1, 0);
    std::size_t total = 0;
    arc_msg_.clear();
    for (std::size_t v = 0; v < n; ++v) {
      for (std::size_t q = 0; q < m.arcs(v).size(); ++q) {
        arc_msg_.push_back(total);
        total += m.labels(v);
      }
    }
    arc_first_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) arc_first_[v + 1] = arc_first_[v] + m.arcs(v).size();
    // The arc of the other end, for each arc.
    reverse_.assign(arc_first_[n], 0);
    {
      std::vector<std::size_t> first_arc_of_edge(m.edge_count(), SIZE_MAX);
      for (std::size_t v = 0; v < n; ++v) {
        const auto arcs = m.arcs(v);
        for (std::size_t q = 0; q < arcs.size(); ++q) {
          const std::size_t id = arc_first_[v] + q;
          auto& f = first_arc_of_edge[arcs[q].edge];
          if (f == SIZE_MAX) {
            f = id;
          } else {
            reverse_[id] = f;
            reverse_[f] = id;
          }
        }
      }
    }
    messages_.assign(total, 0.0);
    gamma_.assign(n, 1.0);
    for (std::size_t v = 0; v < n; ++v) {
      std::size_t before = 0, after = 0;
      for (const auto& a : m.arcs(v)) (a.other < v ? before : after)++;
      gamma_[v] = 1.0 / static_cast<double>(std::max<std::size_t>({before, after, 1}));
    }
    extra_.assign(label_base_[n], 0.0);
    labels_.assign(n, 0);
  }

  /// Per-label costs added to the problem's own (e.g. memory prices), `extra()[label_base(v)+s]`.
  [[nodiscard]] std::vector<double>& extra() noexcept { return extra_; }
  [[nodiscard]] std::size_t label_base(std::size_t v) const noexcept { return label_base_[v]; }

  /// Clears the messages (after a large change of the extra costs, or to start over).
  void reset() { std::fill(messages_.begin(), messages_.end(), 0.0); }

  /// One forward and one backward pass; updates `labels()` (read off the forward pass). Stops
  /// where `watch` passes: the messages stay valid, the labels then mix two passes.
  void iterate(deadline_watch& watch) {
    const std::size_t n = model_->var_count();
    for (std::size_t v = 0; v < n; ++v) {
      if (watch.passed(1 + model_->arcs(v).size())) return;
      update(v, true);
    }
    for (std::size_t v = n; v-- > 0;) {
      if (watch.passed(1 + model_->arcs(v).size())) return;
      update(v, false);
    }
  }
  void iterate() {
    deadline_watch never(std::nullopt);
    iterate(never);
  }

  /// The labelling read off the last forward pass.
  [[nodiscard]] const std::vector<std::uint32_t>& labels() const noexcept { return labels_; }

  /// A lower bound on min over labellings of (costs + extra), valid for any messages: the
  /// reparametrised problem split into one subproblem per edge, each variable's costs shared
  /// equally among its edges (a variable without edges keeps its own).
  [[nodiscard]] double lower_bound() const {
    const auto& m = *model_;
    double bound = 0;
    std::vector<double> theta_v, theta_o;
    for (std::size_t v = 0; v < m.var_count(); ++v) {
      const auto arcs = m.arcs(v);
      belief(v, theta_v);
      if (arcs.empty()) {
        bound += *std::min_element(theta_v.begin(), theta_v.end());
        continue;
      }
      const double wv = 1.0 / static_cast<double>(arcs.size());
      for (std::size_t q = 0; q < arcs.size(); ++q) {
        const auto& a = arcs[q];
        if (a.other < v) continue;  // each edge once, from its lower end
        belief(a.other, theta_o);
        const double wo = 1.0 / static_cast<double>(m.arcs(a.other).size());
        const std::size_t id = arc_first_[v] + q;
        const double* m_in_v = messages_.data() + arc_msg_[id];            // other -> v
        const double* m_in_o = messages_.data() + arc_msg_[reverse_[id]];  // v -> other
        double lo = std::numeric_limits<double>::infinity();
        const std::size_t kv = m.labels(v), ko = m.labels(a.other);
        for (std::size_t s = 0; s < kv; ++s) {
          const cost_type* row = m.row(a, s);
          const double left = wv * theta_v[s] - m_in_v[s];
          for (std::size_t t = 0; t < ko; ++t) {
            lo = std::min(lo, left + static_cast<double>(row[t]) + wo * theta_o[t] - m_in_o[t]);
          }
        }
        bound += lo;
      }
    }
    return bound;
  }

 private:
  const search_model* model_;
  std::vector<std::size_t> label_base_, msg_base_, arc_msg_, arc_first_, reverse_;
  std::vector<double> messages_, gamma_, extra_;
  std::vector<std::uint32_t> labels_;

  /// Label costs of `v` plus all incoming messages.
  void belief(std::size_t v, std::vector<double>& theta) const {
    const auto& m = *model_;
    const std::size_t k = m.labels(v);
    theta.resize(k);
    const auto un = m.unary(v);
    for (std::size_t s = 0; s < k; ++s) theta[s] = static_cast<double>(un[s]) + extra_[label_base_[v] + s];
    for (std::size_t id = arc_first_[v]; id < arc_first_[v + 1]; ++id) {
      const double* msg = messages_.data() + arc_msg_[id];
      for (std::size_t s = 0; s < k; ++s) theta[s] += msg[s];
    }
  }

  void update(std::size_t v, bool forward) {
    const auto& m = *model_;
    const std::size_t k = m.labels(v);
    thread_local std::vector<double> theta, out;
    belief(v, theta);
    if (forward) {  // read the label off: costs + edges to earlier vars at their labels + later messages
      double best = std::numeric_limits<double>::infinity();
      std::uint32_t arg = 0;
      const auto arcs = m.arcs(v);
      for (std::size_t s = 0; s < k; ++s) {
        double c = static_cast<double>(m.unary(v)[s]) + extra_[label_base_[v] + s];
        for (std::size_t q = 0; q < arcs.size(); ++q) {
          const auto& a = arcs[q];
          if (a.other < v) c += static_cast<double>(m.arc_cost(a, s, labels_[a.other]));
          else c += messages_[arc_msg_[arc_first_[v] + q] + s];
        }
        if (c < best) { best = c; arg = static_cast<std::uint32_t>(s); }
      }
      labels_[v] = arg;
    }
    const auto arcs = m.arcs(v);
    for (std::size_t q = 0; q < arcs.size(); ++q) {
      const auto& a = arcs[q];
      if (forward ? a.other < v : a.other > v) continue;
      const std::size_t id = arc_first_[v] + q;
      const double* m_in = messages_.data() + arc_msg_[id];        // other -> v
      double* m_out = messages_.data() + arc_msg_[reverse_[id]];   // v -> other
      const std::size_t ko = m.labels(a.other);
      out.assign(ko, std::numeric_limits<double>::infinity());
      for (std::size_t s = 0; s < k; ++s) {
        const double base = gamma_[v] * theta[s] - m_in[s];
        const cost_type* row = m.row(a, s);
        for (std::size_t t = 0; t < ko; ++t) out[t] = std::min(out[t], base + static_cast<double>(row[t]));
      }
      const double lo = *std::min_element(out.begin(), out.end());
      for (std::size_t t = 0; t < ko; ++t) m_out[t] = out[t] - lo;
    }
  }
};

}  // namespace xlamem::sharding
