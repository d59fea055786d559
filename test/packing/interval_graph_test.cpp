// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/interval_graph.hpp.
#include <doctest/doctest.h>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/interval_graph") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("sections are the live sets before each distinct end; conflicts match overlap") {
    const auto p = example12();
    const interval_graph g(p);
    CHECK(g.section_count() == 3);  // ends 3, 9, 21
    CHECK(g.section_bytes(0) == 12);
    CHECK(g.section_bytes(1) == 12);
    CHECK(g.section_bytes(2) == 8);
    CHECK(g.first_section(3) == 2);
    CHECK(g.last_section(3) == 3);
    std::mt19937_64 rng(3);
    for (int round = 0; round < 50; ++round) {
      const auto q = random_problem(rng, 12, 30, 10, false);
      const interval_graph h(q, conflict_edges::build);
      const interval_graph counted(q);  // no lists: degrees and the edge count are counted
      CHECK_FALSE(counted.has_edges());
      std::size_t edges = 0;
      for (std::size_t i = 0; i < q.buffers.size(); ++i) {
        for (std::size_t j = 0; j < q.buffers.size(); ++j) {
          if (i == j) continue;
          const bool overlap = q.buffers[i].lower < q.buffers[j].upper && q.buffers[j].lower < q.buffers[i].upper;
          const bool listed = std::binary_search(h.neighbours_begin(i), h.neighbours_end(i), static_cast<int>(j));
          CHECK(overlap == listed);
          edges += overlap ? 1 : 0;
        }
        CHECK(counted.degree(i) == h.degree(i));
        CHECK(static_cast<std::ptrdiff_t>(h.degree(i)) == h.neighbours_end(i) - h.neighbours_begin(i));
      }
      CHECK(h.edge_count() == edges / 2);
      CHECK(counted.edge_count() == edges / 2);
      CHECK(h.section_count() > 0);
    }
  }
}
