// SPDX-License-Identifier: Apache-2.0
/// @file
/// The timeline of a packing problem compressed into sections, and conflict counts. A section
/// is the live set just before a distinct end time; every live set of the problem is contained
/// in one of them, so checking sections is enough. Buffer i is live in the contiguous section
/// range `[first_section[i], last_section[i])`, and two buffers conflict exactly when their
/// section ranges intersect.
///
/// The explicit conflict graph is not built by default: on compiler traces it has E ~ n^2/2
/// edges (179,827,782 on a 62,185-buffer trace, gigabytes), while the heuristics need only the
/// sections and the interval structures of `interval_index.hpp`. Degrees and the edge count are
/// counted, not listed. Building costs O(n log n) time and O(n) memory; with
/// `conflict_edges::build` it also lists the edges, O(n log n + E) time and O(n + E) memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "xlamem/packing/interval_index.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// Whether `interval_graph` lists the conflict edges (`neighbours_begin` / `neighbours_end`).
enum class conflict_edges {
  omit,   ///< sections, degrees and the edge count only (the default, linear memory)
  build,  ///< also the adjacency lists: memory grows with the number of conflicting pairs
};

/// Sections and conflicts of a packing problem. Buffers of size 0 take part in no conflict.
class interval_graph {
 public:
  interval_graph() = default;

  /// Builds the sections (and the conflict lists when asked). @pre `validate_problem(p)` succeeded.
  explicit interval_graph(const packing_problem& p, conflict_edges edges = conflict_edges::omit) {
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
    // Degrees by counting: j meets i unless j ends before i starts or starts after i ends.
    std::vector<int> firsts, lasts;
    for (std::size_t i = 0; i < n; ++i) {
      if (first_[i] < last_[i]) {
        firsts.push_back(first_[i]);
        lasts.push_back(last_[i]);
      }
    }
    std::sort(firsts.begin(), firsts.end());
    std::sort(lasts.begin(), lasts.end());
    degree_.assign(n, 0);
    std::size_t twice = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (first_[i] >= last_[i]) continue;
      const auto starting_before_end =
          static_cast<std::size_t>(std::lower_bound(firsts.begin(), firsts.end(), last_[i]) - firsts.begin());
      const auto ended_before_start =
          static_cast<std::size_t>(std::upper_bound(lasts.begin(), lasts.end(), first_[i]) - lasts.begin());
      degree_[i] = starting_before_end - ended_before_start - 1;
      twice += degree_[i];
    }
    edge_count_ = twice / 2;
    if (edges == conflict_edges::build) {
      auto lists = detail::build_conflicts(first_, last_, static_cast<std::size_t>(-1));
      start_ = std::move(lists->start);
      adjacent_ = std::move(lists->adjacent);
    }
  }

  /// Number of sections.
  [[nodiscard]] std::size_t section_count() const noexcept { return section_bytes_.size(); }
  /// Sum of the sizes of the buffers live in section s.
  [[nodiscard]] std::int64_t section_bytes(std::size_t s) const noexcept { return section_bytes_[s]; }
  /// All section sums, indexed by section.
  [[nodiscard]] const std::vector<std::int64_t>& all_section_bytes() const noexcept { return section_bytes_; }
  /// The time just after section s (a distinct end time of the problem).
  [[nodiscard]] std::int64_t section_end_time(std::size_t s) const noexcept { return section_end_time_[s]; }
  /// First section where buffer i is live.
  [[nodiscard]] int first_section(std::size_t i) const noexcept { return first_[i]; }
  /// One past the last section where buffer i is live (equal to first for size 0).
  [[nodiscard]] int last_section(std::size_t i) const noexcept { return last_[i]; }
  /// First and last sections of every buffer, indexed by buffer.
  [[nodiscard]] const std::vector<int>& first_sections() const noexcept { return first_; }
  [[nodiscard]] const std::vector<int>& last_sections() const noexcept { return last_; }
  /// Number of buffers conflicting with buffer i (counted, available without the edges).
  [[nodiscard]] std::size_t degree(std::size_t i) const noexcept { return degree_[i]; }
  /// Total number of conflicting pairs (counted, available without the edges).
  [[nodiscard]] std::size_t edge_count() const noexcept { return edge_count_; }
  /// Whether the conflict lists were built (`conflict_edges::build`).
  [[nodiscard]] bool has_edges() const noexcept { return !start_.empty(); }
  /// The buffers conflicting with buffer i, ascending. @pre `has_edges()`.
  [[nodiscard]] const int* neighbours_begin(std::size_t i) const noexcept { return adjacent_.data() + start_[i]; }
  [[nodiscard]] const int* neighbours_end(std::size_t i) const noexcept { return adjacent_.data() + start_[i + 1]; }

 private:
  std::vector<std::int64_t> section_bytes_;
  std::vector<std::int64_t> section_end_time_;
  std::vector<int> first_, last_;
  std::vector<std::size_t> degree_;
  std::size_t edge_count_ = 0;
  std::vector<std::size_t> start_;
  std::vector<int> adjacent_;
};

}  // namespace xlamem
