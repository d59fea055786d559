// SPDX-License-Identifier: Apache-2.0
/// @file
/// The reduction policies by name (`xlamem reduce --policy NAME`, the Python package), in one
/// table, and `reduce_memory_terms` of a list of primitive intervals with a named policy,
/// checked exact (`verify_memory_terms`) before it is returned. The number of time steps is
/// the last valid interval end + 1, as auto-sharding counts it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "xlamem/error.hpp"
#include "xlamem/name_table.hpp"
#include "xlamem/memory_terms/reduction.hpp"
#include "xlamem/memory_terms/verify.hpp"

namespace xlamem {

/// One named policy: `reduce(num_lives, intervals, options)`.
struct named_term_policy {
  static constexpr std::string_view kind = "policy";
  std::string_view name;
  result<memory_term_reduction> (*reduce)(std::int64_t, std::span<const term_interval>, const memory_term_options&) = nullptr;
};

namespace detail {
template <memory_term_policy Policy>
result<memory_term_reduction> reduce_with(std::int64_t num_lives, std::span<const term_interval> intervals,
                                          const memory_term_options& options) {
  return reduce_memory_terms(num_lives, intervals, options, Policy{});
}
}  // namespace detail

/// The policies, the default (XLA's result) first.
inline constexpr std::array<named_term_policy, 2> memory_term_policies{{
    {xla_compatible_policy::name, &detail::reduce_with<xla_compatible_policy>},
    {split_aware_policy::name, &detail::reduce_with<split_aware_policy>},
}};

/// The policy named `name`, or null.
[[nodiscard]] constexpr const named_term_policy* find_memory_term_policy(std::string_view name) noexcept {
  return name_table<named_term_policy>(memory_term_policies).find(name);
}

/// "xla_compatible or split_aware".
[[nodiscard]] inline std::string memory_term_policy_names() { return name_table<named_term_policy>(memory_term_policies).names(); }

/// The policy named `name`, or `errc::invalid_argument`: "unknown policy 'x' (expected
/// xla_compatible or split_aware)".
[[nodiscard]] inline result<named_term_policy> parse_memory_term_policy(std::string_view name) {
  return name_table<named_term_policy>(memory_term_policies).parse(name);
}

/// Reduces `intervals` with `policy` over the time steps up to the last valid end, and checks
/// that the result expands to the same primitives at every step.
/// @returns the reduction's or the check's error.
[[nodiscard]] inline result<memory_term_reduction> reduce_memory_terms(std::span<const term_interval> intervals,
                                                                       const named_term_policy& policy,
                                                                       const memory_term_options& options = {}) {
  std::int64_t num_lives = 0;
  for (const auto& iv : intervals) {
    if (iv.valid()) num_lives = std::max(num_lives, iv.last + 1);
  }
  auto r = policy.reduce(num_lives, intervals, options);
  if (r) {
    if (auto ok = verify_memory_terms(intervals, *r); !ok) return ok.error();
  }
  return r;
}

}  // namespace xlamem
