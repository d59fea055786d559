// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory-term reduction for ILP memory constraints, after XLA auto-sharding's
/// `MemoryTermReducer`. A primitive (a value with sharding choices, or an edge) is live over a
/// closed interval of time steps; the naive memory constraints need one term per primitive per
/// live step. A reduction pulls co-live primitives into groups (one new variable each, equal to the
/// summed memory of its members) so each step needs fewer terms, and picks the few time steps at
/// which constraints suffice.
///
/// Defines the `memory_term_policy` concept and two models: `xla_compatible_policy` (XLA's
/// heuristic, tie-breaks and leftover interval values included) and `split_aware_policy` (also
/// merges that split a lifetime, e.g. nested ones; never more terms), the reducer entry points
/// for both of XLA's input forms, and XLA's reduced-time selection. The verifier that expands
/// groups back is `memory_terms/verify.hpp`; the rows of the memory constraints are
/// `memory_terms/constraints.hpp`; `memory_terms/memory_terms.hpp` includes all three.
///
/// What the compiler cannot check: the reducers are pure functions of their input (no state,
/// safe to call from several threads on different data). One XLA sweep costs O(N + T) with
/// counting sorts (N = primitives + groups, T = the time range spanned; O(N log N) when T is
/// much larger than N) plus O(|a| + |b|) per merge; the number of sweeps is at most the initial
/// term count and is capped by `max_iterations`. Memory is O(N + T + summed group sizes).
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

namespace xlamem {

/// A closed interval of time steps `[first, last]`. `first > last` means "no interval" (the
/// primitive is absent or has vanished into groups); XLA's exact leftover values such as
/// `(6, -1)` are kept, so compare intervals with `==` only when you mean it.
struct term_interval {
  std::int64_t first = 0;  ///< first live time step
  std::int64_t last = -1;  ///< last live time step (inclusive)

  /// Whether the interval holds at least one time step.
  [[nodiscard]] constexpr bool valid() const noexcept { return first <= last; }
  /// Number of time steps (0 when invalid).
  [[nodiscard]] constexpr std::int64_t length() const noexcept {
    return valid() ? last - first + 1 : 0;
  }
  /// Whether `t` lies inside.
  [[nodiscard]] constexpr bool contains(std::int64_t t) const noexcept {
    return first <= t && t <= last;
  }
  friend constexpr bool operator==(const term_interval&, const term_interval&) = default;
};

/// Knobs shared by every policy.
struct memory_term_options {
  /// At most this many sweeps (XLA's `max_iterations`). For `split_aware_policy` the cap applies
  /// to each of its two phases, so its result never has more terms than `xla_compatible_policy`
  /// under the same cap.
  std::int64_t max_iterations = std::numeric_limits<std::int64_t>::max();
};

/// The result of a reduction, laid out like XLA's getters.
struct memory_term_reduction {
  std::int64_t num_lives = 0;       ///< number of time steps
  std::int64_t num_primitives = 0;  ///< P: ids `[0, P)` are primitives, `P + g` is group g
  /// Reduced intervals: the first P are the trimmed primitive intervals, then one per group.
  std::vector<term_interval> intervals;
  /// Members of each group as ascending original primitive ids (groups are always flat).
  std::vector<std::vector<std::int64_t>> groups;
  /// Row t: ascending ids (primitives, then groups `P + g`) whose reduced interval covers t.
  /// Filled only by the live-matrix entry point, as in XLA.
  std::vector<std::vector<std::int64_t>> reduced_live;
  std::int64_t terms_before = 0;  ///< live entries, or the summed lengths of valid intervals
  std::int64_t terms_after = 0;   ///< summed lengths of valid reduced intervals + group sizes
  /// Ascending time steps at which memory constraints suffice (XLA's `GetReducedTimes`; `{-1}`
  /// when nothing is live, as in XLA).
  std::vector<std::int64_t> reduced_times;
  std::int64_t iterations = 0;  ///< sweeps performed (all phases)
};

/// A reduction policy: rewrites `intervals` (P primitive intervals on entry; primitives then
/// groups on exit) and fills `groups`, keeping every time step's expanded primitive set.
///
/// Preconditions the driver guarantees: every valid interval lies in `[0, num_lives)`,
/// `intervals.size() == num_primitives`, `groups` is empty. Returns the number of sweeps done.
/// `name` is the spelling used by tools (`xlamem reduce --policy NAME`).
template <class Policy>
concept memory_term_policy =
    std::default_initializable<Policy> &&
    requires(const Policy& policy, std::int64_t n, std::vector<term_interval>& intervals,
             std::vector<std::vector<std::int64_t>>& groups) {
      { policy.reduce(n, n, intervals, groups, n) } -> std::same_as<std::int64_t>;
      { Policy::name } -> std::convertible_to<std::string_view>;
    };

namespace detail {

using term_groups = std::vector<std::vector<std::int64_t>>;

inline term_interval term_overlap(const term_interval& a, const term_interval& b) noexcept {
  return {std::max(a.first, b.first), std::min(a.last, b.last)};
}

/// `large` strictly contains `small` at both ends: merging them would split `large`.
inline bool term_splits(const term_interval& large, const term_interval& small) noexcept {
  return large.first < small.first && large.last > small.last;
}

/// Sorted union of two sorted member lists.
inline std::vector<std::int64_t> member_union(std::span<const std::int64_t> a,
                                              std::span<const std::int64_t> b) {
  std::vector<std::int64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

/// Members of object `id` (a primitive is its own single member).
inline std::span<const std::int64_t> members_of(std::int64_t id, std::int64_t num_primitives,
                                                const term_groups& groups,
                                                std::int64_t& scratch) noexcept {
  if (id < num_primitives) {
    scratch = id;
    return {&scratch, 1};
  }
  return groups[static_cast<std::size_t>(id - num_primitives)];
}

/// A set of integers in [0, n) with fast successor and predecessor queries: a 64-ary tree of
/// bit words (each level has one bit per non-empty word of the level below).
class rank_set {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// Empties the set and sizes it for [0, n).
  void reset(std::size_t n) {
    std::size_t words = (n + 63) / 64;
    std::size_t level = 0;
    do {
      if (levels_.size() <= level) levels_.emplace_back();
      levels_[level].assign(std::max<std::size_t>(words, 1), 0);
      ++level;
      words = (words + 63) / 64;
    } while (levels_[level - 1].size() > 1);
    levels_.resize(level);
  }
  void insert(std::size_t i) noexcept {
    for (auto& words : levels_) {
      auto& w = words[i >> 6];
      const bool was_empty = w == 0;
      w |= std::uint64_t{1} << (i & 63);
      if (!was_empty) return;
      i >>= 6;
    }
  }
  void erase(std::size_t i) noexcept {
    for (auto& words : levels_) {
      auto& w = words[i >> 6];
      w &= ~(std::uint64_t{1} << (i & 63));
      if (w != 0) return;
      i >>= 6;
    }
  }
  /// The smallest element greater than `i`, or `npos`.
  [[nodiscard]] std::size_t next(std::size_t i) const noexcept {
    std::size_t idx = i + 1;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const std::size_t w = idx >> 6;
      if (w >= levels_[l].size()) return npos;
      if (const std::uint64_t m = levels_[l][w] & (~std::uint64_t{0} << (idx & 63)); m != 0) {
        std::size_t pos = (w << 6) | static_cast<std::size_t>(std::countr_zero(m));
        for (std::size_t k = l; k-- > 0;) {
          pos = (pos << 6) | static_cast<std::size_t>(std::countr_zero(levels_[k][pos]));
        }
        return pos;
      }
      idx = w + 1;
    }
    return npos;
  }
  /// The largest element smaller than `i`, or `npos`.
  [[nodiscard]] std::size_t prev(std::size_t i) const noexcept {
    if (i == 0) return npos;
    std::size_t idx = i - 1;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const std::size_t w = idx >> 6;
      if (const std::uint64_t m = levels_[l][w] & (~std::uint64_t{0} >> (63 - (idx & 63))); m != 0) {
        std::size_t pos = (w << 6) | static_cast<std::size_t>(63 - std::countl_zero(m));
        for (std::size_t k = l; k-- > 0;) {
          pos = (pos << 6) | static_cast<std::size_t>(63 - std::countl_zero(levels_[k][pos]));
        }
        return pos;
      }
      if (w == 0) return npos;
      idx = w - 1;
    }
    return npos;
  }

 private:
  std::vector<std::vector<std::uint64_t>> levels_;
};

/// One sweep over time, as XLA's SweepAndMerge walks it: objects enter at their first step and
/// are active, ordered by (first, last, id) (their rank), until all evictions at their last step
/// have been examined. `on_evict(id, rank)` sees each evicted object in (last, id) order.
class term_sweep {
 public:
  template <class OnEvict>
  void run(const std::vector<term_interval>& intervals, OnEvict&& on_evict) {
    by_first_.clear();
    by_last_.clear();
    rank_.assign(intervals.size(), 0);
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    for (std::size_t i = 0; i < intervals.size(); ++i) {
      const auto& iv = intervals[i];
      if (!iv.valid()) continue;
      by_last_.push_back({iv.last, static_cast<std::int64_t>(i)});
      lo = std::min(lo, iv.first);
      hi = std::max(hi, iv.last);
    }
    const std::size_t n = by_last_.size();
    if (n > 0 && static_cast<std::uint64_t>(hi - lo) < 4 * static_cast<std::uint64_t>(n) + 1024) {
      // Counting sorts over the time range: by last (ids ascending within a step, as collected),
      // then stably by first, giving (first, last, id).
      const auto steps = static_cast<std::size_t>(hi - lo) + 2;
      auto counting_sort = [&](auto& out, const auto& in, auto key) {
        count_.assign(steps, 0);
        for (const auto& e : in) ++count_[static_cast<std::size_t>(key(e) - lo) + 1];
        for (std::size_t k = 1; k < steps; ++k) count_[k] += count_[k - 1];
        out.resize(in.size());
        for (const auto& e : in) out[count_[static_cast<std::size_t>(key(e) - lo)]++] = e;
      };
      scratch_.resize(n);
      counting_sort(scratch_, by_last_, [](const auto& e) { return e.first; });
      by_last_.swap(scratch_);
      std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> entries(n);
      for (std::size_t k = 0; k < n; ++k) {
        const auto id = by_last_[k].second;
        entries[k] = {intervals[static_cast<std::size_t>(id)].first, by_last_[k].first, id};
      }
      counting_sort(by_first_, entries, [](const auto& e) { return std::get<0>(e); });
    } else {
      for (const auto& [last, id] : by_last_) {
        by_first_.push_back({intervals[static_cast<std::size_t>(id)].first, last, id});
      }
      std::sort(by_first_.begin(), by_first_.end());
      std::sort(by_last_.begin(), by_last_.end());
    }
    for (std::size_t r = 0; r < by_first_.size(); ++r) {
      rank_[static_cast<std::size_t>(std::get<2>(by_first_[r]))] = r;
    }
    actives_.reset(by_first_.size());
    std::size_t ei = 0, vi = 0;
    while (vi < by_last_.size()) {
      const std::int64_t t = by_last_[vi].first;
      for (; ei < by_first_.size() && std::get<0>(by_first_[ei]) <= t; ++ei) actives_.insert(ei);
      const std::size_t vbegin = vi;
      for (; vi < by_last_.size() && by_last_[vi].first == t; ++vi) {
        const std::int64_t id = by_last_[vi].second;
        on_evict(id, rank_[static_cast<std::size_t>(id)]);
      }
      for (std::size_t k = vbegin; k < vi; ++k) {
        actives_.erase(rank_[static_cast<std::size_t>(by_last_[k].second)]);
      }
    }
  }
  /// The active object right after / before `rank` in (first, last, id) order, or -1.
  [[nodiscard]] std::int64_t next(std::size_t& rank) const noexcept {
    rank = actives_.next(rank);
    return rank == rank_set::npos ? -1 : std::get<2>(by_first_[rank]);
  }
  [[nodiscard]] std::int64_t prev(std::size_t& rank) const noexcept {
    rank = actives_.prev(rank);
    return rank == rank_set::npos ? -1 : std::get<2>(by_first_[rank]);
  }

 private:
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> by_first_;
  std::vector<std::pair<std::int64_t, std::int64_t>> by_last_;
  std::vector<std::pair<std::int64_t, std::int64_t>> scratch_;
  std::vector<std::size_t> count_;
  std::vector<std::size_t> rank_;
  rank_set actives_;
};

/// Drops groups whose interval became invalid, keeping the order of the others.
inline void drop_vanished_groups(std::int64_t num_primitives, std::vector<term_interval>& intervals,
                                 term_groups& groups) {
  std::size_t out = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& iv = intervals[static_cast<std::size_t>(num_primitives) + g];
    if (!iv.valid()) continue;
    intervals[static_cast<std::size_t>(num_primitives) + out] = iv;
    if (out != g) groups[out] = std::move(groups[g]);
    ++out;
  }
  groups.resize(out);
  intervals.resize(static_cast<std::size_t>(num_primitives) + out);
}

/// One run of XLA's SweepAndMerge loop over `intervals`/`groups` (which may already hold groups).
inline std::int64_t xla_sweep_and_merge(std::int64_t num_primitives,
                                        std::vector<term_interval>& intervals, term_groups& groups,
                                        std::int64_t max_iterations) {
  struct candidate {
    std::int64_t key;  // -len(overlap): longest overlap first
    std::int64_t a, b;
  };
  std::vector<candidate> candidates, sorted;
  std::vector<std::size_t> count;
  term_sweep sweep;

  auto overlap_of = [&](std::int64_t a, std::int64_t b) -> std::optional<term_interval> {
    if (a == b) return std::nullopt;
    const auto& ia = intervals[static_cast<std::size_t>(a)];
    const auto& ib = intervals[static_cast<std::size_t>(b)];
    if (!ia.valid() || !ib.valid()) return std::nullopt;
    if (term_splits(ia, ib) || term_splits(ib, ia)) return std::nullopt;
    return term_overlap(ia, ib);
  };
  auto group_size = [&](std::int64_t id) -> std::int64_t {
    return id < num_primitives
               ? 1
               : static_cast<std::int64_t>(groups[static_cast<std::size_t>(id - num_primitives)].size());
  };
  // XLA's CalcNumTerms: the length left after removing `removed` steps, plus the group's
  // definition if anything is left of it.
  auto num_terms = [&](std::int64_t id, std::int64_t removed) -> std::int64_t {
    std::int64_t n = intervals[static_cast<std::size_t>(id)].last -
                     intervals[static_cast<std::size_t>(id)].first + 1 - removed;
    if (id >= num_primitives && n > 0) n += group_size(id);
    return n;
  };
  auto trim = [&](std::int64_t id, const term_interval& ov) {
    auto& iv = intervals[static_cast<std::size_t>(id)];
    if (iv.first == ov.first) iv.first = ov.last + 1;
    if (iv.last == ov.last) iv.last = ov.first - 1;
  };

  std::int64_t iterations = 0;
  for (; iterations < max_iterations;) {
    ++iterations;
    candidates.clear();
    sweep.run(intervals, [&](std::int64_t p, std::size_t rank) {
      const std::int64_t q = sweep.next(rank);
      if (q < 0) return;
      if (auto ov = overlap_of(p, q)) candidates.push_back({-ov->length(), p, q});
    });
    // btree_multimap order: ascending key, ties in insertion order (a stable counting sort
    // when the overlap lengths are small, as they are unless the time range is huge).
    std::int64_t longest = 0;
    for (const auto& c : candidates) longest = std::max(longest, -c.key);
    if (static_cast<std::uint64_t>(longest) < 4 * static_cast<std::uint64_t>(candidates.size()) + 1024) {
      count.assign(static_cast<std::size_t>(longest) + 2, 0);
      for (const auto& c : candidates) ++count[static_cast<std::size_t>(longest + c.key) + 1];
      for (std::size_t k = 1; k < count.size(); ++k) count[k] += count[k - 1];
      sorted.resize(candidates.size());
      for (const auto& c : candidates) sorted[count[static_cast<std::size_t>(longest + c.key)]++] = c;
      candidates.swap(sorted);
    } else {
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const candidate& x, const candidate& y) { return x.key < y.key; });
    }
    bool changed = false;
    for (const auto& c : candidates) {
      const auto ov = overlap_of(c.a, c.b);
      if (!ov) continue;
      const std::int64_t union_size = group_size(c.a) + group_size(c.b);  // disjoint members
      if (num_terms(c.a, 0) + num_terms(c.b, 0) <=
          num_terms(c.a, ov->length()) + num_terms(c.b, ov->length()) + ov->length() + union_size) {
        continue;
      }
      std::int64_t sa = 0, sb = 0;
      auto merged = member_union(members_of(c.a, num_primitives, groups, sa),
                                 members_of(c.b, num_primitives, groups, sb));
      XLAMEM_ASSERT(static_cast<std::int64_t>(merged.size()) == union_size);
      intervals.push_back(*ov);
      groups.push_back(std::move(merged));
      trim(c.a, *ov);
      trim(c.b, *ov);
      changed = true;
    }
    if (!changed) break;
  }
  return iterations;
}

/// Cheap exact clean-ups that each lower the term count: a singleton group that touches its
/// primitive's own interval (or replaces an empty one) folds into it; two groups with the same
/// members and adjacent intervals become one.
inline void fold_adjacent_pieces(std::int64_t num_primitives, std::vector<term_interval>& intervals,
                                 term_groups& groups) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      auto& giv = intervals[static_cast<std::size_t>(num_primitives) + g];
      if (!giv.valid() || groups[g].size() != 1) continue;
      auto& own = intervals[static_cast<std::size_t>(groups[g][0])];
      if (!own.valid()) {
        own = giv;
      } else if (own.last + 1 == giv.first) {
        own.last = giv.last;
      } else if (giv.last + 1 == own.first) {
        own.first = giv.first;
      } else {
        continue;
      }
      giv = {giv.last + 1, giv.first - 1};
      changed = true;
    }
    // Same members, adjacent intervals: sort group ids by (members, first).
    std::vector<std::size_t> order;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (intervals[static_cast<std::size_t>(num_primitives) + g].valid()) order.push_back(g);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      if (groups[x] != groups[y]) return groups[x] < groups[y];
      return intervals[static_cast<std::size_t>(num_primitives) + x].first <
             intervals[static_cast<std::size_t>(num_primitives) + y].first;
    });
    for (std::size_t k = 0; k + 1 < order.size(); ++k) {
      auto& x = intervals[static_cast<std::size_t>(num_primitives) + order[k]];
      auto& y = intervals[static_cast<std::size_t>(num_primitives) + order[k + 1]];
      if (groups[order[k]] != groups[order[k + 1]] || !x.valid() || x.last + 1 != y.first) {
        continue;
      }
      y.first = x.first;
      x = {x.last + 1, x.first - 1};
      changed = true;
    }
  }
}

/// Sweeps that also try merges XLA forbids: the overlap may lie strictly inside an object, which
/// is then split (the second piece of a primitive becomes a singleton group, the second piece of
/// a group a copy of it). Candidates are the `window` nearest neighbours on each side of every
/// evicted object in (first, last, id) order. They are applied by decreasing gain, each only if
/// it still gains at least the sweep's threshold (1, or the best gain / `threshold_div`, which
/// leaves room for the large merges of later sweeps), so every step lowers the term count.
inline std::int64_t split_sweep_and_merge(std::int64_t num_primitives,
                                          std::vector<term_interval>& intervals,
                                          term_groups& groups, std::int64_t max_iterations,
                                          int window, std::int64_t threshold_div) {
  struct candidate {
    std::int64_t gain;
    std::int64_t a, b;
  };
  std::vector<candidate> candidates;
  term_sweep sweep;

  auto def_cost = [&](std::int64_t id) -> std::int64_t {
    return id < num_primitives
               ? 0
               : static_cast<std::int64_t>(groups[static_cast<std::size_t>(id - num_primitives)].size());
  };
  auto size_of = [&](std::int64_t id) -> std::int64_t {
    return id < num_primitives ? 1 : def_cost(id);
  };
  // Terms an object still needs once `ov` is cut out of it.
  auto cost_after = [&](std::int64_t id, const term_interval& ov) -> std::int64_t {
    const auto& iv = intervals[static_cast<std::size_t>(id)];
    const bool left = iv.first < ov.first, right = iv.last > ov.last;
    const std::int64_t pieces = (left ? 1 : 0) + (right ? 1 : 0);
    std::int64_t cost = iv.length() - ov.length();
    if (id >= num_primitives) cost += pieces * def_cost(id);
    else if (pieces == 2) cost += 1;  // the second piece becomes a singleton group
    return cost;
  };
  auto gain_of = [&](std::int64_t a, std::int64_t b) -> std::int64_t {
    if (a == b) return 0;
    const auto& ia = intervals[static_cast<std::size_t>(a)];
    const auto& ib = intervals[static_cast<std::size_t>(b)];
    if (!ia.valid() || !ib.valid()) return 0;
    const auto ov = term_overlap(ia, ib);
    if (!ov.valid()) return 0;
    const std::int64_t before = ia.length() + def_cost(a) + ib.length() + def_cost(b);
    const std::int64_t after =
        cost_after(a, ov) + cost_after(b, ov) + ov.length() + size_of(a) + size_of(b);
    return before - after;
  };
  auto cut = [&](std::int64_t id, const term_interval& ov) {
    const term_interval iv = intervals[static_cast<std::size_t>(id)];
    const term_interval left{iv.first, ov.first - 1}, right{ov.last + 1, iv.last};
    if (left.valid() && right.valid()) {
      // Keep the longer piece in place; the other becomes a new group with the same members.
      const bool keep_left = left.length() >= right.length();
      intervals[static_cast<std::size_t>(id)] = keep_left ? left : right;
      std::vector<std::int64_t> members =
          id < num_primitives ? std::vector<std::int64_t>{id}
                              : groups[static_cast<std::size_t>(id - num_primitives)];
      intervals.push_back(keep_left ? right : left);
      groups.push_back(std::move(members));
      return;
    }
    auto& ref = intervals[static_cast<std::size_t>(id)];
    if (ref.first == ov.first) ref.first = ov.last + 1;
    if (ref.last == ov.last) ref.last = ov.first - 1;
  };

  std::int64_t iterations = 0;
  for (; iterations < max_iterations;) {
    ++iterations;
    candidates.clear();
    sweep.run(intervals, [&](std::int64_t p, std::size_t rank) {
      std::size_t r = rank;
      for (int k = 0; k < window; ++k) {
        const std::int64_t q = sweep.next(r);
        if (q < 0) break;
        if (const auto g = gain_of(p, q); g > 0) candidates.push_back({g, p, q});
      }
      r = rank;
      for (int k = 0; k < window; ++k) {
        const std::int64_t q = sweep.prev(r);
        if (q < 0) break;
        if (const auto g = gain_of(p, q); g > 0) candidates.push_back({g, p, q});
      }
    });
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const candidate& x, const candidate& y) { return x.gain > y.gain; });
    bool changed = false;
    const std::int64_t threshold =
        candidates.empty() || threshold_div == 0 ? 1 : std::max<std::int64_t>(1, candidates.front().gain / threshold_div);
    for (const auto& c : candidates) {
      if (gain_of(c.a, c.b) < threshold) continue;
      const auto ov = term_overlap(intervals[static_cast<std::size_t>(c.a)],
                                   intervals[static_cast<std::size_t>(c.b)]);
      std::int64_t sa = 0, sb = 0;
      auto merged = member_union(members_of(c.a, num_primitives, groups, sa),
                                 members_of(c.b, num_primitives, groups, sb));
      cut(c.a, ov);
      cut(c.b, ov);
      intervals.push_back(ov);
      groups.push_back(std::move(merged));
      changed = true;
    }
    if (!changed) break;
  }
  return iterations;
}

}  // namespace detail

/// XLA's heuristic, reproduced exactly: sweep time, pair each evicted object with the next one in
/// (first, last, id) order, merge the pairs by decreasing overlap (ties in sweep order) when that
/// lowers the term count and splits no lifetime; repeat until nothing changes or
/// `max_iterations` sweeps; then drop vanished groups. Leftover interval values (e.g. `(6, -1)`)
/// match XLA's, so ILPs built from the output are identical.
struct xla_compatible_policy {
  static constexpr std::string_view name = "xla_compatible";

  /// See `memory_term_policy`.
  std::int64_t reduce(std::int64_t /*num_lives*/, std::int64_t num_primitives,
                      std::vector<term_interval>& intervals, detail::term_groups& groups,
                      std::int64_t max_iterations) const {
    const auto iterations =
        detail::xla_sweep_and_merge(num_primitives, intervals, groups, max_iterations);
    detail::drop_vanished_groups(num_primitives, intervals, groups);
    return iterations;
  }
};
static_assert(memory_term_policy<xla_compatible_policy>);

/// Fewer terms than XLA's heuristic, never more. Allows merges that split a lifetime (nested
/// lifetimes, which XLA never merges): the inner overlap becomes a group and the outer object's
/// second piece a singleton group (or a copy of the group). Runs five candidates and keeps the
/// one with the fewest terms (the first on ties):
/// 1. XLA's sweeps to their fixed point, then split-aware sweeps on that result;
/// 2. split-aware sweeps from scratch, each sweep taking only merges that gain at least half of
///    its best one (big merges first);
/// 3. as 2, with three neighbours on each side as candidates instead of one;
/// 4. and 5. as 2 and 3 on the time-reversed input (the sweeps' tie-breaks are not symmetric).
/// Each candidate ends by folding split pieces that touch again back together. Every step
/// strictly lowers the term count and keeps each time step's primitive set, and candidate 1
/// starts from XLA's result, so the result never has more terms than `xla_compatible_policy`'s
/// under the same `max_iterations` (which caps each phase). Costs several times XLA's time.
struct split_aware_policy {
  static constexpr std::string_view name = "split_aware";

  /// See `memory_term_policy`.
  std::int64_t reduce(std::int64_t num_lives, std::int64_t num_primitives,
                      std::vector<term_interval>& intervals, detail::term_groups& groups,
                      std::int64_t max_iterations) const {
    const std::vector<term_interval> input = intervals;
    auto terms = [](const std::vector<term_interval>& iv, const detail::term_groups& g) {
      std::int64_t n = 0;
      for (const auto& i : iv) n += i.length();
      for (const auto& m : g) n += static_cast<std::int64_t>(m.size());
      return n;
    };
    auto finish = [&](std::vector<term_interval>& iv, detail::term_groups& g) {
      detail::fold_adjacent_pieces(num_primitives, iv, g);
      detail::drop_vanished_groups(num_primitives, iv, g);
    };
    // Time reversal t -> num_lives - 1 - t of every interval the reducer produced or may touch
    // (valid inputs lie in [0, num_lives), and what the reducer derives from them stays within
    // [-1, num_lives]); intervals that were invalid on input are never touched.
    auto reverse = [&](std::vector<term_interval>& iv) {
      for (std::size_t i = 0; i < iv.size(); ++i) {
        if (i < input.size() && !input[i].valid()) continue;
        iv[i] = {num_lives - 1 - iv[i].last, num_lives - 1 - iv[i].first};
      }
    };
    std::int64_t iterations = detail::xla_sweep_and_merge(num_primitives, intervals, groups, max_iterations);
    detail::drop_vanished_groups(num_primitives, intervals, groups);
    iterations += detail::split_sweep_and_merge(num_primitives, intervals, groups, max_iterations, 1, 0);
    finish(intervals, groups);
    std::int64_t best = terms(intervals, groups);
    for (const bool reversed : {false, true}) {
      for (const int window : {1, 3}) {
        std::vector<term_interval> iv = input;
        detail::term_groups g;
        if (reversed) reverse(iv);
        iterations += detail::split_sweep_and_merge(num_primitives, iv, g, max_iterations, window, 2);
        finish(iv, g);
        if (reversed) reverse(iv);
        if (const auto n = terms(iv, g); n < best) {
          best = n;
          intervals = std::move(iv);
          groups = std::move(g);
        }
      }
    }
    return iterations;
  }
};
static_assert(memory_term_policy<split_aware_policy>);

/// XLA's `GetReducedTimes`: rebuild each primitive's extent as the hull of its reduced interval
/// and its groups' intervals, then keep the last entering time before every exit (and once more
/// at the end): one time step per locally maximal live set. `{-1}` when nothing is live.
/// @pre `intervals.size() == num_primitives + groups.size()` and member ids are below
/// `num_primitives` (true of every `memory_term_reduction` this header returns).
[[nodiscard]] inline std::vector<std::int64_t> reduced_memory_times(
    std::int64_t num_primitives, std::span<const term_interval> intervals,
    std::span<const std::vector<std::int64_t>> groups) {
  std::vector<term_interval> extent(intervals.begin(), intervals.begin() + num_primitives);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& giv = intervals[static_cast<std::size_t>(num_primitives) + g];
    for (const std::int64_t p : groups[g]) {
      auto& e = extent[static_cast<std::size_t>(p)];
      if (!e.valid()) {
        e = giv;
      } else {
        e.first = std::min(e.first, giv.first);
        e.last = std::max(e.last, giv.last);
      }
    }
  }
  std::vector<std::pair<std::int64_t, bool>> events;  // (time, is_exit): enters sort first
  events.reserve(extent.size() * 2);
  for (const auto& e : extent) {
    if (!e.valid()) continue;
    events.emplace_back(e.first, false);
    events.emplace_back(e.last, true);
  }
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  std::int64_t last_enter = -1;
  std::vector<std::int64_t> times;
  for (const auto& [t, is_exit] : events) {
    if (is_exit) {
      times.push_back(last_enter);
    } else {
      last_enter = t;
    }
  }
  times.push_back(last_enter);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

namespace detail {

inline bool add_terms(std::int64_t& total, std::int64_t n) noexcept {
  if (n > std::numeric_limits<std::int64_t>::max() - total) return false;
  total += n;
  return true;
}

inline result<void> check_intervals(std::int64_t num_lives, std::span<const term_interval> intervals) {
  if (num_lives < 0) {
    return error(errc::invalid_argument,
                 "memory terms: num_lives is " + std::to_string(num_lives) + ", must be >= 0");
  }
  for (std::size_t p = 0; p < intervals.size(); ++p) {
    const auto& iv = intervals[p];
    if (!iv.valid()) continue;
    if (iv.first < 0 || iv.last >= num_lives) {
      return error(errc::out_of_range,
                   "memory terms: primitive " + std::to_string(p) + " has interval [" +
                       std::to_string(iv.first) + ", " + std::to_string(iv.last) +
                       "], outside the " + std::to_string(num_lives) + " time steps [0, " +
                       std::to_string(num_lives - 1) + "]");
    }
  }
  return {};
}

inline result<std::int64_t> sum_lengths(std::span<const term_interval> intervals) {
  std::int64_t total = 0;
  for (const auto& iv : intervals) {
    if (!iv.valid()) continue;
    if (!add_terms(total, iv.length())) {
      return error(errc::out_of_range, "memory terms: the term count overflows int64");
    }
  }
  return total;
}

template <class Policy>
result<memory_term_reduction> run_reduction(std::int64_t num_lives,
                                            std::vector<term_interval> intervals,
                                            const memory_term_options& options,
                                            const Policy& policy) {
  if (options.max_iterations < 0) {
    return error(errc::invalid_argument, "memory terms: max_iterations is " +
                                             std::to_string(options.max_iterations) +
                                             ", must be >= 0");
  }
  memory_term_reduction r;
  r.num_lives = num_lives;
  r.num_primitives = static_cast<std::int64_t>(intervals.size());
  r.intervals = std::move(intervals);
  r.iterations = policy.reduce(num_lives, r.num_primitives, r.intervals, r.groups,
                               options.max_iterations);
  auto after = sum_lengths(r.intervals);
  if (!after) return after.error();
  r.terms_after = *after;
  for (const auto& g : r.groups) r.terms_after += static_cast<std::int64_t>(g.size());
  r.reduced_times = reduced_memory_times(r.num_primitives, r.intervals, r.groups);
  return r;
}

}  // namespace detail

/// Reduces the memory terms of primitives given as closed intervals (XLA's interval overload).
/// `reduced_live` stays empty, as in XLA.
/// @param num_lives number of time steps; every valid interval must lie in `[0, num_lives)`
/// @param intervals one per primitive; `first > last` means the primitive has no interval
/// @returns the reduction, or `out_of_range`/`invalid_argument` naming the offending primitive
template <memory_term_policy Policy = xla_compatible_policy>
[[nodiscard]] result<memory_term_reduction> reduce_memory_terms(
    std::int64_t num_lives, std::span<const term_interval> intervals,
    const memory_term_options& options = {}, const Policy& policy = {}) {
  if (auto ok = detail::check_intervals(num_lives, intervals); !ok) return ok.error();
  auto before = detail::sum_lengths(intervals);
  if (!before) return before.error();
  auto r = detail::run_reduction(num_lives, std::vector<term_interval>(intervals.begin(), intervals.end()),
                                 options, policy);
  if (r) r->terms_before = *before;
  return r;
}

/// The interval of each primitive in a live matrix (row t = ids live at t): the hull of the
/// steps where it appears, `[INT64_MAX, 0]` when it never does (XLA's rule; gaps are filled).
/// @returns the intervals, or an error naming the row and id that is out of range or repeated
[[nodiscard]] inline result<std::vector<term_interval>> live_matrix_intervals(
    std::span<const std::vector<std::int64_t>> live, std::int64_t num_primitives) {
  if (num_primitives < 0) {
    return error(errc::invalid_argument, "memory terms: num_primitives is " +
                                             std::to_string(num_primitives) + ", must be >= 0");
  }
  std::vector<term_interval> iv(static_cast<std::size_t>(num_primitives),
                                term_interval{std::numeric_limits<std::int64_t>::max(), 0});
  std::vector<std::int64_t> seen_at(static_cast<std::size_t>(num_primitives), -1);
  for (std::size_t t = 0; t < live.size(); ++t) {
    for (const std::int64_t p : live[t]) {
      if (p < 0 || p >= num_primitives) {
        return error(errc::out_of_range, "memory terms: live row " + std::to_string(t) +
                                             " lists primitive " + std::to_string(p) +
                                             ", but there are " + std::to_string(num_primitives) +
                                             " primitives");
      }
      auto& seen = seen_at[static_cast<std::size_t>(p)];
      if (seen == static_cast<std::int64_t>(t)) {
        return error(errc::invalid_argument, "memory terms: live row " + std::to_string(t) +
                                                 " lists primitive " + std::to_string(p) + " twice");
      }
      seen = static_cast<std::int64_t>(t);
      auto& i = iv[static_cast<std::size_t>(p)];
      i.first = std::min(i.first, static_cast<std::int64_t>(t));
      i.last = std::max(i.last, static_cast<std::int64_t>(t));
    }
  }
  return iv;
}

/// Reduces the memory terms of a live matrix (XLA's live overload): row t lists the primitive
/// ids live at t. Each primitive is taken over the hull of its rows (gaps are filled, as in XLA).
/// Also fills `reduced_live`.
/// @returns the reduction, or an error naming the row and id that is out of range or repeated
template <memory_term_policy Policy = xla_compatible_policy>
[[nodiscard]] result<memory_term_reduction> reduce_memory_terms_live(
    std::span<const std::vector<std::int64_t>> live, std::int64_t num_primitives,
    const memory_term_options& options = {}, const Policy& policy = {}) {
  auto iv = live_matrix_intervals(live, num_primitives);
  if (!iv) return iv.error();
  std::int64_t before = 0;
  for (const auto& row : live) before += static_cast<std::int64_t>(row.size());
  const auto num_lives = static_cast<std::int64_t>(live.size());
  auto r = detail::run_reduction(num_lives, std::move(*iv), options, policy);
  if (!r) return r;
  r->terms_before = before;
  r->reduced_live.assign(live.size(), {});
  for (std::size_t id = 0; id < r->intervals.size(); ++id) {
    const auto& i = r->intervals[id];
    for (std::int64_t t = i.first; t <= i.last; ++t) {
      r->reduced_live[static_cast<std::size_t>(t)].push_back(static_cast<std::int64_t>(id));
    }
  }
  return r;
}

}  // namespace xlamem
