// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/detail/xla_order.hpp: XLA's post-order positions, its heap
// simulator's clock and sort keys (by hand and against a sort of the events on the oracle
// corpus), planned values, the allocation list and CombineTempAllocations' std::partition.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/common.hpp"
#include "support/hlo_helpers.hpp"
#include "xlamem/passes/detail/xla_order.hpp"
#include "xlamem/passes/liveness.hpp"

namespace xla_order_test {

using namespace xlamem;
using liveness = live_range_analysis<hlo::module>;
using value_id = liveness::value_id;
using buffer_id = colocation_analysis<hlo::module>::buffer_id;

inline liveness analyse(const hlo::module& m) {
  auto la = liveness::run(m);
  REQUIRE_MESSAGE(la.has_value(), (la ? std::string() : la.error().to_string()));
  return std::move(*la);
}

/// A while over a fused negate, a reduce with an embedded adder, and a computation nobody calls.
constexpr const char* while_text = R"(HloModule w, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  fp = f32[4]{0} parameter(0)
  ROOT fn = f32[4]{0} negate(fp)
}

cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[4]{0}) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(bi, one)
  bn = f32[4]{0} fusion(bx), kind=kLoop, calls=fused
  ROOT r = (s32[], f32[4]{0}) tuple(i1, bn)
}

unused {
  up = f32[4]{0} parameter(0)
  ROOT un = f32[4]{0} negate(up)
}

ENTRY e {
  a = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  in = (s32[], f32[4]{0}) tuple(zero, a)
  w = (s32[], f32[4]{0}) while(in), condition=cond, body=body
  o = f32[4]{0} get-tuple-element(w), index=1
  z = f32[] constant(0)
  ROOT sum = f32[] reduce(o, z), dimensions={0}, to_apply=add
}
)";

constexpr const char* line_text = R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} exponential(p)
  b = f32[64]{0} negate(a)
  c = f32[64]{0} add(a, b)
  ROOT d = f32[64]{0} sine(c)
}
)";

inline std::size_t number_of(const hlo::module& m, const liveness& la, const char* comp, const char* name) {
  return la.dataflow().number(xlamem::test::hlo_helpers::find(m, comp, name));
}

inline value_id value_of(const hlo::module& m, const liveness& la, const char* comp, const char* name) {
  const auto v = la.dataflow().value_defined_at(xlamem::test::hlo_helpers::find(m, comp, name), {});
  REQUIRE(v.has_value());
  return *v;
}

/// MakeInstructionPostOrder as XLA writes it, recursively: the computations reachable from
/// the entry through sequential calls in reverse post-order (callees of an instruction: a
/// while's body first), each from its unused instructions in order, operands first to last;
/// the rest after, in dense order.
inline std::vector<std::int64_t> recursive_post_order(const liveness& la) {
  const auto& df = la.dataflow();
  const std::size_t ni = df.instruction_count(), nc = df.computation_count();
  std::vector<std::vector<std::size_t>> members(nc);
  std::vector<char> used(ni, 0), seen(nc, 0);
  for (std::size_t n = 0; n < ni; ++n) {
    members[df.parent_number(n)].push_back(n);
    for (const auto o : df.operands(n)) used[o] = 1;
  }
  std::vector<std::size_t> post;
  const auto visit_computation = [&](const auto& self, std::size_t c) -> void {
    seen[c] = 1;
    for (const auto n : members[c]) {
      for (const bool body : {true, false}) {
        for (const auto& cc : df.semantics(n).calls) {
          if ((cc.binding == call_binding::while_body) != body) continue;
          const auto k = df.computation_number(cc.computation);
          if (k < nc && la.context(k) == computation_context::sequential && seen[k] == 0) self(self, k);
        }
      }
    }
    post.push_back(c);
  };
  visit_computation(visit_computation, la.entry());
  std::vector<std::int64_t> pos(ni, -1);
  std::int64_t next = 0;
  const auto visit = [&](const auto& self, std::size_t n) -> void {
    if (pos[n] >= 0) return;
    pos[n] = -2;  // on the path
    for (const auto o : df.operands(n)) {
      if (pos[o] == -1 && df.parent_number(o) == df.parent_number(n)) self(self, o);
    }
    pos[n] = next++;
  };
  for (auto c = post.rbegin(); c != post.rend(); ++c) {
    for (const auto n : members[*c]) {
      if (used[n] == 0) visit(visit, n);
    }
  }
  for (std::size_t n = 0; n < ni; ++n) {
    if (pos[n] < 0) pos[n] = next++;
  }
  return pos;
}

/// The values of `bufs` the heap simulator sees (planned, with a live range), per buffer in
/// the order the keys list their pieces: by (start, end, id).
inline std::vector<std::vector<value_id>> heap_values(const liveness& la, const std::vector<buffer_id>& bufs) {
  std::vector<std::vector<value_id>> out;
  for (const auto b : bufs) {
    auto& vs = out.emplace_back();
    for (const auto v : la.colocation().values(b)) {
      if (detail::planned_value(la, v) && la.has_range(v)) vs.push_back(v);
    }
    std::sort(vs.begin(), vs.end(), [&](value_id x, value_id y) {
      return std::tuple(la.range(x).start, la.range(x).end, x) < std::tuple(la.range(y).start, la.range(y).end, y);
    });
  }
  return out;
}

/// The heap clock by sorting events: a value starts at its first step, before the step's
/// ends, in (start, end, id) order; it ends at its last step, in the same order among ends;
/// a value taken over ends just before its taker starts, if it has not ended by then.
inline std::map<value_id, std::pair<std::int64_t, std::int64_t>> clock_by_sorting(
    const liveness& la, const std::vector<value_id>& values, const std::vector<std::pair<value_id, value_id>>& takes) {
  using key = std::tuple<std::int64_t, int, std::int64_t, std::int64_t, value_id, int>;
  const auto start_key = [&](value_id v, int before) {
    const auto r = la.range(v);
    return key{r.start, 0, r.start, r.end, v, before};
  };
  std::vector<std::pair<key, std::pair<value_id, bool>>> events;  // (key, (value, is start))
  for (const auto v : values) {
    const auto r = la.range(v);
    key end{r.end, 1, r.start, r.end, v, 0};
    for (const auto& [taker, taken] : takes) {
      if (taken == v && std::find(values.begin(), values.end(), taker) != values.end()) {
        end = std::min(end, start_key(taker, -1));
      }
    }
    events.push_back({start_key(v, 0), {v, true}});
    events.push_back({end, {v, false}});
  }
  std::sort(events.begin(), events.end());
  std::map<value_id, std::pair<std::int64_t, std::int64_t>> out;
  for (std::size_t tick = 0; tick < events.size(); ++tick) {
    const auto [v, is_start] = events[tick].second;
    (is_start ? out[v].first : out[v].second) = static_cast<std::int64_t>(tick);
  }
  return out;
}

/// Every buffer holding a value the heap sees.
inline std::vector<buffer_id> heap_buffers(const liveness& la) {
  std::vector<buffer_id> bufs;
  for (buffer_id b = 0; b < la.colocation().buffer_count(); ++b) {
    for (const auto v : la.colocation().values(b)) {
      if (detail::planned_value(la, v) && la.has_range(v)) {
        bufs.push_back(b);
        break;
      }
    }
  }
  return bufs;
}

/// The keys of `bufs` (one item each) with `takes` against the clock by sorting, the
/// durations, spans and ranks against their definitions.
inline void check_keys(const liveness& la, const std::vector<buffer_id>& bufs,
                       const std::vector<std::pair<value_id, value_id>>& takes) {
  const auto post_order = detail::xla_post_order_positions(la);
  std::vector<std::size_t> item_of(bufs.size());
  for (std::size_t k = 0; k < bufs.size(); ++k) item_of[k] = k;
  const auto keys = detail::xla_heap_sort_keys(la, bufs, item_of, bufs.size(), takes, post_order);
  const auto per_item = heap_values(la, bufs);
  std::vector<value_id> all;
  for (const auto& vs : per_item) all.insert(all.end(), vs.begin(), vs.end());
  const auto clock = clock_by_sorting(la, all, takes);
  const auto& df = la.dataflow();
  REQUIRE(keys.pieces.size() == bufs.size());
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    const auto& vs = per_item[i];
    REQUIRE(keys.pieces[i].size() == vs.size());
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t k = 0; k < vs.size(); ++k) {
      CAPTURE(vs[k]);
      CHECK(keys.pieces[i][k] == clock.at(vs[k]));
      lo = std::min(lo, keys.pieces[i][k].first);
      hi = std::max(hi, keys.pieces[i][k].second);
    }
    CHECK(keys.own_duration[i] == keys.pieces[i][0].second - keys.pieces[i][0].first);
    CHECK(keys.span[i] == hi - lo);
    const auto& d = df.get(vs[0]).defining;
    const auto n = df.number(d.instruction);
    CHECK(keys.rank[i] == post_order[n] * 1024 + static_cast<std::int64_t>(*df.find_index(n, d.index)));
  }
}

}  // namespace xla_order_test

TEST_SUITE("passes/xla_order") {
  using namespace xla_order_test;

  TEST_CASE("post-order positions by hand: unused instructions in order, operands first; callees after callers") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(while_text);
    const auto la = analyse(m);
    const auto pos = detail::xla_post_order_positions(la);
    const auto at = [&](const char* comp, const char* name) { return pos[number_of(m, la, comp, name)]; };
    // The entry: only `sum` is unused; the tuple reads zero before a.
    CHECK(at("e", "zero") == 0);
    CHECK(at("e", "a") == 1);
    CHECK(at("e", "in") == 2);
    CHECK(at("e", "w") == 3);
    CHECK(at("e", "o") == 4);
    CHECK(at("e", "z") == 5);
    CHECK(at("e", "sum") == 6);
    // Then the while's computations: its body is listed first, so in reverse post-order the
    // condition comes first.
    CHECK(at("cond", "cp") == 7);
    CHECK(at("cond", "lt") == 10);
    CHECK(at("body", "bp") == 11);
    CHECK(at("body", "bi") == 12);
    CHECK(at("body", "one") == 13);
    CHECK(at("body", "i1") == 14);
    CHECK(at("body", "bx") == 15);
    CHECK(at("body", "bn") == 16);
    CHECK(at("body", "r") == 17);
    // The embedded adder, the fusion and the unreachable computation follow in dense order.
    CHECK(at("add", "x") == 18);
    CHECK(at("add", "s") == 20);
    CHECK(at("fused", "fp") == 21);
    CHECK(at("unused", "un") == 24);
    CHECK(pos == recursive_post_order(la));
  }

  TEST_CASE("post-order positions: a permutation, operands before users, and a recursive MakeInstructionPostOrder (oracle corpus)") {
    const auto dir = xlamem::test::oracle_data_dir();
    REQUIRE_FALSE(dir.empty());
    std::size_t modules = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_directory()) continue;
      for (const auto& file : std::filesystem::directory_iterator(entry.path())) {
        const auto name = file.path().filename().string();
        if (name.size() < 24 || name.substr(name.size() - 24) != "_after_optimizations.txt") continue;
        CAPTURE(name);
        auto m = hlo::read_module_file(file.path().string());
        REQUIRE(m.has_value());
        const auto la = analyse(*m);
        const auto& df = la.dataflow();
        const auto pos = detail::xla_post_order_positions(la);
        REQUIRE(pos.size() == df.instruction_count());
        auto sorted = pos;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k) REQUIRE(sorted[k] == static_cast<std::int64_t>(k));
        for (std::size_t n = 0; n < df.instruction_count(); ++n) {
          if (la.context(df.parent_number(n)) != computation_context::sequential) continue;
          for (const auto o : df.operands(n)) CHECK(pos[o] < pos[n]);
        }
        CHECK(pos == recursive_post_order(la));
        ++modules;
      }
    }
    CHECK(modules >= 15);
  }

  TEST_CASE("heap sort keys by hand: one tick per start and per end, starts of a step before its ends") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(line_text);
    const auto la = analyse(m);
    const auto post_order = detail::xla_post_order_positions(la);
    const std::vector<buffer_id> bufs = heap_buffers(la);
    REQUIRE(bufs.size() == 5);  // p, a, b, c, d: live [0,5], [1,3], [2,3], [3,4], [4,5]
    const std::vector<std::size_t> one_each{0, 1, 2, 3, 4};
    const std::vector<std::pair<value_id, value_id>> none;
    auto keys = detail::xla_heap_sort_keys(la, bufs, one_each, 5, none, post_order);
    using pieces = std::vector<std::pair<std::int64_t, std::int64_t>>;
    CHECK(keys.pieces == std::vector<pieces>{{{0, 8}}, {{1, 4}}, {{2, 5}}, {{3, 7}}, {{6, 9}}});
    CHECK(keys.own_duration == std::vector<std::int64_t>{8, 3, 3, 4, 3});
    CHECK(keys.span == keys.own_duration);
    CHECK(keys.rank == std::vector<std::int64_t>{0, 1024, 2048, 3072, 4096});
    // c takes over a's chunk: a is freed just before c starts, b then ends a tick later.
    const std::vector<std::pair<value_id, value_id>> takes{{value_of(m, la, "e", "c"), value_of(m, la, "e", "a")}};
    keys = detail::xla_heap_sort_keys(la, bufs, one_each, 5, takes, post_order);
    CHECK(keys.pieces == std::vector<pieces>{{{0, 8}}, {{1, 3}}, {{2, 5}}, {{4, 7}}, {{6, 9}}});
    // a and b as one item: its first value's duration, the span of both, the first's rank.
    keys = detail::xla_heap_sort_keys(la, bufs, std::vector<std::size_t>{0, 1, 1, 2, 3}, 4, none, post_order);
    CHECK(keys.pieces[1] == pieces{{1, 4}, {2, 5}});
    CHECK(keys.own_duration[1] == 3);
    CHECK(keys.span[1] == 4);
    CHECK(keys.rank[1] == 1024);
  }

  TEST_CASE("heap sort keys equal a sort of the events on the oracle corpus, with and without takeovers") {
    const auto dir = xlamem::test::oracle_data_dir();
    REQUIRE_FALSE(dir.empty());
    std::size_t modules = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_directory()) continue;
      for (const auto& file : std::filesystem::directory_iterator(entry.path())) {
        const auto name = file.path().filename().string();
        if (name.size() < 24 || name.substr(name.size() - 24) != "_after_optimizations.txt") continue;
        CAPTURE(name);
        auto m = hlo::read_module_file(file.path().string());
        REQUIRE(m.has_value());
        const auto la = analyse(*m);
        const auto bufs = heap_buffers(la);
        check_keys(la, bufs, {});
        // Each value takes over the value of its operand 0 while that one is still live.
        const auto& df = la.dataflow();
        std::vector<std::pair<value_id, value_id>> takes;
        std::vector<char> taken(df.values().size(), 0);
        for (const auto& vs : heap_values(la, bufs)) {
          for (const auto v : vs) {
            const auto n = df.number(df.get(v).defining.instruction);
            if (df.operands(n).empty()) continue;
            const auto w = df.unique_value_at(df.operands(n)[0], {});
            if (!w || *w == v || taken[*w] || !detail::planned_value(la, *w) || !la.has_range(*w)) continue;
            if (la.range(*w).end < la.range(v).start || la.range(*w).start >= la.range(v).start) continue;
            taken[*w] = 1;
            takes.emplace_back(v, *w);
          }
        }
        check_keys(la, bufs, takes);
        ++modules;
      }
    }
    CHECK(modules >= 15);
  }

  TEST_CASE("planned values: defined in a sequential or an embedded computation, not fused or unreachable") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(while_text);
    const auto la = analyse(m);
    CHECK(detail::planned_value(la, value_of(m, la, "e", "a")));
    CHECK(detail::planned_value(la, value_of(m, la, "body", "i1")));
    CHECK(detail::planned_value(la, value_of(m, la, "add", "s")));  // thread-local
    CHECK_FALSE(detail::planned_value(la, value_of(m, la, "fused", "fn")));
    CHECK_FALSE(detail::planned_value(la, value_of(m, la, "unused", "un")));
  }

  TEST_CASE("the allocation list: the global pass, a heap per colour, then the thread-local allocations") {
    using created = detail::created_allocation<std::uint32_t>;
    const std::vector<created> global{{false, 7, 0}, {true, 3, 1}};
    const auto seq = detail::global_pass_heaps(global, {0, 5}, 2);
    REQUIRE(seq.size() == 6);
    CHECK(seq[0].tuple == 7);
    CHECK(seq[1].tuple == 3);
    for (const std::size_t k : {2, 3}) {
      CHECK(seq[k].temp);
      CHECK(seq[k].tuple == static_cast<std::uint32_t>(-1));
    }
    CHECK(seq[2].color == 0);
    CHECK(seq[3].color == 5);
    CHECK_FALSE(seq[4].temp);
    CHECK_FALSE(seq[5].temp);
  }

  TEST_CASE("xla_partition_temporaries is std::partition's two-ended scan, on every sequence up to 12") {
    using created = detail::created_allocation<std::uint32_t>;
    for (std::uint32_t n = 0; n <= 12; ++n) {
      for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
        std::vector<created> seq;
        for (std::uint32_t k = 0; k < n; ++k) seq.push_back({((mask >> k) & 1) != 0, k, 0});
        auto want = seq;
        const auto split = std::partition(want.begin(), want.end(), [](const created& c) { return !c.temp; });
        const auto first = detail::xla_partition_temporaries(seq);
        REQUIRE(first == static_cast<std::size_t>(split - want.begin()));
        REQUIRE(first == n - static_cast<std::uint32_t>(std::popcount(mask)));
        for (std::uint32_t k = 0; k < n; ++k) REQUIRE(seq[k].tuple == want[k].tuple);
      }
    }
    // XLA's order, not creation order: [t0, a, t1, b] becomes [b, a, t1, t0].
    std::vector<created> seq{{true, 0, 0}, {false, 1, 0}, {true, 2, 0}, {false, 3, 0}};
    CHECK(detail::xla_partition_temporaries(seq) == 2);
    CHECK(seq[0].tuple == 3);
    CHECK(seq[1].tuple == 1);
    CHECK(seq[2].tuple == 2);
    CHECK(seq[3].tuple == 0);
  }
}
