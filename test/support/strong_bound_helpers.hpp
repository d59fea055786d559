// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/strong_bound_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/common.hpp"
#include "support/packing.hpp"
#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/packing/packing.hpp"
#include "xlamem/packing/strong_lower_bound.hpp"

namespace xlamem::test::strong_bound_helpers {
using namespace xlamem;


inline interval_buffer sized(std::int64_t lower, std::int64_t upper, std::int64_t size) {
  interval_buffer b;
  b.lower = lower;
  b.upper = upper;
  b.size = size;
  return b;
}

/// Max live 5, optimum 6 (found by a random search, then shrunk). At capacity 5, times 0 and
/// 7 pin the unit buffer b and the pair e to an edge, times 2 and 5 pin d given b, and every
/// combination puts e on b at time 4.
inline packing_problem gap_instance() {
  packing_problem p;
  p.buffers = {sized(0, 1, 4), sized(0, 5, 1), sized(2, 3, 3), sized(2, 6, 1),
               sized(4, 8, 2), sized(5, 6, 2), sized(7, 8, 3)};
  return p;
}

inline packing_problem random_instance(std::mt19937_64& rng, int n) {
  packing_problem p;
  for (int i = 0; i < n; ++i) {
    const auto lo = static_cast<std::int64_t>(rng() % 8);
    p.buffers.push_back(sized(lo, lo + 1 + static_cast<std::int64_t>(rng() % 5), 1 + static_cast<std::int64_t>(rng() % 4)));
  }
  return p;
}

}  // namespace xlamem::test::strong_bound_helpers
