// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exact search over a few variables with every other variable fixed: depth-first branch and
/// bound that finds the cheapest labels of the chosen variables under the memory limit, or
/// proves the current ones best (the step of the large-neighbourhood search).
///
/// Memory: the rows the chosen variables' runs cover are cut into segments over which none of
/// their usages changes; on each segment the room left by everything else comes from one query
/// of the load tracker. While the search runs, a chosen variable without a label yet counts its
/// smallest usage there, so a partial assignment is refused only when no completion fits (the
/// check is exact). Segments where even the largest usages fit are dropped, so the search itself
/// works on a few small arrays and never touches the tracker.
///
/// The bound is the cost so far plus, for every variable still open, its cheapest label against
/// the fixed variables and the chosen ones already labelled (edge costs are nonnegative, so
/// edges between two open variables add at least zero).
///
/// Cost: setup O(runs * log rows); per search node O(labels + degree inside the neighbourhood *
/// labels + critical segments of the variable).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "xlamem/sharding/search_model.hpp"

namespace xlamem::sharding {

class subproblem_search {
 public:
  /// What one call did.
  struct outcome {
    bool improved = false;   ///< better labels were found and applied
    bool complete = false;   ///< the search ended before the node limit: the result is optimal
    std::uint64_t nodes = 0;
    cost_type gain = 0;      ///< how much cheaper the state became
  };

  explicit subproblem_search(const search_model& m)
      : model_(&m), local_(m.var_count(), none) {}

  /// Relabels `vars` (distinct) optimally within `node_limit` search nodes, the rest of `state`
  /// fixed; applies the labels found when they fit the limit and are strictly cheaper (or when
  /// `state` did not fit before).
  /// With `sideways`, labels that cost the same as the current ones but differ also count
  /// (a plateau move, for diversity).
  outcome improve(assignment_state& state, std::span<const std::uint32_t> vars, std::uint64_t node_limit,
                  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
                  bool sideways = false) {
    setup(state, vars);
    outcome out;
    node_limit_ = node_limit;
    deadline_ = deadline;
    nodes_ = 0;
    // From an assignment over the limit, any labelling that fits is an improvement.
    const bool over = !state.fits();
    best_cost_ = over ? std::numeric_limits<cost_type>::max() : incumbent_cost_ + (sideways ? 1 : 0);
    const cost_type bound = best_cost_;
    skip_current_ = sideways && !over;
    // Lazy rows: search with the tightest segments only; when the answer overloads another
    // segment, add the segments it overloads and search again. An answer that overloads none
    // is optimal under all of them (it is optimal under fewer).
    bool valid = false;
    for (int round = 0; round < max_rounds && !impossible_; ++round) {
      found_ = false;
      best_cost_ = bound;
      search(state, 0, 0);
      if (!found_ || nodes_ >= node_limit_) break;
      if (activate_overloaded()) continue;
      valid = true;
      break;
    }
    out.nodes = nodes_;
    out.complete = nodes_ < node_limit_ && (valid || !found_);  // the deadline sets node_limit_ = nodes_
    if (valid && (over || best_cost_ < incumbent_cost_ || (skip_current_ && best_cost_ == incumbent_cost_))) {
      const cost_type before = state.cost();
      for (std::size_t i = 0; i < vars_.size(); ++i) state.set(vars_[i], best_[i]);
      out.improved = true;
      out.gain = before - state.cost();
    }
    for (auto v : vars_) local_[v] = none;
    return out;
  }

 private:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  static constexpr int max_rounds = 8;
  static constexpr std::size_t first_active = 16, more_active = 16;
  struct inner_arc {
    std::uint32_t to;  ///< local index of a later variable
    const search_model::arc* arc;  ///< from the earlier variable's side
  };

  const search_model* model_;
  std::vector<std::uint32_t> local_;  ///< variable -> local index, or none
  std::vector<std::uint32_t> vars_;
  std::vector<std::size_t> label_base_;  ///< local i's labels at [label_base_[i], label_base_[i+1])
  std::vector<cost_type> cur_;         ///< costs of each local label given what is fixed/assigned
  std::vector<cost_type> min_cur_;     ///< min over a local variable's labels of cur_
  std::vector<std::size_t> later_base_;
  std::vector<inner_arc> later_;
  // Memory. Critical segments (where the labels could exceed the room); per run of a local
  // variable its smallest usage and the segments it covers; the active segments and, per
  // local variable, its entries on them; per active segment the room left above the chosen
  // variables' smallest usages and how much of it the labels so far use.
  struct run_span {
    const memory_rows::run* run;
    usage_type min;
    std::uint32_t first, last;  ///< critical segments [first, last)
  };
  struct mem_entry {
    std::uint32_t segment;  ///< active index
    usage_type min;
    const memory_rows::run* run;
  };
  std::vector<std::size_t> span_base_;
  std::vector<run_span> spans_;
  std::vector<usage_type> critical_room_, critical_slack_;
  std::vector<std::uint32_t> active_of_;  ///< critical segment -> active index, or none
  std::vector<std::uint32_t> active_;     ///< active index -> critical segment
  std::vector<std::size_t> entry_base_;
  std::vector<mem_entry> entries_;
  std::vector<usage_type> room_, used_, sum_;
  std::vector<std::uint32_t> cuts_;
  std::vector<usage_type> seg_current_, seg_min_, seg_max_;
  std::vector<std::uint32_t> seg_id_;
  std::vector<std::uint32_t> chosen_, best_, current_;
  std::vector<std::uint32_t> order_buf_;
  cost_type incumbent_cost_ = 0, best_cost_ = 0, open_bound_ = 0;
  std::uint64_t node_limit_ = 0, nodes_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  bool found_ = false;
  bool impossible_ = false;
  bool skip_current_ = false;  ///< sideways: the current labels themselves are no answer

  void setup(assignment_state& state, std::span<const std::uint32_t> vars) {
    const auto& m = *model_;
    vars_.assign(vars.begin(), vars.end());
    const std::size_t n = vars_.size();
    for (std::uint32_t i = 0; i < n; ++i) local_[vars_[i]] = i;
    label_base_.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) label_base_[i + 1] = label_base_[i] + m.labels(vars_[i]);
    cur_.assign(label_base_[n], 0);
    min_cur_.assign(n, 0);
    later_base_.assign(n + 1, 0);
    later_.clear();
    incumbent_cost_ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t v = vars_[i];
      const auto un = m.unary(v);
      cost_type* c = cur_.data() + label_base_[i];
      for (std::size_t s = 0; s < un.size(); ++s) c[s] = un[s];
      incumbent_cost_ += un[state.label(v)];
      for (const auto& a : m.arcs(v)) {
        const std::uint32_t j = local_[a.other];
        if (j == none) {
          const std::uint32_t o = state.label(a.other);
          for (std::size_t s = 0; s < un.size(); ++s) c[s] += m.arc_cost(a, s, o);
          incumbent_cost_ += m.arc_cost(a, state.label(v), o);
        } else if (j > i) {
          later_.push_back({j, &a});
          incumbent_cost_ += m.arc_cost(a, state.label(v), state.label(a.other));
        }
      }
      later_base_[i + 1] = later_.size();
      min_cur_[i] = *std::min_element(c, c + un.size());
    }
    open_bound_ = std::accumulate(min_cur_.begin(), min_cur_.end(), cost_type{0});
    setup_memory(state);
    chosen_.assign(n, 0);
    best_.assign(vars_.size(), 0);
    for (std::size_t i = 0; i < n; ++i) best_[i] = state.label(vars_[i]);
    current_ = best_;
  }

  /// Cuts the chosen variables' rows into segments, keeps the ones where the labels could
  /// exceed the room, and lists each variable's share of them.
  void setup_memory(const assignment_state& state) {
    const auto& m = *model_;
    const auto& rows = m.rows();
    cuts_.clear();
    for (auto v : vars_) {
      for (const auto& r : rows.runs(v)) {
        cuts_.push_back(r.begin);
        cuts_.push_back(r.end);
      }
    }
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    const std::size_t segs = cuts_.empty() ? 0 : cuts_.size() - 1;
    seg_current_.assign(segs, 0);
    seg_min_.assign(segs, 0);
    seg_max_.assign(segs, 0);
    const auto segment_range = [&](const memory_rows::run& r) {
      const auto b = static_cast<std::size_t>(std::lower_bound(cuts_.begin(), cuts_.end(), r.begin) - cuts_.begin());
      const auto e = static_cast<std::size_t>(std::lower_bound(cuts_.begin(), cuts_.end(), r.end) - cuts_.begin());
      return std::pair{b, e};
    };
    // Each variable's current, smallest and largest usage summed per segment (difference arrays).
    std::vector<usage_type>& dc = seg_current_;
    std::vector<usage_type>& dmin = seg_min_;
    std::vector<usage_type>& dmax = seg_max_;
    dc.assign(segs + 1, 0);
    dmin.assign(segs + 1, 0);
    dmax.assign(segs + 1, 0);
    for (auto v : vars_) {
      const std::size_t k = m.labels(v);
      for (const auto& r : rows.runs(v)) {
        usage_type lo = rows.usage(r, 0), hi = lo;
        for (std::size_t s = 1; s < k; ++s) {
          lo = std::min(lo, rows.usage(r, s));
          hi = std::max(hi, rows.usage(r, s));
        }
        const auto [b, e] = segment_range(r);
        const usage_type cur = rows.usage(r, state.label(v));
        dc[b] += cur;
        dc[e] -= cur;
        dmin[b] += lo;
        dmin[e] -= lo;
        dmax[b] += hi - lo;
        dmax[e] -= hi - lo;
      }
    }
    seg_id_.assign(segs, none);
    critical_room_.clear();
    critical_slack_.clear();
    impossible_ = false;
    const bool state_over = !state.fits();
    for (std::size_t j = 0; j < segs; ++j) {
      if (j > 0) {
        dc[j] += dc[j - 1];
        dmin[j] += dmin[j - 1];
        dmax[j] += dmax[j - 1];
      }
      if (dmax[j] == 0 && !state_over) continue;
      // Room above the smallest usages: capacity - (load of everything else) - smallest usages.
      const usage_type over = state.load().max(cuts_[j], cuts_[j + 1]) - dc[j];
      const usage_type room = -over - dmin[j];
      if (room < 0) impossible_ = true;  // even the smallest usages do not fit here
      if (dmax[j] <= room) continue;     // even the largest usages fit here
      seg_id_[j] = static_cast<std::uint32_t>(critical_room_.size());
      critical_room_.push_back(room);
      critical_slack_.push_back(room - dmax[j]);  // how far from fitting whatever is chosen
    }
    // Per run: its smallest usage and the critical segments it covers.
    span_base_.assign(vars_.size() + 1, 0);
    spans_.clear();
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      const std::uint32_t v = vars_[i];
      const std::size_t k = m.labels(v);
      for (const auto& r : rows.runs(v)) {
        usage_type lo = rows.usage(r, 0);
        for (std::size_t s = 1; s < k; ++s) lo = std::min(lo, rows.usage(r, s));
        const auto [b, e] = segment_range(r);
        std::uint32_t first = none, last = 0;
        for (std::size_t j = b; j < e; ++j) {
          if (seg_id_[j] == none) continue;
          if (first == none) first = seg_id_[j];
          last = seg_id_[j] + 1;
        }
        if (first != none) spans_.push_back({&r, lo, first, last});
      }
      span_base_[i + 1] = spans_.size();
    }
    // Start with the tightest segments.
    active_of_.assign(critical_room_.size(), none);
    active_.clear();
    room_.clear();
    std::vector<std::uint32_t> order(critical_room_.size());
    for (std::uint32_t c = 0; c < order.size(); ++c) order[c] = c;
    const std::size_t take = std::min(first_active, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                      [&](std::uint32_t a, std::uint32_t b) { return critical_slack_[a] < critical_slack_[b]; });
    for (std::size_t q = 0; q < take; ++q) activate(order[q]);
    rebuild_entries();
  }

  void activate(std::uint32_t critical) {
    if (active_of_[critical] != none) return;
    active_of_[critical] = static_cast<std::uint32_t>(active_.size());
    active_.push_back(critical);
    room_.push_back(critical_room_[critical]);
  }

  /// Each local variable's entries on the active segments.
  void rebuild_entries() {
    used_.assign(room_.size(), 0);
    entry_base_.assign(vars_.size() + 1, 0);
    entries_.clear();
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      for (std::size_t q = span_base_[i]; q < span_base_[i + 1]; ++q) {
        const auto& sp = spans_[q];
        for (std::uint32_t c = sp.first; c < sp.last; ++c) {
          if (active_of_[c] != none) entries_.push_back({active_of_[c], sp.min, sp.run});
        }
      }
      entry_base_[i + 1] = entries_.size();
    }
  }

  /// Adds the critical segments the best labels overload to the active ones. @returns false
  /// when they overload none.
  bool activate_overloaded() {
    const auto& rows = model_->rows();
    const std::size_t n = critical_room_.size();
    sum_.assign(n + 1, 0);
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      for (std::size_t q = span_base_[i]; q < span_base_[i + 1]; ++q) {
        const auto& sp = spans_[q];
        const usage_type d = rows.usage(*sp.run, best_[i]) - sp.min;
        sum_[sp.first] += d;
        sum_[sp.last] -= d;
      }
    }
    // Critical indices follow the rows' order, so a run's critical segments are one range.
    std::vector<std::pair<usage_type, std::uint32_t>> over;
    usage_type running = 0;
    for (std::uint32_t c = 0; c < n; ++c) {
      running += sum_[c];
      if (running > critical_room_[c] && active_of_[c] == none) over.emplace_back(running - critical_room_[c], c);
    }
    if (over.empty()) return false;
    const std::size_t take = std::min(more_active, over.size());
    std::partial_sort(over.begin(), over.begin() + static_cast<std::ptrdiff_t>(take), over.end(), std::greater<>());
    for (std::size_t q = 0; q < take; ++q) activate(over[q].second);
    rebuild_entries();
    return true;
  }

  /// True when the labels chosen are the current ones (`best_` holds them until a first answer).
  [[nodiscard]] bool is_current() const noexcept {
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      if (chosen_[i] != current_[i]) return false;
    }
    return true;
  }

  /// Adds local `i`'s label `s` above its smallest usage; false (nothing changed) when it
  /// does not fit.
  bool place(std::size_t i, std::uint32_t s) {
    const auto& rows = model_->rows();
    for (std::size_t q = entry_base_[i]; q < entry_base_[i + 1]; ++q) {
      const auto& en = entries_[q];
      const usage_type d = rows.usage(*en.run, s) - en.min;
      if (d > 0 && used_[en.segment] + d > room_[en.segment]) {
        unplace(i, s, q);
        return false;
      }
      used_[en.segment] += d;
    }
    return true;
  }
  /// Undoes `place(i, s)` up to entry `until` (exclusive).
  void unplace(std::size_t i, std::uint32_t s, std::size_t until) {
    const auto& rows = model_->rows();
    for (std::size_t q = entry_base_[i]; q < until; ++q) {
      const auto& en = entries_[q];
      used_[en.segment] -= rows.usage(*en.run, s) - en.min;
    }
  }

  void search(assignment_state& state, std::size_t i, cost_type cost_so_far) {
    if (i == vars_.size()) {
      if (skip_current_ && cost_so_far == incumbent_cost_ && is_current()) return;
      if (cost_so_far < best_cost_) {
        best_cost_ = cost_so_far;
        best_ = chosen_;
        found_ = true;
      }
      return;
    }
    if (++nodes_ >= node_limit_) return;
    if ((nodes_ & 63) == 0 && std::chrono::steady_clock::now() >= deadline_) {
      node_limit_ = nodes_;  // stops the whole search; the result so far stays valid
      return;
    }
    const auto& m = *model_;
    const std::size_t k = m.labels(vars_[i]);
    const cost_type* c = cur_.data() + label_base_[i];
    const cost_type rest = open_bound_ - min_cur_[i];
    // Labels cheapest first.
    const std::size_t mark = order_buf_.size();
    for (std::uint32_t s = 0; s < k; ++s) {
      if (cost_so_far + c[s] + rest < best_cost_) order_buf_.push_back(s);
    }
    std::sort(order_buf_.begin() + static_cast<std::ptrdiff_t>(mark), order_buf_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return c[a] < c[b]; });
    for (std::size_t q = mark; q < order_buf_.size(); ++q) {
      const std::uint32_t s = order_buf_[q];
      if (cost_so_far + c[s] + open_bound_ - min_cur_[i] >= best_cost_) break;  // sorted: none after
      if (nodes_ >= node_limit_) break;
      if (!place(i, s)) continue;
      chosen_[i] = s;
      // Push this label's edge costs into the later variables' label costs.
      const cost_type saved_open = open_bound_;
      open_bound_ -= min_cur_[i];
      for (std::size_t a = later_base_[i]; a < later_base_[i + 1]; ++a) {
        const auto& ia = later_[a];
        const cost_type* row = m.row(*ia.arc, s);
        cost_type* cj = cur_.data() + label_base_[ia.to];
        const std::size_t kj = label_base_[ia.to + 1] - label_base_[ia.to];
        cost_type lo = std::numeric_limits<cost_type>::max();
        for (std::size_t t = 0; t < kj; ++t) {
          cj[t] += row[t];
          lo = std::min(lo, cj[t]);
        }
        open_bound_ += lo - min_cur_[ia.to];
        min_cur_[ia.to] = lo;
      }
      if (cost_so_far + c[s] + open_bound_ < best_cost_) search(state, i + 1, cost_so_far + c[s]);
      for (std::size_t a = later_base_[i]; a < later_base_[i + 1]; ++a) {
        const auto& ia = later_[a];
        const cost_type* row = m.row(*ia.arc, s);
        cost_type* cj = cur_.data() + label_base_[ia.to];
        const std::size_t kj = label_base_[ia.to + 1] - label_base_[ia.to];
        cost_type lo = std::numeric_limits<cost_type>::max();
        for (std::size_t t = 0; t < kj; ++t) {
          cj[t] -= row[t];
          lo = std::min(lo, cj[t]);
        }
        min_cur_[ia.to] = lo;
      }
      open_bound_ = saved_open;
      unplace(i, s, entry_base_[i + 1]);
    }
    order_buf_.resize(mark);
  }
};

}  // namespace xlamem::sharding
