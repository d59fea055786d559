// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/strong_lower_bound.hpp.
#include <doctest/doctest.h>

#include <limits>

#include "support/strong_bound_helpers.hpp"

TEST_SUITE("packing/strong_bound") {
  using namespace xlamem::test::strong_bound_helpers;

  TEST_CASE("an instance above max live: the window bound certifies the optimum") {
    const auto p = gap_instance();
    REQUIRE(max_live_bytes(p) == 5);
    REQUIRE(test::brute_force_optimum(p) == 6);
    strong_bound_options o;
    o.time_limit = std::numeric_limits<double>::infinity();  // no limit
    const auto b = strong_lower_bound(p, o);
    REQUIRE(b.has_value());
    CHECK(b->lower_bound == 6);
    CHECK(b->improved);

    window_survey_options so;
    so.seconds_per_window = std::numeric_limits<double>::infinity();  // exact
    const auto s = window_survey(p, so);
    REQUIRE(s.has_value());
    CHECK(s->capacity == 5);
    CHECK(s->lower_bound == 6);
    CHECK(s->complete);
    REQUIRE_FALSE(s->open.empty());
    CHECK(std::any_of(s->open.begin(), s->open.end(),
                      [](const window_verdict& v) { return v.status == solve_status::infeasible; }));
    // At the optimum every window packs: one maximal window, the whole timeline.
    so.capacity = 6;
    const auto t = window_survey(p, so);
    REQUIRE(t.has_value());
    CHECK(t->lower_bound == 0);
    CHECK(t->complete);
    CHECK(t->open.empty());
    REQUIRE(t->feasible.size() == 1);
    const interval_graph g(p);
    CHECK(t->feasible[0].first == 0);
    CHECK(t->feasible[0].end == g.section_count());
    CHECK(validate(window_relaxation(p, g, 0, g.section_count()), t->feasible[0].solution).has_value());
  }

  TEST_CASE("window surveys: sound bounds, checked placements, every window covered") {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 120; ++round) {
      const auto p = random_instance(rng, 3 + static_cast<int>(rng() % 5));
      const auto opt = test::brute_force_optimum(p);
      window_survey_options o;
      o.seconds_per_window = std::numeric_limits<double>::infinity();
      const auto s = window_survey(p, o);
      REQUIRE(s.has_value());
      CHECK(s->complete);
      CHECK(s->lower_bound <= opt);
      CHECK((s->lower_bound > 0) == (opt > s->capacity));  // exact searches: decided either way
      const interval_graph g(p);
      for (const auto& v : s->feasible) {
        const auto sub = window_relaxation(p, g, v.first, v.end);
        CHECK(validate(sub, v.solution).has_value());
        CHECK(peak_of(sub, v.solution) <= s->capacity);
      }
      const std::size_t n = g.section_count();
      for (std::size_t x = 0; x < n; ++x) {
        for (std::size_t y = x + 1; y <= n; ++y) {
          const bool inside = std::any_of(s->feasible.begin(), s->feasible.end(),
                                          [&](const window_verdict& v) { return v.first <= x && y <= v.end; });
          const bool contains = std::any_of(s->open.begin(), s->open.end(),
                                            [&](const window_verdict& v) { return x <= v.first && v.end <= y; });
          CHECK(inside != contains);  // exact searches: a window is feasible or it is not
        }
      }
    }
  }

  TEST_CASE("MiniMalloc's challenging suite: no window bound above a known peak") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    // D and J (best known peaks) and two LB-tight files (optimum 1 MiB at most).
    const std::vector<std::pair<std::string, std::int64_t>> files = {
        {"D", 1018880}, {"J", 1029120}, {"A", 1048576}, {"B", 1048576}};
    for (const auto& [name, known] : files) {
      const auto file = read_interval_csv_file((dir / "minimalloc" / "challenging" / (name + ".1048576.csv")).string());
      REQUIRE(file.has_value());
      const auto& p = file->problem;
      strong_bound_options o;
      o.time_limit = 0.5;
      const auto b = strong_lower_bound(p, o);
      REQUIRE(b.has_value());
      CHECK(b->lower_bound <= known);
      window_survey_options so;
      so.seconds_per_window = 0.05;
      so.time_limit = 1.0;
      const auto s = window_survey(p, so);
      REQUIRE(s.has_value());
      CHECK((s->lower_bound == 0 || s->lower_bound <= known));
      const interval_graph g(p);
      for (const auto& v : s->feasible) {
        CHECK(validate(window_relaxation(p, g, v.first, v.end), v.solution).has_value());
      }
    }
  }

  TEST_CASE("D at max live: placements of four windows cover every window strong_lower_bound tries") {
    // The window kind, as `strong_lower_bound` runs it (default options), cannot
    // prove more than max live on D at any time limit. The certificate lists, for the windows
    // [0, 77), [4, 86), [23, 92) and [24, 94) of D's 94 sections, an offset per buffer of the
    // window's relaxation (found with `bench/packing/dj_cpsat.py grow` and `xlamem pack`, see
    // docs/packing.md); here they must be valid and under max live, and every tried window
    // must lie inside one of them.
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto file = read_interval_csv_file((dir / "minimalloc" / "challenging" / "D.1048576.csv").string());
    REQUIRE(file.has_value());
    const auto& p = file->problem;
    const interval_graph g(p);
    REQUIRE(g.section_count() == 94);
    std::ifstream in(std::string(XLAMEM_TEST_SOURCE_DIR) + "/data/packing/D-max-live-windows.csv");
    REQUIRE(in.good());
    std::map<std::pair<std::size_t, std::size_t>, std::map<std::string, std::int64_t>> windows;
    std::string line;
    std::getline(in, line);
    CHECK(line == "first,end,id,offset");
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string first, end, id, offset;
      REQUIRE(std::getline(row, first, ','));
      REQUIRE(std::getline(row, end, ','));
      REQUIRE(std::getline(row, id, ','));
      REQUIRE(std::getline(row, offset));
      windows[{std::stoul(first), std::stoul(end)}][id] = std::stoll(offset);
    }
    REQUIRE(windows.size() == 4);
    for (const auto& [w, offsets] : windows) {
      CAPTURE(w.first);
      CAPTURE(w.second);
      const auto sub = window_relaxation(p, g, w.first, w.second);
      REQUIRE(offsets.size() == sub.buffers.size());
      placement s;
      for (const auto& b : sub.buffers) {
        REQUIRE(offsets.count(b.id) == 1);
        s.offsets.push_back(offsets.at(b.id));
      }
      CHECK(validate(sub, s).has_value());
      CHECK(peak_of(sub, s) <= lower_bound(p));
    }
    const auto tried = strong_bound_windows(p, g);
    CHECK(tried.size() > 8);
    for (const auto& [a, b] : tried) {
      CAPTURE(a);
      CAPTURE(b);
      CHECK(std::any_of(windows.begin(), windows.end(),
                        [&](const auto& w) { return w.first.first <= a && b <= w.first.second; }));
    }
    // And every window of up to 64 sections (the default `max_width`): only [3, 78), [22, 87)
    // and [23, 93), and windows containing them, are left undecided by these placements.
    for (std::size_t a = 0; a < 94; ++a) {
      for (std::size_t b = a + 1; b <= std::min<std::size_t>(94, a + 64); ++b) {
        const bool inside = std::any_of(windows.begin(), windows.end(),
                                        [&](const auto& w) { return w.first.first <= a && b <= w.first.second; });
        if (!inside) CHECK_MESSAGE(false, "window [" << a << ", " << b << ") is not covered");
      }
    }
  }
}
