// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the packing tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "xlamem/packing/packing.hpp"

namespace xlamem::test {

/// The optimal peak by brute force: first fit over every order reaches the optimum (take an
/// optimal placement's buffers by offset: first fit puts each at or below its offset there).
/// For a handful of buffers only (n! orders).
inline std::int64_t brute_force_optimum(const packing_problem& p) {
  const interval_graph g(p);
  std::vector<int> order(p.buffers.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  do {
    best = std::min(best, peak_of(p, detail::place_in_order(p, g, order, fit_rule::first)));
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace xlamem::test
