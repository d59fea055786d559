// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the interval CSV reader (`xlamem pack` input). An accepted problem writes
// back to CSV that reads to the same problem, and a small one packs to a valid placement.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/packing/heuristics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xlamem;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = read_interval_csv(text, "fuzz.csv");
  if (!r) {
    fuzz::require_good_error(r.error(), "fuzz.csv:");
    return 0;
  }
  const auto& p = r->problem;
  const std::string written = write_interval_csv(p, r->offsets ? &*r->offsets : nullptr);
  auto again = read_interval_csv(written, "written.csv");
  fuzz::require(again.has_value(), "a written CSV reads back", again ? std::string() : again.error().message());
  fuzz::require(again->problem.buffers.size() == p.buffers.size(), "the round trip keeps every buffer");
  if (p.buffers.size() <= 16) {
    auto s = place(p);
    if (s) {
      auto ok = validate(p, *s);
      fuzz::require(ok.has_value(), "a packed placement is valid", ok ? std::string() : ok.error().message());
    }
  }
  return 0;
}
