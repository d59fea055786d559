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
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/align.hpp"
#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/passes/colocation.hpp"
#include "xlamem/packing/interval_set.hpp"
#include "xlamem/passes/detail/xla_order.hpp"
#include "xlamem/passes/liveness.hpp"
#include "xlamem/passes/memory_stats.hpp"
#include "xlamem/passes/memory_usage.hpp"
#include "xlamem/passes/temp_packer.hpp"
#include "xlamem/graph/graph_queries.hpp"

namespace xlamem {

/// Options of `buffer_assignment::run`.
struct buffer_assignment_options {
  /// Alignment of offsets in the temporary heap: a power of two (64 CPU-like, 256 GPU-like).
  std::int64_t alignment = 64;
  /// Packer of the temporary heaps: a row of the solver table (`packing/solvers.hpp`; the
  /// default is the search), used as `named_temp_packer` says.
  named_solver solver = packing_solvers.front();
  /// Time budget of a search-family solver per heap, seconds (0: the heuristics' placement;
  /// infinity: none; negative or NaN refused, deadline.hpp).
  double time_limit = 1.0;
  /// A cancellation flag for the temporary heaps' solvers (`named_temp_packer::cancel`).
  const cancellation_flag* cancel = nullptr;
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
  /// default on exactly for XLA's solver (`solver_family::xla`); otherwise temporary tuple tables are packed
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

template <graph G>
class buffer_assignment;

/// One allocation (XLA's BufferAllocation).
struct buffer_allocation {
  /// One value placed in the allocation.
  struct assigned {
    std::uint32_t value = 0;  ///< dataflow value id
    std::int64_t offset = 0;
    std::int64_t size = 0;
  };
  std::size_t index = 0;
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

 private:
  template <graph G>
  friend class buffer_assignment;  // the one writer: size, colour and predicates follow from the assignment
  allocation_flags flags_;         ///< size, colour and the XLA predicates
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
  static_assert(graph_queries<G>::checked);  // optional graph_traits members have the right signatures
  using liveness_type = live_range_analysis<G>;
  using dataflow_type = typename liveness_type::dataflow_type;
  using value_id = typename dataflow_type::value_id;
  using buffer_id = typename colocation_analysis<G>::buffer_id;

  /// Assigns the buffers of `g` with the solver of `o` (`named_temp_packer`).
  [[nodiscard]] static result<buffer_assignment> run(const G& g, const buffer_assignment_options& o = {}) {
    if (const char* bad = time_limit_error(o.time_limit)) return make_error(errc::invalid_argument, bad);
    return run(g, o, named_temp_packer{o.solver, o.time_limit, o.cancel});
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

  /// The steps at which value `v` (with a live range) holds its bytes, clamped to the program:
  /// its live range; the whole program for an entry parameter's value in a parameter
  /// allocation; up to the root for a value whose output positions are emulated copies (the
  /// copy takes over there). The peak (`passes/memory_usage.hpp`) and the memory report count
  /// memory over these ranges.
  [[nodiscard]] live_range range_in_use(value_id v) const {
    const auto& df = la_.dataflow();
    const std::int64_t horizon = la_.end_time() + 1;
    live_range r = la_.range(v);
    const auto n = df.number(df.get(v).defining.instruction);
    const auto b = la_.colocation().buffer_of(v);
    const auto* al = slice_[v].allocation == none ? nullptr : &allocations_[slice_[v].allocation];
    if (al != nullptr && al->flags_.is_entry_parameter && df.parent_number(n) == la_.entry() &&
        df.parameter_number(n) >= 0) {
      r = {0, la_.end_time()};
    } else if (copied_[b]) {
      r.end = std::max(r.start, std::min(r.end, la_.time_of(df.root(la_.entry()))));
    }
    const auto start = std::clamp<std::int64_t>(r.start, 0, horizon - 1);
    return {start, std::clamp<std::int64_t>(r.end, start, horizon - 1)};
  }

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
      const auto by_start = [](const item& a, const item& b) { return a.r.start < b.r.start; };
      // Values often join an allocation in time order already (a chain reusing one buffer).
      if (!std::is_sorted(items.begin(), items.end(), by_start)) std::stable_sort(items.begin(), items.end(), by_start);
      // A sweep over time. The values live at once are grouped by offset: the overlaps allowed
      // (values of one buffer, an operand taken over where it dies) are at one offset, so the
      // groups hold disjoint bytes while the check holds, and a new value can meet only the
      // group below it and the groups starting inside its bytes: O(log n) per value plus its
      // own group, not every live value (10^5 temporaries live at once were quadratic here).
      struct group {
        std::int64_t extent = 0;  // largest size of the group's values
        std::vector<std::size_t> members;
      };
      std::map<std::int64_t, group> active;
      using ending = std::pair<std::int64_t, std::size_t>;  // (range end, item)
      std::priority_queue<ending, std::vector<ending>, std::greater<>> ends;
      for (std::size_t k = 0; k < items.size(); ++k) {
        const auto& it = items[k];
        while (!ends.empty() && ends.top().first < it.r.start) {
          const auto j = ends.top().second;
          ends.pop();
          auto gi = active.find(items[j].offset);
          auto& m = gi->second.members;
          m.erase(std::find(m.begin(), m.end(), j));
          if (m.empty()) {
            active.erase(gi);
          } else {
            gi->second.extent = 0;
            for (const auto x : m) gi->second.extent = std::max(gi->second.extent, items[x].size);
          }
        }
        auto check = [&](const group& grp) -> result<void> {
          for (const auto j : grp.members) {
            const auto& a = items[j];
            if (a.offset >= it.offset + it.size || it.offset >= a.offset + a.size) continue;
            if (la_.colocation().buffer_of(a.v) == la_.colocation().buffer_of(it.v)) continue;
            if (a.r.end == it.r.start && a.offset == it.offset && a.size == it.size && can_share(g, it.v, a.v)) continue;
            return make_error(errc::invalid_argument,
                              "allocation " + std::to_string(al.index) + ": values " + la_.value_name(g, a.v, false) +
                                  " [" + std::to_string(a.r.start) + "-" + std::to_string(a.r.end) + "] and " +
                                  la_.value_name(g, it.v, false) + " [" + std::to_string(it.r.start) + "-" +
                                  std::to_string(it.r.end) + "] are live together and share bytes");
          }
          return {};
        };
        auto gi = active.lower_bound(it.offset);
        if (gi != active.begin()) {
          const auto below = std::prev(gi);
          if (below->first + below->second.extent > it.offset) {
            if (auto r = check(below->second); !r) return r;
          }
        }
        for (; gi != active.end() && gi->first < it.offset + it.size; ++gi) {
          if (auto r = check(gi->second); !r) return r;
        }
        auto& mine = active[it.offset];
        mine.members.push_back(k);
        mine.extent = std::max(mine.extent, it.size);
        ends.emplace(it.r.end, k);
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

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  struct buffer_info {
    std::int64_t size = 0;
    std::int64_t color = 0;
    bool planned = false;       // has values outside fused/unreachable computations
    bool lives_out = false;
    bool embedded = false;  // in a computation run inside an instruction: thread-local
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
  // Per allocation, its values' live ranges, so that `maybe_assign` meets only the values
  // whose range reaches the candidate's: scanning every value made many temporaries sharing
  // one allocation quadratic (a 10^5-computation call chain). Brought up to date lazily from
  // `allocations_[a].values`, which only grows, except where `forget_range_index` is called.
  struct range_index {
    detail::interval_set<value_id> ranges;  // values with a live range
    std::size_t unranged = 0;               // values without one
    std::size_t synced = 0;                 // how many of `values` are in here
  };
  std::vector<range_index> range_index_;
  std::vector<temp_heap> heaps_;
  std::vector<value_slice> slice_;
  compiled_memory_stats stats_;
  std::int64_t peak_time_ = 0;
  std::vector<buffer_id> peak_buffers_;

  /// XLA's can_share_as_operand: `user` (a value) may overwrite `operand` (a value) that dies
  /// where `user` is defined.
  bool can_share(const G& g, value_id user, value_id operand) const {
    const auto& df = la_.dataflow();
    const auto& u = df.get(user).defining;
    if (graph_queries<G>::is_copy(g, u.instruction)) return false;
    const std::size_t un = df.number(u.instruction);
    for (const auto& p : df.positions(operand)) {
      const std::size_t pn = df.number(p.instruction);
      const auto& ops = df.operands(un);
      if (std::find(ops.begin(), ops.end(), pn) == ops.end()) continue;
      if (graph_queries<G>::can_share_operand_buffer(g, p.instruction, p.index, u.instruction, u.index)) return true;
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
    if (!graph_queries<G>::is_copy(g, d.instruction)) return false;
    const auto& ops = df.operands(df.number(d.instruction));
    for (const auto& p : df.positions(source)) {
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
      for (const auto& p : df.positions(v)) {
        if (df.number(p.instruction) == root && p.index.empty()) al.holds_entry_root = true;
      }
    }
    (void)g;
  }


  using created_allocation = detail::created_allocation<buffer_id>;

  // XLA's CombineTempAllocations: the temporary allocations go to the end of the list
  // (`detail::xla_partition_temporaries`); then, per colour, the first one is the base and each next one is placed at the next
  // alignment boundary after the previous. Here the heap of a colour is that base container
  // and the temporary tuple tables are placed into it at their offsets.
  void combine_temporaries(const G& g, std::vector<created_allocation> seq, std::vector<std::size_t>& alloc_of_buffer) {
    const std::size_t first = detail::xla_partition_temporaries(seq);
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

  bool planned_value(value_id v) const { return detail::planned_value(la_, v); }

  range_index& range_index_of(std::size_t alloc) {
    if (range_index_.size() < allocations_.size()) range_index_.resize(allocations_.size());
    auto& ix = range_index_[alloc];
    const auto& values = allocations_[alloc].values;
    for (; ix.synced < values.size(); ++ix.synced) {
      const value_id v = values[ix.synced].value;
      if (!la_.has_range(v)) {
        ++ix.unranged;
        continue;
      }
      const auto r = la_.range(v);
      ix.ranges.insert(r.start, r.end, v);
    }
    return ix;
  }
  void forget_range_index(std::size_t alloc) {
    if (alloc < range_index_.size()) range_index_[alloc] = range_index{};
  }

  bool maybe_assign(const G& g, std::size_t alloc, buffer_id b) {
    const auto& al = allocations_[alloc];
    const auto& bi = info_[b];
    if (al.color() != bi.color) return false;
    if (bi.size > al.size()) return false;
    if (al.is_readonly() || al.flags_.is_thread_local) return false;
    if (bi.lives_out && al.size() != bi.size) return false;
    if (al.values.empty()) {
      add(g, alloc, b, 0);
      return true;
    }
    const auto& ix = range_index_of(alloc);
    if (ix.unranged > 0) return false;  // a value of unknown lifetime may meet any other
    for (auto v : la_.colocation().values(b)) {
      if (!la_.has_range(v)) continue;
      const auto r = la_.range(v);
      if (ix.ranges.any_meeting(r.start, r.end, [&](value_id x) { return interferes(g, v, x); })) return false;
      if (graph_queries<G>::is_copy(g, la_.dataflow().get(v).defining.instruction)) {
        for (const auto& x : al.values) {
          if (is_copy_of(g, v, x.value)) return false;
        }
      }
    }
    add(g, alloc, b, 0);
    return true;
  }

  // What the phases of `assign` hand on to each other.
  struct out_copy {
    std::string name;
    std::int64_t size, color;
  };
  struct assign_state {
    std::vector<out_copy> copies;          // emulated output copies (phase 0)
    std::vector<std::int64_t> post_order;  // XLA's post-order position per instruction (phase 1)
    // XLA's allocation list in creation order, as far as `CombineTempAllocations` needs it:
    // the global pass (constants, parameters, tuple tables, live-out buffers), then one heap
    // per colour, then the thread-local allocations.
    std::vector<created_allocation> global_pass;
    std::vector<buffer_id> tuple_temps;
    std::size_t thread_local_count = 0;
    std::vector<std::size_t> reusable;             // allocations later buffers may reuse, in creation order
    std::vector<std::vector<buffer_id>> deferred;  // heap buffers per colour index
    std::vector<std::int64_t> colors;
    std::vector<std::size_t> alloc_of_buffer;
    std::vector<std::int64_t> heap_colors;  // colours with heap buffers, in heap creation order
  };

  // Buffer assignment in its phases: emulated output copies, buffer facts, XLA's order, each
  // buffer placed (special allocation, reuse, or deferred to a heap), the temporary heaps
  // packed, XLA's temporary layout, then statistics and the peak.
  template <class P>
  result<void> assign(const G& g, const P& packer) {
    const std::size_t nb = la_.colocation().buffer_count();
    slice_.assign(la_.dataflow().values().size(), value_slice{none, 0, 0});
    info_.assign(nb, {});
    assign_state s;
    s.alloc_of_buffer.assign(nb, none);
    emulate_output_copies(g, s);
    collect_buffer_facts(s);
    for (const buffer_id b : assignment_order()) place_buffer(g, b, s);
    range_index_ = {};  // only reuse (`maybe_assign`) reads it
    if (auto r = pack_temporary_heaps(g, packer, s); !r) return r;
    finish_allocations(g, s);
    stats_ = stats_from_allocations(allocations_);
    compute_peak(s.alloc_of_buffer);
    return {};
  }

  // Phase 0: XLA's copy insertion for the outputs of an unscheduled module (`output_copies`).
  void emulate_output_copies(const G& g, assign_state& s) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const std::size_t nb = co.buffer_count();
    const std::size_t entry = la_.entry();
    auto& copies = s.copies;
    copied_.assign(nb, 0);
    if (options_.output_copies.value_or(!graph_queries<G>::is_scheduled(g))) {
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
            if (graph_queries<G>::is_constant(g, d.instruction)) copy = true;
            if (df.parent_number(n) == entry && df.parameter_number(n) >= 0 &&
                !co.parameter_has_alias(df.parameter_number(n), d.index)) {
              copy = true;
            }
          }
        }
        if (!copy) continue;
        for (const auto b : here) copied_[b] = 1;
        std::string name = graph_queries<G>::name(g, df.instruction(root), root);
        detail::append_shape_index_text(name, indices[k]);
        const auto& info = df.subshape(root, k);
        copies.push_back({std::move(name), static_cast<std::int64_t>(info.bytes), info.memory_space});
      }
    }
  }

  // Phase 1: size, colour, liveness class, XLA's position and live-range hull of each buffer.
  void collect_buffer_facts(assign_state& s) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const std::size_t nb = co.buffer_count();
    const std::size_t entry = la_.entry();
    s.post_order = detail::xla_post_order_positions(la_);
    const auto& post_order = s.post_order;
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
        if (la_.value_context(v) == computation_context::embedded) bi.embedded = true;
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
  }

  // Phase 2: the buffers to place, in XLA's order: size descending, live-out first, XLA's
  // post-order position, id.
  std::vector<buffer_id> assignment_order() const {
    // The keys side by side, not looked up through `info_` in every comparison (10^6
    // buffers: a cache miss per comparison).
    struct key {
      std::int64_t size, position;
      buffer_id id;
      bool lives_out;
    };
    const std::size_t nb = la_.colocation().buffer_count();
    std::vector<key> keys;
    for (std::size_t b = 0; b < nb; ++b) {
      const auto& x = info_[b];
      if (x.planned) keys.push_back({x.size, x.position, static_cast<buffer_id>(b), x.lives_out});
    }
    const auto before = [](const key& x, const key& y) {
      if (x.size != y.size) return x.size > y.size;
      if (x.lives_out != y.lives_out) return x.lives_out;
      if (x.position != y.position) return x.position < y.position;
      return x.id < y.id;
    };
    // A merge sort: the order is total (ids differ), and the usual input, in schedule order
    // but for the live-out root last, sends std::sort's quicksort to its heap sort (10^6
    // buffers: 117 ms, against 31 ms merged).
    if (!std::is_sorted(keys.begin(), keys.end(), before)) std::stable_sort(keys.begin(), keys.end(), before);
    std::vector<buffer_id> order(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].id;
    return order;
  }

  // Phase 3: one buffer gets a special allocation (constant, entry parameter, thread-local,
  // tuple table), reuses an allocation, gets a live-out allocation, or waits for its heap.
  void place_buffer(const G& g, buffer_id b, assign_state& s) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    auto& global_pass = s.global_pass;
    auto& tuple_temps = s.tuple_temps;
    auto& thread_local_count = s.thread_local_count;
    auto& reusable = s.reusable;
    auto& deferred = s.deferred;
    auto& colors = s.colors;
    auto& alloc_of_buffer = s.alloc_of_buffer;
    const bool tuples_apart = options_.tuple_tables_outside_heap.value_or(options_.solver.family == solver_family::xla);
    const auto& bi = info_[b];
    if (place_constant_or_parameter(g, b, s)) return;
    if (bi.embedded && !bi.sequential) {
      const auto a = new_allocation(b);
      allocations_[a].flags_.is_thread_local = true;
      add(g, a, b, 0);
      alloc_of_buffer[b] = a;
      ++thread_local_count;
      return;
    }
    bool tuple = false;
    for (auto v : co.values(b)) tuple = tuple || df.get(v).is_tuple;
    if (tuples_apart && tuple) {
      // XLA: a tuple-shaped buffer gets an allocation of its own, before any reuse.
      if (!bi.lives_out && bi.sequential) {
        global_pass.push_back({true, b, bi.color});
        tuple_temps.push_back(b);
        return;
      }
      const auto a = new_allocation(b);
      add(g, a, b, 0);
      alloc_of_buffer[b] = a;
      global_pass.push_back({});
      return;
    }
    if (options_.reuse_allocations && try_reuse(g, b, s)) return;
    if (!bi.lives_out && bi.sequential) {
      std::size_t ci = 0;
      while (ci < colors.size() && colors[ci] != bi.color) ++ci;
      if (ci == colors.size()) {
        colors.push_back(bi.color);
        deferred.emplace_back();
      }
      deferred[ci].push_back(b);
      return;
    }
    const auto a = new_allocation(b);
    add(g, a, b, 0);
    alloc_of_buffer[b] = a;
    global_pass.push_back({});
    // A tuple's pointer table keeps its allocation to itself (XLA: tuple allocations are
    // not reusable).
    if (options_.reuse_allocations && !tuple) reusable.push_back(a);
  }

  // A constant's own allocation, or one allocation per entry parameter leaf.
  bool place_constant_or_parameter(const G& g, buffer_id b, assign_state& s) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const std::size_t entry = la_.entry();
    const auto& params = df.parameters(entry);
    auto& global_pass = s.global_pass;
    auto& reusable = s.reusable;
    auto& alloc_of_buffer = s.alloc_of_buffer;
    for (auto v : co.values(b)) {
      if (!planned_value(v)) continue;
      const auto& val = df.get(v);
      const std::size_t n = df.number(val.defining.instruction);
      if (graph_queries<G>::is_constant(g, val.defining.instruction)) {
        const auto a = new_allocation(b);
        allocations_[a].flags_.is_constant = true;
        add(g, a, b, 0);
        alloc_of_buffer[b] = a;
        global_pass.push_back({});
        return true;
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
            forget_range_index(main);
            mv.erase(std::remove_if(mv.begin(), mv.end(), [&](const buffer_allocation::assigned& x) { return x.value == pv; }),
                     mv.end());
            al.flags_.size = static_cast<std::int64_t>(df.get(pv).bytes);
            al.values.push_back({pv, 0, al.flags_.size});
            slice_[pv] = {a, 0, al.flags_.size};
            if (la_.lives_out(pv) && !copied_[b]) al.flags_.maybe_live_out = true;
          }
          if (al.flags_.is_parameter_aliased_with_output && options_.reuse_allocations) reusable.push_back(a);
        }
        return true;
      }
    }
    return false;
  }

  // Reuse: an operand's allocation first, then any reusable allocation, newest (smallest)
  // first, as XLA does.
  bool try_reuse(const G& g, buffer_id b, assign_state& s) {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const auto& reusable = s.reusable;
    auto& alloc_of_buffer = s.alloc_of_buffer;
    // Operand allocations first.
    for (auto v : co.values(b)) {
      if (!planned_value(v)) continue;
      const auto& val = df.get(v);
      if (!val.defining.index.empty() || val.is_tuple) continue;
      for (const std::size_t op : df.operands(df.number(val.defining.instruction))) {
        for (auto w : df.value_set(op, {})) {
          const auto a = alloc_of_buffer[co.buffer_of(w)];
          if (a != none && !allocations_[a].flags_.is_preallocated_temp() &&
              std::find(reusable.begin(), reusable.end(), a) != reusable.end() && maybe_assign(g, a, b)) {
            alloc_of_buffer[b] = a;
            return true;
          }
        }
      }
    }
    // Then the reusable allocations, newest (smallest) first, as XLA does.
    for (std::size_t k = reusable.size(); k-- > 0;) {
      if (maybe_assign(g, reusable[k], b)) {
        alloc_of_buffer[b] = reusable[k];
        return true;
      }
    }
    return false;
  }

  // Phase 4: the temporary heaps. A colour whose temporaries may use another colour's heap
  // comes after it, and first fills that heap's gaps.
  template <class P>
  result<void> pack_temporary_heaps(const G& g, const P& packer, assign_state& s) {
    const auto& colors = s.colors;
    auto can_use = [&](std::int64_t a, std::int64_t b) {
      return std::find(options_.can_use_allocation.begin(), options_.can_use_allocation.end(), std::make_pair(a, b)) !=
             options_.can_use_allocation.end();
    };
    std::vector<std::size_t> color_order(colors.size());
    for (std::size_t k = 0; k < colors.size(); ++k) color_order[k] = k;
    std::stable_sort(color_order.begin(), color_order.end(), [&](std::size_t x, std::size_t y) {
      return can_use(colors[y], colors[x]) && !can_use(colors[x], colors[y]);
    });
    for (const std::size_t ci : color_order) {
      auto& bufs = s.deferred[ci];
      std::sort(bufs.begin(), bufs.end());
      if (!options_.can_use_allocation.empty()) {
        fill_other_heaps(g, colors[ci], bufs, s);
        if (bufs.empty()) continue;
      }
      temp_heap h;
      h.color = colors[ci];
      std::vector<std::pair<value_id, value_id>> takes_over;  // (value, the operand value whose chunk it takes)
      const auto item_of = heap_items(g, bufs, h, takes_over);
      if (auto r = solve_heap(g, packer, bufs, item_of, takes_over, h, s); !r) return r;
    }
    return {};
  }

  // With `can_use_allocation`: the temporaries of colour `color` that fit into free gaps of
  // another colour's heap go there, and out of `bufs`.
  void fill_other_heaps(const G& g, std::int64_t color, std::vector<buffer_id>& bufs, assign_state& s) {
    const std::size_t nb = la_.colocation().buffer_count();
    auto& alloc_of_buffer = s.alloc_of_buffer;
    auto can_use = [&](std::int64_t a, std::int64_t b) {
      return std::find(options_.can_use_allocation.begin(), options_.can_use_allocation.end(), std::make_pair(a, b)) !=
             options_.can_use_allocation.end();
    };
    std::vector<buffer_id> by_size(bufs.begin(), bufs.end());
    std::stable_sort(by_size.begin(), by_size.end(), [&](buffer_id x, buffer_id y) { return info_[x].size > info_[y].size; });
    std::vector<char> moved(nb, 0);
    for (const buffer_id b : by_size) {
      const auto hull = info_[b].hull;
      if (hull.start < 0) continue;
      for (auto& other : heaps_) {
        if (other.color == color || !can_use(color, other.color)) continue;
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
  }

  // The packing problem of one heap. XLA's heap simulator lets a value take over the chunk of
  // an operand that dies where it is defined (ShareWith): such buffers form one item, placed
  // at one offset. Fills `h.problem` and `h.buffers`, records the take-overs, and returns
  // each buffer's item.
  std::vector<std::size_t> heap_items(const G& g, const std::vector<buffer_id>& bufs, temp_heap& h,
                                      std::vector<std::pair<value_id, value_id>>& takes_over) const {
    const auto& df = la_.dataflow();
    const auto& co = la_.colocation();
    const std::size_t nb = co.buffer_count();
    std::vector<std::size_t> group(bufs.size());
    for (std::size_t k = 0; k < bufs.size(); ++k) group[k] = k;
    auto find = [&](std::size_t k) {
      while (group[k] != k) k = group[k] = group[group[k]];
      return k;
    };
    std::vector<live_range> ghull(bufs.size());
    std::vector<std::size_t> local(nb, none);
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      ghull[k] = info_[bufs[k]].hull;
      local[bufs[k]] = k;
    }
    // XLA shares only between buffers of one value each ("we don't support sharing an
    // aliased buffer with its operand"): an in-place update's buffer, or a loop's, never
    // takes over an operand's chunk, nor is taken over.
    auto single_value = [&](buffer_id b) {
      std::size_t n = 0;
      for (auto v : co.values(b)) n += planned_value(v) ? 1 : 0;
      return n == 1;
    };
    if (options_.reuse_allocations) {
      // A chunk is taken over once where its value dies: two outputs of one instruction (a
      // multi-output fusion's elements on XLA:GPU) may not both take the same operand's.
      std::vector<std::int64_t> taken_at(bufs.size(), std::numeric_limits<std::int64_t>::min());
      std::vector<std::size_t> by_start(bufs.size());
      for (std::size_t k = 0; k < bufs.size(); ++k) by_start[k] = k;
      std::stable_sort(by_start.begin(), by_start.end(),
                       [&](std::size_t x, std::size_t y) { return info_[bufs[x]].hull.start < info_[bufs[y]].hull.start; });
      for (const std::size_t k : by_start) {
        const buffer_id b = bufs[k];
        const auto start = info_[b].hull.start;
        if (!single_value(b)) continue;
        bool shared = false;
        for (auto v : co.values(b)) {
          if (shared || !la_.has_range(v) || la_.range(v).start != start) continue;
          const auto& val = df.get(v);
          if (val.is_tuple) continue;  // arrays only; an element of a multi-output op too (a sort's {k})
          for (const std::size_t op : df.operands(df.number(val.defining.instruction))) {
            for (auto w : df.value_set(op, {})) {
              const auto a = co.buffer_of(w);
              if (a == b || local[a] == none || !single_value(a)) continue;
              const auto root = find(local[a]);
              if (root == find(k) || ghull[root].end != start || taken_at[root] == start ||
                  info_[a].size != info_[b].size) {
                continue;
              }
              if (!la_.has_range(w) || la_.range(w).end != start || !can_share(g, v, w)) continue;
              group[find(k)] = root;
              taken_at[root] = start;
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
    return item_of;
  }

  // Whether `packer` is XLA's best fit, whose placement of a heap is XLA's own (colocated) one.
  template <class P>
  static bool places_as_xla(const P& packer) {
    if constexpr (requires { packer.places_as_xla(); }) {
      return packer.places_as_xla();
    } else {
      return std::is_same_v<P, xla_best_fit_packer>;
    }
  }

  // Packs one heap: XLA's best fit on its items is the baseline and the floor for `packer`;
  // the heap becomes a preallocated-temp allocation.
  template <class P>
  result<void> solve_heap(const G& g, const P& packer, const std::vector<buffer_id>& bufs,
                          const std::vector<std::size_t>& item_of,
                          const std::vector<std::pair<value_id, value_id>>& takes_over, temp_heap& h, assign_state& s) {
    const auto& post_order = s.post_order;
    auto& alloc_of_buffer = s.alloc_of_buffer;
    // XLA's best fit on the colocation groups is the baseline, and the floor for any packer.
    const auto keys = detail::xla_heap_sort_keys(la_, bufs, item_of, h.problem.buffers.size(), takes_over, post_order);
    const auto t0 = std::chrono::steady_clock::now();
    if (auto ok = validate_problem(h.problem); !ok) {
      return ok.error().with_context("the temporaries of memory space " + std::to_string(h.color));
    }
    // XLA's best fit costs O(pairs log pairs) in the temporaries live together: above the
    // portfolio's limit of conflicting pairs (`portfolio_fit::xla_edge_limit`) it is no floor
    // (10^5 temporaries live at once took 500 s), unless it is the packer asked for.
    const interval_graph heap_graph(h.problem);
    std::optional<placement> xla;
    if (places_as_xla(packer) || heap_graph.edge_count() <= portfolio_fit{}.xla_edge_limit) {
      xla = xla_colocated_best_fit(h.problem, heap_graph, keys);
    }
    // Over the values' own intervals, as XLA places them (a colocated group's hull is not a
    // lower bound: others may sit in its dead gaps).
    h.lower_bound = temp_lower_bound(detail::pieces_problem(h.problem, keys));
    if (xla && (places_as_xla(packer) || peak_of(h.problem, *xla) <= h.lower_bound)) {
      h.solution = std::move(*xla);  // the baseline, or already optimal
    } else {
      auto sol = packer(h.problem);
      if (!sol) return sol.error().with_context("packing the temporaries of memory space " + std::to_string(h.color));
      if (auto ok = xlamem::validate(h.problem, *sol); !ok) {
        return ok.error().with_context("packer " + std::string(packer.name()) + " returned an invalid placement");
      }
      h.solution = !xla || peak_of(h.problem, *sol) <= peak_of(h.problem, *xla) ? std::move(*sol) : std::move(*xla);
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
    s.heap_colors.push_back(h.color);
    heaps_.push_back(std::move(h));
    return {};
  }

  // After the heaps: XLA's temporary layout (tuple tables beside the heap), the emulated
  // copies' allocations, and every allocation's values in id order.
  void finish_allocations(const G& g, assign_state& s) {
    const auto& tuple_temps = s.tuple_temps;
    const auto& global_pass = s.global_pass;
    const auto& heap_colors = s.heap_colors;
    const auto thread_local_count = s.thread_local_count;
    auto& alloc_of_buffer = s.alloc_of_buffer;
    auto& copies = s.copies;
    if (!tuple_temps.empty()) {
      combine_temporaries(g, detail::global_pass_heaps(global_pass, heap_colors, thread_local_count), alloc_of_buffer);
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
  }

  // Peak: the most device bytes in use at one time, as `passes/memory_usage.hpp` defines it
  // (the memory report computes the same from its timeline): each value over `range_in_use`,
  // a heap the bytes its live values cover, any other allocation its largest live value;
  // thread-local, constant and host allocations are not counted. `peak_buffers` are the
  // buffers live then.
  void compute_peak(const std::vector<std::size_t>& alloc_of_buffer) {
    const std::int64_t horizon = la_.end_time() + 1;
    std::vector<std::int64_t> total(static_cast<std::size_t>(horizon) + 1, 0);
    std::vector<placed_value> values;
    std::vector<const placed_value*> pointers;
    for (const auto& al : allocations_) {
      const auto& f = al.flags_;
      if (!counts_toward_peak(f.is_constant, f.is_thread_local, f.is_host())) continue;
      values.clear();
      for (const auto& x : al.values) {
        if (!la_.has_range(x.value)) continue;
        const auto r = range_in_use(x.value);
        values.push_back({r.start, r.end, x.offset, x.size});
      }
      if (al.values.empty() && f.maybe_live_out) values.push_back({horizon - 1, horizon - 1, 0, al.size()});  // an emulated copy
      pointers.clear();
      for (const auto& v : values) pointers.push_back(&v);
      add_usage(total, allocation_usage(pointers, f.is_preallocated_temp(), horizon));
    }
    to_steps(total);
    const auto peak = first_peak(total);
    peak_time_ = peak.time;
    stats_.peak_memory_in_bytes = peak.bytes;
    std::vector<std::vector<buffer_id>> by_alloc(allocations_.size());
    for (std::size_t b = 0; b < info_.size(); ++b) {
      if (alloc_of_buffer[b] != none && info_[b].hull.start >= 0) by_alloc[alloc_of_buffer[b]].push_back(static_cast<buffer_id>(b));
    }
    peak_buffers_.clear();
    for (std::size_t a = 0; a < allocations_.size(); ++a) {
      const auto& f = allocations_[a].flags_;
      if (!counts_toward_peak(f.is_constant, f.is_thread_local, f.is_host())) continue;
      for (auto b : by_alloc[a]) {
        live_range r = info_[b].hull;
        if (f.is_entry_parameter && info_[b].entry_parameter) r = {0, la_.end_time()};
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
