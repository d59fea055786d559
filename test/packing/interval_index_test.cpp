// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/interval_index.hpp: section_max, skyline_tree, level_queue,
// placed_index and build_conflicts against brute force over generated section ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "xlamem/deadline.hpp"
#include "xlamem/packing/interval_index.hpp"

namespace interval_index_test {

/// Section ranges [first[i], last[i]) within `sections`, some of them empty (first == last).
struct section_ranges {
  std::vector<int> first, last;
};

inline section_ranges random_ranges(std::mt19937_64& rng, std::size_t n, std::size_t sections) {
  section_ranges r;
  for (std::size_t i = 0; i < n; ++i) {
    const auto f = static_cast<int>(rng() % sections);
    r.first.push_back(f);
    r.last.push_back(f + static_cast<int>(rng() % (sections - static_cast<std::size_t>(f) + 1)));
  }
  return r;
}

/// The conflict rows by brute force: j is in row i when both ranges are nonempty and meet.
inline std::vector<std::vector<int>> brute_force_rows(const section_ranges& r) {
  const std::size_t n = r.first.size();
  std::vector<std::vector<int>> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const bool both = r.first[i] < r.last[i] && r.first[j] < r.last[j];
      if (i != j && both && r.first[i] < r.last[j] && r.first[j] < r.last[i]) rows[i].push_back(static_cast<int>(j));
    }
  }
  return rows;
}

inline std::vector<std::vector<int>> rows_of(const xlamem::detail::conflict_lists& c) {
  std::vector<std::vector<int>> rows;
  for (std::size_t i = 0; i + 1 < c.start.size(); ++i) {
    rows.emplace_back(c.adjacent.begin() + static_cast<std::ptrdiff_t>(c.start[i]),
                      c.adjacent.begin() + static_cast<std::ptrdiff_t>(c.start[i + 1]));
  }
  return rows;
}

}  // namespace interval_index_test

TEST_SUITE("packing/scale") {
  using namespace xlamem;

  TEST_CASE("interval structures against brute force: meeting buffers, skyline, radix heap") {
    std::mt19937_64 rng(181);
    for (int round = 0; round < 60; ++round) {
      const int n = 1 + static_cast<int>(rng() % 80);
      const std::size_t sections = 1 + rng() % 70;
      std::vector<int> first(static_cast<std::size_t>(n)), last(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < first.size(); ++i) {
        first[i] = static_cast<int>(rng() % sections);
        last[i] = first[i] + static_cast<int>(rng() % (sections - static_cast<std::size_t>(first[i]) + 1));
      }
      detail::placed_index index(first, last, sections);
      detail::skyline_tree sky(sections);
      std::vector<std::int64_t> top(first.size(), 0);
      std::vector<char> in(first.size(), 0);
      for (std::size_t step = 0; step < first.size(); ++step) {
        const auto k = static_cast<std::size_t>(rng() % first.size());
        if (!in[k] && first[k] < last[k]) {
          in[k] = 1;
          index.insert(static_cast<int>(k));
          top[k] = 1 + static_cast<std::int64_t>(rng() % 1000);
          sky.add(static_cast<std::size_t>(first[k]), static_cast<std::size_t>(last[k]), top[k]);
        }
        const int lo = static_cast<int>(rng() % sections);
        const int hi = lo + static_cast<int>(rng() % (sections - static_cast<std::size_t>(lo) + 1));
        std::vector<int> got, want;
        index.for_each_meeting(lo, hi, [&](int j) { got.push_back(j); });
        std::int64_t highest = 0;
        for (std::size_t j = 0; j < first.size(); ++j) {
          if (in[j] && lo < hi && first[j] < hi && lo < last[j]) {
            want.push_back(static_cast<int>(j));
            highest = std::max(highest, top[j]);
          }
        }
        std::sort(got.begin(), got.end());
        CHECK(got == want);  // each once
        CHECK(sky.highest(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)) == highest);
      }
    }
  }

  TEST_CASE("level_queue takes (level, rank) entries in order, levels monotone, ranks unique") {
    std::mt19937_64 rng(42);
    for (const std::size_t ranks : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{5000}, std::size_t{70000}}) {
      detail::level_queue queue(ranks);
      std::set<std::pair<std::uint64_t, std::size_t>> mirror;
      std::vector<char> queued(ranks, 0);
      // The last top(): every push comes after it (a higher level, or the same and a higher rank).
      std::pair<std::uint64_t, std::size_t> last{0, 0};
      bool any_top = false;
      for (int step = 0; step < 20000; ++step) {
        const auto rank = static_cast<std::size_t>(rng() % ranks);
        if (!queued[rank] && (mirror.empty() || rng() % 3 != 0)) {
          // Often the current level, else any distance up.
          auto level = last.first + (rng() % 2 == 0 ? 0 : rng() % (std::uint64_t{1} << (rng() % 40)));
          if (any_top && level == last.first && rank <= last.second) ++level;
          queue.push(level, rank);
          mirror.emplace(level, rank);
          queued[rank] = 1;
        } else if (!mirror.empty()) {
          const auto [level, r] = queue.top();
          REQUIRE(std::pair(level, r) == *mirror.begin());
          last = {level, r};
          any_top = true;
          queue.pop();
          mirror.erase(mirror.begin());
          queued[r] = 0;
          CHECK(queue.has_level(level) == (!mirror.empty() && mirror.begin()->first == level));
        }
        CHECK(queue.empty() == mirror.empty());
      }
    }
  }
}

TEST_SUITE("packing/interval_index") {
  using namespace xlamem;
  using namespace interval_index_test;

  TEST_CASE("section_max: the largest value of every range, negative ones too, 0 for an empty one (brute force)") {
    CHECK(detail::section_max{}.query(0, 0) == 0);
    std::mt19937_64 rng(5);
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{64},
                                std::size_t{100}, std::size_t{257}}) {
      std::vector<std::int64_t> values(n);
      for (auto& v : values) v = static_cast<std::int64_t>(rng() % 1000) - 500;  // negatives too: never read as 0
      const detail::section_max tree(values);
      for (std::size_t lo = 0; lo <= n; lo += 1 + n / 40) {
        for (std::size_t hi = lo; hi <= n; ++hi) {
          const std::int64_t want = lo == hi ? 0 : *std::max_element(values.begin() + static_cast<std::ptrdiff_t>(lo),
                                                                        values.begin() + static_cast<std::ptrdiff_t>(hi));
          REQUIRE(tree.query(lo, hi) == want);
        }
      }
    }
  }

  TEST_CASE("skyline_tree: empty ranges meet nothing; a top seen from every section it covers, and only there") {
    detail::skyline_tree empty(0);  // no sections at all
    CHECK(empty.highest(0, 0) == 0);
    detail::skyline_tree sky(10);
    sky.add(3, 3, 99);  // an empty range records nothing
    CHECK(sky.highest(0, 10) == 0);
    sky.add(2, 5, 40);
    sky.add(4, 8, 25);
    CHECK(sky.highest(0, 2) == 0);    // ends before the first buffer starts
    CHECK(sky.highest(0, 3) == 40);   // starts inside the range
    CHECK(sky.highest(4, 5) == 40);   // contains its first section
    CHECK(sky.highest(5, 6) == 25);   // [2, 5) ended
    CHECK(sky.highest(7, 10) == 25);
    CHECK(sky.highest(8, 10) == 0);   // [4, 8) is half-open
    CHECK(sky.highest(5, 5) == 0);    // an empty query
    sky.add(0, 10, 30);               // a lower top does not hide a higher one
    CHECK(sky.highest(4, 5) == 40);
    CHECK(sky.highest(9, 10) == 30);
  }

  TEST_CASE("placed_index: the placed buffers meeting a range, by hand, each once") {
    const std::vector<int> first{0, 2, 5, 5, 1}, last{3, 2, 9, 6, 9};
    detail::placed_index index(first, last, 9);
    for (const int i : {0, 2, 3, 4}) index.insert(i);
    const auto meeting = [&](int lo, int hi) {
      std::vector<int> got;
      index.for_each_meeting(lo, hi, [&](int j) { got.push_back(j); });
      std::sort(got.begin(), got.end());
      return got;
    };
    CHECK(meeting(2, 3) == std::vector<int>{0, 4});
    CHECK(meeting(3, 5) == std::vector<int>{4});
    CHECK(meeting(0, 9) == std::vector<int>{0, 2, 3, 4});
    CHECK(meeting(6, 9) == std::vector<int>{2, 4});
    CHECK(meeting(4, 4).empty());
  }

  TEST_CASE("build_conflicts: the rows equal brute force, ascending; ranges without sections have none") {
    std::mt19937_64 rng(29);
    for (int round = 0; round < 200; ++round) {
      const auto r = random_ranges(rng, rng() % 60, 1 + rng() % 40);
      const auto want = brute_force_rows(r);
      const auto lists = detail::build_conflicts(r.first, r.last, std::size_t{1} << 30);
      REQUIRE(lists.has_value());
      REQUIRE(lists->start.size() == r.first.size() + 1);
      CHECK(lists->start.front() == 0);
      CHECK(lists->start.back() == lists->adjacent.size());
      CHECK(rows_of(*lists) == want);  // brute force lists ascending too
    }
    const auto none = detail::build_conflicts({}, {}, 0);
    REQUIRE(none.has_value());
    CHECK(none->start == std::vector<std::size_t>{0});
    CHECK(none->adjacent.empty());
  }

  TEST_CASE("build_conflicts: gives up above max_edges pairs, exactly at the count") {
    std::mt19937_64 rng(31);
    for (int round = 0; round < 100; ++round) {
      const auto r = random_ranges(rng, 1 + rng() % 40, 1 + rng() % 20);
      std::size_t pairs = 0;
      for (const auto& row : brute_force_rows(r)) pairs += row.size();
      pairs /= 2;
      const auto at = detail::build_conflicts(r.first, r.last, pairs);
      REQUIRE(at.has_value());
      CHECK(at->adjacent.size() == 2 * pairs);
      if (pairs > 0) CHECK_FALSE(detail::build_conflicts(r.first, r.last, pairs - 1).has_value());
    }
  }

  TEST_CASE("build_conflicts: a passed deadline gives up; a far one or a flag never set changes nothing") {
    std::mt19937_64 rng(37);
    const auto r = random_ranges(rng, 50, 20);
    const std::size_t cap = std::size_t{1} << 30;
    const auto want = brute_force_rows(r);
    CHECK_FALSE(detail::build_conflicts(r.first, r.last, cap, solve_clock::now()).has_value());
    const auto far = detail::build_conflicts(r.first, r.last, cap, solve_clock::now() + std::chrono::hours(1));
    REQUIRE(far.has_value());
    CHECK(rows_of(*far) == want);
    cancellation_flag idle{false};
    const auto watched = detail::build_conflicts(r.first, r.last, cap, solve_deadline(std::nullopt, &idle));
    REQUIRE(watched.has_value());
    CHECK(rows_of(*watched) == want);
    // A set flag is read with the clock, every 2^18 steps of work: 1,000 ranges live together
    // cost about 10^6, so the sweep stops on it.
    const std::vector<int> all_first(1000, 0), all_last(1000, 1);
    cancellation_flag stop{true};
    CHECK_FALSE(detail::build_conflicts(all_first, all_last, cap, solve_deadline(std::nullopt, &stop)).has_value());
    const auto together = detail::build_conflicts(all_first, all_last, cap);
    REQUIRE(together.has_value());
    CHECK(together->adjacent.size() == 1000 * 999);
  }
}
