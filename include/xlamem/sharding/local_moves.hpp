// SPDX-License-Identifier: Apache-2.0
/// @file
/// Moves of one variable at a time on an `assignment_state`: `repair_memory` brings an
/// assignment within the limit (on the most loaded row, the relabelling that frees memory
/// there at the least cost per byte, never overloading another row when it can help it), and
/// `improve_single` relabels variables one by one while that lowers the cost and fits.
///
/// Both stop at `deadline` (checked once per move). A repair step costs
/// O(vars * log runs + candidates * labels * (degree + runs * log rows)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "xlamem/deadline.hpp"
#include "xlamem/sharding/search_model.hpp"

namespace xlamem::sharding {

/// Relabels variables until the assignment fits the limit. @returns false when no single
/// relabelling frees memory on the most loaded row any more (the limit cannot be met this way)
/// or the deadline passed.
inline bool repair_memory(const search_model& m, assignment_state& st, solve_clock::time_point deadline) {
  const auto& rows = m.rows();
  while (!st.fits()) {
    if (solve_clock::now() >= deadline) return false;
    const std::size_t worst = st.load().argmax();
    const usage_type excess = st.load().max();
    double best_ratio = std::numeric_limits<double>::infinity();
    bool best_clean = false;
    std::size_t best_v = SIZE_MAX;
    std::uint32_t best_s = 0;
    for (std::size_t v = 0; v < m.var_count(); ++v) {
      const auto* run = rows.run_at(v, worst);
      if (run == nullptr) continue;
      const usage_type now = rows.usage(*run, st.label(v));
      for (std::uint32_t s = 0; s < m.labels(v); ++s) {
        const usage_type freed = now - rows.usage(*run, s);
        if (freed <= 0) continue;
        const bool clean = st.fits_with(v, s);
        if (best_clean && !clean) continue;
        const double ratio = static_cast<double>(st.delta(v, s)) / static_cast<double>(std::min(freed, excess));
        if ((clean && !best_clean) || ratio < best_ratio) {
          best_ratio = ratio;
          best_clean = clean;
          best_v = v;
          best_s = s;
        }
      }
    }
    if (best_v == SIZE_MAX) return false;
    st.set(best_v, best_s);
  }
  return true;
}

/// Gives each variable in turn its cheapest label that fits, until a whole pass changes
/// nothing or the deadline passes. @returns how much the cost went down.
inline cost_type improve_single(const search_model& m, assignment_state& st, solve_clock::time_point deadline) {
  const cost_type start = st.cost();
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t v = 0; v < m.var_count(); ++v) {
      if ((v & 63) == 0 && solve_clock::now() >= deadline) return start - st.cost();
      cost_type best = 0;
      std::uint32_t best_s = st.label(v);
      for (std::uint32_t s = 0; s < m.labels(v); ++s) {
        const cost_type d = st.delta(v, s);
        if (d < best && st.fits_with(v, s)) {
          best = d;
          best_s = s;
        }
      }
      if (best_s != st.label(v)) {
        st.set(v, best_s);
        changed = true;
      }
    }
  }
  return start - st.cost();
}

}  // namespace xlamem::sharding
