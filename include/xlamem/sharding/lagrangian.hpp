// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory limit relaxed with Lagrange multipliers: one price per memory row, each label
/// paying its usage times the prices of the rows it covers. For fixed prices the problem is a
/// plain pairwise one, solved approximately by TRW-S, whose bound minus the priced capacities
/// is a lower bound on the original problem (weak duality holds for any nonnegative prices and
/// any valid bound of the priced problem). Prices move by projected subgradient steps of
/// Polyak's size toward a target (the best cost found), the step factor shrinking when the bound
/// stops rising.
///
/// One step costs a few TRW-S passes plus O(runs + rows).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "xlamem/sharding/trws.hpp"

namespace xlamem::sharding {

class lagrangian_relaxation {
 public:
  explicit lagrangian_relaxation(const search_model& m)
      : model_(&m), trws_(m), price_(m.rows().row_count(), 0.0), prefix_(m.rows().row_count() + 1, 0.0) {}

  /// One step: price the labels, run `passes` TRW-S passes, take the bound, then move the prices
  /// along the subgradient of the labels read off. @returns this step's bound (without the
  /// presolve constant), or minus infinity when `deadline` cut the step short.
  double step(double target, int passes = 5, solve_deadline deadline = std::nullopt) {
    deadline_watch watch(deadline);
    const auto& m = *model_;
    const auto& rows = m.rows();
    const std::size_t r_count = rows.row_count();
    prefix_[0] = 0;
    double priced_capacity = 0;
    for (std::size_t r = 0; r < r_count; ++r) {
      prefix_[r + 1] = prefix_[r] + price_[r];
      priced_capacity += price_[r] * static_cast<double>(rows.capacity(r));
    }
    auto& extra = trws_.extra();
    for (std::size_t v = 0; v < m.var_count(); ++v) {
      if (watch.passed(1 + rows.runs(v).size())) return -std::numeric_limits<double>::infinity();
      double* e = extra.data() + trws_.label_base(v);
      std::fill(e, e + m.labels(v), 0.0);
      for (const auto& run : rows.runs(v)) {
        const double p = prefix_[run.end] - prefix_[run.begin];
        if (p == 0) continue;
        for (std::size_t s = 0; s < m.labels(v); ++s) e[s] += p * static_cast<double>(rows.usage(run, s));
      }
    }
    for (int k = 0; k < passes; ++k) trws_.iterate(watch);
    if (watch.seen_passed()) return -std::numeric_limits<double>::infinity();
    const double bound = trws_.lower_bound() - priced_capacity;
    if (bound > best_bound_) {
      best_bound_ = bound;
      stall_ = 0;
    } else if (++stall_ >= 10) {
      factor_ *= 0.7;
      stall_ = 0;
    }
    update_prices(target, bound);
    return bound;
  }

  /// The labelling of the last step (may exceed the limit).
  [[nodiscard]] const std::vector<std::uint32_t>& labels() const noexcept { return trws_.labels(); }
  /// The best bound of all steps (without the presolve constant).
  [[nodiscard]] double best_bound() const noexcept { return best_bound_; }
  /// The step factor (Polyak's lambda); tiny when the bound has stopped rising.
  [[nodiscard]] double factor() const noexcept { return factor_; }

 private:
  const search_model* model_;
  trws trws_;
  std::vector<double> price_, prefix_, load_;
  double best_bound_ = -1e300;
  double factor_ = 1.0;
  int stall_ = 0;

  void update_prices(double target, double bound) {
    const auto& m = *model_;
    const auto& rows = m.rows();
    const std::size_t r_count = rows.row_count();
    load_.assign(r_count + 1, 0.0);
    const auto& x = trws_.labels();
    for (std::size_t v = 0; v < m.var_count(); ++v) {
      for (const auto& run : rows.runs(v)) {
        const double u = static_cast<double>(rows.usage(run, x[v]));
        load_[run.begin] += u;
        load_[run.end] -= u;
      }
    }
    double running = 0, norm = 0;
    for (std::size_t r = 0; r < r_count; ++r) {
      running += load_[r];
      double g = running - static_cast<double>(rows.capacity(r));
      if (price_[r] <= 0 && g < 0) g = 0;  // projected: a zero price cannot go lower
      load_[r] = g;
      norm += g * g;
    }
    if (norm <= 0 || target <= bound) return;
    const double t = factor_ * (target - bound) / norm;
    for (std::size_t r = 0; r < r_count; ++r) price_[r] = std::max(0.0, price_[r] + t * load_[r]);
  }
};

}  // namespace xlamem::sharding
