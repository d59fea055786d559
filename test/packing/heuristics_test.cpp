// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/packing/heuristics.hpp.
#include <doctest/doctest.h>

#include <limits>

#include "support/packing_helpers.hpp"

TEST_SUITE("packing/heuristics") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("XLA best fit takes the smallest gap that fits, spatial order first") {
    packing_problem p;
    // a and c are placed first (largest); b fits in the 4-byte hole above a... best fit
    // prefers the smallest hole: [4, 8) rather than on top.
    p.buffers = {buf("a", 0, 10, 4), buf("hole", 0, 2, 4), buf("c", 0, 10, 8), buf("b", 5, 10, 3)};
    const auto s = place(p, xla_best_fit{xla_order::spatial});
    REQUIRE(s.has_value());
    CHECK(validate(p, *s).has_value());
    CHECK(s->offsets[2] == 0);  // c: 8 bytes, placed first
    CHECK(s->offsets[0] == 8);  // a: size 4, duration 10 beats "hole" (4, duration 2)
    CHECK(s->offsets[1] == 12);
    CHECK(s->offsets[3] == 12);  // b reuses the space "hole" leaves after time 2
  }

  TEST_CASE("every heuristic returns valid placements; portfolio is never worse than XLA") {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 200; ++round) {
      const auto p = random_problem(rng, 1 + static_cast<int>(rng() % 40), 50, 64, true);
      const interval_graph g(p);
      const auto xla = xla_best_fit{}.place(p, g);
      const auto ff = first_fit{}.place(p, g);
      const auto sky = skyline_fit{}.place(p, g);
      const auto port = portfolio_fit{}.place(p, g);
      CHECK(validate(p, sweep_fit{}.place(p, g)).has_value());
      CHECK(validate(p, stack_fit{}.place(p, g)).has_value());
      portfolio_fit no_skyline;
      no_skyline.near_requeues = 0;
      CHECK(validate(p, no_skyline.place(p, g)).has_value());
      CHECK(validate(p, xla).has_value());
      CHECK(validate(p, ff).has_value());
      CHECK(validate(p, sky).has_value());
      CHECK(validate(p, port).has_value());
      CHECK(peak_of(p, port) <= peak_of(p, xla));
      CHECK(peak_of(p, port) >= max_live_bytes(p));
      CHECK(validate(p, xla_best_fit{xla_order::temporal}.place(p, g)).has_value());
    }
  }

  TEST_CASE("sweep: an allocator over time, best fit among the freed gaps, nested lifetimes stacked as they nest") {
    packing_problem p;
    // Nested (a training step's activations): a [0,10) 8, b [1,9) 4, c [2,8) 2; then d [9,12)
    // 4 reuses b's bytes freed at 9 (best fit: the 4-byte gap, not the top); e [3,4) 6 sits on
    // top of a, b, c.
    p.buffers = {buf("a", 0, 10, 8), buf("b", 1, 9, 4), buf("c", 2, 8, 2), buf("d", 9, 12, 4), buf("e", 3, 4, 6)};
    const interval_graph g(p);
    const auto s = sweep_fit{}.place(p, g);
    REQUIRE(validate(p, s).has_value());
    CHECK(s.offsets == std::vector<std::int64_t>{0, 8, 12, 8, 14});
    CHECK(peak_of(p, s) == max_live_bytes(p));
    // A fixed offset: the sweep steps aside for stacking, which respects it.
    p.buffers[4].fixed_offset = 0;
    const auto f = sweep_fit{}.place(p, interval_graph(p));
    CHECK(validate(p, f).has_value());
    CHECK(f.offsets[4] == 0);
  }

  TEST_CASE("the skyline greedy's work is bounded: past its requeue budget a run is abandoned, the portfolio keeps the sweep") {
    // 3,000 nested lifetimes with short temporaries beside them: every placement at the
    // bottom moves every waiting entry up (a training step's shape).
    packing_problem p;
    const int depth = 3000;
    for (int k = 0; k < depth; ++k) {
      p.buffers.push_back(buf("act" + std::to_string(k), k, 2 * depth - k, 64 + k % 7));
      p.buffers.push_back(buf("tmp" + std::to_string(k), k, k + 2, 32 + k % 5));
    }
    const interval_graph g(p);
    const auto order = detail::sorted_order(p, g, detail::order_key::size, detail::order_key::duration);
    detail::skyline_budget tight;
    tight.requeues = 100;
    CHECK_FALSE(detail::skyline_in_order(p, g, order, tight).has_value());
    const auto full = detail::skyline_in_order(p, g, order);
    REQUIRE(full.has_value());
    CHECK(validate(p, *full).has_value());
    const auto port = portfolio_fit{}.place(p, g);
    CHECK(validate(p, port).has_value());
    CHECK(static_cast<double>(peak_of(p, port)) <= 1.02 * static_cast<double>(max_live_bytes(p)));
  }

  TEST_CASE("place() reports malformed problems") {
    packing_problem p;
    p.buffers = {buf("x", 3, 1, 4)};
    const auto r = place(p);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
  }
}

TEST_SUITE("packing/scale") {
  using namespace xlamem::test::packing_helpers;

  TEST_CASE("without the conflict graph, every greedy places exactly as with it (random instances)") {
    std::mt19937_64 rng(18);
    for (int round = 0; round < 300; ++round) {
      auto p = random_problem(rng, 1 + static_cast<int>(rng() % 60), 40 + static_cast<int>(rng() % 60), 64, true);
      if (round % 3 == 0) p = with_fixed(rng, p);
      const interval_graph lists(p, conflict_edges::build);
      const interval_graph g(p);
      std::vector<int> order(p.buffers.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      CHECK(detail::place_in_order(p, g, order, fit_rule::best).offsets ==
            reference_place_in_order(p, lists, order, fit_rule::best).offsets);
      CHECK(detail::place_in_order(p, g, order, fit_rule::first).offsets ==
            reference_place_in_order(p, lists, order, fit_rule::first).offsets);
      const auto sky = *detail::skyline_in_order(p, g, order);
      CHECK(sky.offsets == reference_skyline(p, lists, order).offsets);
      if (round % 3 != 0) CHECK(validate(p, sky).has_value());  // random fixed offsets may collide
    }
  }

  TEST_CASE("real compiler traces: valid placements within 1 % of the lower bound") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto folder = dir / "packing-traces";
    for (const char* name : {"iopddl_G_1", "iopddl_S_1", "iopddl_Y_1", "iree_mobilebert", "somas_tensors_pangu_2.6B",
                             "somas_tensors_resnet50", "somas_tensors_tiny_bert"}) {
      CAPTURE(name);
      const auto file = read_interval_csv_file((folder / (std::string(name) + ".csv")).string());
      REQUIRE(file.has_value());
      const auto& p = file->problem;
      const interval_graph g(p);
      const auto s = portfolio_fit{}.place(p, g);
      REQUIRE(validate(p, s).has_value());
      CHECK(static_cast<double>(peak_of(p, s)) <= 1.01 * static_cast<double>(lower_bound(p)));
    }
  }

  TEST_CASE("the time limit is respected: the search reports that it stopped") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto file = read_interval_csv_file((dir / "minimalloc" / "challenging" / "D.1048576.csv").string());
    REQUIRE(file.has_value());
    minimize_options o;
    o.time_limit = 0.2;  // D is not closed in 0.2 s (its gap stays open after minutes)
    const auto r = minimize_peak(file->problem, o);
    REQUIRE(r.has_value());
    CHECK(r->status == solve_status::time_limit);
    CHECK_FALSE(r->optimal);
    CHECK(r->stopped_by_time_limit);
    CHECK(validate(file->problem, r->solution).has_value());
    search_options so;
    so.capacity = 990000;  // above max live (986,112), far below anything found
    so.time_limit = 0.2;
    const auto d = pack_within(file->problem, so);
    REQUIRE(d.has_value());
    CHECK(d->status == solve_status::no_answer);
  }

  TEST_CASE("the strong lower bound is a lower bound: never above the exhaustively found optimum") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 150; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 6), 12, 9, false);
      strong_bound_options o;
      o.time_limit = std::numeric_limits<double>::infinity();  // small instances: every window solved exactly
      const auto b = strong_lower_bound(p, o);
      REQUIRE(b.has_value());
      const auto opt = test::brute_force_optimum(p);
      CHECK(b->lower_bound <= opt);
      CHECK(b->lower_bound >= b->max_live);
      CHECK(b->improved == (b->lower_bound > b->max_live));
    }
  }
}
