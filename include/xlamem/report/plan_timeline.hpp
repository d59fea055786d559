// SPDX-License-Identifier: Apache-2.0
/// @file
/// The `memory_timeline` of a plan xlamem made: one timeline buffer per value placed by a
/// `buffer_assignment` of an HLO module (as XLA's dump lists them), with its live range (an
/// entry parameter's the whole program) and its source from the defining instruction's
/// `metadata`. For a plan identical to XLA's (solver `xla`), the timeline equals the
/// one read from XLA's own dump (`report/dump_timeline.hpp`) step by step.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/report/memory_timeline.hpp"

namespace xlamem::report {

/// The kind of an allocation from XLA's predicates: parameter before output before constant.
[[nodiscard]] inline buffer_kind kind_of(const allocation_flags& f) noexcept {
  if (f.is_entry_parameter) return buffer_kind::parameter;
  if (f.maybe_live_out) return buffer_kind::output;
  if (f.is_constant) return buffer_kind::constant;
  if (f.is_thread_local) return buffer_kind::embedded;
  return buffer_kind::temp;
}

/// A module's stack-frame tables (`StackFrames`, `FileLocations`, `FileNames`) by entry id,
/// built once, so resolving a frame costs a few hash lookups whatever the tables' size (10^6
/// frames read by 10^4 instructions must not cost their product). The first entry of an id
/// counts, as a scan from the top found it. Points into the module, which must outlive it.
class stack_frame_index {
 public:
  explicit stack_frame_index(const hlo::module& m) {
    for (const auto& sec : m.stack_frames) {
      auto* table = sec.name == "StackFrames" ? &frames_ : sec.name == "FileLocations" ? &locations_
                    : sec.name == "FileNames"  ? &files_ : nullptr;
      if (table == nullptr) continue;
      for (const auto& [id, text] : sec.entries) table->emplace(id, &text);
    }
  }

  /// Fills the file and line of `s`'s stack frame (newer JAX writes `stack_frame_id=` in
  /// metadata instead of `source_file`/`source_line`): the innermost frame, the user's call.
  /// Fills nothing when a table or an entry is missing, or `s` already has a file.
  void resolve(op_source& s) const {
    if (s.stack_frame_id < 0 || !s.source_file.empty()) return;
    const auto* frame = find(frames_, s.stack_frame_id);
    if (frame == nullptr) return;
    const auto* loc = find(locations_, decimal_or_minus_one(attribute_value(*frame, "file_location_id")));
    if (loc == nullptr) return;
    const auto* file = find(files_, decimal_or_minus_one(attribute_value(*loc, "file_name_id")));
    if (file == nullptr) return;
    std::string name = *file;
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    s.source_file = std::move(name);
    s.source_line = std::max<std::int64_t>(0, decimal_or_minus_one(attribute_value(*loc, "line")));
  }

 private:
  using table = std::unordered_map<std::int64_t, const std::string*>;
  static const std::string* find(const table& t, std::int64_t id) {
    const auto it = t.find(id);
    return it == t.end() ? nullptr : it->second;
  }
  table frames_, locations_, files_;
};

/// The file and line of `s`'s stack frame from the module's tables (see
/// `stack_frame_index::resolve`). Builds the index: for many instructions, build one
/// `stack_frame_index` and resolve through it.
inline void resolve_stack_frame(const hlo::module& m, op_source& s) {
  if (s.stack_frame_id < 0 || !s.source_file.empty()) return;
  stack_frame_index(m).resolve(s);
}

/// The source of instruction `i` of `m`: its `metadata` attribute (with a stack frame
/// resolved through `frames`, the module's tables), or empty.
[[nodiscard]] inline op_source source_of(const stack_frame_index& frames, const hlo::instruction& i) {
  const auto md = i.find_attribute("metadata");
  if (!md) return {};
  auto s = parse_op_metadata(*md);
  frames.resolve(s);
  return s;
}

/// The same, building the index of `m`'s tables (for one instruction).
[[nodiscard]] inline op_source source_of(const hlo::module& m, const hlo::instruction& i) {
  return source_of(stack_frame_index(m), i);
}

/// What a report reads of a plan (`buffer_assignment` of an HLO module), taken so that the
/// plan can be let go before the report is built: a plan of a large module is several times
/// the report's size (its dataflow, liveness, colocation and packing problems), and holding
/// both made the report's peak. About 60 bytes per value plus the allocations' value lists.
/// Refers to the module the plan was made of (which must outlive it).
struct plan_facts {
  /// One dataflow value: where it is defined, its bytes and its ranges.
  struct value_facts {
    hlo::instruction_id instruction{};
    std::uint32_t index = 0;  ///< into `indices`: the defining subshape (0: the top level)
    bool is_tuple = false;
    bool has_range = false;
    std::uint64_t bytes = 0;
    live_range range{};   ///< the liveness range (when `has_range`)
    live_range in_use{};  ///< `buffer_assignment::range_in_use` (when `has_range`)
  };
  std::vector<hlo::instruction_id> sequence;  ///< the schedule, step by step
  std::int64_t horizon = 1;                   ///< steps, with the end step
  std::vector<value_facts> values;            ///< by dataflow value id
  std::vector<shape_index> indices{shape_index{}};  ///< the defining subshapes below the top level
  std::vector<buffer_allocation> allocations;

  [[nodiscard]] const shape_index& index_of(const value_facts& v) const { return indices[v.index]; }
  /// `instruction` or `instruction{index}` (the top level's `{}` left out when `omit_empty_index`),
  /// as `live_range_analysis::value_name` names it.
  [[nodiscard]] std::string value_name(const hlo::module& m, std::uint32_t v, bool omit_empty_index) const {
    const auto& x = values[v];
    std::string s = m[x.instruction].name;
    if (!(omit_empty_index && x.index == 0)) xlamem::detail::append_shape_index_text(s, indices[x.index]);
    return s;
  }
};

/// The facts of plan `a` a report reads.
[[nodiscard]] inline plan_facts facts_of(const buffer_assignment<hlo::module>& a) {
  const auto& la = a.liveness();
  const auto& df = a.dataflow();
  plan_facts f;
  f.horizon = la.end_time() + 1;
  f.sequence.reserve(la.sequence().size());
  for (const auto n : la.sequence()) f.sequence.push_back(df.instruction(n));
  f.values.resize(df.values().size());
  for (std::uint32_t v = 0; v < df.values().size(); ++v) {
    const auto& value = df.get(v);
    auto& x = f.values[v];
    x.instruction = value.defining.instruction;
    if (!value.defining.index.empty()) {
      x.index = static_cast<std::uint32_t>(f.indices.size());
      f.indices.push_back(value.defining.index);
    }
    x.is_tuple = value.is_tuple;
    x.bytes = value.bytes;
    x.has_range = la.has_range(v);
    if (x.has_range) {
      x.range = la.range(v);
      x.in_use = a.range_in_use(v);
    }
  }
  f.allocations = a.allocations();
  return f;
}

/// The timeline of a plan from its facts (see `plan_facts`).
[[nodiscard]] inline memory_timeline timeline_of(const hlo::module& m, const plan_facts& f) {
  using traits = graph_queries<hlo::module>;
  memory_timeline t;
  t.module = m.name;
  t.host_color = host_memory_space;
  const std::int64_t horizon = f.horizon;
  const stack_frame_index frames(m);
  t.schedule.reserve(static_cast<std::size_t>(std::max<std::int64_t>(horizon, 0)));
  t.buffers.reserve(f.values.size() + f.allocations.size());  // a value each, an output copy at most per allocation
  for (const auto i : f.sequence) t.schedule.push_back(m[i].name);
  while (static_cast<std::int64_t>(t.schedule.size()) < horizon) t.schedule.emplace_back("(end)");
  for (const auto& al : f.allocations) {
    timeline_allocation ta;
    ta.index = static_cast<std::int64_t>(al.index);
    ta.size = al.size();
    ta.kind = kind_of(al.flags());
    ta.color = al.color();
    ta.is_heap = al.flags().is_preallocated_temp();
    t.allocations.push_back(ta);
    // One timeline buffer per value, as XLA's dump lists them: the steps it holds its bytes
    // (`range_in_use`: an entry parameter's value the whole program) and its place.
    for (const auto& x : al.values) {
      const auto& v = f.values[x.value];
      if (!v.has_range) continue;
      // Built in place, not moved in: a timeline buffer is about 200 bytes of strings.
      timeline_buffer& tb = t.buffers.emplace_back();
      tb.name = f.value_name(m, x.value, !v.is_tuple);
      tb.shape = traits::shape_string(m, v.instruction, f.index_of(v));
      tb.size = x.size;
      tb.kind = ta.kind;
      tb.start = std::clamp<std::int64_t>(v.in_use.start, 0, horizon - 1);
      tb.end = std::clamp<std::int64_t>(v.in_use.end, tb.start, horizon - 1);
      tb.allocation = ta.index;
      tb.offset = x.offset;
      tb.color = ta.color;
      tb.source = source_of(frames, m[v.instruction]);
    }
    if (al.values.empty() && al.flags().maybe_live_out) {  // an emulated output copy
      timeline_buffer tb;
      tb.name = "copy of " + al.copy_of;
      tb.size = al.size();
      tb.kind = ta.kind;
      tb.start = tb.end = horizon - 1;
      tb.allocation = ta.index;
      tb.color = ta.color;
      t.buffers.push_back(std::move(tb));
    }
  }
  return t;
}

/// The timeline of assignment `a` of module `m`.
[[nodiscard]] inline memory_timeline timeline_of(const hlo::module& m, const buffer_assignment<hlo::module>& a) {
  return timeline_of(m, facts_of(a));
}

}  // namespace xlamem::report
