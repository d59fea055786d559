// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/reliability_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/hlo_generators.hpp"
#include "xlamem/checked.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/io/memory_terms/memory_terms_csv.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/dataflow.hpp"

namespace xlamem::test::reliability_helpers {
using namespace xlamem;
namespace fs = std::filesystem;

inline std::string module_with(std::string_view entry_body) {
  return "HloModule m\n\nENTRY e {\n" + std::string(entry_body) + "}\n";
}

inline std::string parse_error(std::string_view text, std::string_view name = "t.hlo") {
  auto m = hlo::parse_module(text, name);
  REQUIRE_MESSAGE(!m.has_value(), "expected a parse error");
  CHECK(m.error().code() == errc::parse_error);
  return m.error().message();
}

inline fs::path temp_file(const std::string& name, std::string_view text) {
  const auto p = fs::temp_directory_path() / ("xlamem-reliability-" + name);
  std::ofstream(p, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  return p;
}

inline bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace xlamem::test::reliability_helpers
