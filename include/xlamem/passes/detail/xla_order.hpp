// SPDX-License-Identifier: Apache-2.0
/// @file
/// The parts of buffer assignment that exist only to reproduce XLA's choices where XLA's order
/// decides them (`--solver xla` matches XLA:CPU byte for byte because of them): the post-order
/// position XLA's BufferAssigner sorts equal-size buffers by, the sort keys its heap simulator
/// gives each temporary (heap-clock durations, value-id ties), and the creation order and
/// `std::partition` of `CombineTempAllocations`. Nothing here is a rule of good planning; it
/// is XLA's bookkeeping, kept apart so `buffer_assignment.hpp` reads as the algorithm.
/// Costs: post order O(instructions + operands); heap keys O(values log values).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/packing/xla_best_fit.hpp"
#include "xlamem/passes/liveness.hpp"

namespace xlamem::detail {

/// Whether value `v` gets an allocation: defined in a sequential or thread-local computation.
template <class Liveness>
[[nodiscard]] bool planned_value(const Liveness& la, typename Liveness::value_id v) {
  const auto ctx = la.value_context(v);
  return ctx == computation_context::sequential || ctx == computation_context::embedded;
}

/// XLA's post-order position of every instruction (BufferAssigner's sort key among buffers
/// of one size): the scheduled computations in reverse post-order of the call graph
/// (callers before callees; a while's body before its condition, as XLA lists them), each
/// in `MakeInstructionPostOrder` order: depth first from every instruction without users,
/// in graph order, operands first to last. Others follow in dense-number order.
template <class Liveness>
[[nodiscard]] std::vector<std::int64_t> xla_post_order_positions(const Liveness& la) {
  const auto& df = la.dataflow();
  const std::size_t ni = df.instruction_count(), nc = df.computation_count();
  std::vector<std::vector<std::size_t>> members(nc);
  std::vector<char> used(ni, 0);
  for (std::size_t n = 0; n < ni; ++n) {
    members[df.parent_number(n)].push_back(n);
    for (const auto o : df.operands(n)) used[o] = 1;
  }
  auto callees = [&](std::size_t c) {
    std::vector<std::size_t> out;
    for (const auto n : members[c]) {
      const auto& calls = df.semantics(n).calls;
      for (int pass = 0; pass < 2; ++pass) {  // a while's body first, then the rest in order
        for (const auto& cc : calls) {
          if ((cc.binding == call_binding::while_body) != (pass == 0)) continue;
          const auto k = df.computation_number(cc.computation);
          if (k < nc && la.context(k) == computation_context::sequential) out.push_back(k);
        }
      }
    }
    return out;
  };
  std::vector<std::size_t> comp_post;
  std::vector<char> seen(nc, 0);
  // Post-order over the call graph with an explicit stack (a call chain of 10^5
  // computations would overflow the machine stack recursively).
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> comp_stack;  // (computation, callees)
  std::vector<std::size_t> comp_next;                                       // next callee to visit
  auto enter_comp = [&](std::size_t c) {
    seen[c] = 1;
    comp_stack.emplace_back(c, callees(c));
    comp_next.push_back(0);
  };
  enter_comp(la.entry());
  while (!comp_stack.empty()) {
    const auto& top = comp_stack.back();
    if (comp_next.back() < top.second.size()) {
      const auto k = top.second[comp_next.back()++];
      if (seen[k] == 0) enter_comp(k);  // `top` may dangle after this
      continue;
    }
    comp_post.push_back(top.first);
    comp_stack.pop_back();
    comp_next.pop_back();
  }
  std::vector<std::int64_t> pos(ni, -1);
  std::vector<char> on_stack(ni, 0);  // a cycle cannot occur in a valid graph; never loop on one
  std::int64_t next = 0;
  std::vector<std::pair<std::size_t, std::size_t>> stack;  // (instruction, next operand)
  for (auto it = comp_post.rbegin(); it != comp_post.rend(); ++it) {
    for (const auto root : members[*it]) {
      if (used[root] != 0 || pos[root] >= 0) continue;
      stack.assign(1, {root, 0});
      on_stack[root] = 1;
      while (!stack.empty()) {
        auto& [n, k] = stack.back();
        const auto& ops = df.operands(n);
        if (k < ops.size()) {
          const auto o = ops[k++];
          if (pos[o] < 0 && on_stack[o] == 0 && df.parent_number(o) == df.parent_number(n)) {
            on_stack[o] = 1;
            stack.emplace_back(o, 0);
          }
          continue;
        }
        pos[n] = next++;
        on_stack[n] = 0;
        stack.pop_back();
      }
    }
  }
  for (std::size_t n = 0; n < ni; ++n) {
    if (pos[n] < 0) pos[n] = next++;
  }
  return pos;
}

/// The keys XLA's heap sorts the items by: its heap simulator replays the schedule, and at
/// each step first starts the values defined there (sorted by start, end), each an Alloc or
/// a ShareWith (a taken-over operand is freed just before), then frees the values ending
/// there; every call is one tick of the heap's clock. An item's own duration is its first
/// value's interval on that clock; its span runs from its first start to its last end.
template <class Liveness, class BufferId, class ValueId>
[[nodiscard]] xla_heap_keys xla_heap_sort_keys(const Liveness& la, const std::vector<BufferId>& bufs,
                                               const std::vector<std::size_t>& item_of, std::size_t items,
                                               const std::vector<std::pair<ValueId, ValueId>>& takes_over,
                                               const std::vector<std::int64_t>& post_order) {
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  struct ev {
    ValueId v;
    std::size_t item;
    live_range r;
  };
  std::vector<ev> vals;
  for (std::size_t k = 0; k < bufs.size(); ++k) {
    for (auto v : la.colocation().values(bufs[k])) {
      if (planned_value(la, v) && la.has_range(v)) vals.push_back({v, item_of[k], la.range(v)});
    }
  }
  std::sort(vals.begin(), vals.end(), [](const ev& a, const ev& b) {
    return std::tie(a.r.start, a.r.end, a.v) < std::tie(b.r.start, b.r.end, b.v);
  });
  std::int64_t last = 0;
  for (const auto& e : vals) last = std::max(last, e.r.end);
  std::vector<std::vector<std::size_t>> starts(static_cast<std::size_t>(last) + 1), ends(static_cast<std::size_t>(last) + 1);
  for (std::size_t i = 0; i < vals.size(); ++i) {
    starts[static_cast<std::size_t>(vals[i].r.start)].push_back(i);
    ends[static_cast<std::size_t>(vals[i].r.end)].push_back(i);
  }
  std::vector<std::int64_t> t_start(vals.size(), -1), t_end(vals.size(), -1);
  // Per position in `vals`: the position of the operand value it takes over, if any.
  const std::size_t nv = la.dataflow().values().size();
  std::vector<std::size_t> pos_of(nv, none), takes(vals.size(), none);
  for (std::size_t i = 0; i < vals.size(); ++i) pos_of[vals[i].v] = i;
  for (const auto& [v, w] : takes_over) {
    if (pos_of[v] != none) takes[pos_of[v]] = pos_of[w];
  }
  std::int64_t clock = 0;
  for (std::size_t t = 0; t <= static_cast<std::size_t>(last); ++t) {
    for (const auto i : starts[t]) {
      const auto j = takes[i];
      if (j != none && t_end[j] < 0) t_end[j] = clock++;  // XLA frees the operand just before
      t_start[i] = clock++;
    }
    for (const auto i : ends[t]) {
      if (t_end[i] < 0) t_end[i] = clock++;
    }
  }
  xla_heap_keys keys;
  keys.own_duration.assign(items, 0);
  keys.span.assign(items, 0);
  keys.rank.assign(items, 0);
  keys.pieces.assign(items, {});
  for (std::size_t i = 0; i < vals.size(); ++i) keys.pieces[vals[i].item].emplace_back(t_start[i], t_end[i]);
  std::vector<std::int64_t> first(items, -1), lo(items, -1), hi(items, -1);
  for (std::size_t i = 0; i < vals.size(); ++i) {  // in start order: the first seen is the first value
    const auto it = vals[i].item;
    if (first[it] < 0) {
      first[it] = static_cast<std::int64_t>(i);
      keys.own_duration[it] = t_end[i] - t_start[i];
      // XLA numbers values in instruction post-order; its ties go to the lower number.
      const auto& d = la.dataflow().get(vals[i].v).defining;
      const auto n = la.dataflow().number(d.instruction);
      const auto k = la.dataflow().find_index(n, d.index);
      keys.rank[it] = post_order[n] * 1024 + static_cast<std::int64_t>(k ? *k : 0);
    }
    lo[it] = lo[it] < 0 ? t_start[i] : std::min(lo[it], t_start[i]);
    hi[it] = std::max(hi[it], t_end[i]);
  }
  for (std::size_t it = 0; it < items; ++it) keys.span[it] = hi[it] - lo[it];
  return keys;
}

/// One allocation of XLA's list, in creation order (see `combine_temporaries`).
template <class BufferId>
struct created_allocation {
  bool temp = false;
  BufferId tuple = static_cast<BufferId>(-1);  // a temporary tuple table, or none
  std::int64_t color = 0;                        // of a heap or tuple table (when `temp`)
};

/// XLA's allocation list in creation order: the global pass, one heap per colour, then the
/// thread-local allocations.
template <class BufferId>
[[nodiscard]] std::vector<created_allocation<BufferId>> global_pass_heaps(
    const std::vector<created_allocation<BufferId>>& global_pass, const std::vector<std::int64_t>& heap_colors,
    std::size_t thread_local_count) {
  std::vector<created_allocation<BufferId>> seq(global_pass);
  seq.reserve(global_pass.size() + heap_colors.size() + thread_local_count);
  for (const auto c : heap_colors) seq.push_back({true, static_cast<BufferId>(-1), c});
  seq.insert(seq.end(), thread_local_count, created_allocation<BufferId>{});
  return seq;
}

/// XLA's CombineTempAllocations moves the temporary allocations to the end of the list with
/// `std::partition`: a two-ended scan that swaps, so their order is not creation order. This
/// is that scan; it returns where the temporaries start.
template <class BufferId>
[[nodiscard]] std::size_t xla_partition_temporaries(std::vector<created_allocation<BufferId>>& seq) {
  std::size_t first = 0, last = seq.size();
  for (;;) {
    while (first != last && !seq[first].temp) ++first;
    if (first == last) break;
    --last;
    while (first != last && seq[last].temp) --last;
    if (first == last) break;
    std::swap(seq[first], seq[last]);
    ++first;
  }
  return first;
}

}  // namespace xlamem::detail
