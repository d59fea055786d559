// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exact and anytime packing by depth-first search over canonical placements.
///
/// A placement is canonical when buffers, taken in order of (offset, branching rank), each sit
/// as low as possible: directly on top of the conflicting buffers placed before them. Every
/// placement can be made canonical without raising its peak, so searching canonical ones is
/// complete. The search (after MiniMalloc, Moffitt, ASPLOS 2023, with our own data structures):
///  - branches on which unplaced buffer comes next, in increasing (lowest offset, rank) order,
///    only above the previous one (canonical order) and only below the lowest top any
///    unplaced buffer could reach (dominance: otherwise that buffer would fit under it);
///  - prunes with section inference: in every section of the compressed timeline, the bytes
///    still to place must fit between the section's floor (the top of what is placed there,
///    and the lowest offset any unplaced buffer there can take) and the capacity;
///  - decomposes: once no unplaced buffer crosses a section boundary, the two sides are solved
///    independently, and sides proven infeasible are remembered (no-good cache);
///  - restarts round-robin over several branching orders with doubling node limits, WAT
///    (live range first) with a quarter of the others' budget (`wat_budget_divisor`).
/// `minimize_peak` is anytime: it starts from `portfolio_fit`, tightens the capacity while the
/// decision search succeeds, proves lower bounds when a decision search is exhausted, and
/// reports whether the peak is optimal. Results are deterministic for an input and a seed
/// unless the time limit cuts a search short.
///
/// Cost: O(n + sections) memory; per search node O(unplaced in the part + sections + degree).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/solve_status.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/interval_index.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

// A decision search reports `feasible` (a placement within the capacity), `infeasible`
// (proven: none fits) or `no_answer` (the time or node limit ran out first): the status words
// of every solver (solve_status.hpp).

/// The exact search keeps explicit conflict lists; above this many conflicting pairs (about
/// 260 MB of lists) it is not attempted and the heuristics' answer stands (`minimize_peak`)
/// or the decision reports `no_answer` (`pack_within`). Compiler traces far above it (10^8
/// pairs) sit at or within a fraction of a percent of the lower bound with the heuristics.
inline constexpr std::size_t search_edge_limit = std::size_t{1} << 25;

/// Options of a decision search (`pack_within`).
struct search_options {
  std::int64_t capacity = 0;         ///< every buffer must end at or below this
  double time_limit = 10.0;  ///< wall-clock seconds (0: at once; infinity: none)
  solve_deadline deadline;         ///< when set, the deadline instead of the time limit
  std::uint64_t node_limit = 0;      ///< total node limit (0: none)
  std::uint64_t seed = 0;            ///< varies branching orders after the first three
};

/// Result of a decision search.
struct search_result {
  solve_status status = solve_status::no_answer;
  placement solution;         ///< valid when status is feasible
  std::uint64_t nodes = 0;    ///< search nodes visited
  double seconds = 0.0;
  double seconds_to_first_feasible = -1;  ///< when `solution` was found (the only one); -1: none
  double seconds_to_best = -1;            ///< the same as `seconds_to_first_feasible`
};

/// Options of `minimize_peak`.
struct minimize_options {
  double time_limit = 10.0;  ///< wall-clock seconds for the whole minimisation (0: at once; infinity: none)
  solve_deadline deadline;         ///< when set, the deadline instead of the time limit
  std::uint64_t seed = 0;
  std::int64_t capacity = -1;        ///< when >= 0, fail (infeasible) if nothing fits under it
};

/// Result of `minimize_peak`.
struct minimize_result {
  /// optimal, feasible or time_limit with a placement (solve_status.hpp); infeasible: nothing
  /// fits `capacity`; no_answer: none found under it.
  solve_status status = solve_status::no_answer;
  placement solution;
  std::int64_t peak = 0;         ///< peak of `solution`
  std::int64_t lower_bound = 0;  ///< proven lower bound on the optimal peak
  bool optimal = false;          ///< peak == lower_bound
  bool stopped_by_time_limit = false;  ///< not optimal, and the time limit ended the work
  bool search_skipped = false;   ///< not optimal, and too many conflicts for the exact search
  std::uint64_t nodes = 0;
  double seconds = 0.0;
  double seconds_to_first_feasible = -1;  ///< the first placement within the capacity; -1: none
  double seconds_to_best = -1;            ///< when `solution` was found; -1: none
};

namespace detail {

/// Branching heuristics: which keys rank the buffers of a part (largest first), after
/// MiniMalloc's preorderings. W = live range, A = area, T = the fullest section the buffer
/// lives in, counting only bytes still to place (recomputed for every part).
enum class branching { twa, taw, wat };

/// The search engine for one problem. `run` decides one capacity with one branching
/// heuristic under a node budget; failed states are cached across runs at the same capacity.
class canonical_search {
 public:
  using clock = std::chrono::steady_clock;

  /// `c`: the conflict lists of `p` (`build_conflicts` over g's sections).
  /// `cancel`: a flag that, once set, stops every run as a passed deadline does (null: none).
  canonical_search(const packing_problem& p, const interval_graph& g, const conflict_lists& c,
                   const cancellation_flag* cancel = nullptr)
      : p_(p), cancel_(cancel) {
    const std::size_t n = p.buffers.size();
    std::vector<int> internal(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& b = p.buffers[i];
      if (b.size > 0 && !b.fixed_offset) {
        internal[i] = static_cast<int>(movable_.size());
        movable_.push_back(static_cast<int>(i));
      }
    }
    sections_ = g.section_count();
    const std::size_t m = movable_.size();
    size_.assign(m, 0);
    align_.assign(m, 1);
    first_.assign(m, 0);
    last_.assign(m, 0);
    width_.assign(m, 0);
    area_.assign(m, 0);
    adj_start_.assign(m + 1, 0);
    obstacle_start_.assign(m + 1, 0);
    adj_.reserve(c.adjacent.size());  // at most all of them: no copy while growing
    for (std::size_t k = 0; k < m; ++k) {
      const auto i = static_cast<std::size_t>(movable_[k]);
      const auto& b = p.buffers[i];
      size_[k] = b.size;
      align_[k] = b.alignment;
      first_[k] = g.first_section(i);
      last_[k] = g.last_section(i);
      width_[k] = b.upper - b.lower;
      const long double area = static_cast<long double>(b.size) * static_cast<long double>(width_[k]);
      area_[k] = area > 9e18L ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(area);
      for (auto a = c.start[i]; a < c.start[i + 1]; ++a) {
        const auto j = static_cast<std::size_t>(c.adjacent[a]);
        if (internal[j] >= 0) {
          adj_.push_back(internal[j]);
        } else if (p.buffers[j].fixed_offset && p.buffers[j].size > 0) {
          obstacles_.emplace_back(*p.buffers[j].fixed_offset, *p.buffers[j].fixed_offset + p.buffers[j].size);
        }
      }
      adj_start_[k + 1] = adj_.size();
      obstacle_start_[k + 1] = obstacles_.size();
    }
    rank_.assign(m, 0);
    noise_.assign(m, 0);
    granule_ = packing_granule(p);
    // A power-of-two granule (the common case) turns the per-buffer division into a shift.
    granule_shift_ = -1;
    if ((granule_ & (granule_ - 1)) == 0) {
      granule_shift_ = 0;
      while ((std::int64_t{1} << granule_shift_) < granule_) ++granule_shift_;
    }
    // The failure cache: 2^20 entries (32 MiB) for the hard instances, less for small ones.
    std::size_t entries = std::size_t{1} << 12;
    while (entries < (std::size_t{1} << 20) && entries < m * 4096) entries <<= 1;
    table_.assign(entries, cache_entry{});
    table_mask_ = table_.size() - 1;
    // The clock is read every `clock_mask_ + 1` nodes. A node costs O(unplaced + sections +
    // degree), so large problems read it at every node: pangu_2.6B (18,692 buffers, 14,955
    // sections) ran 0.15 to 0.6 s past its limit when reads were 256 nodes apart. Small ones
    // (the MiniMalloc suite: 154 to 454 buffers) every 32 to 128 nodes.
    std::uint64_t every = 256;
    while (every > 1 && every * (m + sections_) > (std::uint64_t{1} << 15)) every >>= 1;
    clock_mask_ = every - 1;
  }

  /// Runs the search at `capacity`. Returns feasible / infeasible / no_answer (node budget or
  /// deadline). On success `offsets()` holds the placement. `seed` != 0 perturbs the ranks.
  solve_status run(std::int64_t capacity, branching heuristic, std::uint64_t seed, std::uint64_t node_budget,
                    clock::time_point deadline, bool has_deadline) {
    capacity_ = capacity;
    heuristic_ = heuristic;
    node_budget_ = node_budget;
    nodes_ = 0;
    deadline_ = deadline;
    has_deadline_ = has_deadline;
    timed_out_ = false;
    if (seed != 0) {
      std::mt19937_64 rng(seed);
      for (auto& x : noise_) x = static_cast<std::int64_t>(rng() % 1000);
    } else {
      std::fill(noise_.begin(), noise_.end(), 0);
    }
    salt_ = zobrist(static_cast<int>(heuristic) + 17, capacity) ^ (seed * 0x9e3779b97f4a7c15ULL);
    const std::size_t m = movable_.size();
    offset_.assign(m, -1);
    solution_.assign(m, -1);
    low_.assign(m, 0);
    scratch_.assign(sections_, 0);
    scratch32_.assign(sections_, 0);
    // Offsets are multiples of the granule; in granules they fit 32 bits for most problems.
    narrow_ = capacity / granule_ < std::numeric_limits<std::int32_t>::max() - 1;
    total_.assign(sections_, 0);
    cuts_.assign(sections_ > 0 ? sections_ - 1 : 0, 0);
    for (std::size_t k = 0; k < m; ++k) {
      for (int s = first_[k]; s < last_[k]; ++s) total_[static_cast<std::size_t>(s)] += size_[k];
      for (int s = first_[k]; s + 1 < last_[k]; ++s) ++cuts_[static_cast<std::size_t>(s)];
      if (size_[k] > capacity) return solve_status::infeasible;
    }
    for (const auto& b : p_.buffers) {
      if (b.fixed_offset && b.size > 0 && *b.fixed_offset + b.size > capacity) return solve_status::infeasible;
    }
    for (std::size_t s = 0; s < sections_; ++s) {
      if (total_[s] > capacity) return solve_status::infeasible;
    }
    low_undo_.clear();
    cand_.clear();
    state_hash_ = 0;
    for (std::size_t k = 0; k < m; ++k) state_hash_ ^= zobrist(static_cast<int>(k), 0);
    std::vector<int> all(m);
    std::iota(all.begin(), all.end(), 0);
    const auto r = solve_parts(0, static_cast<int>(sections_), all, std::numeric_limits<std::int64_t>::min());
    return r == outcome::found       ? solve_status::feasible
           : r == outcome::not_found ? solve_status::infeasible
                                     : solve_status::no_answer;
  }

  /// The placement found by the last successful run, in problem indexing.
  [[nodiscard]] placement offsets() const {
    placement out;
    out.offsets.assign(p_.buffers.size(), 0);
    for (std::size_t i = 0; i < p_.buffers.size(); ++i) {
      if (p_.buffers[i].fixed_offset) out.offsets[i] = *p_.buffers[i].fixed_offset;
    }
    for (std::size_t k = 0; k < movable_.size(); ++k) out.offsets[static_cast<std::size_t>(movable_[k])] = solution_[k];
    return out;
  }

  [[nodiscard]] std::uint64_t nodes() const noexcept { return nodes_; }
  [[nodiscard]] bool timed_out() const noexcept { return timed_out_; }
  [[nodiscard]] std::size_t movable_count() const noexcept { return movable_.size(); }
  /// Forgets cached failures (they stay valid for the same capacity and ranks otherwise).
  void clear_cache() { std::fill(table_.begin(), table_.end(), cache_entry{}); }

 private:
  enum class outcome { found, not_found, aborted };

  struct candidate {
    std::int64_t offset;
    int rank;
    int k;
  };

  [[nodiscard]] static std::uint64_t zobrist(int k, std::int64_t low) noexcept {
    std::uint64_t h = (static_cast<std::uint64_t>(k) + 1) * 0x9e3779b97f4a7c15ULL ^
                      static_cast<std::uint64_t>(low) * 0xc2b2ae3d27d4eb4fULL;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 32;
    return h;
  }

  [[nodiscard]] std::int64_t effective_low(int k) const noexcept {
    const auto ku = static_cast<std::size_t>(k);
    std::int64_t at = low_[ku];
    const auto b = obstacle_start_[ku];
    const auto e = obstacle_start_[ku + 1];
    if (b == e) return at;
    for (bool moved = true; moved;) {
      moved = false;
      for (auto o = b; o < e; ++o) {
        if (at < obstacles_[o].second && obstacles_[o].first < at + size_[ku]) {
          at = align_up_i64(obstacles_[o].second, align_[ku]);
          moved = true;
        }
      }
    }
    return at;
  }

  // Ranks the members of a new part (0 = branch first) by the heuristic's keys, using the
  // bytes still to place per section; returns a salt identifying the ranking.
  std::uint64_t rank_part(std::vector<int>& sub) {
    struct keyed {
      std::int64_t a, b, c;
      int k;
    };
    std::vector<keyed> keys;
    keys.reserve(sub.size());
    for (const int k : sub) {
      const auto ku = static_cast<std::size_t>(k);
      std::int64_t t = 0;
      for (int s = first_[ku]; s < last_[ku]; ++s) t = std::max(t, total_[static_cast<std::size_t>(s)]);
      t += noise_[ku] * (t / 4096) / 1000;  // seeded variants: jitter of up to 1/4096
      switch (heuristic_) {
        case branching::wat: keys.push_back({width_[ku], area_[ku], t, k}); break;
        case branching::taw: keys.push_back({t, area_[ku], width_[ku], k}); break;
        case branching::twa: keys.push_back({t, width_[ku], area_[ku], k}); break;
      }
    }
    std::sort(keys.begin(), keys.end(), [](const keyed& x, const keyed& y) {
      if (x.a != y.a) return x.a > y.a;
      if (x.b != y.b) return x.b > y.b;
      if (x.c != y.c) return x.c > y.c;
      return x.k < y.k;
    });
    std::uint64_t salt = salt_;
    for (std::size_t r = 0; r < keys.size(); ++r) {
      rank_[static_cast<std::size_t>(keys[r].k)] = static_cast<int>(r);
      sub[r] = keys[r].k;
      salt = salt * 0x100000001b3ULL ^ static_cast<std::uint64_t>(keys[r].k);
    }
    return salt;
  }

  // Splits the section range [lo, hi) at boundaries no unplaced buffer crosses and solves
  // each side on its own, with its own ranking.
  // `floor_offset`: every remaining buffer goes at or above it (canonical order of the part
  // being split), which the sides may assume too.
  outcome solve_parts(int lo, int hi, const std::vector<int>& members, std::int64_t floor_offset) {
    std::vector<int> cut_points{lo};
    for (int s = lo; s + 1 < hi; ++s) {
      if (cuts_[static_cast<std::size_t>(s)] == 0) cut_points.push_back(s + 1);
    }
    cut_points.push_back(hi);
    std::vector<int> sub, saved;
    for (std::size_t c = 1; c < cut_points.size(); ++c) {
      const int a = cut_points[c - 1], b = cut_points[c];
      sub.clear();
      for (const int k : members) {
        const auto ku = static_cast<std::size_t>(k);
        if (offset_[ku] >= 0) continue;
        if (first_[ku] < b && a < last_[ku]) sub.push_back(k);
      }
      if (sub.empty()) continue;
      saved.resize(sub.size());
      for (std::size_t r = 0; r < sub.size(); ++r) saved[r] = rank_[static_cast<std::size_t>(sub[r])];
      const auto before = sub;
      const auto salt = rank_part(sub);
      const auto r = search(a, b, sub, floor_offset, -1, salt);
      for (std::size_t q = 0; q < before.size(); ++q) rank_[static_cast<std::size_t>(before[q])] = saved[q];
      if (r != outcome::found) return r;
    }
    return outcome::found;
  }

  bool out_of_budget() {
    ++nodes_;
    if (node_budget_ != 0 && nodes_ >= node_budget_) return true;
    if ((nodes_ & clock_mask_) == 0 && (cancel_requested(cancel_) || (has_deadline_ && clock::now() >= deadline_))) {
      timed_out_ = true;
    }
    return timed_out_;
  }

  outcome search(int lo, int hi, const std::vector<int>& members, std::int64_t last_offset, int last_rank,
                 std::uint64_t salt) {
    if (out_of_budget()) return outcome::aborted;
    // Failed states are cached with the lowest (offset, rank) bound they failed under: the
    // same buffers with the same lowest offsets fail again under any higher bound.
    std::uint64_t key = state_hash_ ^ zobrist(lo * 65599 + hi, 0);
    const auto ranking = static_cast<std::uint32_t>(salt ^ (salt >> 32));
    key |= 1;  // 0 marks an empty slot
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(&table_[key & table_mask_]);  // looked up below, after the scan
#endif
    // A failure holds for every lower capacity and every higher canonical bound; a bound at
    // the same offset compares ranks only within the same ranking (rank -1: any ranking).
    auto covers = [&](const cache_entry& e) {
      return e.key == key && capacity_ <= e.capacity &&
             (last_offset > e.offset ||
              (last_offset == e.offset && (e.rank < 0 || (e.ranking == ranking && last_rank >= e.rank))));
    };
    auto fail = [&] {
      auto& e = table_[key & table_mask_];
      if (!covers(e)) e = cache_entry{key, last_offset, capacity_, ranking, last_rank};
      return outcome::not_found;
    };
    const std::size_t base = cand_.size();
    std::int64_t min_height = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_low = std::numeric_limits<std::int64_t>::min();
    bool any = false;
    for (const int k : members) {
      const auto ku = static_cast<std::size_t>(k);
      if (offset_[ku] >= 0) continue;
      any = true;
      const auto o = effective_low(k);
      const auto top = o + size_[ku];
      if (top > capacity_) {
        cand_.resize(base);
        return fail();
      }
      min_height = std::min(min_height, top);
      const int rk = rank_[ku];
      if (o > last_offset || (o == last_offset && rk > last_rank)) cand_.push_back({o, rk, k});
      max_low = std::max(max_low, o);
    }
    if (!any) return outcome::found;
    if (covers(table_[key & table_mask_])) {
      cand_.resize(base);
      return outcome::not_found;
    }
    if (!sections_fit(lo, hi, members, last_offset, max_low)) {
      cand_.resize(base);
      return fail();
    }
    // Dominance: a buffer placed at or above the lowest reachable top leaves room for that
    // buffer underneath, so a canonical placement would have placed it first.
    std::size_t keep = base;
    for (std::size_t c = base; c < cand_.size(); ++c) {
      if (cand_[c].offset < min_height) cand_[keep++] = cand_[c];
    }
    cand_.resize(keep);
    std::sort(cand_.begin() + static_cast<std::ptrdiff_t>(base), cand_.end(), [](const candidate& x, const candidate& y) {
      return x.offset != y.offset ? x.offset < y.offset : x.rank < y.rank;
    });
    outcome result = outcome::not_found;
    for (std::size_t c = base; c < cand_.size(); ++c) {
      const auto [o, rk, k] = cand_[c];
      const auto low_mark = low_undo_.size();
      const bool hatless = place(k, o);
      const auto ku = static_cast<std::size_t>(k);
      bool split = false;
      for (int s = first_[ku]; s + 1 < last_[ku]; ++s) {
        if (--cuts_[static_cast<std::size_t>(s)] == 0 && s >= lo && s + 1 < hi) split = true;
      }
      const outcome r = split ? solve_parts(lo, hi, members, o) : search(lo, hi, members, o, rk, salt);
      for (int s = first_[ku]; s + 1 < last_[ku]; ++s) ++cuts_[static_cast<std::size_t>(s)];
      unplace(k, low_mark);
      if (r != outcome::not_found) {
        result = r;
        break;
      }
      // Hatless pruning (MiniMalloc): nothing unplaced conflicts with k, so k changed no
      // other buffer; every sibling only places buffers at or above o, which the failed
      // subtree already covered.
      if (hatless) break;
    }
    cand_.resize(base);
    if (result == outcome::not_found) return fail();
    return result;
  }

  // Section inference: in every section of [lo, hi), the bytes still to place must fit
  // between the capacity and the lowest offset any unplaced member there can take (or the
  // last placed offset, if higher: canonical order only goes up). `max_low`: the highest
  // lowest offset among the unplaced members.
  bool sections_fit(int lo, int hi, const std::vector<int>& members, std::int64_t last_offset, std::int64_t max_low) {
    // Against the last offset first, and whether any section could fail on the members'
    // lowest offsets at all (most nodes): a section with bytes to place has an unplaced
    // member over it, whose lowest offset is at most max_low.
    std::int64_t headroom = std::numeric_limits<std::int64_t>::max();
    for (int s = lo; s < hi; ++s) {
      const auto t = total_[static_cast<std::size_t>(s)];
      if (t != 0) headroom = std::min(headroom, capacity_ - t);
    }
    if (last_offset > headroom) return false;
    if (max_low <= headroom) return true;
    // The lowest offset per section, in granules in 32 bits when they fit (the loop then
    // vectorises).
    std::int64_t* m = scratch_.data();
    std::int32_t* m32 = scratch32_.data();
    const bool narrow = narrow_;
    if (narrow) {
      for (int s = lo; s < hi; ++s) m32[s] = std::numeric_limits<std::int32_t>::max();
    } else {
      for (int s = lo; s < hi; ++s) m[s] = std::numeric_limits<std::int64_t>::max();
    }
    for (const int k : members) {
      const auto ku = static_cast<std::size_t>(k);
      if (offset_[ku] >= 0) continue;
      const auto o = effective_low(k);
      const int a = std::max(first_[ku], lo), b = std::min(last_[ku], hi);
      if (narrow) {
        const auto o32 = static_cast<std::int32_t>(granule_shift_ >= 0 ? o >> granule_shift_ : o / granule_);
        for (int s = a; s < b; ++s) m32[s] = std::min(m32[s], o32);
      } else {
        for (int s = a; s < b; ++s) m[s] = std::min(m[s], o);
      }
    }
    if (narrow) {
      for (int s = lo; s < hi; ++s) m[s] = static_cast<std::int64_t>(m32[s]) * granule_;
    }
    for (int s = lo; s < hi; ++s) {
      const auto t = total_[static_cast<std::size_t>(s)];
      if (t != 0 && std::max(last_offset, m[s]) + t > capacity_) return false;
    }
    return true;
  }

  // Places k at o; returns whether k is "hatless" (no unplaced buffer conflicts with it).
  bool place(int k, std::int64_t o) {
    const auto ku = static_cast<std::size_t>(k);
    offset_[ku] = o;
    solution_[ku] = o;
    state_hash_ ^= zobrist(k, low_[ku]);
    const auto top = o + size_[ku];
    bool hatless = true;
    for (auto a = adj_start_[ku]; a < adj_start_[ku + 1]; ++a) {
      const auto j = static_cast<std::size_t>(adj_[a]);
      if (offset_[j] >= 0) continue;
      hatless = false;
      const auto nl = align_[j] == 1 ? top : align_up_i64(top, align_[j]);
      if (nl > low_[j]) {
        low_undo_.emplace_back(static_cast<int>(j), low_[j]);
        state_hash_ ^= zobrist(static_cast<int>(j), low_[j]) ^ zobrist(static_cast<int>(j), nl);
        low_[j] = nl;
      }
    }
    for (int s = first_[ku]; s < last_[ku]; ++s) total_[static_cast<std::size_t>(s)] -= size_[ku];
    return hatless;
  }

  void unplace(int k, std::size_t low_mark) {
    const auto ku = static_cast<std::size_t>(k);
    for (int s = first_[ku]; s < last_[ku]; ++s) total_[static_cast<std::size_t>(s)] += size_[ku];
    while (low_undo_.size() > low_mark) {
      const auto [j, old] = low_undo_.back();
      state_hash_ ^= zobrist(j, low_[static_cast<std::size_t>(j)]) ^ zobrist(j, old);
      low_[static_cast<std::size_t>(j)] = old;
      low_undo_.pop_back();
    }
    state_hash_ ^= zobrist(k, low_[ku]);
    offset_[ku] = -1;
  }

  const packing_problem& p_;
  std::size_t sections_ = 0;
  std::vector<int> movable_;
  std::vector<std::int64_t> size_, align_, width_, area_;
  std::vector<int> first_, last_;
  std::vector<std::size_t> adj_start_, obstacle_start_;
  std::vector<int> adj_;
  std::vector<std::pair<std::int64_t, std::int64_t>> obstacles_;

  std::int64_t capacity_ = 0;
  branching heuristic_ = branching::wat;
  std::uint64_t node_budget_ = 0;
  clock::time_point deadline_{};
  bool has_deadline_ = false;
  const cancellation_flag* cancel_ = nullptr;  ///< read with the clock: set, the run stops as at the deadline
  bool timed_out_ = false;
  std::uint64_t nodes_ = 0;
  std::vector<std::int64_t> offset_, solution_, low_, scratch_, total_, noise_;
  std::vector<int> cuts_, rank_;
  std::vector<std::int32_t> scratch32_;
  std::int64_t granule_ = 1;
  int granule_shift_ = -1;  ///< log2(granule_) when it is a power of two, else -1
  bool narrow_ = false;
  std::vector<std::pair<int, std::int64_t>> low_undo_;
  std::vector<candidate> cand_;
  std::uint64_t state_hash_ = 0, salt_ = 0;
  struct cache_entry {
    std::uint64_t key = 0;
    std::int64_t offset = 0;
    std::int64_t capacity = 0;
    std::uint32_t ranking = 0;
    int rank = 0;
  };
  std::vector<cache_entry> table_;  // direct-mapped cache of failed states
  std::size_t table_mask_ = 0;
  std::uint64_t clock_mask_ = 255;  ///< read the clock when (nodes & mask) == 0
};

/// Decision search with restarts: round-robin over the three branching heuristics (and,
/// when `variants` > 3, seeded perturbations of them) with node limits doubling from 4n;
/// WAT runs get the limit divided by `wat_budget_divisor`.
/// Any exhausted run proves infeasibility.
/// WAT's share of a round. Measured on MiniMalloc's challenging suite at 1 MiB (per ranking
/// alone, 6*10^6 nodes at most): TWA decides 8 of the 11 files, TAW 3, WAT none that TWA does
/// not decide sooner, yet at an equal share it cost a third of every round (two thirds of
/// E's 6.6 million nodes). A quarter keeps it in the portfolio (an instance only it decides
/// is still decided, at about three times the nodes of an equal share) and cuts the suite's
/// nodes from 8.8 to 4.6 million (E: 2.8 million).
inline constexpr std::uint64_t wat_budget_divisor = 4;

inline solve_status solve_capacity(canonical_search& engine, std::int64_t capacity,
                                    canonical_search::clock::time_point deadline, bool has_deadline,
                                    std::uint64_t total_node_limit, std::uint64_t seed, placement& out,
                                    std::uint64_t& nodes, int variants = 3, std::uint64_t first_limit = 0) {
  std::uint64_t limit = first_limit != 0 ? first_limit : std::max<std::uint64_t>(4 * engine.movable_count(), 256);
  while (true) {
    for (int v = 0; v < variants; ++v) {
      const auto heuristic = static_cast<branching>(v % 3);
      std::uint64_t budget = heuristic == branching::wat ? std::max<std::uint64_t>(limit / wat_budget_divisor, 1) : limit;
      if (total_node_limit != 0) {
        if (nodes >= total_node_limit) return solve_status::no_answer;
        budget = std::min(budget, total_node_limit - nodes);
      }
      const std::uint64_t variant_seed = v < 3 ? 0 : seed * 1000003ULL + static_cast<std::uint64_t>(v);
      const auto r = engine.run(capacity, heuristic, variant_seed, budget, deadline, has_deadline);
      nodes += engine.nodes();
      if (r == solve_status::feasible) {
        out = engine.offsets();
        return r;
      }
      if (r == solve_status::infeasible) return r;
      if (engine.timed_out()) return solve_status::no_answer;
    }
    limit *= 2;
  }
}

/// The conflict lists for the exact search, or nothing when there are more than
/// `search_edge_limit` pairs (counted first, so that nothing is allocated for them) or when
/// the deadline would pass before the search could start: building the lists checks it, and
/// the engine's set-up, which copies the lists once, starts only while at least as much time
/// is left as the lists took (its cost is of the same order); nothing either once the work
/// is cancelled.
inline std::optional<conflict_lists> search_conflicts(const interval_graph& g, const solve_deadline& until) {
  using clock = canonical_search::clock;
  if (g.edge_count() > search_edge_limit) return std::nullopt;
  const auto t0 = clock::now();
  auto lists = build_conflicts(g.first_sections(), g.last_sections(), search_edge_limit, until);
  if (lists && until) {
    const auto now = clock::now();
    if (now >= *until || *until - now < now - t0) return std::nullopt;
  }
  if (until.cancelled()) return std::nullopt;
  return lists;
}

/// The search's deadline: `deadline` moved earlier by a quarter of what building the lists
/// and the engine took (from `lists_started`), the time that freeing them and the last
/// nodes take (10^4 training-step buffers: 0.35 s to build, 0.08 s past the deadline without).
inline canonical_search::clock::time_point before_teardown(canonical_search::clock::time_point deadline,
                                                           canonical_search::clock::time_point lists_started) {
  return deadline - (canonical_search::clock::now() - lists_started) / 4;
}

}  // namespace detail

/// Decision search on a validated problem `p` and its interval graph `g` (what `solve` in
/// `packing/solvers.hpp` has built already): see `pack_within(p, o)`.
[[nodiscard]] inline search_result pack_within(const packing_problem& p, const interval_graph& g,
                                               const search_options& o) {
  using clock = detail::canonical_search::clock;
  const auto start = clock::now();
  search_result out;
  auto finish = [&](solve_status st) {
    out.status = st;
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (st == solve_status::feasible) out.seconds_to_first_feasible = out.seconds_to_best = out.seconds;
    return out;
  };
  if (lower_bound(p) > o.capacity) return finish(solve_status::infeasible);
  const auto until = deadline_or_after(o.deadline, start, o.time_limit);
  const bool has_deadline = until.has_value();
  const auto deadline = until.value_or(start);
  out.solution = std::move(*portfolio_fit{}.place_by(p, g, until).solution);
  if (peak_of(p, out.solution) <= o.capacity) return finish(solve_status::feasible);
  const auto lists_started = clock::now();
  const auto conflicts = detail::search_conflicts(g, until);
  if (!conflicts) {  // too large for the exact search, or out of time building it
    out.solution.offsets.clear();
    return finish(solve_status::no_answer);
  }
  detail::canonical_search engine(p, g, *conflicts, until.cancel);
  const auto search_deadline = detail::before_teardown(deadline, lists_started);
  placement found;
  const auto st = detail::solve_capacity(engine, o.capacity, search_deadline, has_deadline, o.node_limit, o.seed,
                                         found, out.nodes);
  if (st == solve_status::feasible) out.solution = std::move(found);
  else out.solution.offsets.clear();
  return finish(st);
}

/// Decision search: a placement whose peak is at most `o.capacity`, or a proof that none
/// exists, or `no_answer`. `portfolio_fit` is tried first. Errors: the problem is malformed.
[[nodiscard]] inline result<search_result> pack_within(const packing_problem& p, const search_options& o) {
  if (const char* bad = time_limit_error(o.time_limit)) return make_error(errc::invalid_argument, bad);
  if (auto ok = validate_problem(p); !ok) return ok.error();
  return pack_within(p, interval_graph(p), o);
}

namespace detail {

/// The capacities `minimize_peak` probes between the bound and the best peak, lowest first:
/// below the best peak by half, a quarter, ... of the gap, down to one granule.
[[nodiscard]] inline std::vector<std::int64_t> probe_targets(std::int64_t best_peak, std::int64_t bound, std::int64_t granule) {
  std::vector<std::int64_t> targets;
  for (std::int64_t d = (best_peak - bound) / 2; d >= granule; d /= 2) {
    const auto t = (best_peak - d) / granule * granule;
    if (t > bound && t < best_peak && (targets.empty() || t > targets.back())) targets.push_back(t);
  }
  if (best_peak - granule > bound && (targets.empty() || best_peak - granule > targets.back())) {
    targets.push_back(best_peak - granule);
  }
  return targets;
}

}  // namespace detail

/// Anytime minimisation on a validated problem `p` and its interval graph `g` (what `solve`
/// in `packing/solvers.hpp` has built already): see `minimize_peak(p, o)`.
[[nodiscard]] inline minimize_result minimize_peak(const packing_problem& p, const interval_graph& g,
                                                   const minimize_options& o) {
  using clock = detail::canonical_search::clock;
  const auto start = clock::now();
  const auto until = deadline_or_after(o.deadline, start, o.time_limit);
  const bool has_deadline = until.has_value();
  const auto deadline = until.value_or(start);
  minimize_result out;
  const auto granule = packing_granule(p);
  out.lower_bound = lower_bound(p);
  bool out_of_time = false;     // too little time was left for the search
  bool heuristics_cut = false;  // the deadline cut the heuristics short
  auto search_deadline = deadline;  // moved earlier once the search's lists are built
  auto found_now = [&] {  // a new placement within the capacity was just kept
    out.seconds_to_best = std::chrono::duration<double>(clock::now() - start).count();
    if (out.seconds_to_first_feasible < 0) out.seconds_to_first_feasible = out.seconds_to_best;
  };
  auto finish = [&] {
    out.peak = out.solution.offsets.empty() ? 0 : peak_of(p, out.solution);
    out.optimal = !out.solution.offsets.empty() && out.peak == out.lower_bound;  // the bound never clamped
    out.stopped_by_time_limit =
        !out.optimal && has_deadline &&
        (heuristics_cut || (!out.search_skipped && (out_of_time || clock::now() >= search_deadline)));
    if (out.status == solve_status::feasible) out.status = answer_status(out.optimal, out.stopped_by_time_limit);
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return out;
  };
  if (o.capacity >= 0 && out.lower_bound > o.capacity) {
    out.status = solve_status::infeasible;
    return finish();
  }
  auto first = portfolio_fit{}.place_by(p, g, until);
  heuristics_cut = !first.complete;
  placement best = std::move(*first.solution);
  std::int64_t best_peak = peak_of(p, best);
  const bool fits = o.capacity < 0 || best_peak <= o.capacity;
  if (fits) {
    out.solution = best;
    out.status = solve_status::feasible;
    found_now();
  }
  if (best_peak <= out.lower_bound) return finish();  // the heuristic is optimal: no search
  const auto lists_started = clock::now();
  const auto conflicts = detail::search_conflicts(g, until);
  if (!conflicts) {  // too large for the exact search (or out of time): the heuristic's answer
    out.search_skipped = g.edge_count() > search_edge_limit;
    out_of_time = !out.search_skipped;
    return finish();
  }
  detail::canonical_search engine(p, g, *conflicts, until.cancel);
  search_deadline = detail::before_teardown(deadline, lists_started);
  auto time_left = [&] { return !until.cancelled() && (!has_deadline || clock::now() < search_deadline); };
  auto adopt = [&](placement&& found) {
    best = std::move(found);
    best_peak = peak_of(p, best);
    if (o.capacity < 0 || best_peak <= o.capacity) {
      out.solution = best;
      out.status = solve_status::feasible;
      found_now();
    }
  };
  // Half of the effort goes to the lower bound: one round-robin pass per round at a node
  // limit that doubles every round (the same schedule as a plain decision search, resumed),
  // which closes LB-tight instances. The other half probes targets below the best peak by
  // half, a quarter, ... of the gap down to one granule, lowest first: decision searches are
  // irregular in the capacity, so several cheap probes beat one long one. An exhausted probe
  // proves a higher lower bound.
  std::uint64_t level = std::max<std::uint64_t>(4 * engine.movable_count(), 256);
  while (best_peak > out.lower_bound && time_left()) {
    {
      placement found;
      std::uint64_t used = 0;
      const auto st = detail::solve_capacity(engine, out.lower_bound, search_deadline, has_deadline, 3 * level, o.seed, found,
                                             used, 3, level);
      out.nodes += used;
      if (st == solve_status::feasible) {
        adopt(std::move(found));
        break;
      }
      if (st == solve_status::infeasible) {
        out.lower_bound += granule;
        if (o.capacity >= 0 && out.lower_bound > o.capacity && best_peak > o.capacity) {
          out.status = solve_status::infeasible;
          return finish();
        }
        continue;
      }
    }
    std::uint64_t spent = 0;
    while (spent < 3 * level && best_peak > out.lower_bound && time_left()) {
      bool improved = false;
      for (const auto target : detail::probe_targets(best_peak, out.lower_bound, granule)) {
        if (!time_left() || spent >= 3 * level) break;
        placement found;
        std::uint64_t used = 0;
        const auto st = detail::solve_capacity(engine, target, search_deadline, has_deadline,
                                               std::max<std::uint64_t>(level / 2, 256), o.seed, found, used);
        out.nodes += used;
        spent += used;
        if (st == solve_status::feasible) {
          adopt(std::move(found));
          improved = true;
          break;
        }
        if (st == solve_status::infeasible) out.lower_bound = std::max(out.lower_bound, target + granule);
      }
      if (!improved) break;
    }
    level *= 2;
  }
  if (o.capacity < 0 || best_peak <= o.capacity) {
    out.solution = best;
    out.status = solve_status::feasible;
  } else {
    out.status = solve_status::no_answer;
  }
  return finish();
}

/// Anytime minimisation of the peak within `o.time_limit`: starts from
/// `portfolio_fit`, then alternates decision searches at the proven lower bound (which close
/// LB-tight instances) with searches just below the best peak found (which improve it), each
/// with a node budget that doubles every round. A decision search that is exhausted raises
/// the proven lower bound. Errors: the problem is malformed.
[[nodiscard]] inline result<minimize_result> minimize_peak(const packing_problem& p, const minimize_options& o = {}) {
  if (const char* bad = time_limit_error(o.time_limit)) return make_error(errc::invalid_argument, bad);
  if (auto ok = validate_problem(p); !ok) return ok.error();
  return minimize_peak(p, interval_graph(p), o);
}

}  // namespace xlamem
