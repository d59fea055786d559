// SPDX-License-Identifier: Apache-2.0
/// @file
/// A memory-term reduction for people and programs (`xlamem reduce`): `memory_terms_text`
/// lists the reduced interval of every primitive and group and the reduced times;
/// `visit_fields` of a `memory_terms_report` gives its JSON (`io/codec/json.hpp`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/memory_terms/reduction.hpp"

namespace xlamem {

/// One reduction, as reported.
struct memory_terms_report {
  std::string file;
  std::string_view policy;
  const memory_term_reduction* reduction = nullptr;
};

/// The JSON fields: policy, num_lives, terms_before, terms_after, intervals (`[first, last]`
/// each), groups, reduced_times.
template <class F>
void visit_fields(const memory_terms_report& x, F&& f) {
  const auto& r = *x.reduction;
  f("file", x.file);
  f("policy", x.policy);
  f("num_lives", r.num_lives);
  f("terms_before", r.terms_before);
  f("terms_after", r.terms_after);
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  for (const auto& iv : r.intervals) intervals.emplace_back(iv.first, iv.last);
  f("intervals", intervals);
  f("groups", r.groups);
  f("reduced_times", r.reduced_times);
}

/// The reduction for people, a line per primitive and group.
[[nodiscard]] inline std::string memory_terms_text(const memory_terms_report& x) {
  const auto& r = *x.reduction;
  std::string s = x.file + ": " + std::to_string(r.num_primitives) + " primitives over " + std::to_string(r.num_lives) +
                  " time steps, policy " + std::string(x.policy) + "\n";
  s += "terms: " + std::to_string(r.terms_before) + " -> " + std::to_string(r.terms_after) + " (" +
       std::to_string(r.groups.size()) + " groups, " + std::to_string(r.iterations) + " sweeps)\n";
  auto range = [](const term_interval& iv) { return "[" + std::to_string(iv.first) + ", " + std::to_string(iv.last) + "]"; };
  for (std::int64_t p = 0; p < r.num_primitives; ++p) {
    const auto& iv = r.intervals[static_cast<std::size_t>(p)];
    s += "primitive " + std::to_string(p) + ": " + (iv.valid() ? range(iv) : std::string("none")) + "\n";
  }
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    std::string members;
    for (const auto m : r.groups[g]) {  // appended piece by piece: GCC 12 -O3 warns (-Wrestrict) on "" + std::string
      if (!members.empty()) members += ' ';
      members += std::to_string(m);
    }
    s += "group " + std::to_string(g) + " = {" + members + "}: " +
         range(r.intervals[static_cast<std::size_t>(r.num_primitives) + g]) + "\n";
  }
  std::string times;
  for (const auto t : r.reduced_times) {
    if (!times.empty()) times += ' ';
    times += std::to_string(t);
  }
  return terminal_text(s + "reduced times: " + times + "\n");  // the file name comes from the user
}

}  // namespace xlamem
