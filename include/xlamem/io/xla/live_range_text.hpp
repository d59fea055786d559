// SPDX-License-Identifier: Apache-2.0
/// @file
/// XLA's `HloLiveRange::ToString()` text of a `live_range_analysis`: the flattened instruction
/// sequence, each value's live range, the values live at the peak moment (largest first) and
/// the flat stack-trace breakdown of the peak. Byte for byte what XLA prints for the same
/// ranges, so it diffs against XLA's `*-buffer-assignment.txt` dumps. O(values log values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/passes/liveness.hpp"

namespace xlamem {

/// The `HloLiveRange (max T):` section for the ranges of `la`, computed on `g`.
template <graph G>
[[nodiscard]] std::string live_range_text(const G& g, const live_range_analysis<G>& la) {
  const auto& df = la.dataflow();
  const auto& sequence = la.sequence();
  std::string out = "HloLiveRange (max " + std::to_string(la.end_time()) + "):\n  InstructionSequence:\n";
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    out += "    " + std::to_string(k) + ":" + graph_queries<G>::name(g, df.instruction(sequence[k]), sequence[k]) + "\n";
  }
  out += "  BufferLiveRange:\n";
  for (typename live_range_analysis<G>::value_id v = 0; v < df.values().size(); ++v) {
    if (!la.has_range(v)) continue;
    out += "    " + la.value_name(g, v, false) + ":" + std::to_string(la.range(v).start) + "-" +
           std::to_string(la.range(v).end) + "\n";
  }
  const auto moment = la.peak_moment();
  out += "  Live ranges at " + std::to_string(moment) + " (peak):\n";
  const auto live = la.live_at(g, moment);
  std::uint64_t total = 0;
  for (auto v : live) {
    total += df.get(v).bytes;
    out += "    " + la.value_name(g, v, false) + ": " + std::to_string(df.get(v).bytes) +
           " bytes (cumulative: " + std::to_string(total) + " bytes)\n";
  }
  if (!live.empty()) {
    out += "  Stack trace breakdown for peak usage: " + std::to_string(total) + " bytes\n";
    out += "    " + graph_queries<G>::computation_name(g, df.computation(la.entry())) +
           " (100.0%, total: " + std::to_string(total) + " bytes, current: 0 bytes, remaining: " +
           std::to_string(total) + " bytes)\n";
    std::uint64_t cumulative = 0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      const auto bytes = df.get(live[k]).bytes;
      cumulative += bytes;
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f",
                    total == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(total));
      out += std::string("      ") + (k + 1 == live.size() ? "\u2514\u2500\u2500 " : "\u251c\u2500\u2500 ") +
             la.value_name(g, live[k], true) + " (" + pct + "%, total: " + std::to_string(bytes) +
             " bytes, current: " + std::to_string(bytes) + " bytes, remaining: " +
             std::to_string(total - cumulative) + " bytes)\n";
    }
  }
  return out;
}

}  // namespace xlamem
