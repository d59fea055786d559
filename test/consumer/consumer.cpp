// SPDX-License-Identifier: Apache-2.0
// A tiny outside program that uses xlamem the way a user would.
#include <cstdio>
#include <xlamem/xlamem.hpp>

int main() {
  xlamem::result<std::uint64_t> r = xlamem::checked_align_up(100, 64).value_or(0);
  if (!r || *r != 128) return 1;
  std::printf("xlamem %s consumer ok\n", xlamem::version_string);
  return 0;
}
