// SPDX-License-Identifier: Apache-2.0
/// @file
/// Writing a whole file so that a failure is never silent: every byte written, flushed and the
/// file closed before success is reported; a full disk, a missing folder or a read-only target
/// is an error naming the path and the system's reason. The writers of `io/` and the tool use it.
#pragma once

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

#include "xlamem/error.hpp"

namespace xlamem {

/// The system's words for error number `e` ("No space left on device").
[[nodiscard]] inline std::string system_reason(int e) { return std::error_code(e, std::generic_category()).message(); }

/// Writes `text` to `path`, replacing it. @returns `errc::unavailable` naming the path and the
/// reason when it cannot be opened, written, flushed or closed.
[[nodiscard]] inline result<void> write_output_file(const std::string& path, std::string_view text) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return make_error(errc::unavailable, path + ": cannot open for writing: " + system_reason(errno ? errno : EIO));
  // errno is read only right after the call that failed, cleared before each (a call that
  // succeeds may still change it).
  int failure = 0;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) failure = errno ? errno : EIO;
  errno = 0;
  if (std::fflush(f) != 0 && failure == 0) failure = errno ? errno : EIO;
  errno = 0;
  if (std::fclose(f) != 0 && failure == 0) failure = errno ? errno : EIO;
  if (failure != 0) return make_error(errc::unavailable, path + ": write error: " + system_reason(failure));
  return {};
}

/// Flushes standard output and says whether everything printed reached it (a full disk, a closed
/// pipe): the tool's exit status must not claim success for output that was lost.
[[nodiscard]] inline result<void> flush_standard_output() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return make_error(errc::unavailable, "cannot write standard output: " + system_reason(errno ? errno : EIO));
  }
  return {};
}

}  // namespace xlamem
