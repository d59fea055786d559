// SPDX-License-Identifier: Apache-2.0
// Memory rows and the load tracker: the tracker agrees with a plain array under random range
// adds and queries, and rows keep every locally maximal live set of a problem.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "support/sharding_generators.hpp"
#include "xlamem/sharding/memory_rows.hpp"

namespace sh = xlamem::sharding;

TEST_SUITE("sharding/memory_rows") {
  TEST_CASE("the load tracker agrees with a plain array") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto p = xlamem::test::random_sharding_problem(seed);
      const auto pre = sh::presolve(p);
      const sh::memory_rows rows(pre);
      const std::size_t n = rows.row_count();
      if (n == 0) continue;
      std::mt19937_64 rng(seed);
      std::vector<sh::usage_type> plain(n);
      std::vector<sh::usage_type> start(n);
      for (auto& x : start) x = static_cast<sh::usage_type>(rng() % 50);
      for (std::size_t r = 0; r < n; ++r) plain[r] = start[r] - rows.capacity(r);
      sh::load_tracker t(rows, start);
      for (int op = 0; op < 500; ++op) {
        std::size_t b = rng() % n, e = rng() % (n + 1);
        if (b > e) std::swap(b, e);
        if (rng() % 2) {
          const auto d = static_cast<sh::usage_type>(rng() % 41) - 20;
          t.add(b, e, d);
          for (std::size_t r = b; r < e; ++r) plain[r] += d;
        } else if (b < e) {
          CHECK(t.max(b, e) == *std::max_element(plain.begin() + static_cast<std::ptrdiff_t>(b), plain.begin() + static_cast<std::ptrdiff_t>(e)));
        }
        const std::size_t q = rng() % n;
        CHECK(t.at(q) == plain[q]);
        CHECK(t.max() == *std::max_element(plain.begin(), plain.end()));
        CHECK(plain[t.argmax()] == t.max());
      }
    }
  }

  TEST_CASE("a load within the capacity of every row is within the limit at every time step") {
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.follow_share = 0;
      shape.forbidden_share = 0;
      const auto p = xlamem::test::random_sharding_problem(seed, shape);
      const auto pre = sh::presolve(p);
      const sh::memory_rows rows(pre);
      std::mt19937_64 rng(seed);
      std::vector<std::uint32_t> labels(pre.var_count());
      for (std::size_t v = 0; v < labels.size(); ++v) labels[v] = static_cast<std::uint32_t>(rng() % pre.labels(v));
      // The usage profile of the expanded assignment at every time step...
      const auto a = pre.expand(labels);
      sh::usage_type peak_over = std::numeric_limits<sh::usage_type>::min();
      for (std::int64_t t = 0; t < static_cast<std::int64_t>(shape.time_steps); ++t) {
        sh::usage_type load = 0;
        for (std::size_t i = 0; i < p.node_count(); ++i) if (p.intervals[i].contains(t)) load += p.node_usage(i, a[i]);
        peak_over = std::max(peak_over, load - p.limit);
      }
      // ...peaks exactly where the rows say.
      sh::usage_type rows_over = std::numeric_limits<sh::usage_type>::min();
      for (std::size_t r = 0; r < rows.row_count(); ++r) {
        sh::usage_type load = 0;
        for (std::size_t v = 0; v < pre.var_count(); ++v) {
          if (const auto* run = rows.run_at(v, r)) load += rows.usage(*run, labels[v]);
        }
        rows_over = std::max(rows_over, load - rows.capacity(r));
      }
      if (rows.row_count() == 0) continue;
      CHECK_MESSAGE(rows_over == peak_over, "seed ", seed);
    }
  }
}
