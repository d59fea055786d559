// SPDX-License-Identifier: Apache-2.0
/// @file
/// Interval structures over the compressed timeline (sections, see `interval_graph`) that let
/// the packing heuristics run without an explicit conflict graph, whose size grows with the
/// square of the live count (179,827,782 edges on a 62,185-buffer compiler trace):
///  - `section_max`: static range maximum over per-section values (contention keys);
///  - `skyline_tree`: the placed buffers' tops, with "highest top meeting a section range",
///    and `level_queue`, its monotone queue of (level, rank) entries (the canonical skyline
///    greedy);
///  - `placed_index`: the placed buffers whose section range meets a query range, enumerated
///    in time proportional to log S plus their number (XLA's best fit needs exactly them);
///  - `build_conflicts`: the explicit conflict lists, for the exact search only, built under a
///    cap on their size and a deadline.
/// All are O(n + S) memory (`placed_index`: O(n log S)) and allocate only when built.
#pragma once

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "xlamem/deadline.hpp"

namespace xlamem::detail {

/// Range maximum over a fixed array of values (a bottom-up segment tree). Query O(log S).
class section_max {
 public:
  section_max() = default;
  explicit section_max(const std::vector<std::int64_t>& values) : n_(values.size()), tree_(2 * values.size(), 0) {
    std::copy(values.begin(), values.end(), tree_.begin() + static_cast<std::ptrdiff_t>(n_));
    for (std::size_t i = n_; i-- > 1;) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  /// The largest value in [lo, hi) (negative ones too); 0 for an empty range.
  [[nodiscard]] std::int64_t query(std::size_t lo, std::size_t hi) const noexcept {
    if (lo >= hi) return 0;
    std::int64_t best = std::numeric_limits<std::int64_t>::min();
    for (lo += n_, hi += n_; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) best = std::max(best, tree_[lo++]);
      if (hi & 1) best = std::max(best, tree_[--hi]);
    }
    return best;
  }

 private:
  std::size_t n_ = 0;
  std::vector<std::int64_t> tree_;
};

/// The skyline of placed buffers: `add(lo, hi, top)` records a placed buffer over sections
/// [lo, hi); `highest(lo, hi)` is the largest top among recorded buffers meeting [lo, hi). A
/// buffer meets [lo, hi) when it contains section lo (the tops stored at its O(log S)
/// canonical nodes of a segment tree, read on the path from leaf lo to the root) or starts in
/// (lo, hi) (a range maximum over tops by first section). Both O(log S), iterative. The two
/// trees share one array of node pairs (the query's paths from lo and lo + 1 mostly visit the
/// same nodes, so each cache line serves both). The walks are cache misses: these two layout
/// choices cut the simulated L1 misses of a 28,526-buffer trace fivefold.
class skyline_tree {
 public:
  // Any leaf count works for a bottom-up tree whose operation (max) commutes; none wasted.
  explicit skyline_tree(std::size_t sections)
      : size_(std::max<std::size_t>(sections, 1)), node_(2 * std::max<std::size_t>(sections, 1)) {}
  void add(std::size_t lo, std::size_t hi, std::int64_t top) noexcept {
    if (lo >= hi) return;
    for (std::size_t a = lo + size_, b = hi + size_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) {
        node_[a].stab = std::max(node_[a].stab, top);
        ++a;
      }
      if (b & 1) {
        --b;
        node_[b].stab = std::max(node_[b].stab, top);
      }
    }
    for (std::size_t k = lo + size_; k >= 1 && node_[k].by_start < top; k >>= 1) node_[k].by_start = top;
  }
  [[nodiscard]] std::int64_t highest(std::size_t lo, std::size_t hi) const noexcept {
    if (lo >= hi) return 0;
    std::int64_t best = 0;
    for (std::size_t k = lo + size_; k >= 1; k >>= 1) best = std::max(best, node_[k].stab);
    for (std::size_t a = lo + 1 + size_, b = hi + size_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) best = std::max(best, node_[a++].by_start);
      if (b & 1) best = std::max(best, node_[--b].by_start);
    }
    return best;
  }

 private:
  struct node {
    std::int64_t stab = 0;      // top of buffers holding this node canonically
    std::int64_t by_start = 0;  // top of buffers starting in this node's sections
  };
  std::size_t size_;
  std::vector<node> node_;
};

/// A monotone priority queue of (level, rank) entries for the skyline greedy, smallest level
/// first, then smallest rank; each rank < `ranks` is queued at most once. Levels are bucketed
/// as in a radix heap (by the highest bit in which they differ from the current level: push
/// O(1), amortised O(log of the level range) per entry); the entries of the current level sit
/// in a two-level bitset over ranks, so the thousands of entries one level holds on a
/// compiler trace come out in rank order by bit scans instead of each trickling through the
/// rank bits of a radix heap.
/// @pre every pushed entry comes after the last `top()` (a higher level, or the same level
/// and a higher rank), and level << bit_width(ranks) fits 64 bits.
class level_queue {
 public:
  explicit level_queue(std::size_t ranks)
      : rank_bits_(static_cast<unsigned>(std::bit_width(std::max<std::size_t>(ranks, 1)))),
        words_((std::max<std::size_t>(ranks, 1) + 63) / 64, 0),
        summary_((words_.size() + 63) / 64, 0) {}
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  void push(std::uint64_t level, std::size_t rank) {
    if (level == level_ && now_ > 0) {
      set(rank);
    } else {
      buckets_[bucket(level)].push_back(level << rank_bits_ | rank);
    }
    ++count_;
  }
  /// Whether an entry of `level` is queued, when `level` is that of the last `top()`;
  /// unlike `top`, never moves on to the next level.
  [[nodiscard]] bool has_level(std::uint64_t level) const noexcept {
    return level == level_ && (now_ > 0 || !buckets_[0].empty());
  }
  /// The smallest entry. @pre not empty.
  [[nodiscard]] std::pair<std::uint64_t, std::size_t> top() {
    if (now_ == 0) refill();
    return {level_, cursor_ = next(cursor_)};
  }
  void pop() {
    const auto [level, rank] = top();
    auto& w = words_[rank / 64];
    w &= ~(std::uint64_t{1} << (rank % 64));
    if (w == 0) summary_[rank / 4096] &= ~(std::uint64_t{1} << (rank / 64 % 64));
    --now_;
    --count_;
  }

 private:
  [[nodiscard]] std::size_t bucket(std::uint64_t level) const noexcept {
    return level == level_ ? 0 : 64 - static_cast<std::size_t>(std::countl_zero(level ^ level_));
  }
  void set(std::size_t rank) noexcept {
    words_[rank / 64] |= std::uint64_t{1} << (rank % 64);
    summary_[rank / 4096] |= std::uint64_t{1} << (rank / 64 % 64);
    ++now_;
  }
  // Moves the entries of the next level into the bitset.
  void refill() {
    std::size_t b = 0;
    while (buckets_[b].empty()) ++b;
    std::uint64_t least = std::numeric_limits<std::uint64_t>::max();
    for (const auto key : buckets_[b]) least = std::min(least, key);
    level_ = least >> rank_bits_;
    const std::uint64_t mask = (std::uint64_t{1} << rank_bits_) - 1;
    for (const auto key : buckets_[b]) {
      if (key >> rank_bits_ == level_) {
        set(static_cast<std::size_t>(key & mask));
      } else {
        buckets_[bucket(key >> rank_bits_)].push_back(key);
      }
    }
    buckets_[b].clear();
    cursor_ = static_cast<std::size_t>(least & mask);
  }
  // The first queued rank of the current level at or after `from`. @pre one exists.
  [[nodiscard]] std::size_t next(std::size_t from) const noexcept {
    std::size_t w = from / 64;
    const std::uint64_t here = words_[w] & (~std::uint64_t{0} << (from % 64));
    if (here != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(here));
    ++w;
    std::size_t s = w / 64;
    std::uint64_t bits = summary_[s] & (~std::uint64_t{0} << (w % 64));
    while (bits == 0) bits = summary_[++s];
    w = s * 64 + static_cast<std::size_t>(std::countr_zero(bits));
    return w * 64 + static_cast<std::size_t>(std::countr_zero(words_[w]));
  }

  unsigned rank_bits_;
  std::uint64_t level_ = 0;
  std::size_t count_ = 0, now_ = 0, cursor_ = 0;
  std::vector<std::uint64_t> words_, summary_;
  std::vector<std::uint64_t> buckets_[65];  // [0]: the current level's, while its bitset is empty
};

/// The placed buffers meeting a section range. Every buffer that may be placed is known up
/// front (its section range [first, last), nonempty), so storage is laid out once: a buffer
/// meets [f, l) when it either contains section f (found on the root-to-leaf path of f in a
/// segment tree holding each buffer at its O(log S) canonical nodes) or starts strictly
/// inside (f, l) (per-section start lists, nonempty sections found through a 64-ary bitset
/// tree). Each meeting buffer is reported exactly once. Insert O(log S), query O(log S + k).
class placed_index {
 public:
  /// `first[i]`, `last[i]`: section range of buffer i; buffers with first == last never meet
  /// anything and are ignored.
  placed_index(const std::vector<int>& first, const std::vector<int>& last, std::size_t sections)
      : first_(first), last_(last), size_(1) {
    while (size_ < std::max<std::size_t>(sections, 1)) size_ <<= 1;
    const std::size_t n = first.size();
    // Pass 1 counts the canonical nodes and the starts per section, pass 2 lays them out.
    std::vector<std::uint32_t> node_count(2 * size_ + 1, 0), start_count(size_ + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (first[i] >= last[i]) continue;
      for_canonical(static_cast<std::size_t>(first[i]), static_cast<std::size_t>(last[i]),
                    [&](std::size_t node) { ++node_count[node]; });
      ++start_count[static_cast<std::size_t>(first[i])];
    }
    node_begin_.assign(2 * size_ + 1, 0);
    for (std::size_t k = 0; k < 2 * size_; ++k) node_begin_[k + 1] = node_begin_[k] + node_count[k];
    node_fill_.assign(2 * size_, 0);
    node_items_.assign(node_begin_[2 * size_], 0);
    start_begin_.assign(size_ + 1, 0);
    for (std::size_t s = 0; s < size_; ++s) start_begin_[s + 1] = start_begin_[s] + start_count[s];
    start_fill_.assign(size_, 0);
    start_items_.assign(start_begin_[size_], 0);
    std::size_t words = size_;
    do {
      words = (words + 63) / 64;
      bits_.emplace_back(words, 0);
    } while (words > 1);
  }

  /// Records buffer i as placed. @pre not inserted before; first[i] < last[i].
  void insert(int i) {
    const auto iu = static_cast<std::size_t>(i);
    for_canonical(static_cast<std::size_t>(first_[iu]), static_cast<std::size_t>(last_[iu]), [&](std::size_t node) {
      node_items_[node_begin_[node] + node_fill_[node]++] = i;
    });
    const auto s = static_cast<std::size_t>(first_[iu]);
    start_items_[start_begin_[s] + start_fill_[s]++] = i;
    std::size_t at = s;
    for (auto& level : bits_) {
      level[at / 64] |= std::uint64_t{1} << (at % 64);
      at /= 64;
    }
  }

  /// Calls `f(j)` for every placed buffer j whose section range meets [lo, hi), once each.
  template <class F>
  void for_each_meeting(int lo, int hi, F&& f) const {
    if (lo >= hi) return;
    const auto l = static_cast<std::size_t>(lo);
    for (std::size_t node = l + size_; node >= 1; node >>= 1) {
      const auto b = node_begin_[node];
      for (auto k = b, e = b + node_fill_[node]; k < e; ++k) f(node_items_[k]);
    }
    for (std::size_t s = next_start(l + 1); s < static_cast<std::size_t>(hi); s = next_start(s + 1)) {
      const auto b = start_begin_[s];
      for (auto k = b, e = b + start_fill_[s]; k < e; ++k) f(start_items_[k]);
    }
  }

 private:
  template <class F>
  void for_canonical(std::size_t lo, std::size_t hi, F&& f) const {
    for (lo += size_, hi += size_; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) f(lo++);
      if (hi & 1) f(--hi);
    }
  }
  // The first section at or after s where some placed buffer starts; size_ when none.
  [[nodiscard]] std::size_t next_start(std::size_t s) const noexcept {
    if (s >= size_) return size_;
    // Climb while the rest of the current word is empty, then descend to the lowest set bit.
    std::size_t level = 0, at = s;
    while (true) {
      const auto& words = bits_[level];
      const std::size_t w = at / 64;
      if (w >= words.size()) return size_;
      const std::uint64_t rest = words[w] & (~std::uint64_t{0} << (at % 64));
      if (rest != 0) {
        at = w * 64 + static_cast<std::size_t>(std::countr_zero(rest));
        break;
      }
      if (level + 1 == bits_.size()) return size_;
      ++level;
      at = w + 1;
    }
    while (level > 0) {
      --level;
      at = at * 64 + static_cast<std::size_t>(std::countr_zero(bits_[level][at]));
    }
    return at;
  }

  const std::vector<int>& first_;
  const std::vector<int>& last_;
  std::size_t size_;
  std::vector<std::size_t> node_begin_, start_begin_;
  std::vector<std::uint32_t> node_fill_, start_fill_;
  std::vector<int> node_items_, start_items_;
  std::vector<std::vector<std::uint64_t>> bits_;
};

/// Explicit conflict lists (compressed rows, each ascending) of the buffers with first < last.
struct conflict_lists {
  std::vector<std::size_t> start;  ///< n + 1 row starts
  std::vector<int> adjacent;
};

/// Builds the conflict lists by a sweep over first sections, O(n log n + E). Gives up (nullopt)
/// when there are more than `max_edges` conflicting pairs or the deadline passes (the clock is
/// read every 2^18 steps of work: pairs made, live buffers scanned, list entries sorted), so
/// that memory and time stay bounded on any input.
inline std::optional<conflict_lists> build_conflicts(const std::vector<int>& first, const std::vector<int>& last,
                                                     std::size_t max_edges, const solve_deadline& deadline = std::nullopt) {
  const auto started = solve_clock::now();
  const std::size_t n = first.size();
  std::vector<int> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (first[i] < last[i]) order.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto fa = first[static_cast<std::size_t>(a)], fb = first[static_cast<std::size_t>(b)];
    return fa != fb ? fa < fb : a < b;
  });
  // Two sweeps over the same order: the first counts each buffer's conflicts (and stops past
  // `max_edges`), the second writes them into rows sized by the count, so no list of pairs
  // is kept and no array grows while the clock runs.
  deadline_watch late(deadline, std::size_t{1} << 18);
  std::vector<int> active;
  auto sweep = [&](auto&& pair, auto&& more) {
    active.clear();
    for (const int i : order) {
      if (late.passed(2 * active.size() + 1)) return false;  // the scan below, then the pairs
      const int f = first[static_cast<std::size_t>(i)];
      std::size_t keep = 0;
      for (const int a : active) {
        if (last[static_cast<std::size_t>(a)] > f) active[keep++] = a;
      }
      active.resize(keep);
      if (!more(active.size())) return false;
      for (const int a : active) pair(a, i);
      active.push_back(i);
    }
    return true;
  };
  std::vector<std::size_t> degree(n, 0);
  std::size_t edges = 0;
  const bool counted = sweep(
      [&](int a, int b) {
        ++degree[static_cast<std::size_t>(a)];
        ++degree[static_cast<std::size_t>(b)];
      },
      [&](std::size_t k) { return (edges += k) <= max_edges; });
  if (!counted) return std::nullopt;
  // Allocating the lists (every page touched at once, unchecked) costs about what counting
  // them did, and filling them as much again: not started when the time left is shorter.
  if (deadline && solve_clock::now() + 2 * (solve_clock::now() - started) >= *deadline) return std::nullopt;
  conflict_lists out;
  out.start.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) out.start[i + 1] = out.start[i] + degree[i];
  out.adjacent.assign(out.start[n], 0);
  std::vector<std::size_t> fill(out.start.begin(), out.start.end() - 1);
  const bool filled = sweep(
      [&](int a, int b) {
        out.adjacent[fill[static_cast<std::size_t>(a)]++] = b;
        out.adjacent[fill[static_cast<std::size_t>(b)]++] = a;
      },
      [](std::size_t) { return true; });
  if (!filled) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    if (late.passed(4 * (out.start[i + 1] - out.start[i]) + 1)) return std::nullopt;  // about k log k
    std::sort(out.adjacent.begin() + static_cast<std::ptrdiff_t>(out.start[i]),
              out.adjacent.begin() + static_cast<std::ptrdiff_t>(out.start[i + 1]));
  }
  return out;
}

}  // namespace xlamem::detail
