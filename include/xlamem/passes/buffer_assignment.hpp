// SPDX-License-Identifier: Apache-2.0
/// @file
/// Buffer assignment (XLA's BufferAssigner on a sequential schedule): every buffer of a
/// graph (`colocation_analysis`) gets an allocation and an offset in it, per memory space
/// (colour), and the allocations give `compiled_memory_stats`.
///
/// The rules follow XLA. Buffers are taken largest first (live-out first among equals, then
/// by schedule position, then id):
/// - a buffer holding a constant gets its own constant allocation, never reused;
/// - a buffer holding an entry parameter gets its own parameter allocation (one per
///   parameter leaf); when `input_output_alias` aliases it with an output, the allocation is
///   also live-out and, once the parameter is dead, may be reused;
/// - a buffer of a thread-local computation (reduce, sort, map, ... regions) gets its own
///   thread-local allocation; fused computations get no buffers;
/// - any other buffer first tries to reuse an allocation of one of its defining
///   instruction's operands, then any reusable allocation made so far (live-out allocations
///   and aliased parameters), when the colours match, it fits, no assigned value's live range
///   interferes (touching ranges are fine when the user may overwrite its dying operand), a
///   copy does not land on its source, and a live-out buffer fits exactly (allocations made
///   for tuple tables are not reused);
/// - otherwise a buffer that does not live out is a temporary: all temporaries of a colour are
///   packed into one `preallocated-temp` allocation by a `temp_packer` (XLA best fit, the
///   heuristic portfolio, or the search with a time budget: the default). Live-out buffers
///   get allocations of their own. Before packing, a temporary may take over the chunk of a
///   same-size operand temporary that dies where it is defined (the heap simulator's
///   `ShareWith`); with `can_use_allocation`, temporaries of one colour may fill gaps of
///   another colour's heap. XLA's best fit is always computed and is the floor for any packer.
/// - an unscheduled (pre-optimisation) module gets XLA's output copies emulated
///   (`output_copies`).
///
/// Offsets in the temporary heap are multiples of `alignment` (64 B is CPU-like, 256 B
/// GPU-like). `validate()` checks that no two values live at the same time share bytes of an
/// allocation (except values of one buffer, and an operand and the user that overwrites it).
///
/// A `buffer_assignment` is a value (concurrent reads are fine); for a `dense_graph` the graph
/// must outlive it (see `dataflow_analysis`).
///
/// Cost: liveness O(values + uses); reuse O(buffers x reusable allocations x values in them);
/// packing as the policy (the heuristics are O(n log n + conflicts)).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/passes/colocation.hpp"
#include "xlamem/passes/liveness.hpp"
#include "xlamem/passes/memory_stats.hpp"
#include "xlamem/passes/planning_solvers.hpp"
#include "xlamem/passes/planning_traits.hpp"

namespace xlamem {

/// Options of `buffer_assignment::run`.
struct buffer_assignment_options {
  /// Alignment of offsets in the temporary heap: a power of two (64 CPU-like, 256 GPU-like).
  std::int64_t alignment = 64;
  /// Packing policy of the temporary heap.
  solver_kind solver = solver_kind::search;
  /// Time budget of `solver_kind::search`, seconds.
  double time_limit_seconds = 1.0;
  /// Reuse live-out and aliased-parameter allocations for other buffers (XLA does).
  bool reuse_allocations = true;
  /// Emulate XLA's copy insertion for the outputs: an output leaf that is an entry parameter
  /// (not aliased), a constant, or a buffer appearing at several output leaves gets a copy of
  /// its own (a live-out allocation with no values), and the original buffer no longer lives
  /// out. By default on exactly when the graph is not scheduled (`is_scheduled=false`: a
  /// pre-optimisation module that XLA would still copy-insert).
  std::optional<bool> output_copies;
  /// Colour pairs (buffer colour, allocation colour): temporaries of the first colour may be
  /// placed in free gaps of the second colour's temporary heap, without growing it (XLA's
  /// `can_use_allocation` / `ReuseCompatibleTempHeaps`). Empty: every colour keeps its own heap.
  std::vector<std::pair<std::int64_t, std::int64_t>> can_use_allocation;
  /// XLA's treatment of temporary tuple pointer tables: every tuple-shaped buffer gets an
  /// allocation of its own (never reused, never in the heap), and the temporary allocations
  /// of a colour are then laid end to end (each at the next `alignment` boundary) in the
  /// order XLA's `CombineTempAllocations` leaves them: its `std::partition` of the
  /// allocation list, which runs from both ends and so does not keep creation order. By
  /// default on exactly for `solver_kind::xla`; otherwise temporary tuple tables are packed
  /// in the heap with everything else (never larger in practice, and often smaller).
  std::optional<bool> tuple_tables_outside_heap;
  /// Liveness options (the entry computation).
  liveness_options liveness;
};

/// Where one value lives.
struct value_slice {
  std::size_t allocation = 0;
  std::int64_t offset = 0;
  std::int64_t size = 0;
  friend bool operator==(const value_slice&, const value_slice&) = default;
};

/// One allocation (XLA's BufferAllocation).
struct buffer_allocation {
  /// One value placed in the allocation.
  struct assigned {
    std::uint32_t value = 0;  ///< dataflow value id
    std::int64_t offset = 0;
    std::int64_t size = 0;
  };
  std::size_t index = 0;
  allocation_flags flags_;                ///< size, colour and the XLA predicates
  std::int64_t parameter_number = -1;     ///< entry parameter, when `is_entry_parameter`
  shape_index parameter_index;            ///< leaf of that parameter
  bool holds_entry_root = false;          ///< holds the entry root's top-level value
  std::string copy_of;                    ///< an emulated output copy: the leaf it copies
  std::vector<assigned> values;           ///< ascending value id

  [[nodiscard]] const allocation_flags& flags() const noexcept { return flags_; }
  [[nodiscard]] std::int64_t size() const noexcept { return flags_.size; }
  [[nodiscard]] std::int64_t color() const noexcept { return flags_.color; }
  /// Entry parameters that no output aliases, and constants: never reused.
  [[nodiscard]] bool is_readonly() const noexcept {
    return (flags_.is_entry_parameter && !flags_.is_parameter_aliased_with_output) || flags_.is_constant;
  }
};

/// The temporary heap of one colour: the packing problem solved and its placement.
struct temp_heap {
  std::int64_t color = 0;
  std::size_t allocation = 0;          ///< index of its preallocated-temp allocation
  packing_problem problem;             ///< one interval buffer per temporary buffer
  std::vector<std::uint32_t> buffers;  ///< per problem buffer: the (first) colocation buffer it places
  placement solution;
  std::int64_t size = 0;               ///< heap size: the placement's peak
  std::int64_t lower_bound = 0;        ///< `xlamem::lower_bound(problem)`, or the alignment-aware bound when larger
  std::string solver;                  ///< the packer's name
  double seconds = 0.0;                ///< packing time
};

/// The result of buffer assignment on a graph.
template <graph G>
class buffer_assignment {
 public:
  using liveness_type = live_range_analysis<G>;
  using dataflow_type = typename liveness_type::dataflow_type;
  using value_id = typename dataflow_type::value_id;
  using buffer_id = typename colocation_analysis<G>::buffer_id;

  /// Assigns the buffers of `g` with the packer named in `o`.
  [[nodiscard]] static result<buffer_assignment> run(const G& g, const buffer_assignment_options& o = {}) {
    switch (o.solver) {
      case solver_kind::xla: return run(g, o, xla_best_fit_packer{});
      case solver_kind::heuristic: return run(g, o, heuristic_packer{});
      default: return run(g, o, search_packer{o.time_limit_seconds});
    }
  }

  /// Assigns the buffers of `g`, packing temporaries with `packer`.
  /// @returns liveness errors, or `errc::invalid_argument` for a bad alignment.
  template <temp_packer P>
  [[nodiscard]] static result<buffer_assignment> run(const G& g, const buffer_assignment_options& o, const P& packer) {
    if (o.alignment <= 0 || !is_power_of_two(static_cast<std::uint64_t>(o.alignment))) {
      return make_error(errc::invalid_argument,
                        "buffer assignment: alignment " + std::to_string(o.alignment) + " is not a power of two");
    }
    auto la = liveness_type::run(g, o.liveness);
    if (!la) return la.error();
    buffer_assignment a;
    a.options_ = o;
    a.la_ = std::move(*la);
    if (auto r = a.assign(g, packer); !r) return r.error();
    return a;
  }

  [[nodiscard]] const liveness_type& liveness() const noexcept { return la_; }
  [[nodiscard]] const dataflow_type& dataflow() const noexcept { return la_.dataflow(); }
  [[nodiscard]] const buffer_assignment_options& options() const noexcept { return options_; }
  [[nodiscard]] const std::vector<buffer_allocation>& allocations() const noexcept { return allocations_; }
  /// The temporary heaps, one per colour that has temporaries.
  [[nodiscard]] const std::vector<temp_heap>& heaps() const noexcept { return heaps_; }
  /// Where value `v` lives, or nullopt when it has no allocation (fused, unreachable).
  [[nodiscard]] std::optional<value_slice> slice_of(value_id v) const {
    if (slice_[v].allocation == none) return std::nullopt;
    return slice_[v];
  }
  /// XLA's CompiledMemoryStats of the allocations, with `peak_memory_in_bytes`.
  [[nodiscard]] const compiled_memory_stats& stats() const noexcept { return stats_; }
  /// The time of the peak and the buffers live then, largest first.
  [[nodiscard]] std::int64_t peak_time() const noexcept { return peak_time_; }
  [[nodiscard]] const std::vector<buffer_id>& peak_buffers() const noexcept { return peak_buffers_; }
  /// Size of buffer `b` (its largest value).
  [[nodiscard]] std::int64_t buffer_size(buffer_id b) const { return info_[b].size; }
  /// The hull of buffer `b`'s value ranges; `{-1,-1}` when it has none.
  [[nodiscard]] live_range buffer_range(buffer_id b) const { return info_[b].hull; }

  /// Checks the assignment: every value with a range has a slice inside its allocation, heap
  /// offsets are aligned, and no two values live at the same time share bytes of an
  /// allocation, except values of one buffer and an operand with the user that overwrites
  /// it. @returns `errc::invalid_argument` naming the two values.
  [[nodiscard]] result<void> validate(const G& g) const {
    const auto& df = la_.dataflow();
    struct item {
      value_id v;
      std::int64_t offset, size;
      live_range r;
    };
    for (const auto& al : allocations_) {
      std::vector<item> items;
      for (const auto& x : al.values) {
        if (x.offset < 0 || x.offset + x.size > al.size()) {
          return make_error(errc::invalid_argument, "allocation " + std::to_string(al.index) + ": value " +
                                                        la_.value_name(g, x.value, false) + " lies outside it");
        }
        if (al.flags_.is_preallocated_temp() && x.offset % options_.alignment != 0) {
          return make_error(errc::invalid_argument, "allocation " + std::to_string(al.index) + ": value " +
                                                        la_.value_name(g, x.value, false) + " is not aligned");
        }
        if (la_.has_range(x.value) && x.size > 0) items.push_back({x.value, x.offset, x.size, la_.range(x.value)});
      }
      std::sort(items.begin(), items.end(), [](const item& a, const item& b) { return a.r.start < b.r.start; });
      std::vector<item> active;
      for (const auto& it : items) {
        std::erase_if(active, [&](const item& a) { return a.r.end < it.r.start; });
        for (const auto& a : active) {
          if (a.offset >= it.offset + it.size || it.offset >= a.offset + a.size) continue;
          if (la_.colocation().buffer_of(a.v) == la_.colocation().buffer_of(it.v)) continue;
          if (a.r.end == it.r.start && a.offset == it.offset && a.size == it.size && can_share(g, it.v, a.v)) continue;
          return make_error(errc::invalid_argument,
                            "allocation " + std::to_string(al.index) + ": values " + la_.value_name(g, a.v, false) +
                                " [" + std::to_string(a.r.start) + "-" + std::to_string(a.r.end) + "] and " +
                                la_.value_name(g, it.v, false) + " [" + std::to_string(it.r.start) + "-" +
                                std::to_string(it.r.end) + "] are live together and share bytes");
        }
        active.push_back(it);
      }
    }
    for (value_id v = 0; v < df.values().size(); ++v) {
      if (la_.has_range(v) && !la_.colocation().values(la_.colocation().buffer_of(v)).empty() &&
          slice_[v].allocation == none) {
        return make_error(errc::invalid_argument, "value " + la_.value_name(g, v, false) + " has no allocation");
      }
    }
    return {};
  }

  /// An allocation table in the format of XLA's `*-buffer-assignment.txt` dump.
  [[nodiscard]] std::string to_string(const G& g) const {
    const auto& df = la_.dataflow();
    std::string out = "BufferAssignment:\n";
    for (const auto& al : allocations_) {
      out += "allocation " + std::to_string(al.index) + ": size " + std::to_string(al.size());
      if (al.color() != 0) out += ", color " + std::to_string(al.color());
      if (al.flags_.is_entry_parameter) {
        const auto pn = df.parameters(la_.entry())[static_cast<std::size_t>(al.parameter_number)];
        std::string idx;
        detail::append_shape_index_text(idx, al.parameter_index);
        out += ", parameter " + std::to_string(al.parameter_number) + ", shape |" +
               strip_layout(planning_traits<G>::shape_string(g, df.instruction(pn), al.parameter_index)) +
               "| at ShapeIndex " + idx;
      }
      if (al.holds_entry_root) {
        const auto root = df.root(la_.entry());
        out += ", output shape is |" + strip_layout(planning_traits<G>::shape_string(g, df.instruction(root), {})) + "|";
      }
      if (al.flags_.is_constant) out += ", constant";
      if (al.flags_.is_thread_local) out += ", thread-local";
      if (al.flags_.maybe_live_out) out += ", maybe-live-out";
      if (al.flags_.is_preallocated_temp()) out += ", preallocated-temp";
      out += ":\n";
      if (!al.copy_of.empty()) out += " copy: " + al.copy_of + " (emulated copy insertion)\n";
      for (const auto& x : al.values) {
        const auto& d = df.get(x.value).defining;
        out += " value: <" + std::to_string(x.value) + " " + la_.value_name(g, x.value, !df.get(x.value).is_tuple && d.index.empty()) +
               (df.get(x.value).is_phi ? " (phi)" : "") + " @" + std::to_string(al.color()) + "> (size=" + std::to_string(x.size) + ",offset=" +
               std::to_string(x.offset) + "): " + planning_traits<G>::shape_string(g, d.instruction, d.index) + "\n";
      }
    }
    std::int64_t total = 0;
    for (const auto& al : allocations_) total += al.size();
    out += "\nTotal bytes used: " + std::to_string(total) + "\n";
    return out;
  }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  struct buffer_info {
    std::int64_t size = 0;
    std::int64_t color = 0;
    bool planned = false;       // has values outside fused/unreachable computations
    bool lives_out = false;
    bool thread_local_ = false;
    bool sequential = false;
    bool entry_parameter = false;  // holds an entry parameter's value
    std::int64_t position = 0;  // sort key: earliest definition
    live_range hull{-1, -1};
  };

  buffer_assignment_options options_;
  liveness_type la_;
  std::vector<buffer_info> info_;
  std::vector<char> copied_;  // per buffer: its output positions are emulated copies
  std::vector<buffer_allocation> allocations_;
  std::vector<temp_heap> heaps_;
  std::vector<value_slice> slice_;
  compiled_memory_stats stats_;
  std::int64_t peak_time_ = 0;
  std::vector<buffer_id> peak_buffers_;

  /// `SHAPE{layout}` without layouts: drops every `{...}` that follows `]`.
  static std::string strip_layout(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '{' && i > 0 && s[i - 1] == ']') {
        int depth = 0;
        for (; i < s.size(); ++i) {
          if (s[i] == '{') ++depth;
          else if (s[i] == '}' && --depth == 0) break;
        }
        continue;
      }
      out += s[i];
    }
    return out;
  }

  /// XLA's can_share_as_operand: `user` (a value) may overwrite `operand` (a value) that dies
  /// where `user` is defined.
  bool can_share(const G& g, value_id user, value_id operand) const {
    const auto& df = la_.dataflow();
    const auto& u = df.get(user).defining;
    if (planning_traits<G>::is_copy(g, u.instruction)) return false;
    const std::size_t un = df.number(u.instruction);
    for (const auto& p : df.get(operand).positions) {
      const std::size_t pn = df.number(p.instruction);
      const auto& ops = df.operands(un);
      if (std::find(ops.begin(), ops.end(), pn) == ops.end()) continue;
      if (planning_traits<G>::can_share_operand_buffer(g, p.instruction, p.index, u.instruction, u.index)) return true;
    }
    return false;
  }

  bool interferes(const G& g, value_id a, value_id b) const {
    const auto ra = la_.range(a), rb = la_.range(b);
    if (ra.start > rb.end || rb.start > ra.end) return false;
    if (ra.end == rb.start) return !can_share(g, b, a);
    if (rb.end == ra.start) return !can_share(g, a, b);
    return true;
  }

  bool is_copy_of(const G& g, value_id v, value_id source) const {
    const auto& df = la_.dataflow();
    const auto& d = df.get(v).defining;
    if (!planning_traits<G>::is_copy(g, d.instruction)) return false;
    const auto& ops = df.operands(df.number(d.instruction));
    for (const auto& p : df.get(source).positions) {
      if (std::find(ops.begin(), ops.end(), df.number(p.instruction)) != ops.end()) return true;
    }
    return false;
  }

  std::size_t new_allocation(buffer_id b) {
    buffer_allocation al;
    al.index = allocations_.size();
    al.flags_.size = info_[b].size;
    al.flags_.color = info_[b].color;
    allocations_.push_back(std::move(al));
    return allocations_.size() - 1;
  }

  void add(const G& g, std::size_t alloc, buffer_id b, std::int64_t offset) {
    const auto& df = la_.dataflow();
    auto& al = allocations_[alloc];
    const std::size_t root = df.root(la_.entry());
    for (auto v : la_.colocation().values(b)) {
      if (!planned_value(v)) continue;
      const auto bytes = static_cast<std::int64_t>(df.get(v).bytes);
      al.values.push_back({v, offset, bytes});
      slice_[v] = {alloc, offset, bytes};
      if (la_.lives_out(v) && !copied_[b]) al.flags_.maybe_live_out = true;
      for (const auto& p : df.get(v).positions) {
        if (df.number(p.instruction) == root && p.index.empty()) al.holds_entry_root = true;
      }
    }
    (void)g;
  }

  // XLA's post-order position of every instruction (BufferAssigner's sort key among buffers
  // of one size): the scheduled computations in reverse post-order of the call graph
  // (callers before callees; a while's body before its condition, as XLA lists them), each
  // in `MakeInstructionPostOrder` order: depth first from every instruction without users,
  // in graph order, operands first to last. Others follow in dense-number order.
  std::vector<std::int64_t> xla_post_order_positions() const {
    const auto& df = la_.dataflow();
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
            if (k < nc && la_.context(k) == computation_context::sequential) out.push_back(k);
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
    enter_comp(la_.entry());
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

  // The keys XLA's heap sorts the items by: its heap simulator replays the schedule, and at
  // each step first starts the values defined there (sorted by start, end), each an Alloc or
  // a ShareWith (a taken-over operand is freed just before), then frees the values ending
  // there; every call is one tick of the heap's clock. An item's own duration is its first
  // value's interval on that clock; its span runs from its first start to its last end.
  xla_heap_keys heap_keys(const std::vector<buffer_id>& bufs, const std::vector<std::size_t>& item_of, std::size_t items,
                          const std::vector<std::pair<value_id, value_id>>& takes_over,
                          const std::vector<std::int64_t>& post_order) const {
    struct ev {
      value_id v;
      std::size_t item;
      live_range r;
    };
    std::vector<ev> vals;
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      for (auto v : la_.colocation().values(bufs[k])) {
        if (planned_value(v) && la_.has_range(v)) vals.push_back({v, item_of[k], la_.range(v)});
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
    const std::size_t nv = la_.dataflow().values().size();
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
    std::vector<std::int64_t> first(items, -1), lo(items, -1), hi(items, -1);
    for (std::size_t i = 0; i < vals.size(); ++i) {  // in start order: the first seen is the first value
      const auto it = vals[i].item;
      if (first[it] < 0) {
        first[it] = static_cast<std::int64_t>(i);
        keys.own_duration[it] = t_end[i] - t_start[i];
        // XLA numbers values in instruction post-order; its ties go to the lower number.
        const auto& d = la_.dataflow().get(vals[i].v).defining;
        const auto n = la_.dataflow().number(d.instruction);
        const auto k = la_.dataflow().find_index(n, d.index);
        keys.rank[it] = post_order[n] * 1024 + static_cast<std::int64_t>(k ? *k : 0);
      }
      lo[it] = lo[it] < 0 ? t_start[i] : std::min(lo[it], t_start[i]);
      hi[it] = std::max(hi[it], t_end[i]);
    }
    for (std::size_t it = 0; it < items; ++it) keys.span[it] = hi[it] - lo[it];
    return keys;
  }

  // One allocation of XLA's list, in creation order (see `combine_temporaries`).
  struct created_allocation {
    bool temp = false;
    buffer_id tuple = static_cast<buffer_id>(-1);  // a temporary tuple table, or none
    std::int64_t color = 0;                        // of a heap or tuple table (when `temp`)
  };

  static std::vector<created_allocation> global_pass_heaps(const std::vector<created_allocation>& global_pass,
                                                           const std::vector<std::int64_t>& heap_colors,
                                                           std::size_t thread_local_count) {
    std::vector<created_allocation> seq(global_pass);
    seq.reserve(global_pass.size() + heap_colors.size() + thread_local_count);
    for (const auto c : heap_colors) seq.push_back({true, static_cast<buffer_id>(-1), c});
    seq.insert(seq.end(), thread_local_count, created_allocation{});
    return seq;
  }

  // XLA's CombineTempAllocations: `std::partition` moves the temporary allocations to the
  // end of the list (a two-ended scan that swaps, so their order is not creation order);
  // then, per colour, the first one is the base and each next one is placed at the next
  // alignment boundary after the previous. Here the heap of a colour is that base container
  // and the temporary tuple tables are placed into it at their offsets.
  void combine_temporaries(const G& g, std::vector<created_allocation> seq, std::vector<std::size_t>& alloc_of_buffer) {
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
    struct run_state {
      std::int64_t color;
      std::size_t allocation;
      std::int64_t size;
      bool started;
    };
    std::vector<run_state> runs;
    auto state_of = [&](std::int64_t color) -> run_state& {
      for (auto& r : runs) {
        if (r.color == color) return r;
      }
      std::size_t alloc = none;
      for (const auto& h : heaps_) {
        if (h.color == color) alloc = h.allocation;
      }
      if (alloc == none) {  // only tuple tables in this colour: an empty container
        buffer_allocation al;
        al.index = allocations_.size();
        al.flags_.color = color;
        allocations_.push_back(std::move(al));
        alloc = allocations_.size() - 1;
      }
      runs.push_back({color, alloc, 0, false});
      return runs.back();
    };
    // Bases first; then the heap's own values move from offset 0 to its base, and the tuple
    // tables are added at theirs.
    std::vector<std::pair<std::size_t, std::int64_t>> bases(seq.size() - first);  // (allocation, base)
    for (std::size_t k = first; k < seq.size(); ++k) {
      const auto& e = seq[k];
      auto& r = state_of(e.color);
      std::int64_t item = 0;
      if (e.tuple == static_cast<buffer_id>(-1)) {
        for (const auto& h : heaps_) {
          if (h.allocation == r.allocation) item = h.size;
        }
      } else {
        item = info_[e.tuple].size;
      }
      const std::int64_t base = r.started ? (r.size + options_.alignment - 1) / options_.alignment * options_.alignment : 0;
      r.size = base + item;
      r.started = true;
      bases[k - first] = {r.allocation, base};
    }
    for (std::size_t k = first; k < seq.size(); ++k) {
      const auto [alloc, base] = bases[k - first];
      if (seq[k].tuple != static_cast<buffer_id>(-1) || base == 0) continue;
      for (auto& x : allocations_[alloc].values) {
        x.offset += base;
        slice_[x.value].offset += base;
      }
    }
    for (std::size_t k = first; k < seq.size(); ++k) {
      if (seq[k].tuple == static_cast<buffer_id>(-1)) continue;
      add(g, bases[k - first].first, seq[k].tuple, bases[k - first].second);
      alloc_of_buffer[seq[k].tuple] = bases[k - first].first;
    }
    for (const auto& r : runs) allocations_[r.allocation].flags_.size = r.size;
  }

  bool planned_value(value_id v) const {
    const auto ctx = la_.value_context(v);
    return ctx == computation_context::sequential || ctx == computation_context::thread_local_;
  }

  bool maybe_assign(const G& g, std::size_t alloc, buffer_id b) {
    const auto& al = allocations_[alloc];
    const auto& bi = info_[b];
    if (al.color() != bi.color) return false;
    if (bi.size > al.size()) return false;
    if (al.is_readonly() || al.flags_.is_thread_local) return false;
    if (bi.lives_out && al.size() != bi.size) return false;
    for (const auto& x : al.values) {
      if (!la_.has_range(x.value)) return false;
      for (auto v : la_.colocation().values(b)) {
        if (!la_.has_range(v)) continue;
        if (interferes(g, v, x.value)) return false;
        if (is_copy_of(g, v, x.value)) return false;
      }
    }
    add(g, alloc, b, 0);
    return true;
  }

  template <class P>
  result<void> assign(const G& g, const P& packer) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const std::size_t nb = co.buffer_count();
    slice_.assign(df.values().size(), value_slice{none, 0, 0});
    info_.assign(nb, {});
    const std::size_t entry = la_.entry();
    // 0. Emulated copy insertion of the outputs.
    copied_.assign(nb, 0);
    struct out_copy {
      std::string name;
      std::int64_t size, color;
    };
    std::vector<out_copy> copies;
    if (options_.output_copies.value_or(!planning_traits<G>::is_scheduled(g))) {
      const std::size_t root = df.root(entry);
      std::vector<int> seen(nb, 0);
      std::vector<std::pair<std::size_t, std::vector<buffer_id>>> leaves;  // (subshape position, buffers)
      const auto& indices = df.subshapes(root);
      for (std::size_t k = 0; k < indices.size(); ++k) {
        if (!df.is_leaf(root, k)) continue;
        std::vector<buffer_id> here;
        for (auto v : df.value_set(root, indices[k])) {
          const auto b = co.buffer_of(v);
          if (std::find(here.begin(), here.end(), b) == here.end()) here.push_back(b);
        }
        for (auto b : here) ++seen[b];
        leaves.emplace_back(k, std::move(here));
      }
      for (const auto& [k, here] : leaves) {
        bool copy = false;
        for (const auto b : here) {
          copy = copy || seen[b] > 1;
          for (auto v : co.values(b)) {
            const auto& d = df.get(v).defining;
            const std::size_t n = df.number(d.instruction);
            if (planning_traits<G>::is_constant(g, d.instruction)) copy = true;
            if (df.parent_number(n) == entry && df.parameter_number(n) >= 0 &&
                !co.parameter_has_alias(df.parameter_number(n), d.index)) {
              copy = true;
            }
          }
        }
        if (!copy) continue;
        for (const auto b : here) copied_[b] = 1;
        std::string name = planning_traits<G>::name(g, df.instruction(root), root);
        detail::append_shape_index_text(name, indices[k]);
        const auto& info = df.subshape(root, k);
        copies.push_back({std::move(name), static_cast<std::int64_t>(info.bytes), info.memory_space});
      }
    }
    // 1. Buffer facts.
    const auto post_order = xla_post_order_positions();
    for (std::size_t b = 0; b < nb; ++b) {
      auto& bi = info_[b];
      bi.position = INT64_MAX;
      bool first = true;
      for (auto v : co.values(static_cast<buffer_id>(b))) {
        if (!planned_value(v)) continue;
        const auto& val = df.get(v);
        const std::size_t n = df.number(val.defining.instruction);
        bi.planned = true;
        bi.size = std::max(bi.size, static_cast<std::int64_t>(val.bytes));
        if (first) {
          const auto k = df.find_index(n, val.defining.index);
          bi.color = k ? df.subshape(n, *k).memory_space : 0;
          first = false;
        }
        bi.lives_out = bi.lives_out || (la_.lives_out(v) && !copied_[b]);
        if (df.parent_number(n) == entry && df.parameter_number(n) >= 0) bi.entry_parameter = true;
        if (la_.value_context(v) == computation_context::thread_local_) bi.thread_local_ = true;
        else bi.sequential = true;
        bi.position = std::min(bi.position, post_order[n]);
        if (la_.has_range(v)) {
          auto r = la_.range(v);
          // An emulated output copy is made at the root; the original may die there.
          if (copied_[b]) r.end = std::max(r.start, std::min(r.end, la_.time_of(df.root(entry))));
          if (bi.hull.start < 0) bi.hull = r;
          else bi.hull = {std::min(bi.hull.start, r.start), std::max(bi.hull.end, r.end)};
        }
      }
    }
    // 2. Order: size descending, live-out first, XLA's post-order position, id.
    std::vector<buffer_id> order;
    for (std::size_t b = 0; b < nb; ++b) {
      if (info_[b].planned) order.push_back(static_cast<buffer_id>(b));
    }
    std::sort(order.begin(), order.end(), [&](buffer_id a, buffer_id b) {
      const auto& x = info_[a];
      const auto& y = info_[b];
      if (x.size != y.size) return x.size > y.size;
      if (x.lives_out != y.lives_out) return x.lives_out;
      if (x.position != y.position) return x.position < y.position;
      return a < b;
    });
    // 3. Special buffers, reuse, or deferral to the heap.
    const bool tuples_apart = options_.tuple_tables_outside_heap.value_or(options_.solver == solver_kind::xla);
    // XLA's allocation list in creation order, as far as `CombineTempAllocations` needs it:
    // the global pass (constants, parameters, tuple tables, live-out buffers), then one heap
    // per colour, then the thread-local allocations.
    std::vector<created_allocation> global_pass;
    std::vector<buffer_id> tuple_temps;
    std::size_t thread_local_count = 0;
    std::vector<std::size_t> reusable;  // allocations that later buffers may reuse, in creation order
    std::vector<std::vector<buffer_id>> deferred;  // per colour index
    std::vector<std::int64_t> colors;
    std::vector<std::size_t> alloc_of_buffer(nb, none);
    const auto& params = df.parameters(entry);
    for (const buffer_id b : order) {
      const auto& bi = info_[b];
      bool special = false;
      for (auto v : co.values(b)) {
        if (!planned_value(v)) continue;
        const auto& val = df.get(v);
        const std::size_t n = df.number(val.defining.instruction);
        if (planning_traits<G>::is_constant(g, val.defining.instruction)) {
          const auto a = new_allocation(b);
          allocations_[a].flags_.is_constant = true;
          add(g, a, b, 0);
          alloc_of_buffer[b] = a;
          global_pass.push_back({});
          special = true;
          break;
        }
        if (df.parent_number(n) == entry && df.parameter_number(n) >= 0 &&
            std::find(params.begin(), params.end(), n) != params.end()) {
          // One allocation per entry parameter leaf, even when (unscheduled) aliasing put
          // several into one buffer: XLA's copy insertion would have separated them.
          std::vector<value_id> pvals;
          for (auto w : co.values(b)) {
            const std::size_t wn = df.number(df.get(w).defining.instruction);
            if (planned_value(w) && df.parent_number(wn) == entry && df.parameter_number(wn) >= 0) pvals.push_back(w);
          }
          std::size_t main = none;
          for (std::size_t k = 0; k < pvals.size(); ++k) {
            const auto pv = pvals[k];
            const auto& pd = df.get(pv).defining;
            const auto a = new_allocation(b);
            global_pass.push_back({});
            auto& al = allocations_[a];
            al.flags_.is_entry_parameter = true;
            al.parameter_number = df.parameter_number(df.number(pd.instruction));
            al.parameter_index = pd.index;
            al.flags_.is_parameter_aliased_with_output = co.parameter_has_alias(al.parameter_number, al.parameter_index);
            if (k == 0) {
              main = a;
              add(g, a, b, 0);
              alloc_of_buffer[b] = a;
            } else {
              auto& mv = allocations_[main].values;
              mv.erase(std::remove_if(mv.begin(), mv.end(), [&](const buffer_allocation::assigned& x) { return x.value == pv; }),
                       mv.end());
              al.flags_.size = static_cast<std::int64_t>(df.get(pv).bytes);
              al.values.push_back({pv, 0, al.flags_.size});
              slice_[pv] = {a, 0, al.flags_.size};
              if (la_.lives_out(pv) && !copied_[b]) al.flags_.maybe_live_out = true;
            }
            if (al.flags_.is_parameter_aliased_with_output && options_.reuse_allocations) reusable.push_back(a);
          }
          special = true;
          break;
        }
      }
      if (special) continue;
      if (bi.thread_local_ && !bi.sequential) {
        const auto a = new_allocation(b);
        allocations_[a].flags_.is_thread_local = true;
        add(g, a, b, 0);
        alloc_of_buffer[b] = a;
        ++thread_local_count;
        continue;
      }
      bool tuple = false;
      for (auto v : co.values(b)) tuple = tuple || df.get(v).is_tuple;
      if (tuples_apart && tuple) {
        // XLA: a tuple-shaped buffer gets an allocation of its own, before any reuse.
        if (!bi.lives_out && bi.sequential) {
          global_pass.push_back({true, b, bi.color});
          tuple_temps.push_back(b);
          continue;
        }
        const auto a = new_allocation(b);
        add(g, a, b, 0);
        alloc_of_buffer[b] = a;
        global_pass.push_back({});
        continue;
      }
      bool done = false;
      if (options_.reuse_allocations) {
        // Operand allocations first.
        for (auto v : co.values(b)) {
          if (done || !planned_value(v)) continue;
          const auto& val = df.get(v);
          if (!val.defining.index.empty() || val.is_tuple) continue;
          for (const std::size_t op : df.operands(df.number(val.defining.instruction))) {
            for (auto w : df.value_set(op, {})) {
              const auto a = alloc_of_buffer[co.buffer_of(w)];
              if (a != none && !allocations_[a].flags_.is_preallocated_temp() &&
                  std::find(reusable.begin(), reusable.end(), a) != reusable.end() && maybe_assign(g, a, b)) {
                alloc_of_buffer[b] = a;
                done = true;
                break;
              }
            }
            if (done) break;
          }
        }
        // Then the reusable allocations, newest (smallest) first, as XLA does.
        for (std::size_t k = reusable.size(); !done && k-- > 0;) {
          if (maybe_assign(g, reusable[k], b)) {
            alloc_of_buffer[b] = reusable[k];
            done = true;
          }
        }
      }
      if (done) continue;
      if (!bi.lives_out && bi.sequential) {
        std::size_t ci = 0;
        while (ci < colors.size() && colors[ci] != bi.color) ++ci;
        if (ci == colors.size()) {
          colors.push_back(bi.color);
          deferred.emplace_back();
        }
        deferred[ci].push_back(b);
        continue;
      }
      const auto a = new_allocation(b);
      add(g, a, b, 0);
      alloc_of_buffer[b] = a;
      global_pass.push_back({});
      // A tuple's pointer table keeps its allocation to itself (XLA: tuple allocations are
      // not reusable).
      if (options_.reuse_allocations && !tuple) reusable.push_back(a);
    }
    // 4. The temporary heaps. A colour whose temporaries may use another colour's heap comes
    // after it, and first fills that heap's gaps.
    auto can_use = [&](std::int64_t a, std::int64_t b) {
      return std::find(options_.can_use_allocation.begin(), options_.can_use_allocation.end(), std::make_pair(a, b)) !=
             options_.can_use_allocation.end();
    };
    std::vector<std::int64_t> heap_colors;  // colours with heap buffers, in heap creation order
    std::vector<std::size_t> color_order(colors.size());
    for (std::size_t k = 0; k < colors.size(); ++k) color_order[k] = k;
    std::stable_sort(color_order.begin(), color_order.end(), [&](std::size_t x, std::size_t y) {
      return can_use(colors[y], colors[x]) && !can_use(colors[x], colors[y]);
    });
    for (const std::size_t ci : color_order) {
      temp_heap h;
      h.color = colors[ci];
      auto& bufs = deferred[ci];
      std::sort(bufs.begin(), bufs.end());
      if (!options_.can_use_allocation.empty()) {
        std::vector<buffer_id> by_size(bufs.begin(), bufs.end());
        std::stable_sort(by_size.begin(), by_size.end(), [&](buffer_id x, buffer_id y) { return info_[x].size > info_[y].size; });
        std::vector<char> moved(nb, 0);
        for (const buffer_id b : by_size) {
          const auto hull = info_[b].hull;
          if (hull.start < 0) continue;
          for (auto& other : heaps_) {
            if (other.color == h.color || !can_use(h.color, other.color)) continue;
            auto& al = allocations_[other.allocation];
            std::vector<std::pair<std::int64_t, std::int64_t>> blocking;  // (offset, end)
            for (const auto& x : al.values) {
              if (!la_.has_range(x.value)) continue;
              const auto r = la_.range(x.value);
              if (r.start > hull.end || hull.start > r.end) continue;
              blocking.emplace_back(x.offset, x.offset + x.size);
            }
            std::sort(blocking.begin(), blocking.end());
            blocking.emplace_back(al.size(), al.size());
            std::int64_t free_start = 0, best = -1, best_slack = 0;
            for (const auto& [lo, hi] : blocking) {
              const auto off = (free_start + options_.alignment - 1) / options_.alignment * options_.alignment;
              const auto slack = lo - (off + info_[b].size);
              if (slack >= 0 && (best < 0 || slack < best_slack)) {
                best = off;
                best_slack = slack;
              }
              free_start = std::max(free_start, hi);
            }
            if (best < 0) continue;
            add(g, other.allocation, b, best);
            alloc_of_buffer[b] = other.allocation;
            moved[b] = 1;
            break;
          }
        }
        std::erase_if(bufs, [&](buffer_id b) { return moved[b] != 0; });
        if (bufs.empty()) continue;
      }
      // XLA's heap simulator lets a value take over the chunk of an operand that dies where
      // it is defined (ShareWith): such buffers form one group, placed at one offset.
      std::vector<std::size_t> group(bufs.size());
      for (std::size_t k = 0; k < bufs.size(); ++k) group[k] = k;
      auto find = [&](std::size_t k) {
        while (group[k] != k) k = group[k] = group[group[k]];
        return k;
      };
      std::vector<live_range> ghull(bufs.size());
      std::vector<std::pair<value_id, value_id>> takes_over;  // (value, the operand value whose chunk it takes)
      std::vector<std::size_t> local(nb, none);
      for (std::size_t k = 0; k < bufs.size(); ++k) {
        ghull[k] = info_[bufs[k]].hull;
        local[bufs[k]] = k;
      }
      if (options_.reuse_allocations) {
        std::vector<std::size_t> by_start(bufs.size());
        for (std::size_t k = 0; k < bufs.size(); ++k) by_start[k] = k;
        std::stable_sort(by_start.begin(), by_start.end(),
                         [&](std::size_t x, std::size_t y) { return info_[bufs[x]].hull.start < info_[bufs[y]].hull.start; });
        for (const std::size_t k : by_start) {
          const buffer_id b = bufs[k];
          const auto start = info_[b].hull.start;
          bool shared = false;
          for (auto v : co.values(b)) {
            if (shared || !la_.has_range(v) || la_.range(v).start != start) continue;
            const auto& val = df.get(v);
            if (!val.defining.index.empty() || val.is_tuple) continue;
            for (const std::size_t op : df.operands(df.number(val.defining.instruction))) {
              for (auto w : df.value_set(op, {})) {
                const auto a = co.buffer_of(w);
                if (a == b || local[a] == none) continue;
                const auto root = find(local[a]);
                if (root == find(k) || ghull[root].end != start || info_[a].size != info_[b].size) continue;
                if (!la_.has_range(w) || la_.range(w).end != start || !can_share(g, v, w)) continue;
                group[find(k)] = root;
                ghull[root].end = std::max(ghull[root].end, info_[b].hull.end);
                takes_over.emplace_back(v, w);
                shared = true;
                break;
              }
              if (shared) break;
            }
          }
        }
      }
      std::vector<std::size_t> item_of(bufs.size(), none);
      for (std::size_t k = 0; k < bufs.size(); ++k) {
        const auto r = find(k);
        if (item_of[r] == none) {
          item_of[r] = h.problem.buffers.size();
          interval_buffer ib;
          ib.id = la_.value_name(g, co.values(bufs[r]).front(), false);
          ib.lower = ghull[r].start < 0 ? 0 : ghull[r].start;
          ib.upper = (ghull[r].start < 0 ? 0 : ghull[r].end) + 1;
          ib.size = info_[bufs[r]].size;
          ib.alignment = options_.alignment;
          h.problem.buffers.push_back(std::move(ib));
          h.buffers.push_back(bufs[r]);
        }
        item_of[k] = item_of[r];
      }
      // XLA's best fit on the colocation groups is the baseline, and the floor for any packer.
      const auto keys = heap_keys(bufs, item_of, h.problem.buffers.size(), takes_over, post_order);
      const auto t0 = std::chrono::steady_clock::now();
      if (auto ok = validate_problem(h.problem); !ok) {
        return ok.error().with_context("the temporaries of memory space " + std::to_string(h.color));
      }
      placement xla = xla_colocated_best_fit(h.problem, interval_graph(h.problem), keys);
      h.lower_bound = temp_lower_bound(h.problem);
      if (std::is_same_v<P, xla_best_fit_packer> || peak_of(h.problem, xla) <= h.lower_bound) {
        h.solution = std::move(xla);  // the baseline, or already optimal
      } else {
        auto sol = packer(h.problem);
        if (!sol) return sol.error().with_context("packing the temporaries of memory space " + std::to_string(h.color));
        if (auto ok = xlamem::validate(h.problem, *sol); !ok) {
          return ok.error().with_context("packer " + std::string(packer.name()) + " returned an invalid placement");
        }
        h.solution = peak_of(h.problem, *sol) <= peak_of(h.problem, xla) ? std::move(*sol) : std::move(xla);
      }
      h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      h.size = peak_of(h.problem, h.solution);
      h.solver = std::string(packer.name());
      buffer_allocation al;
      al.index = allocations_.size();
      al.flags_.size = h.size;
      al.flags_.color = h.color;
      allocations_.push_back(std::move(al));
      h.allocation = allocations_.size() - 1;
      for (std::size_t k = 0; k < bufs.size(); ++k) {
        add(g, h.allocation, bufs[k], h.solution.offsets[item_of[k]]);
        alloc_of_buffer[bufs[k]] = h.allocation;
      }
      heap_colors.push_back(h.color);
      heaps_.push_back(std::move(h));
    }
    if (!tuple_temps.empty()) {
      combine_temporaries(g, global_pass_heaps(global_pass, heap_colors, thread_local_count), alloc_of_buffer);
    }
    for (auto& c : copies) {
      buffer_allocation al;
      al.index = allocations_.size();
      al.flags_.size = c.size;
      al.flags_.color = c.color;
      al.flags_.maybe_live_out = true;
      al.copy_of = std::move(c.name);
      allocations_.push_back(std::move(al));
    }
    for (auto& al : allocations_) {
      std::sort(al.values.begin(), al.values.end(),
                [](const buffer_allocation::assigned& x, const buffer_allocation::assigned& y) { return x.value < y.value; });
    }
    // 5. Statistics and the peak.
    stats_ = stats_from_allocations(allocations_);
    compute_peak(alloc_of_buffer);
    return {};
  }

  // Peak: the most device bytes in use at one time. A heap uses the sum of its live buffers;
  // any other allocation (one buffer at a time) the largest live one. Entry parameters are in
  // use throughout; thread-local, constant and host allocations are not counted.
  void compute_peak(const std::vector<std::size_t>& alloc_of_buffer) {
    const std::int64_t horizon = la_.end_time() + 1;
    std::vector<std::int64_t> total(static_cast<std::size_t>(horizon) + 1, 0);
    std::vector<std::vector<buffer_id>> by_alloc(allocations_.size());
    for (std::size_t b = 0; b < info_.size(); ++b) {
      if (alloc_of_buffer[b] != none && info_[b].hull.start >= 0) by_alloc[alloc_of_buffer[b]].push_back(static_cast<buffer_id>(b));
    }
    auto range_in_use = [&](const buffer_allocation& al, buffer_id b) {
      live_range r = info_[b].hull;
      if (al.flags_.is_entry_parameter && info_[b].entry_parameter) r = {0, la_.end_time()};
      r.start = std::clamp<std::int64_t>(r.start, 0, horizon - 1);
      r.end = std::clamp<std::int64_t>(r.end, r.start, horizon - 1);
      return r;
    };
    std::vector<std::int64_t> local(static_cast<std::size_t>(horizon) + 1, 0);
    for (std::size_t a = 0; a < allocations_.size(); ++a) {
      const auto& al = allocations_[a];
      const auto& f = al.flags_;
      if (f.is_thread_local || f.is_constant || f.is_host()) continue;
      if (f.is_preallocated_temp()) {
        std::vector<std::int64_t> diff(static_cast<std::size_t>(horizon) + 1, 0);
        for (auto b : by_alloc[a]) {
          const auto r = range_in_use(al, b);
          diff[static_cast<std::size_t>(r.start)] += info_[b].size;
          diff[static_cast<std::size_t>(r.end) + 1] -= info_[b].size;
        }
        std::int64_t run = 0;
        for (std::size_t t = 0; t < static_cast<std::size_t>(horizon); ++t) total[t] += (run += diff[t]);
        continue;
      }
      std::fill(local.begin(), local.end(), 0);
      for (auto b : by_alloc[a]) {
        const auto r = range_in_use(al, b);
        for (auto t = r.start; t <= r.end; ++t) local[static_cast<std::size_t>(t)] = std::max(local[static_cast<std::size_t>(t)], info_[b].size);
      }
      if (by_alloc[a].empty() && f.maybe_live_out) local[static_cast<std::size_t>(horizon - 1)] = al.size();  // an emulated copy
      for (std::size_t t = 0; t < static_cast<std::size_t>(horizon); ++t) total[t] += local[t];
    }
    std::int64_t peak = 0;
    peak_time_ = 0;
    for (std::size_t t = 0; t < static_cast<std::size_t>(horizon); ++t) {
      if (total[t] > peak) {
        peak = total[t];
        peak_time_ = static_cast<std::int64_t>(t);
      }
    }
    stats_.peak_memory_in_bytes = peak;
    peak_buffers_.clear();
    for (std::size_t a = 0; a < allocations_.size(); ++a) {
      const auto& f = allocations_[a].flags_;
      if (f.is_thread_local || f.is_constant || f.is_host()) continue;
      for (auto b : by_alloc[a]) {
        const auto r = range_in_use(allocations_[a], b);
        if (r.start <= peak_time_ && peak_time_ <= r.end) peak_buffers_.push_back(b);
      }
    }
    std::sort(peak_buffers_.begin(), peak_buffers_.end(), [&](buffer_id x, buffer_id y) {
      if (info_[x].size != info_[y].size) return info_[x].size > info_[y].size;
      return x < y;
    });
  }
};

}  // namespace xlamem
