// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the reader of XLA's buffer-assignment dumps (`*-buffer-assignment.txt`,
// `-values.txt`, `-live-range.txt`, any layout).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xlamem;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = parse_buffer_assignment_dump(text, "fuzz.txt");
  if (!r) fuzz::require_good_error(r.error(), "fuzz.txt:");
  return 0;
}
