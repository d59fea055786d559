// SPDX-License-Identifier: Apache-2.0
/// @file
/// Greedy packing heuristics as policies: XLA's `GlobalDecreasingSizeBestFitHeap` (best fit in
/// its spatial and temporal orders, keeping the better), first fit, the canonical "skyline"
/// greedy (always place the buffer that can sit lowest), and `portfolio_fit`, the default: the
/// best of several orders and fits, never worse than XLA's best fit because it includes it.
///
/// Every policy models `packing_heuristic`: `h.place(problem, graph)` returns a valid placement
/// of a validated problem; `h.name()` names it. Those whose cost can grow beyond n log n also
/// model `deadline_heuristic`: `h.place_by(problem, graph, deadline)` stops when the deadline
/// passes and says so (`timed_placement`); `stack_fit` and `sweep_fit` are O(n log n) on any
/// input and are what a solver falls back on. Placement of one buffer costs O(k log k), k the
/// number of conflicting buffers placed before it (best and first fit) or O(log n) plus
/// lazy refreshes (skyline); none builds the conflict graph, and none allocates per buffer.
/// Policies are stateless values, safe to share between threads.
#pragma once

#include <algorithm>
#include <bit>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/packing/aligned_lower_bound.hpp"
#include "xlamem/deadline.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/interval_index.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// A greedy placement policy: places every buffer of a validated problem.
template <class H>
concept packing_heuristic = requires(const H& h, const packing_problem& p, const interval_graph& g) {
  { h.name() } -> std::convertible_to<std::string_view>;
  { h.place(p, g) } -> std::same_as<placement>;
};

/// What a policy placed by a deadline.
struct timed_placement {
  std::optional<placement> solution;  ///< none: the deadline passed before every buffer had a place
  bool complete = true;               ///< false: the deadline cut the work short (`solution` is the best so far)

  /// A one-pass policy's answer: complete exactly when it placed everything.
  [[nodiscard]] static timed_placement all_or_nothing(std::optional<placement> s) {
    const bool placed = s.has_value();
    return {std::move(s), placed};
  }
};

/// A policy that keeps a deadline: `place_by` returns by it (within one check's stride).
template <class H>
concept deadline_heuristic = packing_heuristic<H> &&
    requires(const H& h, const packing_problem& p, const interval_graph& g, const solve_deadline& d) {
      { h.place_by(p, g, d) } -> std::same_as<timed_placement>;
    };

/// How a greedy chooses among the free gaps that fit a buffer.
enum class fit_rule {
  best,   ///< the smallest gap that fits (XLA, TFLite), else on top
  first,  ///< the lowest gap that fits
};

namespace detail {

inline std::int64_t align_up_i64(std::int64_t x, std::int64_t a) noexcept {
  return (x + a - 1) / a * a;
}

/// Where a buffer of `size` goes among the byte ranges `used` (sorted) that conflict with it:
/// the smallest gap that fits, measured from its aligned start as XLA measures a free chunk
/// (`best`), or the lowest (`first`); else on top of them all.
inline std::int64_t gap_offset(const std::vector<std::pair<std::int64_t, std::int64_t>>& used, std::int64_t size,
                               std::int64_t alignment, fit_rule rule) {
  std::int64_t cursor = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
  for (const auto& [lo, hi] : used) {
    const auto start = align_up_i64(cursor, alignment);
    if (lo > start && lo - start >= size) {
      if (rule == fit_rule::first) return start;
      if (lo - start < best_gap) {
        best_gap = lo - start;
        best = start;
      }
    }
    cursor = std::max(cursor, hi);
  }
  return best >= 0 ? best : align_up_i64(cursor, alignment);
}

/// Places buffers in `order` (fixed buffers first, wherever they appear), each into a gap
/// among the already placed conflicting buffers chosen by `rule`. Returns the offsets. The
/// placed conflicting buffers come from a `placed_index`, not from conflict lists: O(log S + k
/// log k) per buffer, k the placed buffers it conflicts with, and O(n log S) memory.
/// Stops (nullopt) when `deadline` passes: a buffer's work is its placed conflicting buffers,
/// and the clock is read every 2^16 of them.
inline std::optional<placement> place_in_order_until(const packing_problem& p, const interval_graph& g,
                                                     const std::vector<int>& order, fit_rule rule,
                                                     const solve_deadline& deadline) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);
  placed_index index(g.first_sections(), g.last_sections(), g.section_count());
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
      if (p.buffers[i].size > 0) index.insert(static_cast<int>(i));
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> used;
  deadline_watch late(deadline, std::size_t{1} << 16);
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    if (late.passed(used.size() + 16)) return std::nullopt;
    if (placed[i]) continue;
    placed[i] = 1;
    const auto& b = p.buffers[i];
    if (b.size <= 0) {
      out.offsets[i] = 0;
      continue;
    }
    used.clear();
    index.for_each_meeting(g.first_section(i), g.last_section(i), [&](int j) {
      const auto ju = static_cast<std::size_t>(j);
      used.emplace_back(out.offsets[ju], out.offsets[ju] + p.buffers[ju].size);
    });
    std::sort(used.begin(), used.end());
    out.offsets[i] = gap_offset(used, b.size, b.alignment, rule);
    index.insert(bi);
  }
  return out;
}

/// `place_in_order_until` without a deadline.
inline placement place_in_order(const packing_problem& p, const interval_graph& g, const std::vector<int>& order,
                                fit_rule rule) {
  return *place_in_order_until(p, g, order, rule, std::nullopt);
}

/// Orders on buffers used by the greedy policies; every key ends with the index (stable).
enum class order_key { size, duration, area, contention, start, conflicts };

inline std::vector<int> sorted_order(const packing_problem& p, const interval_graph& g,
                                     order_key first, order_key second, order_key third = order_key::size) {
  const std::size_t n = p.buffers.size();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::int64_t> contention;
  if (first == order_key::contention || second == order_key::contention || third == order_key::contention) {
    contention.assign(n, 0);
    const section_max fullest(g.all_section_bytes());
    for (std::size_t i = 0; i < n; ++i) {
      contention[i] = fullest.query(static_cast<std::size_t>(g.first_section(i)), static_cast<std::size_t>(g.last_section(i)));
    }
  }
  auto key = [&](order_key k, std::size_t i) -> std::int64_t {
    const auto& b = p.buffers[i];
    switch (k) {
      case order_key::size: return b.size;
      case order_key::duration: return b.upper - b.lower;
      case order_key::area: {
        const auto d = static_cast<long double>(b.upper - b.lower) * static_cast<long double>(b.size);
        return d > 9e18L ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(d);
      }
      case order_key::contention: return contention[i];
      case order_key::start: return -b.lower;  // earlier first
      case order_key::conflicts: return static_cast<std::int64_t>(g.degree(i));
    }
    return 0;
  };
  struct keys3 {
    std::int64_t a, b, c;
  };
  std::vector<keys3> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {key(first, i), key(second, i), key(third, i)};
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& ka = keys[static_cast<std::size_t>(a)];
    const auto& kb = keys[static_cast<std::size_t>(b)];
    if (ka.a != kb.a) return ka.a > kb.a;
    if (ka.b != kb.b) return ka.b > kb.b;
    if (ka.c != kb.c) return ka.c > kb.c;
    return a < b;
  });
  return order;
}

/// The main loop of `skyline_in_order` over a queue of (lowest offset, rank) entries, one
/// entry per unplaced rank (a refresh pops it and pushes at most one back), so the popped
/// offset is always the rank's current estimate. Offsets are counted in granules (every
/// size, alignment and fixed offset is a multiple), the queue's levels. What a refresh reads
/// (section range, alignment mask) sits in one 16-byte record per rank; the size is read only
/// on placement.
///
/// Refreshes go in batches of up to `batch` entries of one level: their skyline queries are
/// independent, so their cache misses overlap (on 10^6 buffers the tree and the records are
/// far beyond the cache). A query made at the batch's start is brought up to date exactly by
/// the tops of the batch's own placements whose sections meet it (a placement adds exactly its
/// top over its sections). Entries of the batch still to come are at the popped level, below
/// any requeued entry, so a refreshed entry that moved up is requeued without looking at the
/// queue, as it would be if they were still in it.
/// A limit on the work of the skyline greedy: requeues (refreshed entries that moved up) are
/// its cost beyond n log n, up to (buffers x live buffers) on training-step shapes.
struct skyline_budget {
  std::size_t requeues = static_cast<std::size_t>(-1);
  solve_deadline deadline;
};

/// The lowest offset at or above `low` (granules) where buffer `b` clears the fixed byte
/// ranges [first, last) it meets; in bytes, as the ranges are, and every bound stays a
/// multiple of the granule.
inline std::int64_t skyline_clear_of_fixed(const interval_buffer& b, const std::pair<std::int64_t, std::int64_t>* first,
                                           const std::pair<std::int64_t, std::int64_t>* last, std::int64_t granule,
                                           std::int64_t low) {
  std::int64_t at = low * granule;
  for (bool moved = true; moved;) {
    moved = false;
    for (auto f = first; f != last; ++f) {
      if (at < f->second && f->first < at + b.size) {
        at = align_up_i64(f->second, b.alignment);
        moved = true;
      }
    }
  }
  return at / granule;
}

/// How a skyline run ended.
enum class skyline_end {
  done,           ///< every buffer placed by the greedy
  out_of_budget,  ///< the requeue budget ran out: the placement is incomplete
  stacked,        ///< the deadline came near: the buffers left were stacked (complete, valid)
};

/// When the requeue budget runs out the placement is left incomplete. When the time left
/// before the deadline would only just cover it, the buffers still queued are placed in queue
/// order, each on top of what is placed over its sections (as `stack_in_order`, O(log S)
/// each), so a cut run still gives a valid placement by the deadline: the lower part packed
/// by the greedy, the rest stacked above.
template <class Queue>
skyline_end skyline_drain(const packing_problem& p, const interval_graph& g, const std::vector<int>& order,
                   const std::vector<int>& rank, const std::vector<std::size_t>& fixed_start,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& fixed_ranges, bool any_fixed,
                   const std::vector<char>& placed_of, std::int64_t granule, placement& out, Queue& queue,
                   const skyline_budget& budget) {
  struct waiting {
    std::uint32_t lo, hi;
    std::int64_t mask;  // alignment in granules, minus 1 (a power of two when above 1)
  };
  const std::size_t n = p.buffers.size();
  std::vector<waiting> by_rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    by_rank[static_cast<std::size_t>(rank[i])] = {static_cast<std::uint32_t>(g.first_section(i)),
                                                  static_cast<std::uint32_t>(g.last_section(i)),
                                                  std::max<std::int64_t>(p.buffers[i].alignment / granule, 1) - 1};
  }
  skyline_tree skyline(g.section_count());
  std::size_t left = 0;  // ranks still queued
  for (std::size_t r = 0; r < n; ++r) {
    if (!placed_of[static_cast<std::size_t>(order[r])]) {
      queue.push(0, static_cast<int>(r));
      ++left;
    }
  }
  constexpr std::size_t batch = 16;
  struct top_over {
    std::uint32_t lo, hi;
    std::int64_t top;
  };
  int ranks[batch];
  std::int64_t highest[batch];
  top_over placed_now[batch];
  auto clear_of_fixed = [&](std::size_t i, std::int64_t low) {
    return skyline_clear_of_fixed(p.buffers[i], fixed_ranges.data() + fixed_start[i],
                                  fixed_ranges.data() + fixed_start[i + 1], granule, low);
  };
  // Stacking the rest costs a query and an update of the tree per rank left, about twice a
  // refresh of the loop (each a query): measured as the loop runs, and started when the time
  // left would not cover it.
  const auto started = solve_clock::now();
  std::size_t requeues = 0, rounds = 0, queries = 0;
  auto must_stack = [&] {
    if (budget.deadline.cancelled()) return true;
    if (!budget.deadline) return false;
    const auto now = solve_clock::now();
    const auto per_query = (now - started) / static_cast<std::int64_t>(std::max<std::size_t>(queries, 1));
    return now + 2 * per_query * static_cast<std::int64_t>(left) >= *budget.deadline;
  };
  while (!queue.empty()) {
    if (requeues > budget.requeues) return skyline_end::out_of_budget;
    if ((++rounds & 1023) == 0 && must_stack()) {
      for (; !queue.empty(); queue.pop()) {  // every queued rank is unplaced, once
        const int r = queue.top().second;
        const auto& w = by_rank[static_cast<std::size_t>(r)];
        const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(r)]);
        auto low = (skyline.highest(w.lo, w.hi) + w.mask) & ~w.mask;
        if (any_fixed) low = clear_of_fixed(i, low);
        out.offsets[i] = low * granule;
        skyline.add(w.lo, w.hi, low + p.buffers[i].size / granule);
      }
      return skyline_end::stacked;
    }
    const auto level = queue.top().first;
    std::size_t count = 0;
    do {
      ranks[count++] = queue.top().second;
      queue.pop();
    } while (count < batch && queue.has_level(level));
    for (std::size_t k = 0; k < count; ++k) {
      const auto& w = by_rank[static_cast<std::size_t>(ranks[k])];
      highest[k] = skyline.highest(w.lo, w.hi);
    }
    queries += count;
    std::size_t placed_count = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const int r = ranks[k];
      const bool more = k + 1 < count;  // batch entries still to come, at `level`
      const auto& w = by_rank[static_cast<std::size_t>(r)];
      auto h = highest[k];
      if (w.lo < w.hi) {
        for (std::size_t m = 0; m < placed_count; ++m) {
          if (placed_now[m].lo < w.hi && w.lo < placed_now[m].hi) h = std::max(h, placed_now[m].top);
        }
      }
      auto low = level;
      const auto under = (h + w.mask) & ~w.mask;
      if (under > low) {
        low = under;
        // Still the lowest entry (the others only underestimate theirs): no need to requeue.
        if (more || (!queue.empty() && queue.before(under, r))) {
          queue.push(under, r);
          ++requeues;
          continue;
        }
      }
      const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(r)]);
      const auto size = p.buffers[i].size / granule;
      if (any_fixed) {
        if (const auto clear = clear_of_fixed(i, low); clear != low) {
          low = clear;
          // Pushed only behind the lowest entry: the queue takes no entry below its top.
          if (more || (!queue.empty() && queue.before(low, r))) {
            queue.push(low, r);
            continue;
          }
        }
      }
      out.offsets[i] = low * granule;
      skyline.add(w.lo, w.hi, low + size);
      --left;
      if (w.lo < w.hi) placed_now[placed_count++] = {w.lo, w.hi, low + size};
    }
  }
  return skyline_end::done;
}

/// The canonical greedy: repeatedly places, at its lowest possible offset (on top of every
/// placed conflicting buffer), the unplaced buffer whose offset would be lowest; ties go to
/// the earlier buffer in `order`. This is the first leaf of the exact search. Placed buffers
/// sit in increasing offset order, so the highest top over a buffer's sections (a
/// `skyline_tree`) is exactly its lowest offset; a buffer's entry in the queue is refreshed
/// lazily when it comes up (lowest offsets only grow). O(n log n) plus the fixed buffers
/// each buffer meets, O(n + S) memory. Nothing when the requeue budget runs out; when the
/// deadline passes, the placement with the buffers left stacked, and `*stacked` set.
inline std::optional<placement> skyline_in_order(const packing_problem& p, const interval_graph& g,
                                                 const std::vector<int>& order, const skyline_budget& budget = {},
                                                 bool* stacked = nullptr) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (std::size_t r = 0; r < order.size(); ++r) rank[static_cast<std::size_t>(order[r])] = static_cast<int>(r);
  std::vector<char> placed(n, 0);
  std::vector<std::size_t> fixed_start;  // per buffer, the fixed buffers it meets (rows)
  std::vector<std::pair<std::int64_t, std::int64_t>> fixed_ranges;
  bool any_fixed = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
      any_fixed = true;
    }
  }
  if (any_fixed) {
    placed_index fixed(g.first_sections(), g.last_sections(), g.section_count());
    for (std::size_t i = 0; i < n; ++i) {
      if (placed[i] && p.buffers[i].size > 0) fixed.insert(static_cast<int>(i));
    }
    fixed_start.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!placed[i]) {
        fixed.for_each_meeting(g.first_section(i), g.last_section(i), [&](int j) {
          const auto ju = static_cast<std::size_t>(j);
          fixed_ranges.emplace_back(out.offsets[ju], out.offsets[ju] + p.buffers[ju].size);
        });
      }
      fixed_start[i + 1] = fixed_ranges.size();
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!placed[i] && p.buffers[i].size <= 0) placed[i] = 1;  // offset 0, conflicting with nothing
  }
  // Queue entries are (lowest offset in granules, rank), taken smallest first: a
  // `level_queue` when (largest possible offset / granule) << bit_width(n) fits 63 bits,
  // otherwise a binary heap of pairs.
  const auto granule = packing_granule(p);
  long double reach = 0;
  for (const auto& b : p.buffers) {
    reach += static_cast<long double>(b.size) + static_cast<long double>(b.alignment);
    if (b.fixed_offset) reach += static_cast<long double>(*b.fixed_offset);
  }
  skyline_end end = skyline_end::done;
  const auto rank_bits = static_cast<unsigned>(std::bit_width(std::max<std::size_t>(n, 1)));
  const auto levels = reach / static_cast<long double>(granule) + 2;
  if (levels * static_cast<long double>(std::uint64_t{1} << rank_bits) < 9.0e18L) {
    struct granule_queue {
      level_queue heap;
      void push(std::int64_t low, int r) { heap.push(static_cast<std::uint64_t>(low), static_cast<std::size_t>(r)); }
      [[nodiscard]] bool empty() const noexcept { return heap.empty(); }
      [[nodiscard]] std::pair<std::int64_t, int> top() {
        const auto [l, r] = heap.top();
        return {static_cast<std::int64_t>(l), static_cast<int>(r)};
      }
      /// Whether the lowest entry comes before (low, r).
      [[nodiscard]] bool before(std::int64_t low, int r) {
        const auto [l, tr] = heap.top();
        const auto at = static_cast<std::uint64_t>(low);
        return l < at || (l == at && tr < static_cast<std::size_t>(r));
      }
      [[nodiscard]] bool has_level(std::int64_t low) const noexcept {
        return heap.has_level(static_cast<std::uint64_t>(low));
      }
      void pop() { heap.pop(); }
    } queue{level_queue(n)};
    end = skyline_drain(p, g, order, rank, fixed_start, fixed_ranges, any_fixed, placed, granule, out, queue, budget);
  } else {
    struct pair_queue {
      using entry = std::pair<std::int64_t, int>;
      std::priority_queue<entry, std::vector<entry>, std::greater<>> heap;
      void push(std::int64_t low, int r) { heap.emplace(low, r); }
      [[nodiscard]] bool empty() const noexcept { return heap.empty(); }
      [[nodiscard]] entry top() const { return heap.top(); }
      [[nodiscard]] bool before(std::int64_t low, int r) const { return heap.top() < entry{low, r}; }
      [[nodiscard]] bool has_level(std::int64_t low) const { return !heap.empty() && heap.top().first == low; }
      void pop() { heap.pop(); }
    } queue;
    end = skyline_drain(p, g, order, rank, fixed_start, fixed_ranges, any_fixed, placed, granule, out, queue, budget);
  }
  if (end == skyline_end::out_of_budget) return std::nullopt;
  if (stacked != nullptr) *stacked = end == skyline_end::stacked;
  return out;
}

/// An allocator run over time: buffers in order of their first step (longer, then larger
/// first), each freed at its end; a new one goes into the smallest free gap below the top that
/// holds it (best fit), else on top. The gaps are kept by offset (to merge neighbours when a
/// buffer is freed) and by size (to find the best one), so a buffer costs O(log n) whatever
/// the live set. A placed buffer never conflicts with a later one: when the later one comes,
/// the earlier one, if still live, holds its bytes. Fixed offsets are not taken: nullopt.
inline std::optional<placement> sweep_in_time(const packing_problem& p) {
  const std::size_t n = p.buffers.size();
  for (const auto& b : p.buffers) {
    if (b.fixed_offset) return std::nullopt;
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const auto& a = p.buffers[static_cast<std::size_t>(x)];
    const auto& b = p.buffers[static_cast<std::size_t>(y)];
    if (a.lower != b.lower) return a.lower < b.lower;
    if (a.upper - a.lower != b.upper - b.lower) return a.upper - a.lower > b.upper - b.lower;
    if (a.size != b.size) return a.size > b.size;
    return x < y;
  });
  placement out;
  out.offsets.assign(n, 0);
  std::map<std::int64_t, std::int64_t> gap_end;         // start -> end, every gap below `top`
  std::set<std::pair<std::int64_t, std::int64_t>> gaps;  // (length, start)
  std::int64_t top = 0;
  auto insert_gap = [&](std::int64_t lo, std::int64_t hi) {
    if (lo >= hi) return;
    gap_end.emplace(lo, hi);
    gaps.emplace(hi - lo, lo);
  };
  auto erase_gap = [&](std::map<std::int64_t, std::int64_t>::iterator it) {
    gaps.erase({it->second - it->first, it->first});
    return gap_end.erase(it);
  };
  auto release = [&](std::int64_t lo, std::int64_t hi) {
    auto next = gap_end.lower_bound(hi);
    if (next != gap_end.end() && next->first == hi) {
      hi = next->second;
      next = erase_gap(next);
    }
    if (next != gap_end.begin()) {
      const auto prev = std::prev(next);
      if (prev->second == lo) {
        lo = prev->first;
        erase_gap(prev);
      }
    }
    if (hi >= top) {
      top = lo;  // the free space now reaches the top
    } else {
      insert_gap(lo, hi);
    }
  };
  using ending = std::pair<std::int64_t, int>;  // (upper, buffer)
  std::priority_queue<ending, std::vector<ending>, std::greater<>> live;
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    const auto& b = p.buffers[i];
    if (b.size <= 0) continue;
    while (!live.empty() && live.top().first <= b.lower) {
      const auto j = static_cast<std::size_t>(live.top().second);
      live.pop();
      release(out.offsets[j], out.offsets[j] + p.buffers[j].size);
    }
    // The smallest gap that holds the buffer at an aligned start: a few candidates of length
    // >= size, else any of length >= size + alignment - 1 (always holds it).
    std::int64_t at = -1;
    auto take = [&](std::set<std::pair<std::int64_t, std::int64_t>>::iterator it) {
      const auto lo = it->second, hi = lo + it->first;
      const auto start = align_up_i64(lo, b.alignment);
      if (start + b.size > hi) return false;
      erase_gap(gap_end.find(lo));
      insert_gap(lo, start);
      insert_gap(start + b.size, hi);
      at = start;
      return true;
    };
    auto it = gaps.lower_bound({b.size, std::numeric_limits<std::int64_t>::min()});
    for (int tries = 0; tries < 4 && it != gaps.end() && at < 0; ++tries) {
      if (!take(it++)) continue;
    }
    if (at < 0) {
      it = gaps.lower_bound({b.size + b.alignment - 1, std::numeric_limits<std::int64_t>::min()});
      if (it != gaps.end()) take(it);
    }
    if (at < 0) {
      at = align_up_i64(top, b.alignment);
      insert_gap(top, at);
      top = at + b.size;
    }
    out.offsets[i] = at;
    live.emplace(b.upper, bi);
  }
  return out;
}

/// Stacking in a fixed order: each buffer, in `order`, on top of every placed buffer it
/// conflicts with (the highest top over its sections, aligned); fixed buffers first. No gap is
/// ever reused and no choice revisited, so it is O(n log S) whatever the live set: the fast
/// placement every solver can fall back on. In order of decreasing live range it stacks nested
/// lifetimes (a training step's activations, held from the forward to the mirrored backward
/// op) exactly as they nest.
inline placement stack_in_order(const packing_problem& p, const interval_graph& g, const std::vector<int>& order) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  skyline_tree tops(g.section_count());
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      tops.add(g.first_section(i), g.last_section(i), out.offsets[i] + p.buffers[i].size);
    }
  }
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    const auto& b = p.buffers[i];
    if (b.fixed_offset || b.size <= 0) continue;
    const auto lo = static_cast<std::size_t>(g.first_section(i)), hi = static_cast<std::size_t>(g.last_section(i));
    out.offsets[i] = align_up_i64(tops.highest(lo, hi), b.alignment);
    tops.add(lo, hi, out.offsets[i] + b.size);
  }
  return out;
}

}  // namespace detail

/// XLA's `GlobalDecreasingSizeBestFitHeap` order.
enum class xla_order {
  spatial,       ///< size descending, then live range descending, then index (kSpatial)
  temporal,      ///< live range descending, then size descending, then index (kTemporal)
  best_of_both,  ///< both, keeping the smaller peak; spatial wins ties (ChooseBestHeapAlgorithm)
};

/// XLA's best fit, the reference baseline: buffers in decreasing size (or live range), each
/// into the smallest free gap that fits among placed conflicting buffers, else on top. XLA's
/// own algorithm costs O(k log k) per buffer, k the placed buffers it conflicts with; by a
/// deadline it returns the spatial order's placement if that one is complete.
struct xla_best_fit {
  xla_order order = xla_order::best_of_both;

  [[nodiscard]] std::string_view name() const noexcept { return "xla-best-fit"; }
  [[nodiscard]] timed_placement place_by(const packing_problem& p, const interval_graph& g,
                                         const solve_deadline& deadline) const {
    using detail::order_key;
    std::optional<placement> spatial;
    if (order != xla_order::temporal) {
      spatial = detail::place_in_order_until(p, g, detail::sorted_order(p, g, order_key::size, order_key::duration),
                                             fit_rule::best, deadline);
      if (order == xla_order::spatial || !spatial) return timed_placement::all_or_nothing(std::move(spatial));
    }
    auto temporal = detail::place_in_order_until(
        p, g, detail::sorted_order(p, g, order_key::duration, order_key::size), fit_rule::best, deadline);
    if (order == xla_order::temporal) return timed_placement::all_or_nothing(std::move(temporal));
    if (!temporal) return {std::move(spatial), false};
    return {peak_of(p, *temporal) < peak_of(p, *spatial) ? std::move(temporal) : std::move(spatial), true};
  }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return *place_by(p, g, std::nullopt).solution;
  }
};
static_assert(deadline_heuristic<xla_best_fit>);

/// First fit: size descending, each buffer into the lowest gap that fits.
struct first_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "first-fit"; }
  [[nodiscard]] timed_placement place_by(const packing_problem& p, const interval_graph& g,
                                         const solve_deadline& deadline) const {
    return timed_placement::all_or_nothing(detail::place_in_order_until(
        p, g, detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration), fit_rule::first, deadline));
  }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return *place_by(p, g, std::nullopt).solution;
  }
};
static_assert(deadline_heuristic<first_fit>);

/// The canonical skyline greedy (size descending breaks ties): always place next the buffer
/// that can sit lowest, directly on top of the conflicting buffers below it.
struct skyline_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "skyline"; }
  [[nodiscard]] timed_placement place_by(const packing_problem& p, const interval_graph& g,
                                         const solve_deadline& deadline) const {
    detail::skyline_budget budget;
    budget.deadline = deadline;
    bool stacked = false;
    auto s = detail::skyline_in_order(
        p, g, detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration), budget, &stacked);
    return {std::move(s), !stacked};
  }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return *place_by(p, g, std::nullopt).solution;
  }
};
static_assert(deadline_heuristic<skyline_fit>);

/// Stacking in decreasing live range (then size): O(n log n), never revisits (`stack_in_order`).
struct stack_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "stack"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return detail::stack_in_order(p, g, detail::sorted_order(p, g, detail::order_key::duration, detail::order_key::size));
  }
};
static_assert(packing_heuristic<stack_fit>);

/// An allocator run over time with best fit (`sweep_in_time`); stacking where offsets are
/// fixed. O(n log n) on any input.
struct sweep_fit {
  [[nodiscard]] std::string_view name() const noexcept { return "sweep"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    if (auto s = detail::sweep_in_time(p)) return std::move(*s);
    return stack_fit{}.place(p, g);
  }
};
static_assert(packing_heuristic<sweep_fit>);

/// The default fast heuristic: the allocator sweep (`sweep_fit`, O(n log n) on any input,
/// so a placement is always in hand), XLA's best fit (so never worse than XLA while it runs),
/// then the skyline greedy under six buffer rankings (size, contention = the fullest section a
/// buffer lives in, area, live range, conflicts, in several combinations); keeps the smallest
/// peak, earliest on ties (XLA's best fit first, the sweep last).
///  - XLA's best fit looks at every placed conflicting buffer (O(E log) for E conflicting
///    pairs), so it runs only up to `xla_edge_limit` pairs; compiler traces far above it
///    (10^7..10^8 pairs) are within 1 % of the lower bound with the skylines alone.
///  - The skyline greedy costs up to (buffers x live buffers) requeues where long lifetimes
///    nest (training steps: 2,700 per buffer at 10^5 buffers). When the sweep is already within
///    1.5 % of the lower bound (alignment counted), a skyline run is abandoned past
///    `near_requeues` requeues per buffer and at least `near_requeue_floor` in all (the real
///    traces that close need at most 169 per buffer, MiniMalloc's at most 23, a 10^4-buffer
///    training step 2.9 million in all); otherwise it runs to the end.
///  - Above `small_limit` buffers only the first `large_runs` rankings run.
///  - By a deadline (`place_by`) XLA's best fit is abandoned when it passes, and a skyline
///    run stacks the buffers it has left (kept if better); a further run starts only if the
///    time left covers the longest run so far. The sweep always completes, so there is always
///    a placement.
struct portfolio_fit {
  std::size_t small_limit = 20000;
  std::size_t large_runs = 1;
  std::size_t xla_edge_limit = std::size_t{1} << 22;
  std::size_t near_requeues = 256;
  std::size_t near_requeue_floor = std::size_t{1} << 24;  // small problems run to the end

  [[nodiscard]] std::string_view name() const noexcept { return "portfolio"; }
  [[nodiscard]] placement place(const packing_problem& p, const interval_graph& g) const {
    return *place_by(p, g, std::nullopt).solution;
  }
  [[nodiscard]] timed_placement place_by(const packing_problem& p, const interval_graph& g,
                                         const solve_deadline& deadline) const {
    using detail::order_key;
    using clock = solve_clock;
    bool cut = false;  // the deadline ended a run or kept one from starting
    clock::duration longest{0};
    auto timed = [&](auto&& run) {
      const auto t0 = clock::now();
      auto s = run();
      longest = std::max(longest, clock::now() - t0);
      return s;
    };
    auto no_time_for_another = [&] {
      if (deadline.cancelled() || (deadline && clock::now() + longest >= *deadline)) cut = true;
      return cut;
    };
    struct ranking {
      order_key a, b, c;
    };
    const ranking rankings[] = {
        {order_key::contention, order_key::area, order_key::size},
        {order_key::size, order_key::duration, order_key::size},
        {order_key::duration, order_key::size, order_key::size},
        {order_key::area, order_key::size, order_key::size},
        {order_key::conflicts, order_key::size, order_key::size},
        {order_key::contention, order_key::duration, order_key::area},
    };
    placement best = timed([&] { return sweep_fit{}.place(p, g); });
    std::int64_t best_peak = peak_of(p, best);
    std::size_t best_index = std::size(rankings);  // the sweep: after every ranking on ties
    bool from_xla = false;
    if (g.edge_count() <= xla_edge_limit && !no_time_for_another()) {
      auto x = timed([&] { return xla_best_fit{}.place_by(p, g, deadline); });
      cut = cut || !x.complete;
      const auto peak = x.solution ? peak_of(p, *x.solution) : best_peak + 1;
      if (peak <= best_peak) {
        best = std::move(*x.solution);
        best_peak = peak;
        best_index = 0;
        from_xla = true;
      }
    }
    const auto bound = temp_lower_bound(p);  // alignment counted: 4-byte temporaries at 64
    const bool small = p.buffers.size() <= small_limit;
    // Nothing can beat the bound; above `small_limit` buffers the other runs are not worth
    // their time then (below, they run as before, and may pick another optimal placement).
    if (!small && best_peak <= bound) return {std::move(best), !cut};
    detail::skyline_budget budget;
    budget.deadline = deadline;
    if (static_cast<long double>(best_peak) <= 1.015L * static_cast<long double>(bound)) {
      budget.requeues = std::max(near_requeues * p.buffers.size(), near_requeue_floor);
    }
    // Up to `small_limit` buffers area/size runs first: it is within 1 % of the bound on every
    // real trace of that size, so it is the one kept when a deadline cuts the list short.
    // Ties still go to the earlier ranking in the list above, so a complete run gives the
    // same placement in any run order (XLA's best fit counts as earliest). Above, the
    // contention ranking alone (better on 10^6-buffer trace-shaped instances: 1.014 of the
    // bound against 1.072).
    const std::size_t small_order[] = {3, 0, 1, 2, 4, 5};
    const std::size_t large_order[] = {0, 1, 2, 3, 4, 5};
    const std::size_t* run_order = small ? small_order : large_order;
    const std::size_t runs = small ? std::size(rankings) : std::min(large_runs, std::size(rankings));
    for (std::size_t q = 0; q < std::max<std::size_t>(runs, 1); ++q) {
      if (no_time_for_another()) break;
      const auto k = run_order[q];
      bool stacked = false;  // the deadline passed: the rest of the run was stacked
      auto s = timed([&] {
        return detail::skyline_in_order(p, g, detail::sorted_order(p, g, rankings[k].a, rankings[k].b, rankings[k].c),
                                        budget, &stacked);
      });
      if (!s) break;  // out of requeues: the next ranking would be too
      const auto peak = peak_of(p, *s);
      if (peak < best_peak || (peak == best_peak && !from_xla && k < best_index)) {
        best_peak = peak;
        best = std::move(*s);
        best_index = k;
        from_xla = false;
      }
      if (stacked) {
        cut = true;
        break;
      }
    }
    return {std::move(best), !cut};
  }
};
static_assert(deadline_heuristic<portfolio_fit>);

/// Validates `p`, builds its interval graph and places it with `h`.
template <packing_heuristic H = portfolio_fit>
[[nodiscard]] result<placement> place(const packing_problem& p, const H& h = {}) {
  if (auto ok = validate_problem(p); !ok) return ok.error();
  const interval_graph g(p);
  return h.place(p, g);
}

}  // namespace xlamem
