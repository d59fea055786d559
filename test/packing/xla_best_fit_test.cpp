// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/xla_best_fit.hpp.
#include <doctest/doctest.h>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/xla_best_fit") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("colocated items occupy their chunk only while one of their values lives (XLA's rule (c))") {
    // A loop-carried buffer: its init value lives over [0, 2] and the loop's result over
    // [8, 10] (heap-simulator events), nothing of it in between. XLA's MakeFreeChunks and
    // CommitChunk use each value's own interval, so `inner` ([3, 7]) takes the same bytes;
    // over the hull the two conflict and the heap doubles.
    xlamem::packing_problem p;
    p.buffers.push_back({"loop", 0, 11, 256, 64, std::nullopt});
    p.buffers.push_back({"inner", 3, 8, 256, 64, std::nullopt});
    xlamem::xla_heap_keys keys;
    keys.pieces = {{{0, 2}, {8, 10}}, {{3, 7}}};
    const xlamem::interval_graph g(p);
    const auto by_pieces = xlamem::xla_colocated_best_fit(p, g, keys);
    CHECK(by_pieces.offsets[0] == by_pieces.offsets[1]);
    CHECK(xlamem::peak_of(p, by_pieces) == 256);
    const auto by_hull = xlamem::xla_colocated_best_fit(p, g);
    CHECK(xlamem::peak_of(p, by_hull) == 512);
    // A piece that meets `inner` (the loop's value lives at 5) puts it on top again.
    keys.pieces = {{{0, 2}, {5, 5}, {8, 10}}, {{3, 7}}};
    CHECK(xlamem::peak_of(p, xlamem::xla_colocated_best_fit(p, g, keys)) == 512);
  }
}
