// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory constraints of an auto-sharding ILP from a memory-term reduction, as XLA's solver
/// builds them: one row per reduced time step, summing the strategy variables of the primitives
/// live there and the group variables of the groups live there (`memory_constraint_rows`).
/// O(rows x live terms).
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/memory_terms/reduction.hpp"

namespace xlamem {

/// A variable of the memory constraints: strategy `strategy` of primitive `index`, or the
/// group variable of group `index`.
struct memory_variable {
  enum class kind : std::uint8_t { strategy, group };
  kind what = kind::strategy;
  std::int64_t index = 0;     ///< primitive id, or group index
  std::int64_t strategy = 0;  ///< strategy choice (0 for groups)
  friend constexpr bool operator==(const memory_variable&, const memory_variable&) = default;
};

/// One row `Σ coefficient·variable ≤ upper_bound`.
struct memory_constraint_row {
  enum class kind : std::uint8_t { time_step, group_definition };
  kind what = kind::time_step;
  std::int64_t id = 0;  ///< time step, or group index
  std::vector<std::pair<memory_variable, double>> terms;
  double upper_bound = 0.0;
};

/// The memory constraint rows of the auto-sharding ILP, as XLA's solver builds them from a
/// reduction. With `m = memory_costs[p][j] / (memory_budget / multiplier)`:
/// - per group g: `Σ_{p∈g} Σ_j m·s[p][j] − g ≤ 0` (group rows first, in group order);
/// - per reduced time t: `Σ_{p: own interval covers t} Σ_j m·s[p][j] + Σ_{g covers t} g ≤
///   multiplier`.
/// Group variables are continuous and ≥ 0; strategy variables are binary with one choice per
/// primitive (rows for that are the caller's).
/// @param memory_costs one vector per primitive, one cost per strategy (finite, ≥ 0)
/// @param memory_budget bytes per device (> 0)
/// @param multiplier XLA's `kMemoryMultiplier` (1e6), the right-hand side of time rows
/// @returns the rows, or `invalid_argument` naming the bad cost or budget
[[nodiscard]] inline result<std::vector<memory_constraint_row>> memory_constraint_rows(
    const memory_term_reduction& r, std::span<const std::vector<double>> memory_costs,
    double memory_budget, double multiplier = 1e6) {
  const auto P = r.num_primitives;
  if (!(memory_budget > 0.0) || memory_budget > std::numeric_limits<double>::max()) {
    return error(errc::invalid_argument, "memory rows: the memory budget must be a positive finite number");
  }
  if (!(multiplier > 0.0) || multiplier > std::numeric_limits<double>::max()) {
    return error(errc::invalid_argument, "memory rows: the multiplier must be a positive finite number");
  }
  if (memory_costs.size() != static_cast<std::size_t>(P)) {
    return error(errc::invalid_argument, "memory rows: " + std::to_string(memory_costs.size()) +
                                             " cost vectors for " + std::to_string(P) + " primitives");
  }
  if (r.intervals.size() != static_cast<std::size_t>(P) + r.groups.size()) {
    return error(errc::invalid_argument, "memory rows: the reduction is inconsistent (" +
                                             std::to_string(r.intervals.size()) + " intervals)");
  }
  for (std::size_t p = 0; p < memory_costs.size(); ++p) {
    for (std::size_t j = 0; j < memory_costs[p].size(); ++j) {
      const double c = memory_costs[p][j];
      if (!(c >= 0.0) || c > std::numeric_limits<double>::max()) {
        return error(errc::invalid_argument, "memory rows: primitive " + std::to_string(p) +
                                                 " strategy " + std::to_string(j) +
                                                 " has cost " + std::to_string(c) +
                                                 " (must be finite and >= 0)");
      }
    }
  }
  const double scale = memory_budget / multiplier;
  auto add_primitive = [&](memory_constraint_row& row, std::int64_t p) {
    const auto& costs = memory_costs[static_cast<std::size_t>(p)];
    for (std::size_t j = 0; j < costs.size(); ++j) {
      row.terms.push_back({memory_variable{memory_variable::kind::strategy, p,
                                           static_cast<std::int64_t>(j)},
                           costs[j] / scale});
    }
  };
  std::vector<memory_constraint_row> rows;
  rows.reserve(r.groups.size() + r.reduced_times.size());
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    memory_constraint_row row{memory_constraint_row::kind::group_definition,
                              static_cast<std::int64_t>(g), {}, 0.0};
    for (const auto p : r.groups[g]) {
      if (p < 0 || p >= P) {
        return error(errc::invalid_argument, "memory rows: group " + std::to_string(g) +
                                                 " lists primitive " + std::to_string(p));
      }
      add_primitive(row, p);
    }
    row.terms.push_back({memory_variable{memory_variable::kind::group, static_cast<std::int64_t>(g), 0}, -1.0});
    rows.push_back(std::move(row));
  }
  // Each interval adds its terms to the rows of the reduced times it covers.
  std::vector<std::int64_t> times(r.reduced_times.begin(), r.reduced_times.end());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const std::size_t first_time_row = rows.size();
  for (const auto t : times) {
    rows.push_back(memory_constraint_row{memory_constraint_row::kind::time_step, t, {}, multiplier});
  }
  for (std::int64_t id = 0; id < static_cast<std::int64_t>(r.intervals.size()); ++id) {
    const auto& iv = r.intervals[static_cast<std::size_t>(id)];
    if (!iv.valid()) continue;
    for (auto it = std::lower_bound(times.begin(), times.end(), iv.first);
         it != times.end() && *it <= iv.last; ++it) {
      auto& row = rows[first_time_row + static_cast<std::size_t>(it - times.begin())];
      if (id < P) {
        add_primitive(row, id);
      } else {
        row.terms.push_back({memory_variable{memory_variable::kind::group, id - P, 0}, 1.0});
      }
    }
  }
  return rows;
}

}  // namespace xlamem
