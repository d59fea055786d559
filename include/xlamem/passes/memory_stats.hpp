// SPDX-License-Identifier: Apache-2.0
/// @file
/// `compiled_memory_stats`: XLA's `CompiledMemoryStats` (what JAX users read from
/// `compiled.memory_analysis()`), with the same fields and meanings, computed from a list of
/// allocations the way `CompiledMemoryStats::PopulateBufferStatsFromAllocations` does:
///
/// - an entry-parameter allocation counts as argument (and as alias when it is aliased with
///   an output);
/// - a maybe-live-out allocation counts as output (an allocation can be both argument and
///   output; alias corrects the double count);
/// - a preallocated temporary (not parameter, not live-out, not thread-local, not constant)
///   counts as temp;
/// - constants and thread-local allocations count nowhere;
/// - allocations in host memory (memory space 5) go to the `host_*` fields instead.
///
/// Nothing here needs an IR or a format: `io/xla/memory_stats_text.hpp` prints XLA's `DebugString`
/// and the JSON object. All functions are O(allocations).
#pragma once

#include <cstdint>

namespace xlamem {

/// XLA's memory space of host memory (`Layout::kHostMemorySpace`, the `S(5)` of layouts).
inline constexpr std::int64_t host_memory_space = 5;

/// The flags of one allocation that the statistics read (XLA's BufferAllocation predicates).
struct allocation_flags {
  std::int64_t size = 0;                          ///< bytes
  std::int64_t color = 0;                         ///< memory space
  bool is_entry_parameter = false;                ///< holds an entry-computation parameter
  bool is_parameter_aliased_with_output = false;  ///< that parameter is aliased with an output
  bool maybe_live_out = false;                    ///< holds a value that leaves the program
  bool is_thread_local = false;                   ///< holds values of a thread-local computation
  bool is_constant = false;                       ///< holds a constant

  /// XLA's `IsPreallocatedTempBuffer()`.
  [[nodiscard]] bool is_preallocated_temp() const noexcept {
    return !is_entry_parameter && !maybe_live_out && !is_thread_local && !is_constant;
  }
  /// Whether the allocation is in host memory.
  [[nodiscard]] bool is_host() const noexcept { return color == host_memory_space; }
};

/// XLA's `CompiledMemoryStats`. All fields are bytes and default to 0.
struct compiled_memory_stats {
  std::int64_t generated_code_size_in_bytes = 0;  ///< code size; cannot be derived from HLO
  std::int64_t argument_size_in_bytes = 0;
  std::int64_t output_size_in_bytes = 0;
  std::int64_t alias_size_in_bytes = 0;            ///< argument bytes reused for outputs
  std::int64_t temp_size_in_bytes = 0;
  std::int64_t host_generated_code_size_in_bytes = 0;
  std::int64_t host_argument_size_in_bytes = 0;
  std::int64_t host_output_size_in_bytes = 0;
  std::int64_t host_alias_size_in_bytes = 0;
  std::int64_t host_temp_size_in_bytes = 0;
  /// The most device bytes in use at one time, as `passes/memory_usage.hpp` defines it (filled
  /// by buffer assignment and by the memory report; see docs/planning.md).
  std::int64_t peak_memory_in_bytes = 0;
  /// Sum of the device allocation sizes, constants included, thread-local ones not: what
  /// JAX >= 0.11's `memory_analysis()` reports (on 53 of 53 corpus programs that have one; JAX
  /// 0.10's `CompiledMemoryStats` has no such field).
  std::int64_t total_allocation_bytes = 0;

  friend bool operator==(const compiled_memory_stats&, const compiled_memory_stats&) = default;

  /// XLA's documented lower bound on device memory: code + argument + output - alias + temp.
  [[nodiscard]] std::int64_t device_footprint() const noexcept {
    return generated_code_size_in_bytes + argument_size_in_bytes + output_size_in_bytes - alias_size_in_bytes +
           temp_size_in_bytes;
  }

  /// Calls `f(name, value)` for the ten fields of XLA's `DebugString()`, in XLA's order, and
  /// then (with `all`) for `peak_memory_in_bytes` and `total_allocation_bytes`.
  template <class F>
  void for_each_field(F&& f, bool all) const {
    f("generated_code_size_in_bytes", generated_code_size_in_bytes);
    f("argument_size_in_bytes", argument_size_in_bytes);
    f("output_size_in_bytes", output_size_in_bytes);
    f("alias_size_in_bytes", alias_size_in_bytes);
    f("temp_size_in_bytes", temp_size_in_bytes);
    f("host_generated_code_size_in_bytes", host_generated_code_size_in_bytes);
    f("host_argument_size_in_bytes", host_argument_size_in_bytes);
    f("host_output_size_in_bytes", host_output_size_in_bytes);
    f("host_alias_size_in_bytes", host_alias_size_in_bytes);
    f("host_temp_size_in_bytes", host_temp_size_in_bytes);
    if (all) {
      f("peak_memory_in_bytes", peak_memory_in_bytes);
      f("total_allocation_bytes", total_allocation_bytes);
    }
  }
};

/// The twelve fields by name, for writers that visit fields (the JSON of `io/codec/json.hpp`).
template <class F>
void visit_fields(const compiled_memory_stats& s, F&& f) {
  s.for_each_field(f, true);
}

/// Argument, output, alias and temp bytes (device and host) and the device total of a range of
/// allocations (`allocation_flags`, or anything with a `flags()` member returning them), as
/// `PopulateBufferStatsFromAllocations` does. Peak and code size are left 0.
template <class Range>
[[nodiscard]] compiled_memory_stats stats_from_allocations(const Range& allocations) {
  compiled_memory_stats s;
  for (const auto& item : allocations) {
    const allocation_flags& a = [&]() -> const allocation_flags& {
      if constexpr (requires { item.flags(); }) {
        return item.flags();
      } else {
        return item;
      }
    }();
    const bool host = a.is_host();
    if (a.is_entry_parameter) {
      (host ? s.host_argument_size_in_bytes : s.argument_size_in_bytes) += a.size;
      if (a.is_parameter_aliased_with_output) (host ? s.host_alias_size_in_bytes : s.alias_size_in_bytes) += a.size;
    }
    if (a.maybe_live_out) (host ? s.host_output_size_in_bytes : s.output_size_in_bytes) += a.size;
    if (a.is_preallocated_temp()) (host ? s.host_temp_size_in_bytes : s.temp_size_in_bytes) += a.size;
    if (!host && !a.is_thread_local) s.total_allocation_bytes += a.size;
  }
  return s;
}

}  // namespace xlamem
