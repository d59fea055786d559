// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test translation units.
#pragma once

#include <cstdlib>
#include <filesystem>
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

}  // namespace xlamem::test

/// Skips the rest of a data-driven test with a clear message when ../shared/data is absent.
#define XLAMEM_REQUIRE_SHARED_DATA(dir)                                                   \
  const auto dir = ::xlamem::test::shared_data_dir();                                     \
  if (dir.empty()) {                                                                      \
    MESSAGE("skipped: ../shared/data is absent (set XLAMEM_SHARED_DATA to its location)"); \
    return;                                                                               \
  }
