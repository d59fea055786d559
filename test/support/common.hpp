// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test translation units.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace xlamem::test {

/// `../shared/data` beside the repository, or empty when it is absent, in which case
/// data-driven tests report themselves skipped. The environment variable XLAMEM_SHARED_DATA
/// overrides the location the build recorded (XLAMEM_TEST_SHARED_DATA).
inline std::filesystem::path shared_data_dir() {
  const char* dir = std::getenv("XLAMEM_SHARED_DATA");
#ifdef XLAMEM_TEST_SHARED_DATA
  if (dir == nullptr || *dir == '\0') dir = XLAMEM_TEST_SHARED_DATA;
#endif
  if (dir == nullptr || *dir == '\0') return {};
  std::filesystem::path p(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec)) return {};
  return p;
}

/// The committed XLA oracle corpus: $XLAMEM_ORACLE_DATA, else test/data/xla-oracle of the
/// source tree the build recorded (XLAMEM_TEST_SOURCE_DIR); empty when neither holds a
/// `manifest.json`. The corpus is part of the repository, so tests fail (not skip) without it.
inline std::filesystem::path oracle_data_dir() {
  std::filesystem::path p;
  if (const char* env = std::getenv("XLAMEM_ORACLE_DATA"); env != nullptr && *env != '\0') {
    p = env;
  } else {
#ifdef XLAMEM_TEST_SOURCE_DIR
    p = std::filesystem::path(XLAMEM_TEST_SOURCE_DIR) / "data" / "xla-oracle";
#endif
  }
  std::error_code ec;
  if (p.empty() || !std::filesystem::is_regular_file(p / "manifest.json", ec)) return {};
  return p;
}

/// The whole file as text (empty when it cannot be read).
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A flat JSON object of non-negative integers, such as the corpus's memory_analysis.json:
/// {"argument_size_in_bytes": 16, ...}. Keys whose value is not a number are skipped.
template <class Int = std::int64_t>
std::map<std::string, Int> read_flat_json(const std::filesystem::path& p) {
  std::map<std::string, Int> out;
  const std::string t = read_text(p);
  std::size_t i = 0;
  while ((i = t.find('"', i)) != std::string::npos) {
    const std::size_t e = t.find('"', i + 1);
    if (e == std::string::npos) break;
    std::size_t j = t.find(':', e);
    if (j == std::string::npos) break;
    ++j;
    while (j < t.size() && t[j] == ' ') ++j;
    std::size_t k = j;
    while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k;
    if (k > j) out[t.substr(i + 1, e - i - 1)] = static_cast<Int>(std::stoull(t.substr(j, k - j)));
    i = k > j ? k : e + 1;
  }
  return out;
}

}  // namespace xlamem::test

/// Skips the rest of a data-driven test with a clear message when ../shared/data is absent.
#define XLAMEM_REQUIRE_SHARED_DATA(dir)                                                   \
  const auto dir = ::xlamem::test::shared_data_dir();                                     \
  if (dir.empty()) {                                                                      \
    MESSAGE("skipped: ../shared/data is absent (set XLAMEM_SHARED_DATA to its location)"); \
    return;                                                                               \
  }
