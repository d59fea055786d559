// SPDX-License-Identifier: Apache-2.0
/// @file
/// The allocation table of a `buffer_assignment` in the format of XLA's
/// `*-buffer-assignment.txt` dump (`BufferAssignment:` then one block per allocation with its
/// flags and values, then `Total bytes used`), so xlamem's plan diffs line by line against
/// XLA's and `io/xla/buffer_assignment_dump.hpp` reads it back. Emulated output copies print a
/// ` copy:` line XLA does not have. O(allocations + values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/liveness.hpp"

namespace xlamem {

namespace detail {
/// `SHAPE{layout}` without layouts: drops every `{...}` that follows `]`.
inline std::string strip_layout(const std::string& s) {
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
}  // namespace detail

/// XLA's dump-format allocation table of `a`, computed on `g`.
template <graph G>
[[nodiscard]] std::string buffer_assignment_text(const G& g, const buffer_assignment<G>& a) {
  const auto& la = a.liveness();
  const auto& df = la.dataflow();
  std::string out = "BufferAssignment:\n";
  for (const auto& al : a.allocations()) {
    const auto& f = al.flags();
    out += "allocation " + std::to_string(al.index) + ": size " + std::to_string(al.size());
    if (al.color() != 0) out += ", color " + std::to_string(al.color());
    if (f.is_entry_parameter) {
      const auto pn = df.parameters(la.entry())[static_cast<std::size_t>(al.parameter_number)];
      std::string idx;
      detail::append_shape_index_text(idx, al.parameter_index);
      out += ", parameter " + std::to_string(al.parameter_number) + ", shape |" +
             detail::strip_layout(graph_queries<G>::shape_string(g, df.instruction(pn), al.parameter_index)) +
             "| at ShapeIndex " + idx;
    }
    if (al.holds_entry_root) {
      const auto root = df.root(la.entry());
      out += ", output shape is |" + detail::strip_layout(graph_queries<G>::shape_string(g, df.instruction(root), {})) + "|";
    }
    if (f.is_constant) out += ", constant";
    if (f.is_thread_local) out += ", thread-local";
    if (f.maybe_live_out) out += ", maybe-live-out";
    if (f.is_preallocated_temp()) out += ", preallocated-temp";
    out += ":\n";
    if (!al.copy_of.empty()) out += " copy: " + al.copy_of + " (emulated copy insertion)\n";
    for (const auto& x : al.values) {
      const auto& val = df.get(x.value);
      const auto& d = val.defining;
      out += " value: <" + std::to_string(x.value) + " " + la.value_name(g, x.value, !val.is_tuple && d.index.empty()) +
             (val.is_phi ? " (phi)" : "") + " @" + std::to_string(al.color()) + "> (size=" + std::to_string(x.size) +
             ",offset=" + std::to_string(x.offset) + "): " + graph_queries<G>::shape_string(g, d.instruction, d.index) +
             "\n";
    }
  }
  std::int64_t total = 0;
  for (const auto& al : a.allocations()) total += al.size();
  out += "\nTotal bytes used: " + std::to_string(total) + "\n";
  return out;
}

}  // namespace xlamem
