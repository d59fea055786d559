// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory constraints of a presolved sharding problem as rows, and a tracker of the load on
/// every row under a changing assignment.
///
/// Rows are the time steps XLA's own reduction keeps (`reduced_memory_times` of
/// memory_terms/: the last entering time before each exit, one per locally maximal live set):
/// since usages are nonnegative, a load within the limit there is within the limit at every
/// time step. A variable's usage is stored as runs of consecutive rows over which its live terms
/// do not change, with one usage per label, so a label change touches O(runs) ranges.
///
/// `load_tracker` keeps, for every row, load minus capacity in a segment tree with range add and
/// range maximum: a label change costs O(runs * log rows); "is the assignment within the limit"
/// is O(1); "would this change fit" is O(runs * log rows).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "xlamem/memory_terms/reduction.hpp"
#include "xlamem/sharding/presolve.hpp"

namespace xlamem::sharding {

/// The rows of a presolved problem's memory constraints and each variable's usage on them.
class memory_rows {
 public:
  /// Rows `[begin, end)` over which a variable uses `usage(run, label)`.
  struct run {
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
    std::size_t values = 0;  ///< index of label 0's usage in the pool
  };

  memory_rows() = default;

  explicit memory_rows(const presolved& p) : runs_(p.var_count()) {
    select_rows(p);
    build_capacity(p);
    build_runs(p);
  }

  [[nodiscard]] std::size_t row_count() const noexcept { return times_.size(); }
  /// The time step row `r` stands for.
  [[nodiscard]] std::int64_t time(std::size_t r) const noexcept { return times_[r]; }
  /// The limit minus the fixed load at row `r` (negative when the fixed load alone is too much).
  [[nodiscard]] usage_type capacity(std::size_t r) const noexcept { return capacity_[r]; }
  [[nodiscard]] std::span<const run> runs(std::size_t var) const noexcept { return runs_[var]; }
  [[nodiscard]] usage_type usage(const run& r, std::size_t label) const noexcept { return pool_[r.values + label]; }
  /// The run of `var` that covers row `r`, or nullptr (binary search over the var's runs).
  [[nodiscard]] const run* run_at(std::size_t var, std::size_t r) const noexcept {
    const auto& rs = runs_[var];
    auto it = std::upper_bound(rs.begin(), rs.end(), r, [](std::size_t x, const run& q) { return x < q.begin; });
    if (it == rs.begin()) return nullptr;
    --it;
    return r < it->end ? &*it : nullptr;
  }
  /// The fixed load (memory no choice changes) at row `r`.
  [[nodiscard]] usage_type fixed_load(std::size_t r) const noexcept { return fixed_[r]; }

 private:
  std::vector<std::int64_t> times_;
  std::vector<usage_type> capacity_;
  std::vector<usage_type> fixed_;
  std::vector<std::vector<run>> runs_;
  std::vector<usage_type> pool_;

  /// Rows of the half-open `[lower, upper)`.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> rows_of(std::int64_t lower, std::int64_t upper) const {
    const auto b = std::lower_bound(times_.begin(), times_.end(), lower) - times_.begin();
    const auto e = std::lower_bound(times_.begin(), times_.end(), upper) - times_.begin();
    return {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)};
  }

  void select_rows(const presolved& p) {
    std::vector<term_interval> closed;  // memory_terms/ speaks closed intervals
    closed.reserve(p.terms.size() + p.base_load.size());
    for (const auto& t : p.terms) closed.push_back({t.lower, t.upper - 1});
    for (const auto& f : p.base_load) closed.push_back({f.lower, f.upper - 1});
    if (closed.empty()) return;
    times_ = reduced_memory_times(static_cast<std::int64_t>(closed.size()), closed, {});
  }

  void build_capacity(const presolved& p) {
    std::vector<usage_type> diff(times_.size() + 1, 0);
    for (const auto& f : p.base_load) {
      const auto [b, e] = rows_of(f.lower, f.upper);
      diff[b] += f.amount;
      diff[e] -= f.amount;
    }
    fixed_.resize(times_.size());
    capacity_.resize(times_.size());
    usage_type running = 0;
    for (std::size_t r = 0; r < times_.size(); ++r) {
      running += diff[r];
      fixed_[r] = running;
      capacity_[r] = p.limit - running;
    }
  }

  void build_runs(const presolved& p) {
    std::vector<std::vector<std::uint32_t>> terms_of(p.var_count());
    for (std::uint32_t t = 0; t < p.terms.size(); ++t) terms_of[p.terms[t].var].push_back(t);
    std::vector<std::pair<std::uint32_t, std::int64_t>> events;  // (row, +term+1 or -(term+1))
    for (std::size_t v = 0; v < p.var_count(); ++v) {
      const std::size_t k = p.labels(v);
      events.clear();
      for (auto t : terms_of[v]) {
        const auto [b, e] = rows_of(p.terms[t].lower, p.terms[t].upper);
        if (b == e) continue;
        events.emplace_back(b, static_cast<std::int64_t>(t) + 1);
        events.emplace_back(e, -(static_cast<std::int64_t>(t) + 1));
      }
      std::sort(events.begin(), events.end());
      std::vector<usage_type> sum(k, 0);
      for (std::size_t i = 0; i < events.size();) {
        const std::uint32_t row = events[i].first;
        for (; i < events.size() && events[i].first == row; ++i) {
          const auto id = events[i].second;
          const auto& use = p.terms[static_cast<std::size_t>(id > 0 ? id : -id) - 1].usage;
          for (std::size_t s = 0; s < k; ++s) sum[s] += id > 0 ? use[s] : -use[s];
        }
        if (i == events.size()) break;
        if (std::all_of(sum.begin(), sum.end(), [](usage_type x) { return x == 0; })) continue;
        runs_[v].push_back({row, events[i].first, pool_.size()});
        pool_.insert(pool_.end(), sum.begin(), sum.end());
      }
    }
  }
};

/// Load minus capacity on every row, in a segment tree with lazy range add and range maximum.
/// Bottom-up (no recursion): an add touches the O(log rows) nodes covering its range and
/// rebuilds their two boundary paths; a range query first pushes the pending adds down the two
/// boundary paths (which changes no row's value, so the queries are logically const).
class load_tracker {
 public:
  load_tracker() = default;
  /// All rows at load 0.
  explicit load_tracker(const memory_rows& rows) : load_tracker(rows, std::vector<usage_type>(rows.row_count(), 0)) {}
  /// Rows at the given loads (`load.size() == rows.row_count()`).
  load_tracker(const memory_rows& rows, const std::vector<usage_type>& load) : n_(rows.row_count()) {
    while ((std::size_t{1} << height_) < std::max<std::size_t>(n_, 1)) ++height_;
    size_ = std::size_t{1} << height_;
    value_.assign(2 * size_, empty);
    pending_.assign(size_, 0);
    for (std::size_t r = 0; r < n_; ++r) value_[size_ + r] = load[r] - rows.capacity(r);
    for (std::size_t i = size_ - 1; i >= 1; --i) value_[i] = std::max(value_[2 * i], value_[2 * i + 1]);
  }

  /// Adds `delta` to rows `[begin, end)`.
  void add(std::size_t begin, std::size_t end, usage_type delta) {
    if (begin >= end || delta == 0) return;
    std::size_t l = begin + size_, r = end + size_;
    const std::size_t l0 = l, r0 = r - 1;
    for (; l < r; l >>= 1, r >>= 1) {
      if (l & 1) apply(l++, delta);
      if (r & 1) apply(--r, delta);
    }
    rebuild(l0);
    rebuild(r0);
  }
  /// The largest load minus capacity over rows `[begin, end)` (very negative when empty).
  [[nodiscard]] usage_type max(std::size_t begin, std::size_t end) const {
    if (begin >= end) return empty;
    std::size_t l = begin + size_, r = end + size_;
    push(l);
    push(r - 1);
    usage_type best = empty;
    for (; l < r; l >>= 1, r >>= 1) {
      if (l & 1) best = std::max(best, value_[l++]);
      if (r & 1) best = std::max(best, value_[--r]);
    }
    return best;
  }
  /// The largest load minus capacity over all rows: the assignment fits when it is <= 0.
  [[nodiscard]] usage_type max() const noexcept { return n_ == 0 ? 0 : value_[1]; }
  /// Load minus capacity at row `r`.
  [[nodiscard]] usage_type at(std::size_t r) const noexcept {
    std::size_t p = r + size_;
    usage_type v = value_[p];
    for (p >>= 1; p >= 1; p >>= 1) v += pending_[p];
    return v;
  }
  /// A row where load minus capacity is largest (0 when there are no rows).
  [[nodiscard]] std::size_t argmax() const noexcept {
    if (n_ == 0) return 0;
    std::size_t node = 1;
    while (node < size_) node = value_[2 * node] >= value_[2 * node + 1] ? 2 * node : 2 * node + 1;
    return node - size_;
  }

 private:
  static constexpr usage_type empty = std::numeric_limits<usage_type>::min() / 4;
  std::size_t n_ = 0, size_ = 1, height_ = 0;
  // value_[p]: max over p's subtree including p's own pending add; pending_[p]: an add that
  // still applies to p's children.
  mutable std::vector<usage_type> value_, pending_;

  void apply(std::size_t p, usage_type d) const {
    value_[p] += d;
    if (p < size_) pending_[p] += d;
  }
  void rebuild(std::size_t p) {
    for (p >>= 1; p >= 1; p >>= 1) value_[p] = std::max(value_[2 * p], value_[2 * p + 1]) + pending_[p];
  }
  void push(std::size_t p) const {
    for (std::size_t s = height_; s > 0; --s) {
      const std::size_t i = p >> s;
      if (pending_[i] != 0) {
        apply(2 * i, pending_[i]);
        apply(2 * i + 1, pending_[i]);
        pending_[i] = 0;
      }
    }
  }
};

}  // namespace xlamem::sharding
