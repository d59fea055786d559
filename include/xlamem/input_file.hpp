// SPDX-License-Identifier: Apache-2.0
/// @file
/// The one way readers open their input: only regular files (a directory, `/dev/zero`, a pipe
/// or a socket is refused by name), never more than `input_limits::max_bytes` (read stops one
/// byte past the limit, so a file that lies about its size or grows is still bounded), and
/// out-of-memory reported with the file name. Also `quote_token`, which every reader uses to
/// put an offending token into a message at a bounded length.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "xlamem/error.hpp"

namespace xlamem {

/// Resource limits of the readers (docs/error-handling.md lists them all).
struct input_limits {
  /// Largest input file, in bytes (1 GiB: ~100x the largest real dump we know of).
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
};

/// Longest token prefix a message quotes (longer tokens end in "…").
inline constexpr std::size_t max_quoted_chars = 60;

/// `'token'` for a message: at most `max_quoted_chars` bytes of it, then "…"; control
/// characters and bytes outside ASCII print as '?' and a newline as "\n".
[[nodiscard]] inline std::string quote_token(std::string_view token) {
  std::string out = "'";
  const std::size_t n = token.size() < max_quoted_chars ? token.size() : max_quoted_chars;
  for (std::size_t k = 0; k < n; ++k) {
    const auto c = static_cast<unsigned char>(token[k]);
    if (c == '\n') out += "\\n";
    else if (c < 32 || c >= 127) out += '?';
    else out += static_cast<char>(c);
  }
  if (token.size() > n) out += "\xE2\x80\xA6";  // "…"
  out += "'";
  return out;
}

namespace detail {
/// Reads `f` to its end, never more than `limits.max_bytes`; `name` starts every message.
[[nodiscard]] inline result<std::string> read_bounded(std::FILE* f, const std::string& name, input_limits limits,
                                                      std::size_t size_hint) {
  const auto too_big = [&] {
    return make_error(errc::resource_exhausted, name + ": input is larger than the limit of " +
                                                    std::to_string(limits.max_bytes) + " bytes");
  };
  std::string text;
  try {
    if (size_hint != 0) text.reserve(size_hint);
    char buf[1 << 16];
    for (;;) {
      const std::size_t got = std::fread(buf, 1, sizeof buf, f);
      if (text.size() + got > limits.max_bytes) return too_big();
      text.append(buf, got);
      if (got < sizeof buf) break;
    }
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, name + ": out of memory while reading the input");
  }
  if (std::ferror(f) != 0) return make_error(errc::unavailable, name + ": read error");
  return text;
}
}  // namespace detail

/// Closes a `std::FILE*` (the deleter of `file_handle`).
struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
/// An open file, closed when the handle goes.
using file_handle = std::unique_ptr<std::FILE, file_closer>;

/// Opens the regular file `path` for reading in binary mode, for readers that stream it
/// rather than read it whole (they must still stop at `limits.max_bytes`). @returns
/// `errc::not_found` (missing or unopenable), `errc::invalid_argument` (a directory, device,
/// pipe or socket) or `errc::resource_exhausted` (its size is over `limits.max_bytes`), each
/// message starting with the path.
[[nodiscard]] inline result<file_handle> open_input_file(const std::string& path, input_limits limits = {}) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return make_error(errc::not_found, path + ": cannot open the file (it does not exist)");
  if (std::filesystem::is_directory(st)) return make_error(errc::invalid_argument, path + ": is a directory, not a regular file");
  if (!std::filesystem::is_regular_file(st)) {
    return make_error(errc::invalid_argument, path + ": is not a regular file (a device, pipe or socket); give a file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > limits.max_bytes) {
    return make_error(errc::resource_exhausted, path + ": input is larger than the limit of " +
                                                    std::to_string(limits.max_bytes) + " bytes");
  }
  file_handle f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return make_error(errc::not_found, path + ": cannot open the file");
  return f;
}

/// Reads the regular file `path` whole. @returns `errc::not_found` (missing or unopenable),
/// `errc::invalid_argument` (a directory, device, pipe or socket), `errc::resource_exhausted`
/// (over `limits.max_bytes`), `errc::out_of_memory` or `errc::unavailable` (a read error), each
/// message starting with the path.
[[nodiscard]] inline result<std::string> read_input_file(const std::string& path, input_limits limits = {}) {
  auto f = open_input_file(path, limits);
  if (!f) return f.error();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return detail::read_bounded(f->get(), path, limits, ec ? 0 : static_cast<std::size_t>(size));
}

/// Reads standard input whole (what `-` names on a command line), bounded like a file by
/// `limits.max_bytes`; messages name it `<stdin>`.
[[nodiscard]] inline result<std::string> read_standard_input(input_limits limits = {}) {
  return detail::read_bounded(stdin, "<stdin>", limits, 0);
}

}  // namespace xlamem
