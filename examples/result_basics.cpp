// SPDX-License-Identifier: Apache-2.0
// How xlamem reports errors: a pass returns result<T>; chain steps with and_then/transform and
// print the error, which names what is wrong and where.
#include <cstdio>
#include <string>

#include "xlamem/xlamem.hpp"

namespace {

xlamem::result<std::uint64_t> parse_size(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return xlamem::error(xlamem::errc::parse_error, "size '" + text + "' is not a whole number");
  }
  return std::stoull(text);
}

}  // namespace

int main() {
  for (const char* text : {"1000", "12x"}) {
    auto aligned = parse_size(text).transform([](std::uint64_t n) { return xlamem::align_up(n, 256); });
    if (aligned) {
      std::printf("%s -> %llu bytes at 256-byte alignment\n", text,
                  static_cast<unsigned long long>(*aligned));
    } else {
      std::printf("%s -> %s\n", text, aligned.error().to_string().c_str());
    }
  }
  return 0;
}
