// SPDX-License-Identifier: Apache-2.0
/// @file
/// Live ranges on a sequential schedule, with XLA's rules (`HloLiveRange`, module scoped):
///
/// - The schedule is each computation's instruction order (for a module with
///   `is_scheduled=true` that order is the schedule). Computations are flattened into one
///   timeline from the entry: the callees of a call or conditional come just before it, a
///   while's condition and then its body come just before the while. Fused and embedded
///   computations (reduce, sort, map, ...) are not scheduled.
/// - A value lives on the inclusive range `[start, end]` of logical times. It starts at its
///   defining instruction (a parameter: at the start of its computation's span). It ends at its
///   last position (a root position: at the end of its computation's span) or last use; a use
///   by a call does not count (the callee's uses do), a use by a while counts at the body's
///   parameter. Entry parameters that no output aliases live to the end of the schedule;
///   the entry root's values live to the end (`end_time()`).
/// - Values of one buffer (`colocation_analysis`) are normalised so their ranges do not
///   overlap (XLA's NormalizeAliasedBuffers).
///
/// Each computation has a context: `sequential` (on the timeline), `thread_local` (reached
/// through an embedded call such as a reduce's `to_apply`, also from inside a fusion: its
/// values get thread-local allocations), `fused` (a fusion's computation: no buffers at all) or
/// `unreachable`.
///
/// `io/xla/live_range_text.hpp` prints XLA's `HloLiveRange::ToString` text of an analysis. Cost:
/// O(instructions + values + uses + positions).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/passes/colocation.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/graph/graph_queries.hpp"

namespace xlamem {

/// An inclusive range of logical times (XLA's `TimeBound`).
struct live_range {
  std::int64_t start = 0;
  std::int64_t end = 0;
  friend bool operator==(const live_range&, const live_range&) = default;
};

/// How a computation is executed, which decides how its values are planned.
enum class computation_context : std::uint8_t {
  sequential,     ///< on the flattened timeline
  embedded,       ///< run inside an instruction (reduce, sort, map, ...): thread-local buffers (XLA: kEmbedded)
  fused,          ///< inside a fusion: no buffers of its own
  unreachable,    ///< not called from the entry
};

/// Options of `live_range_analysis::run`.
struct liveness_options {
  /// The entry computation's dense number in the dataflow analysis; by default the graph's
  /// `entry` (`entry_graph`), else the last computation (HLO text puts ENTRY anywhere, but a
  /// graph without `entry` has no better guess).
  std::optional<std::size_t> entry;
  /// Phi values at while and conditional joins (`dataflow_options::ssa_form`), as XLA's
  /// buffer assignment and `HloLiveRange` use: a loop's init value ends where the loop
  /// starts and a branch result where its branch ends. `false` gives the non-SSA ranges, in
  /// which every value flowing through a join lives as long as the join's result.
  bool ssa_form = true;
};

namespace detail {
inline void append_shape_index_text(std::string& out, const shape_index& index) {
  out += '{';
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (k != 0) out += ',';
    out += std::to_string(index[k]);
  }
  out += '}';
}
}  // namespace detail

/// The flattened schedule, computation contexts, buffers and per-value live ranges of a graph.
template <graph G>
class live_range_analysis {
 public:
  static_assert(graph_queries<G>::checked);  // optional graph_traits members have the right signatures
  using traits = graph_traits<G>;
  using dataflow_type = dataflow_analysis<G>;
  using colocation_type = colocation_analysis<G>;
  using value_id = typename dataflow_type::value_id;
  static constexpr std::int64_t no_time = -1;

  /// Runs dataflow, colocation and liveness on `g`. @returns the dataflow or colocation
  /// error, or `errc::invalid_argument` for a computation that calls itself (recursion).
  [[nodiscard]] static result<live_range_analysis> run(const G& g, const liveness_options& o = {}) {
    dataflow_options dopt;
    dopt.ssa_form = o.ssa_form;
    auto df = dataflow_type::run(g, dopt);
    if (!df) return df.error();
    live_range_analysis a;
    a.df_ = std::move(*df);
    // The entry.
    std::size_t entry = a.df_.computation_count() == 0 ? 0 : a.df_.computation_count() - 1;
    if (o.entry) {
      entry = *o.entry;
    } else if constexpr (entry_graph<G>) {
      entry = a.df_.computation_number(traits::entry(g));
    }
    if (a.df_.computation_count() == 0) return make_error(errc::invalid_argument, "liveness: the graph has no computation");
    if (entry >= a.df_.computation_count()) return make_error(errc::invalid_argument, "liveness: no entry computation");
    a.entry_ = entry;
    auto co = colocation_type::run(g, a.df_, entry);
    if (!co) return co.error();
    a.co_ = std::move(*co);
    if (auto r = a.classify(); !r) return r.error();
    if (auto r = a.flatten(); !r) return r.error();
    a.compute_ranges(g);
    a.normalize();
    return a;
  }

  [[nodiscard]] const dataflow_type& dataflow() const noexcept { return df_; }
  [[nodiscard]] const colocation_type& colocation() const noexcept { return co_; }
  /// Dense number of the entry computation.
  [[nodiscard]] std::size_t entry() const noexcept { return entry_; }
  /// Context of computation number `c`.
  [[nodiscard]] computation_context context(std::size_t c) const { return context_[c]; }

  /// The flattened schedule: instruction numbers in time order.
  [[nodiscard]] const std::vector<std::size_t>& sequence() const noexcept { return sequence_; }
  /// Time of instruction number `n`, or `no_time` when it is not scheduled.
  [[nodiscard]] std::int64_t time_of(std::size_t n) const { return time_[n]; }
  /// `[start, end)` of computation number `c` on the timeline (`{-1,-1}` when not scheduled).
  [[nodiscard]] live_range span(std::size_t c) const { return span_[c]; }
  /// The end of the schedule (its length); entry outputs live to here.
  [[nodiscard]] std::int64_t end_time() const noexcept { return static_cast<std::int64_t>(sequence_.size()); }

  /// Whether value `v` has a live range (it is defined in a sequential computation).
  [[nodiscard]] bool has_range(value_id v) const { return has_range_[v] != 0; }
  /// The live range of value `v`. @pre `has_range(v)`.
  [[nodiscard]] live_range range(value_id v) const { return ranges_[v]; }
  /// Whether value `v` reaches the entry root (a program output).
  [[nodiscard]] bool lives_out(value_id v) const { return live_out_[v] != 0; }
  /// Whether value `v` is defined in a computation of context `c`.
  [[nodiscard]] computation_context value_context(value_id v) const {
    return context_[df_.parent_number(df_.number(df_.get(v).defining.instruction))];
  }

  /// The time with the most live bytes (XLA's ComputePeakMemoryMoment: each value counts the
  /// top-level size of its defining instruction's output); 0 for an empty program.
  [[nodiscard]] std::int64_t peak_moment() const {
    std::vector<std::tuple<std::int64_t, int, value_id>> events;
    for (value_id v = 0; v < df_.values().size(); ++v) {
      if (!has_range(v)) continue;
      events.emplace_back(ranges_[v].start, 0, v);
      events.emplace_back(ranges_[v].end + 1, 1, v);
    }
    std::sort(events.begin(), events.end());
    std::int64_t usage = 0, peak = 0, moment = 0;
    for (const auto& [t, is_end, v] : events) {
      const auto n = df_.number(df_.get(v).defining.instruction);
      const auto bytes = static_cast<std::int64_t>(df_.subshape(n, 0).bytes);
      usage += is_end != 0 ? -bytes : bytes;
      if (peak < usage) {
        peak = usage;
        moment = t;
      }
    }
    return moment;
  }

  /// Values live at time `t`, largest first (then by name and index): XLA's "Live ranges at t".
  [[nodiscard]] std::vector<value_id> live_at(const G& g, std::int64_t t) const {
    std::vector<std::pair<std::string, value_id>> live;
    for (value_id v = 0; v < df_.values().size(); ++v) {
      if (has_range(v) && ranges_[v].start <= t && t <= ranges_[v].end) live.emplace_back(value_name(g, v, false), v);
    }
    std::sort(live.begin(), live.end(), [&](const auto& a, const auto& b) {
      const auto sa = df_.get(a.second).bytes, sb = df_.get(b.second).bytes;
      if (sa != sb) return sa > sb;
      const auto& ia = df_.get(a.second).defining;
      const auto& ib = df_.get(b.second).defining;
      const auto na = graph_queries<G>::name(g, ia.instruction, df_.number(ia.instruction));
      const auto nb = graph_queries<G>::name(g, ib.instruction, df_.number(ib.instruction));
      if (na != nb) return na < nb;
      return ia.index < ib.index;
    });
    std::vector<value_id> out;
    out.reserve(live.size());
    for (auto& e : live) out.push_back(e.second);
    return out;
  }

  /// `NAME{index}` of value `v`; with `omit_empty_index`, `NAME` when the index is `{}`.
  [[nodiscard]] std::string value_name(const G& g, value_id v, bool omit_empty_index) const {
    const auto& d = df_.get(v).defining;
    std::string s = graph_queries<G>::name(g, d.instruction, df_.number(d.instruction));
    if (!(omit_empty_index && d.index.empty())) detail::append_shape_index_text(s, d.index);
    return s;
  }

 private:
  dataflow_type df_;
  colocation_type co_;
  std::size_t entry_ = 0;
  std::vector<computation_context> context_;
  std::vector<std::size_t> sequence_;
  std::vector<std::int64_t> time_;
  std::vector<live_range> span_;
  std::vector<live_range> ranges_;
  std::vector<char> has_range_;
  std::vector<char> live_out_;

  static bool binds(call_binding b) noexcept {
    return b == call_binding::call || b == call_binding::while_body || b == call_binding::while_condition ||
           b == call_binding::conditional_branch || b == call_binding::async_wrapped;
  }

  /// The time of the last instruction of async call site `n`'s chain: those that pass its whole
  /// output on, or the result of it (async-update, async-done), transitively.
  std::int64_t async_window_end(std::size_t n) const {
    std::int64_t end = time_[n];
    std::vector<std::size_t> work{n};
    while (!work.empty()) {
      const std::size_t x = work.back();
      work.pop_back();
      for (const std::size_t u : df_.users(x)) {
        bool passes_on = false;
        for (const auto& f : df_.semantics(u).forwards) {
          passes_on = passes_on || (f.output_index.empty() && df_.operands(u)[f.operand] == x);
        }
        if (!passes_on || time_[u] == no_time) continue;
        end = std::max(end, time_[u]);
        work.push_back(u);  // each step forwards a later instruction's output: no cycle
      }
    }
    return end;
  }

  // Contexts: a breadth-first walk from the entry over call edges.
  result<void> classify() {
    const std::size_t nc = df_.computation_count();
    context_.assign(nc, computation_context::unreachable);
    // callees per computation, from the call sites.
    std::vector<std::vector<std::pair<std::size_t, call_binding>>> callees(nc);
    for (std::size_t c = 0; c < nc; ++c) {
      for (const auto& cs : df_.callers(c)) callees[df_.parent_number(cs.caller)].emplace_back(c, cs.binding);
    }
    auto rank = [](computation_context x) {
      switch (x) {
        case computation_context::sequential: return 0;
        case computation_context::embedded: return 1;
        case computation_context::fused: return 2;
        default: return 3;
      }
    };
    context_[entry_] = computation_context::sequential;
    std::vector<std::size_t> work{entry_};
    while (!work.empty()) {
      const std::size_t c = work.back();
      work.pop_back();
      for (const auto& [callee, b] : callees[c]) {
        computation_context next = context_[c];
        if (b == call_binding::fusion) next = computation_context::fused;
        else if (b == call_binding::embedded) next = computation_context::embedded;  // also inside a fusion
        if (rank(next) < rank(context_[callee])) {
          context_[callee] = next;
          work.push_back(callee);
        }
      }
    }
    return {};
  }

  result<void> flatten() {
    const std::size_t ni = df_.instruction_count();
    time_.assign(ni, no_time);
    span_.assign(df_.computation_count(), live_range{no_time, no_time});
    std::vector<char> state(df_.computation_count(), 0);  // 0 new, 1 in progress, 2 done
    // Per computation, its instruction numbers in graph order.
    std::vector<std::vector<std::size_t>> order(df_.computation_count());
    for (std::size_t n = 0; n < ni; ++n) order[df_.parent_number(n)].push_back(n);
    std::optional<error> failure;
    // Depth-first over the call graph with an explicit stack: a call chain of 10^5 computations
    // must not overflow the machine stack (a recursive visit did at about 3x10^4).
    struct frame {
      std::size_t c;
      std::int64_t start;
      std::size_t k = 0;  // next instruction of order[c]
      int pass = 0;       // 0: while conditions, calls, branches; 1: while bodies
      std::size_t q = 0;  // next call of that instruction in this pass
    };
    std::vector<frame> stack;
    auto enter = [&](std::size_t c) {
      if (failure || state[c] == 2) return false;
      if (state[c] == 1) {
        failure = error(errc::invalid_argument, "liveness: computation #" + std::to_string(c) + " calls itself");
        return false;
      }
      state[c] = 1;
      stack.push_back({c, static_cast<std::int64_t>(sequence_.size())});
      return true;
    };
    enter(entry_);
    while (!stack.empty() && !failure) {
      frame& f = stack.back();
      if (f.k == order[f.c].size()) {
        span_[f.c] = {f.start, static_cast<std::int64_t>(sequence_.size())};
        state[f.c] = 2;
        stack.pop_back();
        continue;
      }
      const std::size_t n = order[f.c][f.k];
      const auto& calls = df_.semantics(n).calls;
      // A while's condition first, then its body; call and conditional callees in order.
      bool descended = false;
      while (f.pass < 2) {
        if (f.q == calls.size()) {
          ++f.pass;
          f.q = 0;
          continue;
        }
        const auto& cc = calls[f.q++];
        const bool first = cc.binding == call_binding::while_condition || cc.binding == call_binding::call ||
                           cc.binding == call_binding::conditional_branch || cc.binding == call_binding::async_wrapped;
        const bool second = cc.binding == call_binding::while_body;
        if ((f.pass == 0 && first) || (f.pass == 1 && second)) {
          const std::size_t callee = df_.computation_number(cc.computation);
          if (callee < df_.computation_count() && enter(callee)) {
            descended = true;  // `f` may dangle now: the callee's frame is on top
            break;
          }
          if (failure) break;
        }
      }
      if (failure) break;
      if (descended) continue;
      time_[n] = static_cast<std::int64_t>(sequence_.size());
      sequence_.push_back(n);
      ++f.k;
      f.pass = 0;
      f.q = 0;
    }
    if (failure) return *failure;
    return {};
  }

  void compute_ranges(const G& g) {
    const std::size_t nv = df_.values().size();
    ranges_.assign(nv, {});
    has_range_.assign(nv, 0);
    live_out_.assign(nv, 0);
    const std::size_t entry_root = df_.root(entry_);
    for (const auto& index : df_.subshapes(entry_root)) {
      for (auto v : df_.value_set(entry_root, index)) live_out_[v] = 1;
    }
    const std::int64_t end = end_time();
    for (value_id v = 0; v < nv; ++v) {
      const auto& val = df_.get(v);
      const std::size_t n = df_.number(val.defining.instruction);
      if (time_[n] == no_time) continue;
      const std::size_t c = df_.parent_number(n);
      const bool is_param = df_.parameter_number(n) >= 0;
      live_range r;
      r.start = is_param ? span_[c].start : time_[n];
      r.end = df_.is_root(n) ? span_[c].end : time_[n];
      // A value of an async computation lives until the end of its chain (XLA's async context:
      // the wrapped computation runs while its caller's computation goes on).
      for (const auto& cs : df_.callers(c)) {
        if (cs.binding != call_binding::async_wrapped || time_[cs.caller] == no_time) continue;
        r.end = std::max(r.end, async_window_end(cs.caller));
      }
      for (std::size_t k = 1; k < df_.positions(val.id).size(); ++k) {
        const std::size_t pn = df_.number(df_.positions(val.id)[k].instruction);
        std::int64_t t = no_time;
        if (df_.is_root(pn)) t = span_[df_.parent_number(pn)].end;
        else t = time_[pn];
        if (t != no_time) r.end = std::max(r.end, t);
      }
      if (is_param && c == entry_ && !co_.parameter_has_alias(df_.parameter_number(n), val.defining.index)) {
        r.end = end;
      } else {
        for (const auto& u : df_.uses(val.id)) {
          std::size_t un = df_.number(u.instruction);
          bool skip = false;
          std::optional<std::size_t> body;
          for (const auto& cc : df_.semantics(un).calls) {
            if (cc.binding == call_binding::call) skip = true;
            if (cc.binding == call_binding::while_body) body = df_.computation_number(cc.computation);
          }
          if (skip) continue;
          if (body && *body < df_.computation_count() && !df_.parameters(*body).empty()) un = df_.parameters(*body)[0];
          if (time_[un] != no_time) r.end = std::max(r.end, time_[un]);
        }
      }
      ranges_[v] = r;
      has_range_[v] = 1;
    }
    (void)g;
  }

  void normalize() {
    for (std::size_t b = 0; b < co_.buffer_count(); ++b) {
      const auto& vals = co_.values(static_cast<typename colocation_type::buffer_id>(b));
      if (vals.size() < 2) continue;
      std::vector<value_id> ranged;
      for (auto v : vals) {
        if (has_range_[v]) ranged.push_back(v);
      }
      std::sort(ranged.begin(), ranged.end(), [&](value_id a, value_id c) {
        return std::tie(ranges_[a].start, ranges_[a].end, a) < std::tie(ranges_[c].start, ranges_[c].end, c);
      });
      for (std::size_t k = 0; k + 1 < ranged.size(); ++k) {
        auto& r1 = ranges_[ranged[k]];
        auto& r2 = ranges_[ranged[k + 1]];
        r2.end = std::max(r1.end, r2.end);
        r1.end = std::min(r1.end, r2.start);
      }
    }
  }
};

}  // namespace xlamem
