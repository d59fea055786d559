// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/memory_terms/memory_terms_text.hpp: a reduction for people (a line per
// primitive and group, the reduced times) and its JSON fields.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/memory_terms/memory_terms_text.hpp"
#include "xlamem/memory_terms/named_policies.hpp"

namespace memory_terms_text_test {
// Three primitives over six steps, primitive 1 trimmed away entirely, primitives 0 and 2
// grouped over [2, 3].
inline xlamem::memory_term_reduction hand_made() {
  xlamem::memory_term_reduction r;
  r.num_lives = 6;
  r.num_primitives = 3;
  r.intervals = {{0, 1}, {0, -1}, {4, 5}, {2, 3}};
  r.groups = {{0, 2}};
  r.terms_before = 14;
  r.terms_after = 8;
  r.reduced_times = {1, 3, 5};
  r.iterations = 2;
  return r;
}
}  // namespace memory_terms_text_test

TEST_SUITE("io/memory_terms_text") {
  using namespace xlamem;
  using namespace memory_terms_text_test;

  TEST_CASE("the text: the header, every primitive ('none' when trimmed away), every group, the reduced times") {
    const auto r = hand_made();
    const memory_terms_report x{"terms.csv", "split_aware", &r};
    CHECK(memory_terms_text(x) ==
          "terms.csv: 3 primitives over 6 time steps, policy split_aware\n"
          "terms: 14 -> 8 (1 groups, 2 sweeps)\n"
          "primitive 0: [0, 1]\n"
          "primitive 1: none\n"
          "primitive 2: [4, 5]\n"
          "group 0 = {0 2}: [2, 3]\n"
          "reduced times: 1 3 5\n");
    // Nothing at all: no primitive line, no group line, an empty list of times.
    const memory_term_reduction empty;
    CHECK(memory_terms_text({"e.csv", "xla_compatible", &empty}) ==
          "e.csv: 0 primitives over 0 time steps, policy xla_compatible\nterms: 0 -> 0 (0 groups, 0 sweeps)\nreduced times: \n");
    // The file name comes from the user: its control bytes never reach the terminal raw.
    CHECK(memory_terms_text({"a\x1b[2Jb.csv", "split_aware", &empty}).rfind("a\\x1b[2Jb.csv: 0 primitives", 0) == 0);
  }

  TEST_CASE("the JSON: policy, sizes, every interval as [first, last], the groups and the reduced times") {
    const auto r = hand_made();
    const memory_terms_report x{"terms.csv", "split_aware", &r};
    CHECK(to_json(x) ==
          R"({"file":"terms.csv","policy":"split_aware","num_lives":6,"terms_before":14,"terms_after":8,)"
          R"("intervals":[[0,1],[0,-1],[4,5],[2,3]],"groups":[[0,2]],"reduced_times":[1,3,5]})");
    CHECK(json_document("reduce", x).rfind("{\n \"command\": \"reduce\",\n \"file\": \"terms.csv\",\n \"policy\": \"split_aware\",", 0) == 0);
  }

  TEST_CASE("a real reduction: a line per reduced interval, the text and the JSON agree with it") {
    const std::vector<term_interval> iv = {{0, 5}, {2, 7}, {3, 9}, {6, 4}, {1, 8}};
    for (const auto& p : memory_term_policies) {
      CAPTURE(p.name);
      auto r = reduce_memory_terms(iv, p);
      REQUIRE(r.has_value());
      const memory_terms_report x{"t.csv", p.name, &*r};
      const auto text = memory_terms_text(x);
      CHECK(text.rfind("t.csv: 5 primitives over 10 time steps, policy " + std::string(p.name) + "\n", 0) == 0);
      CHECK(text.find("primitive 3: none\n") != std::string::npos);  // {6, 4} holds no step
      std::size_t lines = 0;
      for (const char c : text) lines += c == '\n' ? 1 : 0;
      CHECK(lines == 2 + 5 + r->groups.size() + 1);
      CHECK(to_json(x).find("\"terms_after\":" + std::to_string(r->terms_after) + ",") != std::string::npos);
    }
  }
}
