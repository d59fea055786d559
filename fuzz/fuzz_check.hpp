// SPDX-License-Identifier: Apache-2.0
// Shared by the libFuzzer harnesses: an invariant that must hold on every input, and the check
// that a refused input's message names the place and stays short.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "xlamem/error.hpp"

namespace xlamem::fuzz {

/// Stops the run (libFuzzer saves the input) when `cond` is false.
inline void require(bool cond, std::string_view what, std::string_view detail = {}) {
  if (cond) return;
  // fwrite, not "%.*s": an empty string_view's data() may be null.
  std::fputs("fuzz invariant broken: ", stderr);
  std::fwrite(what.data(), 1, what.size(), stderr);
  std::fputc('\n', stderr);
  std::fwrite(detail.data(), 1, detail.size(), stderr);
  std::fputc('\n', stderr);
  std::abort();
}

/// A refused input: the message starts with the source name and is bounded (no token quoted
/// whole), whatever the input's size.
inline void require_good_error(const error& e, std::string_view source) {
  require(e.message().compare(0, source.size(), source) == 0, "the error names the input", e.message());
  require(e.message().size() < 1024, "the error message is bounded", e.message().substr(0, 300));
}

}  // namespace xlamem::fuzz
