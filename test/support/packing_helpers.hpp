// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/packing_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/common.hpp"
#include "support/packing.hpp"
#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/io/codec/svg.hpp"
#include "xlamem/io/packing/packing_report.hpp"
#include "xlamem/packing/packing.hpp"
#include "xlamem/packing/strong_lower_bound.hpp"
#include "xlamem/packing/xla_best_fit.hpp"

namespace xlamem::test::packing_helpers {
using namespace xlamem;


inline interval_buffer buf(std::string id, std::int64_t lower, std::int64_t upper, std::int64_t size) {
  interval_buffer b;
  b.id = std::move(id);
  b.lower = lower;
  b.upper = upper;
  b.size = size;
  return b;
}

/// The README example of MiniMalloc (capacity 12 is optimal).
inline packing_problem example12() {
  packing_problem p;
  p.buffers = {buf("b1", 0, 3, 4), buf("b2", 3, 9, 4), buf("b3", 0, 9, 4), buf("b4", 9, 21, 4), buf("b5", 0, 21, 4)};
  return p;
}

inline packing_problem random_problem(std::mt19937_64& rng, int n, int horizon, int max_size, bool extras) {
  packing_problem p;
  for (int i = 0; i < n; ++i) {
    const auto lo = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(horizon));
    const auto len = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::max(1, horizon / 3)));
    auto b = buf("b" + std::to_string(i), lo, lo + len, 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_size)));
    if (extras) {
      if (rng() % 4 == 0) b.alignment = std::int64_t{1} << (rng() % 4);
      if (rng() % 10 == 0) b.size = 0;
    }
    p.buffers.push_back(b);
  }
  if (extras && n > 0 && rng() % 2 == 0) {
    p.buffers[0].alignment = 1;
    p.buffers[0].fixed_offset = static_cast<std::int64_t>(rng() % 8);
  }
  return p;
}









/// The placement loops as they were with an explicit conflict graph (since replaced by interval
/// structures): the reference the new structures must reproduce byte for byte.
inline placement reference_place_in_order(const packing_problem& p, const interval_graph& g, const std::vector<int>& order,
                                   fit_rule rule) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
    }
  }
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    if (placed[i]) continue;
    placed[i] = 1;
    const auto& b = p.buffers[i];
    if (b.size <= 0) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> used;
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) used.emplace_back(out.offsets[j], out.offsets[j] + p.buffers[j].size);
    }
    std::sort(used.begin(), used.end());
    std::int64_t cursor = 0, best = -1, best_gap = INT64_MAX;
    for (const auto& [lo, hi] : used) {
      const auto start = detail::align_up_i64(cursor, b.alignment);
      if (lo > start && lo - start >= b.size) {
        if (rule == fit_rule::first) {
          best = start;
          break;
        }
        if (lo - start < best_gap) {
          best_gap = lo - start;
          best = start;
        }
      }
      cursor = std::max(cursor, hi);
    }
    out.offsets[i] = best >= 0 ? best : detail::align_up_i64(cursor, b.alignment);
  }
  return out;
}

/// The skyline greedy with eager updates over the conflict lists.
inline placement reference_skyline(const packing_problem& p, const interval_graph& g, const std::vector<int>& order) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (std::size_t r = 0; r < n; ++r) rank[static_cast<std::size_t>(order[r])] = static_cast<int>(r);
  std::vector<std::int64_t> low(n, 0);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
    }
  }
  using entry = std::pair<std::int64_t, int>;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap;
  for (std::size_t i = 0; i < n; ++i) {
    if (!placed[i]) heap.emplace(0, rank[i]);
  }
  while (!heap.empty()) {
    const auto [o, r] = heap.top();
    heap.pop();
    const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(r)]);
    if (placed[i] || o != low[i]) continue;
    const auto& b = p.buffers[i];
    if (b.size <= 0) {
      placed[i] = 1;
      continue;
    }
    std::int64_t at = low[i];
    for (bool moved = true; moved;) {
      moved = false;
      for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
        const auto j = static_cast<std::size_t>(*it);
        if (!p.buffers[j].fixed_offset) continue;
        if (at < out.offsets[j] + p.buffers[j].size && out.offsets[j] < at + b.size) {
          at = detail::align_up_i64(out.offsets[j] + p.buffers[j].size, b.alignment);
          moved = true;
        }
      }
    }
    if (at != low[i]) {
      low[i] = at;
      heap.emplace(at, r);
      continue;
    }
    placed[i] = 1;
    out.offsets[i] = low[i];
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) continue;
      const auto nl = detail::align_up_i64(low[i] + b.size, p.buffers[j].alignment);
      if (nl > low[j]) {
        low[j] = nl;
        heap.emplace(nl, rank[j]);
      }
    }
  }
  return out;
}

inline packing_problem with_fixed(std::mt19937_64& rng, packing_problem p) {
  for (auto& b : p.buffers) {
    if (rng() % 6 == 0) {
      b.alignment = 1;
      b.fixed_offset = static_cast<std::int64_t>(rng() % 64);
    }
  }
  return p;
}

}  // namespace xlamem::test::packing_helpers
