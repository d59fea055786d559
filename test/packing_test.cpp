// SPDX-License-Identifier: Apache-2.0
// Tests for the packing area: problems and validation, lower bounds, the interval graph, the
// heuristics, the exact / anytime search (against brute force), the CSV reader/writer and
// the SVG picture. Random property tests check that every placement any solver returns passes
// `validate`.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "packing_support.hpp"
#include "support.hpp"
#include "xlamem/io/interval_csv.hpp"
#include "xlamem/io/svg.hpp"
#include "xlamem/packing/packing.hpp"
#include "xlamem/packing/strong_lower_bound.hpp"
#include "xlamem/packing/xla_best_fit.hpp"

using namespace xlamem;

namespace {

interval_buffer buf(std::string id, std::int64_t lower, std::int64_t upper, std::int64_t size) {
  interval_buffer b;
  b.id = std::move(id);
  b.lower = lower;
  b.upper = upper;
  b.size = size;
  return b;
}

/// The README example of MiniMalloc (capacity 12 is optimal).
packing_problem example12() {
  packing_problem p;
  p.buffers = {buf("b1", 0, 3, 4), buf("b2", 3, 9, 4), buf("b3", 0, 9, 4), buf("b4", 9, 21, 4), buf("b5", 0, 21, 4)};
  return p;
}

packing_problem random_problem(std::mt19937_64& rng, int n, int horizon, int max_size, bool extras) {
  packing_problem p;
  for (int i = 0; i < n; ++i) {
    const auto lo = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(horizon));
    const auto len = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::max(1, horizon / 3)));
    auto b = buf("b" + std::to_string(i), lo, lo + len, 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_size)));
    if (extras) {
      if (rng() % 4 == 0) b.alignment = std::int64_t{1} << (rng() % 4);
      if (rng() % 10 == 0) b.size = 0;
    }
    p.buffers.push_back(b);
  }
  if (extras && n > 0 && rng() % 2 == 0) {
    p.buffers[0].alignment = 1;
    p.buffers[0].fixed_offset = static_cast<std::int64_t>(rng() % 8);
  }
  return p;
}

}  // namespace

TEST_SUITE("packing/xla_best_fit") {
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

TEST_SUITE("packing/problem") {
  TEST_CASE("validate accepts a valid placement and names the first two conflicting buffers") {
    const auto p = example12();
    placement ok{{8, 8, 4, 4, 0}};
    CHECK(validate(p, ok).has_value());
    CHECK(peak_of(p, ok) == 12);

    placement bad{{8, 8, 4, 4, 6}};  // b5 [6,10) overlaps b3 [4,8) and b1/b2 [8,12)
    const auto r = validate(p, bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(r.error().message().find("'b") != std::string::npos);
    CHECK(r.error().message().find("conflict") != std::string::npos);

    CHECK_FALSE(validate(p, placement{{0, 0, 0}}).has_value());  // wrong count
    CHECK_FALSE(validate(p, placement{{8, 8, 4, 4, -4}}).has_value());
  }

  TEST_CASE("half-open intervals: touching buffers do not conflict, zero sizes never do") {
    packing_problem p;
    p.buffers = {buf("a", 0, 5, 10), buf("b", 5, 9, 10), buf("z", 0, 9, 0)};
    CHECK(validate(p, placement{{0, 0, 0}}).has_value());
    CHECK(max_live_bytes(p) == 10);
    p.buffers[1].lower = 4;
    CHECK_FALSE(validate(p, placement{{0, 0, 0}}).has_value());
    CHECK(max_live_bytes(p) == 20);
  }

  TEST_CASE("validate checks alignment and fixed offsets") {
    packing_problem p;
    p.buffers = {buf("a", 0, 5, 10), buf("b", 0, 5, 10)};
    p.buffers[1].alignment = 16;
    CHECK_FALSE(validate(p, placement{{0, 10}}).has_value());
    CHECK(validate(p, placement{{0, 16}}).has_value());
    p.buffers[0].fixed_offset = 32;
    const auto r = validate(p, placement{{0, 16}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("fixed offset") != std::string::npos);
  }

  TEST_CASE("validate_problem rejects malformed buffers with their names") {
    packing_problem p;
    p.buffers = {buf("a", 5, 5, 1)};
    auto r = validate_problem(p);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("'a'") != std::string::npos);
    p.buffers = {buf("a", 0, 5, -1)};
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers = {buf("a", 0, 5, 1)};
    p.buffers[0].alignment = 3;
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers[0].alignment = 4;
    p.buffers[0].fixed_offset = 2;
    CHECK_FALSE(validate_problem(p).has_value());
    p.buffers[0].fixed_offset = 8;
    CHECK(validate_problem(p).has_value());
    p.buffers[0].size = max_packing_value + 1;
    CHECK_FALSE(validate_problem(p).has_value());
  }

  TEST_CASE("lower bound: max live bytes rounded up to the granule, fixed tops included") {
    packing_problem p;
    p.buffers = {buf("a", 0, 4, 1024), buf("b", 2, 6, 2048), buf("c", 5, 9, 3072)};
    CHECK(max_live_bytes(p) == 5120);
    CHECK(packing_granule(p) == 1024);
    CHECK(lower_bound(p) == 5120);
    p.buffers[0].fixed_offset = 8192;
    CHECK(lower_bound(p) == 9216);
    CHECK(lower_bound(packing_problem{}) == 0);
  }
}

TEST_SUITE("packing/interval_graph") {
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

TEST_SUITE("packing/heuristics") {
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
      CHECK(validate(p, xla).has_value());
      CHECK(validate(p, ff).has_value());
      CHECK(validate(p, sky).has_value());
      CHECK(validate(p, port).has_value());
      CHECK(peak_of(p, port) <= peak_of(p, xla));
      CHECK(peak_of(p, port) >= max_live_bytes(p));
      CHECK(validate(p, xla_best_fit{xla_order::temporal}.place(p, g)).has_value());
    }
  }

  TEST_CASE("place() reports malformed problems") {
    packing_problem p;
    p.buffers = {buf("x", 3, 1, 4)};
    const auto r = place(p);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
  }
}

TEST_SUITE("packing/search") {
  TEST_CASE("decision search matches brute force on small random problems") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 150; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 5), 10, 6, false);
      const auto opt = test::brute_force_optimum(p);
      search_options o;
      o.time_limit_seconds = 10;
      o.capacity = opt;
      const auto yes = pack_within(p, o);
      REQUIRE(yes.has_value());
      CHECK(yes->status == search_status::feasible);
      CHECK(validate(p, yes->solution).has_value());
      CHECK(peak_of(p, yes->solution) <= opt);
      o.capacity = opt - 1;
      const auto no = pack_within(p, o);
      REQUIRE(no.has_value());
      CHECK(no->status == search_status::infeasible);
    }
  }

  TEST_CASE("minimize_peak proves the optimum of small problems") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 60; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 5), 12, 8, false);
      minimize_options o;
      o.time_limit_seconds = 10;
      const auto r = minimize_peak(p, o);
      REQUIRE(r.has_value());
      CHECK(r->status == search_status::feasible);
      CHECK(validate(p, r->solution).has_value());
      CHECK(r->optimal);
      CHECK(r->peak == test::brute_force_optimum(p));
      CHECK(r->lower_bound == r->peak);
    }
  }

  TEST_CASE("property: every placement of the search passes validate (alignment, fixed, zero sizes)") {
    std::mt19937_64 rng(13);
    for (int round = 0; round < 80; ++round) {
      const auto p = random_problem(rng, 1 + static_cast<int>(rng() % 30), 40, 32, true);
      minimize_options o;
      o.time_limit_seconds = 0.05;
      const auto r = minimize_peak(p, o);
      REQUIRE(r.has_value());
      REQUIRE(r->status == search_status::feasible);
      CHECK(validate(p, r->solution).has_value());
      CHECK(r->peak <= peak_of(p, xla_best_fit{}.place(p, interval_graph(p))));
      CHECK(r->lower_bound <= r->peak);
      search_options so;
      so.capacity = r->peak;
      so.time_limit_seconds = 0.05;
      const auto d = pack_within(p, so);
      REQUIRE(d.has_value());
      CHECK(d->status == search_status::feasible);
      CHECK(validate(p, d->solution).has_value());
      CHECK(peak_of(p, d->solution) <= r->peak);
    }
  }

  TEST_CASE("the search respects fixed offsets as obstacles") {
    packing_problem p;
    p.buffers = {buf("fixed", 0, 10, 4), buf("a", 0, 10, 4), buf("b", 0, 5, 4), buf("c", 5, 10, 4)};
    p.buffers[0].fixed_offset = 4;
    search_options o;
    o.capacity = 12;
    const auto r = pack_within(p, o);
    REQUIRE(r.has_value());
    REQUIRE(r->status == search_status::feasible);
    CHECK(r->solution.offsets[0] == 4);
    CHECK(validate(p, r->solution).has_value());
    o.capacity = 8;
    CHECK(pack_within(p, o)->status == search_status::infeasible);
  }

  TEST_CASE("same input and seed give the same placement; a tiny node limit times out") {
    std::mt19937_64 rng(21);
    const auto p = random_problem(rng, 60, 80, 100, false);
    search_options o;
    o.capacity = lower_bound(p) + lower_bound(p) / 20;
    o.time_limit_seconds = 0;
    o.node_limit = 200000;
    const auto a = pack_within(p, o);
    const auto b = pack_within(p, o);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->status == b->status);
    CHECK(a->solution.offsets == b->solution.offsets);
    o.capacity = lower_bound(p);
    o.node_limit = 1;
    const auto c = pack_within(p, o);
    CHECK((c->status == search_status::timed_out || c->status == search_status::feasible ||
           c->status == search_status::infeasible));
  }

  TEST_CASE("a capacity below the lower bound is infeasible at once") {
    search_options o;
    o.capacity = 11;
    const auto r = pack_within(example12(), o);
    REQUIRE(r.has_value());
    CHECK(r->status == search_status::infeasible);
    minimize_options m;
    m.capacity = 11;
    CHECK(minimize_peak(example12(), m)->status == search_status::infeasible);
  }

  TEST_CASE("challenging suite: heuristics beat XLA; J and K solved at capacity 1 MiB") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto folder = dir / "minimalloc" / "challenging";
    for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
      const auto file = read_interval_csv_file((folder / (std::string(name) + ".1048576.csv")).string());
      REQUIRE(file.has_value());
      const auto& p = file->problem;
      const interval_graph g(p);
      const auto xla = xla_best_fit{}.place(p, g);
      const auto port = portfolio_fit{}.place(p, g);
      CHECK(validate(p, port).has_value());
      CHECK(peak_of(p, port) <= peak_of(p, xla));
    }
    for (const char* name : {"J", "K"}) {
      const auto file = read_interval_csv_file((folder / (std::string(name) + ".1048576.csv")).string());
      REQUIRE(file.has_value());
      search_options o;
      o.capacity = 1048576;
      o.time_limit_seconds = 60;
      const auto r = pack_within(file->problem, o);
      REQUIRE(r.has_value());
      CHECK(r->status == search_status::feasible);
      CHECK(validate(file->problem, r->solution).has_value());
      CHECK(peak_of(file->problem, r->solution) <= 1048576);
    }
  }
}

TEST_SUITE("packing/io") {
  TEST_CASE("CSV: reads MiniMalloc's format and writes it back with offsets") {
    const auto r = read_interval_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\r\n\nb3,0,9,4\n", "x.csv");
    REQUIRE(r.has_value());
    REQUIRE(r->problem.buffers.size() == 3);
    CHECK(r->problem.buffers[1].id == "b2");
    CHECK(r->problem.buffers[1].upper == 9);
    CHECK_FALSE(r->offsets.has_value());
    const placement s{{0, 0, 4}};
    const auto text = write_interval_csv(r->problem, &s);
    CHECK(text == "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,0\nb3,0,9,4,4\n");
    const auto back = read_interval_csv(text);
    REQUIRE(back.has_value());
    REQUIRE(back->offsets.has_value());
    CHECK(back->offsets->offsets == s.offsets);
  }

  TEST_CASE("CSV: old column names, alignment, ignored columns") {
    const auto r = read_interval_csv("buffer,start,end,size,alignment,hint\nx,0,2,8,4,1\n");
    REQUIRE(r.has_value());
    CHECK(r->problem.buffers[0].upper == 3);  // closed end
    CHECK(r->problem.buffers[0].alignment == 4);
  }

  TEST_CASE("CSV: errors name the file, line and column") {
    auto err = [](const char* text) {
      const auto r = read_interval_csv(text, "in.csv");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::parse_error);
      return r.error().message();
    };
    CHECK(err("id,lower,upper,size\na,0,x,4\n") == "in.csv:2:5: 'x' is not an integer");
    CHECK(err("id,lower,upper,size\na,0,3\n").find("in.csv:2:1: expected 4 fields") == 0);
    CHECK(err("id,lower,upper,size\na,0,3,4\nb,5,5,4\n").find("in.csv:3:") == 0);
    CHECK(err("id,lower,upper,size\na,7,3,4\n").find("negative live interval") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,-4\n").find("negative size") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,99999999999999999999\n").find("out of range") != std::string::npos);
    CHECK(err("id,lower,upper,size\na,0,3,2000000000000000000\n").find("out of range") != std::string::npos);
    CHECK(err("id,lower,size\n").find("header must name") != std::string::npos);
    CHECK(err("id,lower,upper,size,colour\n").find("unknown column 'colour'") != std::string::npos);
    CHECK(err("").find("empty input") != std::string::npos);
    CHECK(err("id,lower,upper,size,alignment\na,0,3,4,3\n").find("power of two") != std::string::npos);
  }

  TEST_CASE("SVG: one rectangle per buffer, peak and capacity lines, escaped labels") {
    auto p = example12();
    p.buffers[0].id = "a<b>&\"c\"";
    const placement s{{8, 8, 4, 4, 0}};
    layout_svg_options o;
    o.title = "example";
    o.capacity = 16;
    const auto svg = layout_svg(layout_of(p, s), o);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    std::size_t rects = 0;
    for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++rects;
    CHECK(rects == 5);
    CHECK(svg.find("peak 12 B") != std::string::npos);
    CHECK(svg.find("capacity 16 B") != std::string::npos);
    CHECK(svg.find("a&lt;b&gt;&amp;&quot;c&quot;") != std::string::npos);
    CHECK(svg.find("a<b>") == std::string::npos);
    CHECK(layout_svg({}).find("</svg>") != std::string::npos);  // empty layouts draw too
  }
}

namespace {

/// The placement loops as they were with an explicit conflict graph (issue 18 replaced them by
/// interval structures): the reference the new structures must reproduce byte for byte.
placement reference_place_in_order(const packing_problem& p, const interval_graph& g, const std::vector<int>& order,
                                   fit_rule rule) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
    }
  }
  for (const int bi : order) {
    const auto i = static_cast<std::size_t>(bi);
    if (placed[i]) continue;
    placed[i] = 1;
    const auto& b = p.buffers[i];
    if (b.size <= 0) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> used;
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) used.emplace_back(out.offsets[j], out.offsets[j] + p.buffers[j].size);
    }
    std::sort(used.begin(), used.end());
    std::int64_t cursor = 0, best = -1, best_gap = INT64_MAX;
    for (const auto& [lo, hi] : used) {
      const auto start = detail::align_up_i64(cursor, b.alignment);
      if (lo > start && lo - start >= b.size) {
        if (rule == fit_rule::first) {
          best = start;
          break;
        }
        if (lo - start < best_gap) {
          best_gap = lo - start;
          best = start;
        }
      }
      cursor = std::max(cursor, hi);
    }
    out.offsets[i] = best >= 0 ? best : detail::align_up_i64(cursor, b.alignment);
  }
  return out;
}

/// The skyline greedy with eager updates over the conflict lists.
placement reference_skyline(const packing_problem& p, const interval_graph& g, const std::vector<int>& order) {
  const std::size_t n = p.buffers.size();
  placement out;
  out.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (std::size_t r = 0; r < n; ++r) rank[static_cast<std::size_t>(order[r])] = static_cast<int>(r);
  std::vector<std::int64_t> low(n, 0);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].fixed_offset) {
      out.offsets[i] = *p.buffers[i].fixed_offset;
      placed[i] = 1;
    }
  }
  using entry = std::pair<std::int64_t, int>;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap;
  for (std::size_t i = 0; i < n; ++i) {
    if (!placed[i]) heap.emplace(0, rank[i]);
  }
  while (!heap.empty()) {
    const auto [o, r] = heap.top();
    heap.pop();
    const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(r)]);
    if (placed[i] || o != low[i]) continue;
    const auto& b = p.buffers[i];
    if (b.size <= 0) {
      placed[i] = 1;
      continue;
    }
    std::int64_t at = low[i];
    for (bool moved = true; moved;) {
      moved = false;
      for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
        const auto j = static_cast<std::size_t>(*it);
        if (!p.buffers[j].fixed_offset) continue;
        if (at < out.offsets[j] + p.buffers[j].size && out.offsets[j] < at + b.size) {
          at = detail::align_up_i64(out.offsets[j] + p.buffers[j].size, b.alignment);
          moved = true;
        }
      }
    }
    if (at != low[i]) {
      low[i] = at;
      heap.emplace(at, r);
      continue;
    }
    placed[i] = 1;
    out.offsets[i] = low[i];
    for (const int* it = g.neighbours_begin(i); it != g.neighbours_end(i); ++it) {
      const auto j = static_cast<std::size_t>(*it);
      if (placed[j]) continue;
      const auto nl = detail::align_up_i64(low[i] + b.size, p.buffers[j].alignment);
      if (nl > low[j]) {
        low[j] = nl;
        heap.emplace(nl, rank[j]);
      }
    }
  }
  return out;
}

packing_problem with_fixed(std::mt19937_64& rng, packing_problem p) {
  for (auto& b : p.buffers) {
    if (rng() % 6 == 0) {
      b.alignment = 1;
      b.fixed_offset = static_cast<std::int64_t>(rng() % 64);
    }
  }
  return p;
}

}  // namespace

TEST_SUITE("packing/scale") {
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
      const auto sky = detail::skyline_in_order(p, g, order);
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
    o.time_limit_seconds = 0.2;  // D is not closed in 0.2 s (its gap stays open after minutes)
    const auto r = minimize_peak(file->problem, o);
    REQUIRE(r.has_value());
    CHECK(r->status == search_status::feasible);
    CHECK_FALSE(r->optimal);
    CHECK(r->stopped_by_time_limit);
    CHECK(validate(file->problem, r->solution).has_value());
    search_options so;
    so.capacity = 990000;  // above max live (986,112), far below anything found
    so.time_limit_seconds = 0.2;
    const auto d = pack_within(file->problem, so);
    REQUIRE(d.has_value());
    CHECK(d->status == search_status::timed_out);
  }

  TEST_CASE("the strong lower bound is a lower bound: never above the exhaustively found optimum") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 150; ++round) {
      const auto p = random_problem(rng, 2 + static_cast<int>(rng() % 6), 12, 9, false);
      strong_bound_options o;
      o.time_limit_seconds = 0;  // small instances: every window solved exactly
      const auto b = strong_lower_bound(p, o);
      REQUIRE(b.has_value());
      const auto opt = test::brute_force_optimum(p);
      CHECK(b->lower_bound <= opt);
      CHECK(b->lower_bound >= b->max_live);
      CHECK(b->improved == (b->lower_bound > b->max_live));
    }
  }
}
