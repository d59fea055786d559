// SPDX-License-Identifier: Apache-2.0
/// @file
/// The check that a memory-term reduction is exact: `verify_memory_terms` expands the groups of
/// a `memory_term_reduction` back and compares them with the original lifetimes, step by step.
/// Tests, the command-line tool and careful callers run it after every reduction. O(N + summed
/// group sizes + T) for N primitives and groups over T time steps.
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

/// Checks that `r` expresses exactly the primitives of `original` at every time step: expanding
/// groups back, each primitive's own interval and the intervals of its groups must tile its
/// original interval without gaps or overlaps (a primitive without an interval appears nowhere).
/// Also checks the term counts, the reduced live matrix (when present) and that every group is
/// non-empty, sorted, within range and live somewhere.
/// @returns nothing, or `internal` with a message naming the first primitive or group that is wrong
[[nodiscard]] inline result<void> verify_memory_terms(std::span<const term_interval> original,
                                                      const memory_term_reduction& r) {
  auto fail = [](std::string m) { return result<void>(errc::internal, "memory terms: " + std::move(m)); };
  const auto P = r.num_primitives;
  if (P != static_cast<std::int64_t>(original.size())) {
    return fail("the reduction has " + std::to_string(P) + " primitives, the input " +
                std::to_string(original.size()));
  }
  if (r.intervals.size() != static_cast<std::size_t>(P) + r.groups.size()) {
    return fail(std::to_string(r.intervals.size()) + " intervals for " + std::to_string(P) +
                " primitives and " + std::to_string(r.groups.size()) + " groups");
  }
  std::vector<std::vector<term_interval>> pieces(static_cast<std::size_t>(P));
  for (std::int64_t p = 0; p < P; ++p) {
    const auto& iv = r.intervals[static_cast<std::size_t>(p)];
    if (iv.valid()) pieces[static_cast<std::size_t>(p)].push_back(iv);
  }
  std::int64_t after = 0;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const auto& members = r.groups[g];
    const auto& giv = r.intervals[static_cast<std::size_t>(P) + g];
    const std::string name = "group " + std::to_string(g);
    if (members.empty()) return fail(name + " is empty");
    if (!giv.valid()) return fail(name + " has no interval");
    if (!std::is_sorted(members.begin(), members.end()) ||
        std::adjacent_find(members.begin(), members.end()) != members.end()) {
      return fail(name + " members are not ascending and unique");
    }
    for (const auto p : members) {
      if (p < 0 || p >= P) return fail(name + " lists primitive " + std::to_string(p));
      pieces[static_cast<std::size_t>(p)].push_back(giv);
    }
    after += static_cast<std::int64_t>(members.size());
  }
  for (std::int64_t p = 0; p < P; ++p) {
    auto& ps = pieces[static_cast<std::size_t>(p)];
    std::sort(ps.begin(), ps.end(),
              [](const term_interval& a, const term_interval& b) { return a.first < b.first; });
    const auto& want = original[static_cast<std::size_t>(p)];
    const std::string name = "primitive " + std::to_string(p);
    if (!want.valid()) {
      if (!ps.empty()) return fail(name + " has no interval but appears in the reduction");
      continue;
    }
    std::int64_t next = want.first;
    for (const auto& piece : ps) {
      if (piece.first != next) {
        return fail(name + " is " + (piece.first < next ? "counted twice" : "missing") +
                    " at time " + std::to_string(std::min(piece.first, next)));
      }
      next = piece.last + 1;
    }
    if (next != want.last + 1) {
      return fail(name + " is " + (next > want.last + 1 ? "live too long" : "missing") +
                  " at time " + std::to_string(std::min(next, want.last + 1)));
    }
  }
  for (const auto& iv : r.intervals) after += iv.length();
  if (after != r.terms_after) {
    return fail("terms_after is " + std::to_string(r.terms_after) + ", the intervals and groups hold " +
                std::to_string(after));
  }
  if (!r.reduced_live.empty()) {
    if (r.reduced_live.size() != static_cast<std::size_t>(r.num_lives)) {
      return fail("reduced_live has " + std::to_string(r.reduced_live.size()) + " rows for " +
                  std::to_string(r.num_lives) + " time steps");
    }
    for (std::int64_t t = 0; t < r.num_lives; ++t) {
      std::vector<std::int64_t> row;
      for (std::size_t id = 0; id < r.intervals.size(); ++id) {
        if (r.intervals[id].contains(t)) row.push_back(static_cast<std::int64_t>(id));
      }
      if (row != r.reduced_live[static_cast<std::size_t>(t)]) {
        return fail("reduced_live row " + std::to_string(t) + " does not match the intervals");
      }
    }
  }
  return {};
}

}  // namespace xlamem
