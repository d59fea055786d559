// SPDX-License-Identifier: Apache-2.0
// /proc/self/maps for the tests of JIT memory (test/jit/ and test/llvm/): the mappings of a
// range of addresses, their protections, and any page that is writable and executable at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace xlamem::test {

struct maps_line {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::string perms;  // "r-xp"
  std::string path;
};

inline std::vector<maps_line> read_proc_maps() {
  std::vector<maps_line> out;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long b = 0, e = 0;
    char perms[8] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %*s %*s %*s%n", &b, &e, perms, &consumed) >= 3) {
      maps_line m{static_cast<std::uintptr_t>(b), static_cast<std::uintptr_t>(e), perms, {}};
      if (consumed > 0 && static_cast<std::size_t>(consumed) < line.size()) {
        const auto p = line.find_first_not_of(' ', static_cast<std::size_t>(consumed));
        if (p != std::string::npos) m.path = line.substr(p);
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

/// Mappings overlapping `[base, base + size)`.
inline std::vector<maps_line> maps_in(const void* base, std::size_t size) {
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  std::vector<maps_line> out;
  for (auto& m : read_proc_maps()) {
    if (m.end > b && m.begin < b + size) out.push_back(m);
  }
  return out;
}

/// Mappings of the whole process that are writable and executable at once.
inline std::vector<maps_line> rwx_maps() {
  std::vector<maps_line> out;
  for (auto& m : read_proc_maps()) {
    if (m.perms.size() >= 3 && m.perms[1] == 'w' && m.perms[2] == 'x') out.push_back(m);
  }
  return out;
}

/// The protections ("r-x", ...) of the pages of [base, base + size), one per mapping that
/// overlaps it, and whether the mappings cover every byte.
struct page_perms {
  std::set<std::string> perms;
  bool covered = false;
};

inline page_perms perms_of(const void* base, std::size_t size) {
  page_perms out;
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const auto e = b + size;
  std::uintptr_t next = b;
  for (const auto& m : read_proc_maps()) {
    if (m.end <= b || m.begin >= e) continue;
    out.perms.insert(m.perms.substr(0, 3));
    if (m.begin <= next) next = std::max(next, m.end);
  }
  out.covered = next >= e;
  return out;
}

}  // namespace xlamem::test
