// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/oracle_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/common.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"

namespace xlamem::test::oracle_helpers {
namespace fs = std::filesystem;
using xlamem::buffer_assignment_dump;
using xlamem::errc;
using xlamem::parse_buffer_assignment_dump;

inline fs::path corpus_dir() { return xlamem::test::oracle_data_dir(); }

using xlamem::test::read_text;

inline std::map<std::string, std::uint64_t> read_flat_json(const fs::path& p) {
  return xlamem::test::read_flat_json<std::uint64_t>(p);
}

struct program_files {
  std::string name;
  fs::path dir;
  fs::path buffer_assignment;
  fs::path module;
};

inline std::vector<program_files> corpus_programs(const fs::path& root) {
  std::vector<program_files> out;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    program_files p;
    p.name = entry.path().filename().string();
    p.dir = entry.path();
    const std::string module = "jit_" + p.name + ".cpu_after_optimizations";
    p.buffer_assignment = p.dir / (module + "-buffer-assignment.txt");
    p.module = p.dir / (module + ".txt");
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// Instruction names defined in an HLO module text ("%name = " or "name = " at line start,
// after indentation and an optional ROOT), and the number of such lines.
inline std::set<std::string> instruction_names(const std::string& hlo, std::size_t& count) {
  std::set<std::string> names;
  count = 0;
  std::istringstream in(hlo);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view s(line);
    if (s.empty() || s.front() != ' ') continue;
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    if (s.substr(0, 5) == "ROOT ") s.remove_prefix(5);
    if (!s.empty() && s.front() == '%') s.remove_prefix(1);
    const auto eq = s.find(" = ");
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view n = s.substr(0, eq);
    if (n.find(' ') != std::string_view::npos) continue;
    names.emplace(n);
    ++count;
  }
  return names;
}

// Names of the ENTRY computation's parameter instructions.
inline std::set<std::string> entry_parameter_names(const std::string& hlo) {
  std::set<std::string> names;
  const auto at = hlo.find("\nENTRY ");
  if (at == std::string::npos) return names;
  std::istringstream in(hlo.substr(at + 1));
  std::string line;
  std::getline(in, line);  // the ENTRY line
  while (std::getline(in, line) && line != "}") {
    if (line.find(" parameter(") == std::string::npos) continue;
    std::string_view s(line);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    if (!s.empty() && s.front() == '%') s.remove_prefix(1);
    names.emplace(s.substr(0, s.find(" = ")));
  }
  return names;
}

constexpr std::string_view kNewLayout =
    "BufferAssignment:\n"
    "allocation 0: size 128, maybe-live-out:\n"
    " value: <18 broadcast_add_fusion @0> (size=128,offset=0): f32[8,4]{1,0}\n"
    "allocation 1: size 128, parameter 0, shape |f32[8,4]| at ShapeIndex {}:\n"
    " value: <14 x.1 @0> (size=128,offset=0): f32[8,4]{1,0}\n"
    "allocation 2: size 64, color 5, parameter 1, shape |(f32[4], /*index=5*/s32[])| at ShapeIndex "
    "{1}, maybe-live-out:\n"
    " value: <15 y.1{1} @5> (size=64,offset=0): s32[]\n"
    "allocation 3: size 16, output shape is |(f32[4], f32[8,4])|, maybe-live-out:\n"
    " value: <19 tuple.1{} @0> (size=16,offset=0): (f32[4]{0}, f32[8,4]{1,0})\n"
    "allocation 4: size 4, thread-local:\n"
    " value: <2 reduce_sum.5 @0> (size=4,offset=0): f32[]\n"
    "allocation 5: size 8, constant:\n"
    " value: <3 constant.2 @0> (size=8,offset=0): f32[2]{0}\n"
    "allocation 6: size 160, preallocated-temp:\n"
    " value: <16 ynn_fusion @0> (size=128,offset=0): f32[8,4]{1,0}\n"
    " value: <17 w.2 (phi) @0> (size=32,offset=128): f32[8]{0}\n";

}  // namespace xlamem::test::oracle_helpers
