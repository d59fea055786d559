// SPDX-License-Identifier: Apache-2.0
/// @file
/// The two text forms of `compiled_memory_stats`: XLA's `CompiledMemoryStats::DebugString()`
/// (`memory_stats_text`: the ten device and host fields, XLA's order and format) and a JSON object
/// with every field under the names of JAX's `memory_analysis()` attributes
/// (`memory_stats_json`). The statistics themselves (`passes/memory_stats.hpp`) know no format.
/// Both are O(fields).
#pragma once

#include <cstdint>
#include <string>

#include "xlamem/passes/memory_stats.hpp"

namespace xlamem {

/// XLA's `DebugString()`: `CompiledMemoryStats(generated_code_size_in_bytes=N, ...)`.
[[nodiscard]] inline std::string memory_stats_text(const compiled_memory_stats& stats) {
  std::string s = "CompiledMemoryStats(";
  const char* sep = "";
  stats.for_each_field(
      [&](const char* name, std::int64_t v) {
        s += sep + std::string(name) + '=' + std::to_string(v);
        sep = ", ";
      },
      false);
  return s + ")";
}

/// A JSON object with every field, `peak_memory_in_bytes` and `total_allocation_bytes` last.
[[nodiscard]] inline std::string memory_stats_json(const compiled_memory_stats& stats) {
  std::string s = "{";
  const char* sep = "";
  stats.for_each_field(
      [&](const char* name, std::int64_t v) {
        s += sep + ('"' + std::string(name)) + "\": " + std::to_string(v);
        sep = ", ";
      },
      true);
  return s + "}";
}

}  // namespace xlamem
