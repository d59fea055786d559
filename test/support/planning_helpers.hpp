// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/planning_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/common.hpp"
#include "support/hlo_test_graph.hpp"
#include "support/memory_terms_generators.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/io/xla/buffer_assignment_text.hpp"
#include "xlamem/io/xla/live_range_text.hpp"
#include "xlamem/io/xla/memory_stats_text.hpp"
#include "xlamem/packing/interval_set.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/liveness.hpp"
#include "xlamem/passes/memory_stats.hpp"

namespace xlamem::test::planning_helpers {
namespace fs = std::filesystem;
using xlamem::buffer_assignment;
using xlamem::buffer_assignment_options;
using xlamem::compiled_memory_stats;
using xlamem::live_range;
using xlamem::live_range_analysis;
using xlamem::liveness_options;
using xlamem::shape_index;
using xlamem::hlo::module;

inline std::string slurp(const fs::path& p) { return xlamem::test::read_text(p); }

inline module parse(const std::string& text) {
  auto m = xlamem::hlo::parse_module(text);
  REQUIRE_MESSAGE(m.has_value(), (m ? std::string() : m.error().to_string()));
  return std::move(*m);
}

inline module read(const fs::path& p) {
  auto m = xlamem::hlo::read_module_file(p.string());
  REQUIRE_MESSAGE(m.has_value(), (m ? std::string() : m.error().to_string()));
  return std::move(*m);
}

inline buffer_assignment<module> plan(const module& m, buffer_assignment_options o = {}) {
  if (o.solver.family == xlamem::solver_family::search) o.time_limit = 0.05;
  auto a = buffer_assignment<module>::run(m, o);
  REQUIRE_MESSAGE(a.has_value(), (a ? std::string() : a.error().to_string()));
  auto ok = a->validate(m);
  REQUIRE_MESSAGE(ok.has_value(), (ok ? std::string() : ok.error().to_string()));
  return std::move(*a);
}

// The allocation holding the value defined by instruction `name` at `index`.
inline std::size_t allocation_of(const module& m, const buffer_assignment<module>& a, const std::string& name,
                          const xlamem::shape_index& index = {}) {
  const auto& df = a.dataflow();
  for (std::uint32_t v = 0; v < df.values().size(); ++v) {
    const auto& d = df.get(v).defining;
    if (m[d.instruction].name == name && d.index == index) {
      const auto s = a.slice_of(v);
      REQUIRE_MESSAGE(s.has_value(), (name + " has no allocation"));
      return s->allocation;
    }
  }
  FAIL("no value defined by " << name);
  return 0;
}

// The value defined by `name` at `{}`.
inline std::uint32_t range_value(const module& m, const live_range_analysis<module>& la, const std::string& name) {
  const auto& df = la.dataflow();
  for (std::uint32_t v = 0; v < df.values().size(); ++v) {
    const auto& d = df.get(v).defining;
    if (m[d.instruction].name == name && d.index.empty()) return v;
  }
  FAIL("no value defined by " << name);
  return 0;
}

// The live range of the value defined by `name` at `{}`.
inline live_range range_of(const module& m, const live_range_analysis<module>& la, const std::string& name) {
  const auto& df = la.dataflow();
  for (std::uint32_t v = 0; v < df.values().size(); ++v) {
    const auto& d = df.get(v).defining;
    if (m[d.instruction].name == name && d.index.empty()) {
      REQUIRE(la.has_range(v));
      return la.range(v);
    }
  }
  FAIL("no value defined by " << name);
  return {};
}

inline fs::path oracle_dir() { return xlamem::test::oracle_data_dir(); }

// The lines of the BufferLiveRange section of an HloLiveRange text, as a set.
inline std::set<std::string> buffer_live_ranges(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("BufferLiveRange:") != std::string::npos) {
      inside = true;
    } else if (line.find("Live ranges at") != std::string::npos) {
      inside = false;
    } else if (inside) {
      out.insert(line);
    }
  }
  return out;
}

// `name{i,j}` (just `name` for the index {}), as XLA's dumps print a value.
template <class Index>
inline std::string indexed_name(std::string name, const Index& index) {
  for (std::size_t k = 0; k < index.size(); ++k) name += (k == 0 ? "{" : ",") + std::to_string(index[k]);
  if (!index.empty()) name += "}";
  return name;
}

// Non-temporary allocations as comparable text: size, kind and the sorted value names.
inline std::multiset<std::string> non_temp_allocations(const xlamem::buffer_assignment_dump& d) {
  std::multiset<std::string> out;
  for (const auto& a : d.allocations) {
    if (a.is_preallocated_temp) continue;
    std::set<std::string> names;
    for (const auto& v : a.values) {
      const std::string n = indexed_name(v.instruction, v.shape_index);
      names.insert(n);
    }
    std::string line = std::to_string(a.size) + (a.is_entry_parameter() ? " parameter" : "") +
                       (a.is_constant ? " constant" : "") + (a.is_thread_local ? " thread-local" : "") +
                       (a.maybe_live_out ? " live-out" : "") + ":";
    for (const auto& n : names) line += " " + n;
    out.insert(line);
  }
  return out;
}

inline std::multiset<std::string> non_temp_allocations(const module& m, const buffer_assignment<module>& x) {
  std::multiset<std::string> out;
  const auto& df = x.dataflow();
  for (const auto& a : x.allocations()) {
    const auto& f = a.flags();
    if (f.is_preallocated_temp()) continue;
    std::set<std::string> names;
    for (const auto& v : a.values) {
      const auto& d = df.get(v.value).defining;
      const std::string n = indexed_name(m[d.instruction].name, d.index);
      names.insert(n);
    }
    std::string line = std::to_string(a.size()) + (f.is_entry_parameter ? " parameter" : "") +
                       (f.is_constant ? " constant" : "") + (f.is_thread_local ? " thread-local" : "") +
                       (f.maybe_live_out ? " live-out" : "") + ":";
    for (const auto& n : names) line += " " + n;
    out.insert(line);
  }
  return out;
}

// `name{index} size@offset` of every value in the temporary allocation(s).
inline std::set<std::string> temp_values(const xlamem::buffer_assignment_dump& d) {
  std::set<std::string> out;
  for (const auto& a : d.allocations) {
    if (!a.is_preallocated_temp) continue;
    for (const auto& v : a.values) {
      const std::string n = indexed_name(v.instruction, v.shape_index);
      out.insert(n + " " + std::to_string(v.size) + "@" + std::to_string(v.offset));
    }
  }
  return out;
}

inline std::set<std::string> temp_values(const module& m, const buffer_assignment<module>& x) {
  std::set<std::string> out;
  const auto& df = x.dataflow();
  for (const auto& a : x.allocations()) {
    if (!a.flags().is_preallocated_temp()) continue;
    for (const auto& v : a.values) {
      const auto& d = df.get(v.value).defining;
      const std::string n = indexed_name(m[d.instruction].name, d.index);
      out.insert(n + " " + std::to_string(v.size) + "@" + std::to_string(v.offset));
    }
  }
  return out;
}

using xlamem::test::read_flat_json;

/// The slice of the one value instruction `name` of ENTRY main defines at shape index {}.
template <class Assignment>
inline xlamem::value_slice entry_slice(const Assignment& a, const xlamem::hlo::module& m, const char* name) {
  const auto& df = a.dataflow();
  const auto v = df.unique_value_at(df.number(*m.find_instruction("main", name)), {});
  REQUIRE(v.has_value());
  const auto s = a.slice_of(*v);
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace xlamem::test::planning_helpers
