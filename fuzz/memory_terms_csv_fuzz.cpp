// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the memory-terms CSV reader (`xlamem reduce` input); small accepted inputs
// are reduced with both policies and the reduction verified.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "xlamem/io/memory_terms/memory_terms_csv.hpp"
#include "xlamem/memory_terms/memory_terms.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xlamem;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = read_memory_terms_csv(text, "fuzz.csv");
  if (!r) {
    fuzz::require_good_error(r.error(), "fuzz.csv:");
    return 0;
  }
  std::int64_t num_lives = 0;
  for (const auto& iv : *r) {
    if (iv.valid()) num_lives = std::max(num_lives, iv.last + 1);
  }
  if (r->size() > 64 || num_lives > 4096) return 0;
  for (int policy = 0; policy < 2; ++policy) {
    auto red = policy == 0 ? reduce_memory_terms(num_lives, *r, {}, xla_compatible_policy{})
                           : reduce_memory_terms(num_lives, *r, {}, split_aware_policy{});
    fuzz::require(red.has_value(), "a read input reduces", red ? std::string() : red.error().message());
    auto ok = verify_memory_terms(*r, *red);
    fuzz::require(ok.has_value(), "the reduction verifies", ok ? std::string() : ok.error().message());
  }
  return 0;
}
