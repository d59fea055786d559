// SPDX-License-Identifier: Apache-2.0
// Packing in a few lines: describe buffers by live interval and size, place them with XLA's
// best fit and with the project's solver, check the placements and compare the peaks.
#include <cstdio>

#include "xlamem/packing/packing.hpp"

int main() {
  using namespace xlamem;
  // Live on [lower, upper) in schedule steps; sizes in bytes. MiniMalloc's README example
  // plus two buffers with an alignment requirement.
  packing_problem p;
  p.buffers = {
      {"b1", 0, 3, 4, 1, {}}, {"b2", 3, 9, 4, 1, {}}, {"b3", 0, 9, 4, 1, {}}, {"b4", 9, 21, 4, 1, {}},
      {"b5", 0, 21, 4, 1, {}}, {"w1", 2, 6, 16, 16, {}}, {"w2", 12, 20, 16, 16, {}},
  };
  const auto xla = place(p, xla_best_fit{});
  if (!xla) {
    std::fprintf(stderr, "%s\n", xla.error().to_string().c_str());
    return 1;
  }
  minimize_options o;
  o.time_limit = 1.0;
  const auto best = minimize_peak(p, o);
  if (!best || !validate(p, best->solution)) return 1;
  std::printf("lower bound %lld, XLA best fit %lld, search %lld (%s)\n", static_cast<long long>(lower_bound(p)),
              static_cast<long long>(peak_of(p, *xla)), static_cast<long long>(best->peak),
              best->optimal ? "optimal" : "not proven optimal");
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    std::printf("  %-3s [%2lld, %2lld) %2lld bytes at offset %lld\n", p.buffers[i].id.c_str(),
                static_cast<long long>(p.buffers[i].lower), static_cast<long long>(p.buffers[i].upper),
                static_cast<long long>(p.buffers[i].size), static_cast<long long>(best->solution.offsets[i]));
  }
  return 0;
}
