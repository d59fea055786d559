// SPDX-License-Identifier: Apache-2.0
// Writes one of the scale-test HLO shapes (test/support/hlo_generators.hpp) to standard output,
// to time the reader and planner on a size by hand:
//   gen_hlo nested-whiles|call-chain|fan|straight-line SIZE
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "support/hlo_generators.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gen_hlo nested-whiles|call-chain|fan|straight-line SIZE\n");
    return 2;
  }
  const std::string_view shape = argv[1];
  char* end = nullptr;
  const unsigned long long size = std::strtoull(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0' || size == 0 || size > 100'000'000ULL) {
    std::fprintf(stderr, "gen_hlo: SIZE must be a whole number from 1 to 10^8, not '%s'\n", argv[2]);
    return 2;
  }
  std::string text;
  if (shape == "nested-whiles") {
    text = xlamem::test::nested_while_module(size);
  } else if (shape == "call-chain") {
    text = xlamem::test::call_chain_module(size);
  } else if (shape == "fan") {
    text = xlamem::test::fan_in_fan_out_module(size);
  } else if (shape == "straight-line") {
    text = xlamem::test::straight_line_module(size);
  } else {
    std::fprintf(stderr, "gen_hlo: unknown shape '%s'\n", argv[1]);
    return 2;
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    std::perror("gen_hlo: writing standard output");
    return 1;
  }
  return 0;
}
