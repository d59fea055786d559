// SPDX-License-Identifier: Apache-2.0
/// @file
/// The timeline of a packing problem compressed into sections, and the overlap (conflict)
/// graph. A section is the live set just before a distinct end time; every live set of the
/// problem is contained in one of them, so checking sections is enough. Buffer i is live in the
/// contiguous section range `[first_section[i], last_section[i])`, and two buffers conflict
/// exactly when their section ranges intersect.
///
/// Building costs O(n log n + E) time and O(n + E) memory, E the number of conflicting pairs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// Sections and conflicts of a packing problem. Buffers of size 0 take part in no conflict.
class interval_graph {
 public:
  interval_graph() = default;

  /// Builds the sections and the conflict graph. @pre `validate_problem(p)` succeeded.
  explicit interval_graph(const packing_problem& p) {
    const std::size_t n = p.buffers.size();
    std::vector<std::int64_t> ends;
    ends.reserve(n);
    for (const auto& b : p.buffers) {
      if (b.size > 0) ends.push_back(b.upper);
    }
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    section_end_time_ = ends;
    first_.assign(n, 0);
    last_.assign(n, 0);
    section_bytes_.assign(ends.size(), 0);
    std::vector<std::int64_t> diff(ends.size() + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& b = p.buffers[i];
      if (b.size <= 0) continue;
      // Section k is the live set just before ends[k]: live when lower < ends[k] <= upper.
      first_[i] = static_cast<int>(std::upper_bound(ends.begin(), ends.end(), b.lower) - ends.begin());
      last_[i] = static_cast<int>(std::lower_bound(ends.begin(), ends.end(), b.upper) - ends.begin()) + 1;
      diff[static_cast<std::size_t>(first_[i])] += b.size;
      diff[static_cast<std::size_t>(last_[i])] -= b.size;
    }
    std::int64_t run = 0;
    for (std::size_t s = 0; s < ends.size(); ++s) {
      run += diff[s];
      section_bytes_[s] = run;
    }
    // Conflicts: sweep buffers by first section; a buffer conflicts with every earlier buffer
    // still live when it starts.
    std::vector<int> order;
    order.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (p.buffers[i].size > 0) order.push_back(static_cast<int>(i));
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return first_[static_cast<std::size_t>(a)] != first_[static_cast<std::size_t>(b)]
                 ? first_[static_cast<std::size_t>(a)] < first_[static_cast<std::size_t>(b)]
                 : a < b;
    });
    std::vector<std::uint32_t> degree(n, 0);
    std::vector<std::pair<int, int>> pairs;
    std::vector<int> active;
    for (const int i : order) {
      const int f = first_[static_cast<std::size_t>(i)];
      std::size_t keep = 0;
      for (const int a : active) {
        if (last_[static_cast<std::size_t>(a)] > f) active[keep++] = a;
      }
      active.resize(keep);
      for (const int a : active) {
        pairs.emplace_back(a, i);
        ++degree[static_cast<std::size_t>(a)];
        ++degree[static_cast<std::size_t>(i)];
      }
      active.push_back(i);
    }
    start_.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) start_[i + 1] = start_[i] + degree[i];
    adjacent_.assign(start_[n], 0);
    std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
    for (const auto& [a, b] : pairs) {
      adjacent_[fill[static_cast<std::size_t>(a)]++] = b;
      adjacent_[fill[static_cast<std::size_t>(b)]++] = a;
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::sort(adjacent_.begin() + start_[i], adjacent_.begin() + start_[i + 1]);
    }
  }

  /// Number of sections.
  [[nodiscard]] std::size_t section_count() const noexcept { return section_bytes_.size(); }
  /// Sum of the sizes of the buffers live in section s.
  [[nodiscard]] std::int64_t section_bytes(std::size_t s) const noexcept { return section_bytes_[s]; }
  /// The time just after section s (a distinct end time of the problem).
  [[nodiscard]] std::int64_t section_end_time(std::size_t s) const noexcept { return section_end_time_[s]; }
  /// First section where buffer i is live.
  [[nodiscard]] int first_section(std::size_t i) const noexcept { return first_[i]; }
  /// One past the last section where buffer i is live (equal to first for size 0).
  [[nodiscard]] int last_section(std::size_t i) const noexcept { return last_[i]; }
  /// The buffers conflicting with buffer i, ascending.
  [[nodiscard]] const int* neighbours_begin(std::size_t i) const noexcept { return adjacent_.data() + start_[i]; }
  [[nodiscard]] const int* neighbours_end(std::size_t i) const noexcept { return adjacent_.data() + start_[i + 1]; }
  [[nodiscard]] std::size_t degree(std::size_t i) const noexcept { return start_[i + 1] - start_[i]; }
  /// Total number of conflicting pairs.
  [[nodiscard]] std::size_t edge_count() const noexcept { return adjacent_.size() / 2; }

 private:
  std::vector<std::int64_t> section_bytes_;
  std::vector<std::int64_t> section_end_time_;
  std::vector<int> first_, last_;
  std::vector<std::size_t> start_;
  std::vector<int> adjacent_;
};

}  // namespace xlamem
