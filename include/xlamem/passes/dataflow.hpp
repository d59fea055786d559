// SPDX-License-Identifier: Apache-2.0
/// @file
/// Dataflow analysis over any `graph` (XLA's HloDataflowAnalysis): values, their positions
/// and uses, with XLA's aliasing rules taken from the graph's `memory_semantics`:
///
/// - every output subshape defines a value unless it is forwarded (tuple elements,
///   get-tuple-element, copy-of-tuple elements, optimization barriers, copy-done, and bitcast
///   unless `bitcast_defines_value`);
/// - call, while and conditional define nothing: their output is the callee root(s) (while: also
///   the init operand), and callee parameters take the caller's operand values (while body and
///   condition parameters also the body root);
/// - with `ssa_form` (what XLA's buffer assignment uses), a while's output, its body and
///   condition parameters and a conditional's output define a phi value at every subshape
///   where more than one value would meet (the loop-carried state, the branch results); a
///   subshape where one value meets (a loop invariant) still forwards it. A phi's inputs are
///   the values that flow into it (`phi_inputs(v)`); colocation keeps them in one buffer, and
///   liveness lets each input end where it flows into the phi instead of living on through
///   the loop or past the conditional;
/// - fusion computations are separate: fused parameters and the fusion output define their own
///   values; `callers()` exposes the parameter/operand and root/output binding;
/// - in-place pairs (dynamic-update-slice base, scatter, output_to_operand_aliasing, fusions
///   with such roots) are reported by `semantics()`; they do not merge values (buffer assignment
///   colocates them).
///
/// Results live outside the graph, in flat arrays indexed by a dense instruction number: the
/// graph's own (`dense_graph`) or one assigned here (then handles must be hashable). Operands,
/// users and subshapes are stored back to back for all instructions (a few words per
/// instruction, not a handful of small vectors each: a module of 10^6 instructions must not
/// take a gigabyte here).
/// Cost: a worklist over instructions (an instruction is revisited only when a value set it
/// reads from grows), so near-linear in the module: O(subshapes x value-set size x growths);
/// a call chain of 10^5 computations takes about a second.
/// The analysis stays valid while the graph's structure (not its layouts) is unchanged; for a
/// `dense_graph`, `number(handle)` asks the graph, which must then still exist.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xlamem/compact_vector.hpp"
#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"

namespace xlamem {

/// Options of `dataflow_analysis::run`.
struct dataflow_options {
  /// Bitcasts define a new value (XLA's `bitcast_defines_value`); otherwise they forward
  /// operand 0. Memory-space propagation needs `true`.
  bool bitcast_defines_value = false;
  /// Phi values at while and conditional joins (XLA's `ssa_form`); see the file comment.
  bool ssa_form = false;
};

/// The sorted value ids at one position: a view into the analysis that made it (valid as
/// long as it), comparable with another set or a vector.
class value_set_view : public std::span<const std::uint32_t> {
 public:
  using std::span<const std::uint32_t>::span;
  friend bool operator==(value_set_view a, value_set_view b) { return std::ranges::equal(a, b); }
  friend bool operator==(value_set_view a, const std::vector<std::uint32_t>& b) { return std::ranges::equal(a, b); }
};

/// Values, positions and uses of a graph. See the file comment for the rules.
template <graph G>
class dataflow_analysis {
 public:
  using traits = graph_traits<G>;
  using instruction_type = typename traits::instruction_type;
  using computation_type = typename traits::computation_type;
  using value_id = std::uint32_t;

  /// Where a value appears: an instruction output at a subshape index.
  struct position {
    instruction_type instruction;
    shape_index index;
    friend bool operator==(const position&, const position&) = default;
  };
  /// An instruction reading a value: operand `operand_number` at `operand_index`.
  struct use {
    instruction_type instruction;
    std::size_t operand_number = 0;
    shape_index operand_index;
    friend bool operator==(const use&, const use&) = default;
  };
  /// A value: defined once, seen at `positions(id)` (the first is the defining one), read by
  /// `uses(id)` (both stored back to back for all values, not per value).
  struct value {
    value_id id = 0;
    bool is_tuple = false;      ///< a tuple's pointer table
    bool is_phi = false;        ///< a phi at a while or conditional join (`ssa_form`)
    position defining;
    std::uint64_t bytes = 0;    ///< from the defining subshape
  };
  /// An instruction calling a computation, with the binding.
  struct call_site {
    instruction_type instruction;
    call_binding binding = call_binding::embedded;
    std::size_t first_operand = 0;
    std::size_t caller = 0;  ///< dense number of `instruction`
  };

  /// Runs the analysis. @returns `errc::invalid_argument` when the graph's shapes and semantics
  /// disagree (a forwarded or bound subshape that does not exist, an operand out of range).
  [[nodiscard]] static result<dataflow_analysis> run(const G& g, dataflow_options options = {}) {
    dataflow_analysis a;
    a.options_ = options;
    auto r = a.build(g);
    if (!r) return r.error();
    return a;
  }

  [[nodiscard]] const dataflow_options& options() const noexcept { return options_; }

  // ---- numbering and structure ----
  /// Number of instructions; dense numbers are `[0, instruction_count())`.
  [[nodiscard]] std::size_t instruction_count() const noexcept { return instrs_.size(); }
  /// Dense number of `i` (the graph's own when it has them).
  /// For a `dense_graph` this asks the graph for its number, so the graph must still exist.
  [[nodiscard]] std::size_t number(instruction_type i) const {
    if constexpr (dense_graph<G>) {
      return dense_number_.at(traits::instruction_number(*graph_, i));
    } else {
      return instr_number_.at(i);
    }
  }
  /// The instruction numbered `n`.
  [[nodiscard]] instruction_type instruction(std::size_t n) const { return instrs_[n].handle; }
  /// All instructions, computation by computation, each in the graph's order.
  [[nodiscard]] std::vector<instruction_type> instruction_order() const {
    std::vector<instruction_type> out;
    out.reserve(instrs_.size());
    for (const auto& in : instrs_) out.push_back(in.handle);
    return out;
  }
  [[nodiscard]] std::size_t computation_count() const noexcept { return comps_.size(); }
  [[nodiscard]] computation_type computation(std::size_t n) const { return comps_[n].handle; }
  [[nodiscard]] std::size_t computation_number(computation_type c) const {
    if (const auto k = comp_index(c)) return *k;
    return comps_.size();
  }
  /// Dense number of the computation holding instruction number `n`.
  [[nodiscard]] std::size_t parent_number(std::size_t n) const { return instrs_[n].comp; }
  /// Call sites of computation number `c`.
  [[nodiscard]] const std::vector<call_site>& callers(std::size_t c) const { return comps_[c].callers; }
  [[nodiscard]] const std::vector<call_site>& callers(computation_type c) const
    requires(!std::is_same_v<computation_type, std::size_t>)
  {
    return callers(computation_number(c));
  }
  /// Whether computation number `c` is called by a fusion (XLA's IsFusionComputation).
  [[nodiscard]] bool is_fusion_computation(std::size_t c) const {
    for (const auto& cs : comps_[c].callers) {
      if (cs.binding == call_binding::fusion) return true;
    }
    return false;
  }
  /// The fusion instruction calling computation number `c`, if there is one.
  [[nodiscard]] std::optional<instruction_type> fusion_instruction(std::size_t c) const {
    for (const auto& cs : comps_[c].callers) {
      if (cs.binding == call_binding::fusion) return cs.instruction;
    }
    return std::nullopt;
  }
  /// Parameter number of instruction number `n`, or -1 when it is not a parameter.
  [[nodiscard]] std::int64_t parameter_number(std::size_t n) const { return instrs_[n].parameter; }
  /// Whether instruction number `n` is the root of its computation.
  [[nodiscard]] bool is_root(std::size_t n) const { return comps_[instrs_[n].comp].root == n; }
  /// Dense numbers of the parameters and root of computation number `c`.
  [[nodiscard]] const std::vector<std::size_t>& parameters(std::size_t c) const { return comps_[c].params; }
  [[nodiscard]] std::size_t root(std::size_t c) const { return comps_[c].root; }
  /// Operands (dense numbers) of instruction number `n`, in operand order.
  [[nodiscard]] std::span<const std::size_t> operands(std::size_t n) const {
    return {ops_.data() + op_begin_[n], ops_.data() + op_begin_[n + 1]};
  }
  /// Dense numbers of the instructions that use instruction `n`, ascending; an instruction
  /// reading `n` as several operands is listed once per operand.
  [[nodiscard]] std::span<const std::size_t> users(std::size_t n) const {
    return {users_.data() + user_begin_[n], users_.data() + user_begin_[n + 1]};
  }
  /// The cached memory semantics of instruction number `n`.
  [[nodiscard]] const memory_semantics<computation_type>& semantics(std::size_t n) const { return sems_[instrs_[n].sem]; }

  /// Subshape indices of instruction number `n`'s output, in pre-order.
  [[nodiscard]] std::span<const shape_index> subshapes(std::size_t n) const {
    return {sub_index_.data() + first_sub_[n], sub_index_.data() + first_sub_[n + 1]};
  }
  /// Whether subshape `k` (pre-order position) of instruction `n` is a leaf.
  [[nodiscard]] bool is_leaf(std::size_t n, std::size_t k) const { return !sub_info_[first_sub_[n] + k].is_tuple; }
  /// What the graph said of subshape `k` of instruction `n`.
  [[nodiscard]] subshape_info subshape(std::size_t n, std::size_t k) const {
    const subshape_facts& f = sub_info_[first_sub_[n] + k];
    subshape_info info;
    info.is_tuple = f.is_tuple;
    info.tuple_size = f.tuple_size;
    info.bytes = f.bytes;
    info.memory_space = f.memory_space;
    if (f.split != 0) info.split = splits_[f.split - 1];
    return info;
  }

  // ---- values ----
  [[nodiscard]] const std::vector<value>& values() const noexcept { return values_; }
  [[nodiscard]] const value& get(value_id v) const { return values_[v]; }
  /// Where value `v` appears: its defining position first, then the others by instruction
  /// number and subshape.
  [[nodiscard]] std::span<const position> positions(value_id v) const {
    return {positions_.data() + position_begin_[v], positions_.data() + position_begin_[v + 1]};
  }
  /// For a phi, the values flowing into it, ascending; empty for any other value.
  [[nodiscard]] value_set_view phi_inputs(value_id v) const {
    const auto it = phi_inputs_.find(v);
    return it == phi_inputs_.end() ? value_set_view{} : value_set_view{it->second.data(), it->second.size()};
  }
  /// The instructions reading value `v`, by instruction number, operand and subshape.
  [[nodiscard]] std::span<const use> uses(value_id v) const {
    return {uses_.data() + use_begin_[v], uses_.data() + use_begin_[v + 1]};
  }

  /// The value set at instruction number `n`, subshape `index`; empty for a missing index.
  [[nodiscard]] value_set_view value_set(std::size_t n, const shape_index& index) const {
    const auto k = find_index(n, index);
    if (!k) return {};
    const std::size_t p = first_sub_[n] + *k;
    return {set_values_.data() + set_begin_[p], set_values_.data() + set_begin_[p + 1]};
  }
  /// The handle forms below exist only when handles are not `std::size_t` (for such graphs the
  /// dense-number forms take `number(i)`).
  [[nodiscard]] value_set_view value_set(instruction_type i, const shape_index& index) const
    requires(!std::is_same_v<instruction_type, std::size_t>)
  {
    return value_set(number(i), index);
  }
  /// The one value at a position, or nullopt when there are none or several.
  [[nodiscard]] std::optional<value_id> unique_value_at(std::size_t n, const shape_index& index) const {
    const auto s = value_set(n, index);
    if (s.size() != 1) return std::nullopt;
    return s.front();
  }
  [[nodiscard]] std::optional<value_id> unique_value_at(instruction_type i, const shape_index& index) const
    requires(!std::is_same_v<instruction_type, std::size_t>)
  {
    return unique_value_at(number(i), index);
  }
  /// The value defined at a position, or nullopt when the position only forwards values.
  [[nodiscard]] std::optional<value_id> value_defined_at(std::size_t n, const shape_index& index) const {
    const auto k = find_index(n, index);
    if (!k || defined_[first_sub_[n] + *k] == no_value) return std::nullopt;
    return defined_[first_sub_[n] + *k];
  }
  [[nodiscard]] std::optional<value_id> value_defined_at(instruction_type i, const shape_index& index) const
    requires(!std::is_same_v<instruction_type, std::size_t>)
  {
    return value_defined_at(number(i), index);
  }

  /// Pre-order position of `index` among instruction `n`'s subshapes.
  /// Constant time per index component (a tuple of 10^4 elements must not make every lookup
  /// linear); a graph whose pre-order does not list children as 0, 1, ... falls back to a scan.
  [[nodiscard]] std::optional<std::size_t> find_index(std::size_t n, const shape_index& index) const {
    const auto idx = subshapes(n);
    auto scan = [&]() -> std::optional<std::size_t> {
      for (std::size_t k = 0; k < idx.size(); ++k) {
        if (idx[k] == index) return k;
      }
      return std::nullopt;
    };
    if (instrs_[n].children == no_table) return scan();
    const std::uint32_t* begin = child_table_.data() + instrs_[n].children;
    const std::uint32_t* list = begin + idx.size() + 1;
    std::size_t pos = 0;
    for (const auto x : index) {
      const std::size_t b = begin[pos], e = begin[pos + 1];
      if (x < 0 || static_cast<std::uint64_t>(x) >= e - b) return std::nullopt;
      const std::size_t c = list[b + static_cast<std::size_t>(x)];
      if (idx[c].back() != x) return scan();
      pos = c;
    }
    return pos;
  }

 private:
  static constexpr value_id no_value = static_cast<value_id>(-1);

  static constexpr std::uint32_t no_table = static_cast<std::uint32_t>(-1);
  // A subshape's `subshape_info` in 32 bytes: the split (rare) in splits_.
  struct subshape_facts {
    std::uint64_t bytes = 0;
    std::int64_t memory_space = 0;
    std::uint32_t tuple_size = 0;
    std::uint32_t split = 0;  // 1 + its entry in splits_; 0: none
    bool is_tuple = false;
  };
  // Per instruction only what is not stored back to back (see the members below).
  struct instr_data {
    instruction_type handle;
    std::uint32_t comp = 0;
    std::uint32_t sem = 0;                 // in sems_ and callees_; 0: no forwarding, in-place pair or call
    std::uint32_t children = no_table;     // its child table in child_table_, or none (then find_index scans)
    std::int64_t parameter = -1;
  };

  /// Appends the child table of instruction `n` (subshape count + 1 starts, then the children
  /// node by node) to child_table_; none when it has one subshape or the indices are not a
  /// pre-order tree (find_index then scans).
  void index_children(std::size_t n) {
    const auto idx = subshapes(n);
    const std::size_t np = idx.size();
    if (np <= 1 || child_table_.size() + 2 * np > max_rows) return;  // past 32-bit offsets: scan
    std::vector<std::uint32_t> parent(np, 0);
    std::vector<std::uint32_t> begin(np + 1, 0);
    std::vector<std::uint32_t> path{0};
    for (std::size_t p = 1; p < np; ++p) {
      const std::size_t depth = idx[p].size();
      if (depth == 0 || depth > path.size()) return;
      path.resize(depth);
      parent[p] = path[depth - 1];
      ++begin[parent[p] + 1];
      path.push_back(static_cast<std::uint32_t>(p));
    }
    for (std::size_t p = 0; p < np; ++p) begin[p + 1] += begin[p];
    instrs_[n].children = static_cast<std::uint32_t>(child_table_.size());
    child_table_.insert(child_table_.end(), begin.begin(), begin.end());
    const std::size_t list = child_table_.size();
    child_table_.resize(list + np - 1);
    for (std::size_t p = 1; p < np; ++p) child_table_[list + begin[parent[p]]++] = static_cast<std::uint32_t>(p);
  }
  struct comp_data {
    computation_type handle;
    std::vector<std::size_t> params;
    std::size_t root = 0;
    std::vector<call_site> callers;
  };

  dataflow_options options_;
  std::vector<instr_data> instrs_;
  // Operands and users of instruction n: ops_[op_begin_[n] .. op_begin_[n + 1]), and so users.
  std::vector<std::uint32_t> op_begin_{0}, user_begin_;
  std::vector<std::size_t> ops_, users_;
  // Semantics other than the plain one (sems_[0]) and their callees' numbers, per instruction
  // that has them.
  std::vector<memory_semantics<computation_type>> sems_{memory_semantics<computation_type>{}};
  std::vector<std::vector<std::size_t>> callees_{std::vector<std::size_t>{}};
  // Subshape k of instruction n is entry first_sub_[n] + k of the per-subshape arrays: its
  // index, shape facts, the value it defines (or no_value) and its sorted value set.
  std::vector<std::uint32_t> first_sub_{0};
  std::vector<shape_index> sub_index_;
  std::vector<subshape_facts> sub_info_;
  std::vector<split_config> splits_;
  std::vector<value_id> defined_;
  // A value set while the analysis runs: most hold one or two values, kept in place (10^6
  // subshapes: no heap block each).
  using working_set = compact_vector<value_id>;
  std::vector<working_set> sets_;
  std::vector<std::uint32_t> child_table_;  // see index_children
  std::vector<comp_data> comps_;
  std::vector<value> values_;
  // Positions and uses of value v: positions_[position_begin_[v] .. position_begin_[v + 1]), and so uses.
  std::vector<std::size_t> position_begin_, use_begin_;
  std::vector<position> positions_;
  std::vector<use> uses_;
  // After the analysis, the value set of subshape p: set_values_[set_begin_[p] .. set_begin_[p + 1]).
  std::vector<std::size_t> set_begin_;
  std::vector<value_id> set_values_;
  std::unordered_map<value_id, std::vector<value_id>> phi_inputs_;  // phis only (rare)
  // Numbering for graphs without dense numbers, or a map from the graph's numbers to ours.
  std::unordered_map<instruction_type, std::size_t> instr_number_;
  std::vector<std::size_t> dense_number_;  // graph's number -> ours (dense graphs)
  const G* graph_ = nullptr;               // only for number(handle) on dense graphs
  std::vector<std::size_t> dense_comp_;    // graph's computation number -> ours (dense graphs)
  // Propagation: dependents_[src] lists the instructions whose value sets are gathered from
  // instruction src (recorded on each instruction's first visit); a worklist revisits them
  // when src's sets grow.
  std::vector<compact_vector<std::size_t>> dependents_;  // most have one: in place
  std::vector<std::uint8_t> visited_;
  std::set<std::pair<std::size_t, std::size_t>> phi_removed_at_;  // (instruction, subshape)
  std::size_t visiting_ = static_cast<std::size_t>(-1);
  bool recording_ = false;
  bool made_phi_while_propagating_ = false;  // the sets downstream of it may hold stale values

  /// Our number of computation `c`, or nullopt when it is not in the graph. Constant time for
  /// dense graphs (a call chain of 10^5 computations must not be quadratic), linear otherwise.
  [[nodiscard]] std::optional<std::size_t> comp_index(computation_type c) const {
    if constexpr (dense_graph<G>) {
      if (graph_ != nullptr) {
        const std::size_t t = traits::computation_number(*graph_, c);
        if (t < dense_comp_.size() && dense_comp_[t] != static_cast<std::size_t>(-1) && comps_[dense_comp_[t]].handle == c) {
          return dense_comp_[t];
        }
        return std::nullopt;
      }
    }
    for (std::size_t k = 0; k < comps_.size(); ++k) {
      if (comps_[k].handle == c) return k;
    }
    return std::nullopt;
  }

  static bool is_prefix(const shape_index& p, const shape_index& i) {
    return p.size() <= i.size() && std::equal(p.begin(), p.end(), i.begin());
  }
  static void merge_into(working_set& dst, const working_set& src, bool& changed) {
    for (auto v : src) {
      auto it = std::lower_bound(dst.begin(), dst.end(), v);
      if (it == dst.end() || *it != v) {
        dst.insert(it, v);
        changed = true;
      }
    }
  }
  static error bad(const std::string& what) { return make_error(errc::invalid_argument, "dataflow: " + what); }
  std::string describe(std::size_t n) const {
    return "instruction #" + std::to_string(n) + " (computation #" + std::to_string(instrs_[n].comp) + ")";
  }

  // The analysis in its phases: number the graph, read its structure and semantics, define
  // the values, propagate value sets to a fixed point (with phis in SSA form), then record
  // every value's positions and uses.
  result<void> build(const G& g) {
    if (auto r = number_graph(g); !r) return r;
    if (auto r = read_structure(g); !r) return r;
    define_values();
    if (auto r = propagate_to_fixed_point(); !r) return r;
    record_positions_and_uses();
    pack_value_sets();
    return {};
  }

  // The value sets back to back: a vector per subshape (a heap block each, 10^6 of them for a
  // module of 10^6 instructions) is what propagation needs, not what is kept.
  void pack_value_sets() {
    set_begin_.assign(sets_.size() + 1, 0);
    for (std::size_t p = 0; p < sets_.size(); ++p) set_begin_[p + 1] = set_begin_[p] + sets_[p].size();
    set_values_.reserve(set_begin_.back());
    for (const auto& set : sets_) set_values_.insert(set_values_.end(), set.begin(), set.end());
    std::vector<working_set>().swap(sets_);
  }

  // Our number of instruction `i`, or nullopt when it is not in the graph.
  std::optional<std::size_t> number_of(const G& g, instruction_type i) const {
    if constexpr (dense_graph<G>) {
      const std::size_t t = traits::instruction_number(g, i);
      if (t >= dense_number_.size() || dense_number_[t] == static_cast<std::size_t>(-1)) return std::nullopt;
      return dense_number_[t];
    } else {
      (void)g;
      auto it = instr_number_.find(i);
      if (it == instr_number_.end()) return std::nullopt;
      return it->second;
    }
  }

  // Phase 1: number computations and instructions (and map the graph's dense numbers to ours).
  result<void> number_graph(const G& g) {
    if constexpr (dense_graph<G>) instrs_.reserve(traits::instruction_count(g));
    for (auto c : traits::computations(g)) {
      comp_data cd;
      cd.handle = c;
      comps_.push_back(std::move(cd));
      for (auto i : traits::instructions(g, c)) {
        instr_data d;
        d.handle = i;
        d.comp = static_cast<std::uint32_t>(comps_.size() - 1);
        instrs_.push_back(std::move(d));
      }
    }
    if constexpr (dense_graph<G>) {
      graph_ = &g;
      dense_number_.assign(traits::instruction_count(g), static_cast<std::size_t>(-1));
      for (std::size_t k = 0; k < instrs_.size(); ++k) {
        const std::size_t t = traits::instruction_number(g, instrs_[k].handle);
        if (t >= dense_number_.size()) return bad("instruction_number out of range");
        dense_number_[t] = k;
      }
      dense_comp_.assign(traits::computation_count(g), static_cast<std::size_t>(-1));
      for (std::size_t k = 0; k < comps_.size(); ++k) {
        const std::size_t t = traits::computation_number(g, comps_[k].handle);
        if (t >= dense_comp_.size()) return bad("computation_number out of range");
        dense_comp_[t] = k;
      }
    } else {
      static_assert(requires(instruction_type i) { std::hash<instruction_type>{}(i); },
                    "dataflow_analysis: a graph without dense numbers (dense_graph) needs hashable "
                    "instruction handles (std::hash<instruction_type>)");
      instr_number_.reserve(instrs_.size());
      for (std::size_t k = 0; k < instrs_.size(); ++k) instr_number_.emplace(instrs_[k].handle, k);
    }
    return {};
  }

  // Phase 2: roots and parameters of each computation; operands, users, shapes, semantics and
  // callees of each instruction, each checked against the graph.
  result<void> read_structure(const G& g) {
    for (std::size_t c = 0; c < comps_.size(); ++c) {
      auto& cd = comps_[c];
      const auto r = number_of(g, traits::root(g, cd.handle));
      if (!r) return bad("root of computation #" + std::to_string(c) + " is not one of its instructions");
      cd.root = *r;
      std::int64_t k = 0;
      for (auto p : traits::parameters(g, cd.handle)) {
        const auto pn = number_of(g, p);
        if (!pn) return bad("parameter of computation #" + std::to_string(c) + " is not one of its instructions");
        cd.params.push_back(*pn);
        instrs_[*pn].parameter = k++;
      }
    }
    // Most instructions have one subshape and an operand or two.
    sub_index_.reserve(instrs_.size());
    sub_info_.reserve(instrs_.size());
    ops_.reserve(instrs_.size() * 2);
    op_begin_.reserve(instrs_.size() + 1);
    first_sub_.reserve(instrs_.size() + 1);
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      if (auto r = read_instruction(g, n); !r) return r;
    }
    defined_.assign(sub_index_.size(), no_value);
    sets_.assign(sub_index_.size(), {});
    list_users();
    return {};
  }

  // Rows of 32-bit starts: a graph past 2^32 operands or subshapes is refused, not wrapped.
  static constexpr std::size_t max_rows = static_cast<std::size_t>(no_table) - 1;

  result<void> read_instruction(const G& g, std::size_t n) {
    const instruction_type handle = instrs_[n].handle;
    for (auto o : traits::operands(g, handle)) {
      const auto on = number_of(g, o);
      if (!on) return bad(describe(n) + " has an operand outside the graph");
      ops_.push_back(*on);
    }
    if (ops_.size() > max_rows) return bad("more than 2^32 operands in the graph");
    op_begin_.push_back(static_cast<std::uint32_t>(ops_.size()));
    bool too_large = false;
    traits::for_each_subshape(g, handle, [&](const shape_index& idx, const subshape_info& info) {
      sub_index_.push_back(idx);
      subshape_facts f;
      f.bytes = info.bytes;
      f.memory_space = info.memory_space;
      f.tuple_size = static_cast<std::uint32_t>(info.tuple_size);
      f.is_tuple = info.is_tuple;
      too_large = too_large || info.tuple_size > max_rows;
      if (info.split) {
        splits_.push_back(*info.split);
        f.split = static_cast<std::uint32_t>(splits_.size());
      }
      sub_info_.push_back(f);
    });
    if (too_large) return bad(describe(n) + " has a tuple of more than 2^32 elements");
    if (sub_index_.size() > max_rows) return bad("more than 2^32 subshapes in the graph");
    if (sub_index_.size() == first_sub_.back() || !sub_index_[first_sub_.back()].empty()) {
      return bad(describe(n) + " has no root subshape {}");
    }
    first_sub_.push_back(static_cast<std::uint32_t>(sub_index_.size()));
    index_children(n);
    auto sem = traits::semantics(g, handle);
    const std::size_t operand_count = operands(n).size();
    for (const auto& f : sem.forwards) {
      if (f.operand >= operand_count) return bad(describe(n) + " forwards an operand it does not have");
    }
    for (const auto& ip : sem.in_place) {
      if (ip.operand >= operand_count) return bad(describe(n) + " updates an operand it does not have");
    }
    std::vector<std::size_t> callees;
    for (const auto& cc : sem.calls) {
      const auto found = comp_index(cc.computation);
      if (!found) return bad(describe(n) + " calls a computation outside the graph");
      comps_[*found].callers.push_back({handle, cc.binding, cc.first_operand, n});
      callees.push_back(*found);
    }
    const bool plain = sem.forwards.empty() && sem.in_place.empty() && sem.calls.empty() && !sem.is_bitcast &&
                       !sem.reads_forwarded;
    if (!plain) {
      instrs_[n].sem = static_cast<std::uint32_t>(sems_.size());
      sems_.push_back(std::move(sem));
      callees_.push_back(std::move(callees));
    }
    return {};
  }

  // The users of every instruction, from the operands: counted, then filled in instruction
  // order (so each list is ascending).
  void list_users() {
    user_begin_.assign(instrs_.size() + 1, 0);
    for (const auto o : ops_) ++user_begin_[o + 1];
    for (std::size_t n = 0; n < instrs_.size(); ++n) user_begin_[n + 1] += user_begin_[n];
    users_.resize(ops_.size());
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      for (const auto o : operands(n)) users_[user_begin_[o]++] = n;
    }
    // Each start moved to the next one's: shift them back.
    for (std::size_t n = instrs_.size(); n > 0; --n) user_begin_[n] = user_begin_[n - 1];
    user_begin_[0] = 0;
  }

  // Phase 3: each subshape an instruction defines itself (not bound from a caller, not the
  // callee's result, not forwarded) gets a value.
  void define_values() {
    values_.reserve(sub_index_.size());  // at most one per subshape, phis aside
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      const auto& d = instrs_[n];
      const auto& sem = sems_[d.sem];
      bool bound_param = false;
      if (d.parameter >= 0) {
        for (const auto& cs : comps_[d.comp].callers) {
          bound_param = bound_param || binds_values(cs.binding);
        }
      }
      bool output_from_callee = false, async_output = false;
      for (const auto& cc : sem.calls) {
        output_from_callee = output_from_callee || cc.binding == call_binding::call ||
                             cc.binding == call_binding::while_body ||
                             cc.binding == call_binding::conditional_branch;
        async_output = async_output || cc.binding == call_binding::async_wrapped;
      }
      const bool forwarding_bitcast = sem.is_bitcast && !options_.bitcast_defines_value && !operands(n).empty();
      if (bound_param || output_from_callee || forwarding_bitcast) continue;
      for (std::size_t p = first_sub_[n]; p < first_sub_[n + 1]; ++p) {
        // The wrapped root's arrays (its tuple tables are the async-start's own).
        if (async_output && is_async_result(sub_index_[p]) && !sub_info_[p].is_tuple) continue;
        bool forwarded = false;
        for (const auto& f : sem.forwards) forwarded = forwarded || is_prefix(f.output_index, sub_index_[p]);
        if (forwarded) continue;
        const auto v = static_cast<value_id>(values_.size());
        value val;
        val.id = v;
        val.defining = {d.handle, sub_index_[p]};
        val.is_tuple = sub_info_[p].is_tuple;
        val.bytes = sub_info_[p].bytes;
        values_.push_back(std::move(val));
        defined_[p] = v;
        sets_[p].push_back(v);
      }
    }
  }

  // Phase 4: propagate to a fixed point (value sets only grow, so this ends). In SSA form, a
  // join where several values meet becomes a phi and propagation restarts; phis are only ever
  // added, so this ends too. The fixed point is the least one whatever the visiting order, so
  // the worklist gives the same sets (and, phis being numbered after it, the same ids) as
  // sweeping every instruction until nothing changes.
  // A phi that, once propagation settles, only one other value reaches is removed again (a
  // loop passing an element through reaches its own phi; XLA's Phi() discounts that input),
  // and its place takes that value in the next round. Rounds end when no phi is added or
  // removed; each removal replaces a phi by one value, so they do end.
  // A join becomes a phi as soon as a second value reaches it, during propagation, as XLA's
  // UpdateWhileValueSet does: without that, a join's set holds every value of every loop
  // around it until the round ends (nested whiles d deep: sets of d values at d levels, cubic
  // work). The values it had let through stay in the sets downstream until the next round
  // rebuilds them, so a round that made a phi is always followed by another. Phis are numbered by
  // position at the end, so the ids do not depend on when a phi was made.
  result<void> propagate_to_fixed_point() {
    dependents_.assign(instrs_.size(), {});
    visited_.assign(instrs_.size(), 0);
    std::vector<std::uint8_t> removed;  // per value: a phi taken out again
    for (;;) {
      made_phi_while_propagating_ = false;
      auto r = propagate();
      if (!r) return r;
      if (!options_.ssa_form) break;
      auto dropped = remove_single_input_phis(removed);
      if (!dropped) return dropped.error();
      if (!add_phis() && !*dropped && !made_phi_while_propagating_) break;
      for (std::size_t p = 0; p < sets_.size(); ++p) {
        if (defined_[p] == no_value) sets_[p].clear();
      }
    }
    // What propagation needed and nothing after it reads (`= {}` would keep the capacity).
    std::vector<compact_vector<std::size_t>>().swap(dependents_);
    std::vector<std::uint8_t>().swap(visited_);
    if (!options_.ssa_form) return {};
    removed.resize(values_.size(), 0);
    number_phis_by_position(removed);
    return record_phi_inputs();
  }

  // Each phi's inputs: the values that meet at it, itself left out.
  result<void> record_phi_inputs() {
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      for (std::size_t k = 0; k < first_sub_[n + 1] - first_sub_[n]; ++k) {
        const value_id v = defined_[first_sub_[n] + k];
        if (v == no_value || !values_[v].is_phi) continue;
        working_set in;
        bool changed = false;
        auto r = gather(n, k, in, changed);
        if (!r) return r;
        in.resize(static_cast<std::size_t>(std::remove(in.begin(), in.end(), v) - in.begin()));
        phi_inputs_[v].assign(in.begin(), in.end());
      }
    }
    return {};
  }

  // Phase 5: every value's positions (its defining one first) and uses, each counted per
  // value first, then stored back to back.
  void record_positions_and_uses() {
    const std::size_t nv = values_.size();
    // Positions: count, then fill, the defining ones in a first sweep so that each comes first.
    position_begin_.assign(nv + 1, 0);
    for (std::size_t p = 0; p < sets_.size(); ++p) {
      for (auto v : sets_[p]) ++position_begin_[v + 1];
    }
    for (std::size_t v = 0; v < nv; ++v) position_begin_[v + 1] += position_begin_[v];
    positions_.resize(position_begin_[nv]);
    std::vector<std::size_t> next(position_begin_.begin(), position_begin_.end() - 1);
    for (const bool defining : {true, false}) {
      for (std::size_t n = 0; n < instrs_.size(); ++n) {
        for (std::size_t p = first_sub_[n]; p < first_sub_[n + 1]; ++p) {
          for (auto v : sets_[p]) {
            if ((defined_[p] == v) == defining) positions_[next[v]++] = position{instrs_[n].handle, sub_index_[p]};
          }
        }
      }
    }
    // Uses: the same, in instruction, operand and subshape order.
    use_begin_.assign(nv + 1, 0);
    auto each_use = [&](auto&& f) {
      for (std::size_t n = 0; n < instrs_.size(); ++n) {
        const auto& sem = semantics(n);
        const auto ops = operands(n);
        for (std::size_t o = 0; o < ops.size(); ++o) {
          for (std::size_t p = first_sub_[ops[o]]; p < first_sub_[ops[o] + 1]; ++p) {
            if (!may_use(sem, o, sub_index_[p])) continue;
            // (instruction, operand, index) is distinct for each (n, o, p) and a value set
            // holds each value once, so no use repeats.
            for (auto v : sets_[p]) f(v, n, o, p);
          }
        }
      }
    };
    each_use([&](value_id v, std::size_t, std::size_t, std::size_t) { ++use_begin_[v + 1]; });
    for (std::size_t v = 0; v < nv; ++v) use_begin_[v + 1] += use_begin_[v];
    uses_.resize(use_begin_[nv]);
    next.assign(use_begin_.begin(), use_begin_.end() - 1);
    each_use([&](value_id v, std::size_t n, std::size_t o, std::size_t p) {
      uses_[next[v]++] = use{instrs_[n].handle, o, sub_index_[p]};
    });
  }

  /// Visits every instruction once, then again whenever a set it gathers from has grown.
  result<void> propagate() {
    const std::size_t count = instrs_.size();
    std::vector<std::size_t> queue(count);  // a ring of at most `count` entries
    std::vector<std::uint8_t> queued(count, 1);
    for (std::size_t n = 0; n < count; ++n) queue[n] = n;
    std::size_t head = 0, size = count;
    while (size != 0) {
      const std::size_t n = queue[head];
      head = head + 1 == count ? 0 : head + 1;
      --size;
      queued[n] = 0;
      bool changed = false;
      recording_ = visited_[n] == 0;
      visiting_ = n;
      auto r = update(n, changed);
      recording_ = false;
      if (!r) return r;
      if (visited_[n] == 0) {
        visited_[n] = 1;
      }
      if (!changed) continue;
      for (const std::size_t d : dependents_[n]) {
        if (queued[d]) continue;
        queued[d] = 1;
        queue[(head + size) % count] = d;
        ++size;
      }
    }
    return {};
  }

  static bool binds_values(call_binding b) noexcept {
    return b == call_binding::call || b == call_binding::while_body || b == call_binding::while_condition ||
           b == call_binding::conditional_branch || b == call_binding::async_wrapped;
  }
  /// An async call site's output {1, ...}: where the wrapped computation's root lands.
  static bool is_async_result(const shape_index& j) noexcept { return !j.empty() && j.front() == 1; }

  /// Whether operand `o` of `d` at `index` is read (XLA's MayUseOperandValue: tuple and domain
  /// only forward; get-tuple-element and copy of a tuple read only the tables on the path;
  /// everything else, including call, while and fusion operands, is a use).
  static bool may_use(const memory_semantics<computation_type>& sem, std::size_t o, const shape_index& index) {
    if (sem.reads_forwarded) return true;
    bool forwarded_from = false;
    for (const auto& f : sem.forwards) {
      if (f.operand != o) continue;
      forwarded_from = true;
      if (is_prefix(f.operand_index, index)) return false;
    }
    if (!forwarded_from) return true;
    for (const auto& f : sem.forwards) {
      if (f.operand == o && index.size() < f.operand_index.size() && is_prefix(index, f.operand_index)) return true;
    }
    return false;
  }

  /// Copies the operand set at `from` into `dst`. Fails when the subshape does not exist.
  result<void> pull(std::size_t src, const shape_index& from, working_set& dst, bool& changed,
                    std::size_t n) {
    const auto k = find_index(src, from);
    if (!k) {
      std::string idx;
      for (auto x : from) idx += (idx.empty() ? "" : ",") + std::to_string(x);
      return bad(describe(n) + " reads subshape {" + idx + "} of " + describe(src) + ", which does not exist");
    }
    if (src == n) return {};
    if (recording_) {
      auto& deps = dependents_[src];
      if (deps.empty() || deps.back() != visiting_) deps.push_back(visiting_);
    }
    // src != n, so the set read is never `dst` (which is n's, or a local): no copy needed.
    merge_into(dst, sets_[first_sub_[src] + *k], changed);
    return {};
  }

  /// Whether instruction `n` is a join in SSA form: a while or conditional, or a parameter of
  /// a while body or condition.
  bool is_join(std::size_t n) const {
    const auto& d = instrs_[n];
    if (d.parameter >= 0) {
      for (const auto& cs : comps_[d.comp].callers) {
        if (cs.binding == call_binding::while_body || cs.binding == call_binding::while_condition) return true;
      }
      return false;
    }
    for (const auto& cc : sems_[d.sem].calls) {
      if (cc.binding == call_binding::while_body || cc.binding == call_binding::conditional_branch) return true;
    }
    return false;
  }

  /// Defines a phi at every join subshape where more than one value meets. @returns whether
  /// it defined any.
  bool add_phis() {
    bool added = false;
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      if (!is_join(n)) continue;
      for (std::size_t k = 0; k < first_sub_[n + 1] - first_sub_[n]; ++k) {
        const std::size_t p = first_sub_[n] + k;
        if (defined_[p] != no_value || sets_[p].size() < 2) continue;
        define_phi(n, k);
        added = true;
      }
    }
    return added;
  }

  /// Makes subshape `k` of join `n` a phi: a new value that its set now holds alone.
  void define_phi(std::size_t n, std::size_t k) {
    const std::size_t p = first_sub_[n] + k;
    const auto v = static_cast<value_id>(values_.size());
    value val;
    val.id = v;
    val.defining = {instrs_[n].handle, sub_index_[p]};
    val.is_tuple = sub_info_[p].is_tuple;
    val.is_phi = true;
    val.bytes = sub_info_[p].bytes;
    values_.push_back(std::move(val));
    defined_[p] = v;
    sets_[p] = {v};
  }

  /// Takes out every phi that only one value besides itself reaches. @returns whether any.
  result<bool> remove_single_input_phis(std::vector<std::uint8_t>& removed) {
    removed.resize(values_.size(), 0);
    bool any = false;
    working_set in;
    for (std::size_t n = 0; n < instrs_.size(); ++n) {
      for (std::size_t k = 0; k < first_sub_[n + 1] - first_sub_[n]; ++k) {
        const value_id v = defined_[first_sub_[n] + k];
        if (v == no_value || !values_[v].is_phi) continue;
        in.clear();
        bool changed = false;
        auto r = gather(n, k, in, changed);
        if (!r) return r.error();
        in.resize(static_cast<std::size_t>(std::remove(in.begin(), in.end(), v) - in.begin()));
        if (in.size() != 1) continue;
        defined_[first_sub_[n] + k] = no_value;
        removed[v] = 1;
        phi_removed_at_.insert({n, k});  // a join settled to one value: no eager phi there again
        any = true;
      }
    }
    return any;
  }

  /// Drops the removed phis from the value table and numbers the others after every other
  /// value in the order of their positions (instruction, then subshape), whenever each was
  /// made; the other values keep their ids (and so the order that ties are broken by).
  void number_phis_by_position(const std::vector<std::uint8_t>& removed) {
    std::vector<value_id> to(values_.size(), no_value);
    std::size_t next = 0;
    for (std::size_t v = 0; v < values_.size(); ++v) {
      if (!values_[v].is_phi) to[v] = static_cast<value_id>(next++);
    }
    bool moved = false;
    for (const auto v : defined_) {
      if (v == no_value || !values_[v].is_phi || removed[v]) continue;
      moved = moved || next != v;
      to[v] = static_cast<value_id>(next++);
    }
    if (!moved && next == values_.size()) return;
    std::vector<value> numbered(next);
    for (std::size_t v = 0; v < values_.size(); ++v) {
      if (to[v] == no_value) continue;
      numbered[to[v]] = std::move(values_[v]);
      numbered[to[v]].id = to[v];
    }
    values_ = std::move(numbered);
    for (auto& v : defined_) {
      if (v != no_value) v = to[v];
    }
    for (auto& set : sets_) {
      for (auto& v : set) v = to[v];
      std::sort(set.begin(), set.end());
    }
  }

  result<void> update(std::size_t n, bool& changed) {
    const bool join = options_.ssa_form && is_join(n);
    for (std::size_t k = 0; k < first_sub_[n + 1] - first_sub_[n]; ++k) {
      const std::size_t p = first_sub_[n] + k;
      if (defined_[p] != no_value) continue;
      auto r = gather(n, k, sets_[p], changed);
      if (!r) return r;
      if (join && sets_[p].size() >= 2 && !phi_removed_at_.contains({n, k})) {
        define_phi(n, k);
        made_phi_while_propagating_ = true;
        changed = true;
      }
    }
    return {};
  }

  /// Merges into `set` the values that flow into subshape `k` of instruction `n`.
  result<void> gather(std::size_t n, std::size_t k, working_set& set, bool& changed) {
    const auto& d = instrs_[n];
    const auto& sem = sems_[d.sem];
    const auto& callees = callees_[d.sem];
    const auto ops = operands(n);
    const bool forwarding_bitcast = sem.is_bitcast && !options_.bitcast_defines_value && !ops.empty();
    const shape_index& j = sub_index_[first_sub_[n] + k];
    // Bound parameter.
    if (d.parameter >= 0) {
      for (const auto& cs : comps_[d.comp].callers) {
        if (!binds_values(cs.binding)) continue;
        const std::size_t caller = cs.caller;
        const bool by_number = cs.binding == call_binding::call || cs.binding == call_binding::async_wrapped;
        const std::size_t op = by_number ? static_cast<std::size_t>(d.parameter)
                               : cs.binding == call_binding::conditional_branch ? cs.first_operand
                                                                                : 0;
        const auto caller_ops = operands(caller);
        if (op >= caller_ops.size()) return bad(describe(caller) + " has too few operands for its callee");
        auto r = pull(caller_ops[op], j, set, changed, n);
        if (!r) return r;
        if (cs.binding == call_binding::while_body || cs.binding == call_binding::while_condition) {
          const auto& caller_sem = semantics(caller);
          for (std::size_t q = 0; q < caller_sem.calls.size(); ++q) {
            if (caller_sem.calls[q].binding != call_binding::while_body) continue;
            auto r2 = pull(comps_[callees_[instrs_[caller].sem][q]].root, j, set, changed, n);
            if (!r2) return r2;
          }
        }
      }
      return {};
    }
    // Output of call / while / conditional.
    bool from_callee = false;
    for (std::size_t q = 0; q < sem.calls.size(); ++q) {
      const auto& cc = sem.calls[q];
      if (cc.binding == call_binding::call || cc.binding == call_binding::while_body ||
          cc.binding == call_binding::conditional_branch) {
        from_callee = true;
        auto r = pull(comps_[callees[q]].root, j, set, changed, n);
        if (!r) return r;
        if (cc.binding == call_binding::while_body) {
          if (ops.empty()) return bad(describe(n) + " is a while without an operand");
          auto r2 = pull(ops[0], j, set, changed, n);
          if (!r2) return r2;
        }
      }
    }
    if (from_callee) return {};
    for (std::size_t q = 0; q < sem.calls.size(); ++q) {
      if (sem.calls[q].binding != call_binding::async_wrapped || !is_async_result(j)) continue;
      return pull(comps_[callees[q]].root, shape_index(j.begin() + 1, j.end()), set, changed, n);
    }
    if (forwarding_bitcast) {
      auto r = pull(ops[0], j, set, changed, n);
      if (!r) return r;
      return {};
    }
    // Forwarded subtree: the longest matching forwarding wins.
    const forwarding* best = nullptr;
    for (const auto& f : sem.forwards) {
      if (is_prefix(f.output_index, j) && (best == nullptr || f.output_index.size() > best->output_index.size())) best = &f;
    }
    if (best != nullptr) {
      shape_index from = best->operand_index;
      from.insert(from.end(), j.begin() + static_cast<std::ptrdiff_t>(best->output_index.size()), j.end());
      auto r = pull(ops[best->operand], from, set, changed, n);
      if (!r) return r;
    }
    return {};
  }
};

}  // namespace xlamem
