// SPDX-License-Identifier: Apache-2.0
// Memory-term reduction: time of xla_compatible_policy and split_aware_policy from 10^3 to 10^6
// primitives (10 time steps per 100 primitives, lifetimes of 1..100 steps), against a baseline
// built the way XLA's MemoryTermReducer is (one ordered set of entering and one of evicted ids
// per time step, an ordered active set, a multimap of candidate pairs, ordered member sets),
// which must give identical results; and terms on the staircase/nested family.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/memory_terms/memory_terms.hpp"
#include "../../test/support/memory_terms_generators.hpp"  // test and bench support, not installed

namespace {

using namespace xlamem;

// The baseline: XLA's algorithm over XLA's data-structure layout (std containers in place of
// absl's btree ones). Written from the algorithm's description, for timing and cross-checking.
struct xla_layout_result {
  std::vector<term_interval> intervals;
  std::vector<std::set<std::int64_t>> groups;
};

xla_layout_result xla_layout_reduce(std::int64_t num_lives, std::vector<term_interval> iv) {
  const auto P = static_cast<std::int64_t>(iv.size());
  std::vector<std::set<std::int64_t>> groups;
  std::vector<std::set<std::int64_t>> enter(static_cast<std::size_t>(num_lives)), evict(static_cast<std::size_t>(num_lives));
  for (std::int64_t p = 0; p < P; ++p) {
    if (!iv[p].valid()) continue;
    enter[iv[p].first].insert(p);
    evict[iv[p].last].insert(p);
  }
  auto overlap = [&](std::int64_t a, std::int64_t b) -> std::optional<term_interval> {
    if (a == b || !iv[a].valid() || !iv[b].valid()) return std::nullopt;
    auto splits = [&](std::int64_t x, std::int64_t y) { return iv[x].first < iv[y].first && iv[x].last > iv[y].last; };
    if (splits(a, b) || splits(b, a)) return std::nullopt;
    return term_interval{std::max(iv[a].first, iv[b].first), std::min(iv[a].last, iv[b].last)};
  };
  auto terms = [&](std::int64_t x, std::int64_t removed) {
    std::int64_t n = iv[x].last - iv[x].first + 1 - removed;
    if (x >= P && n > 0) n += static_cast<std::int64_t>(groups[x - P].size());
    return n;
  };
  auto members = [&](std::int64_t x, std::set<std::int64_t>& out) {
    if (x < P) out.insert(x);
    else out.insert(groups[x - P].begin(), groups[x - P].end());
  };
  auto update = [&](std::int64_t x, const term_interval& ov) {
    enter[iv[x].first].erase(x);
    evict[iv[x].last].erase(x);
    if (iv[x].first == ov.first) iv[x].first = ov.last + 1;
    if (iv[x].last == ov.last) iv[x].last = ov.first - 1;
    if (!iv[x].valid()) return;
    enter[iv[x].first].insert(x);
    evict[iv[x].last].insert(x);
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> actives;
    std::multimap<std::int64_t, std::pair<std::int64_t, std::int64_t>> pairs;
    for (std::int64_t t = 0; t < num_lives; ++t) {
      for (const auto p : enter[t]) actives.insert({iv[p].first, iv[p].last, p});
      for (const auto p : evict[t]) {
        auto it = actives.find({iv[p].first, iv[p].last, p});
        if (++it == actives.end()) continue;
        if (auto ov = overlap(p, std::get<2>(*it))) pairs.insert({-ov->length(), {p, std::get<2>(*it)}});
      }
      for (const auto p : evict[t]) actives.erase({iv[p].first, iv[p].last, p});
    }
    for (const auto& [key, pr] : pairs) {
      const auto ov = overlap(pr.first, pr.second);
      if (!ov) continue;
      std::set<std::int64_t> merged;
      members(pr.first, merged);
      members(pr.second, merged);
      if (terms(pr.first, 0) + terms(pr.second, 0) <=
          terms(pr.first, ov->length()) + terms(pr.second, ov->length()) + ov->length() +
              static_cast<std::int64_t>(merged.size())) {
        continue;
      }
      const auto id = static_cast<std::int64_t>(iv.size());
      enter[ov->first].insert(id);
      evict[ov->last].insert(id);
      iv.push_back(*ov);
      groups.push_back(std::move(merged));
      update(pr.first, *ov);
      update(pr.second, *ov);
      changed = true;
    }
  }
  for (auto g = static_cast<std::int64_t>(groups.size()) - 1; g >= 0; --g) {
    if (iv[P + g].valid()) continue;
    iv.erase(iv.begin() + P + g);
    groups.erase(groups.begin() + g);
  }
  return {std::move(iv), std::move(groups)};
}

term_problem random_problem(std::int64_t primitives) {
  return random_term_problem(42, primitives, std::max<std::int64_t>(primitives / 10, 100), 100);
}

template <class Policy>
void bm_reduce(benchmark::State& state) {
  const auto p = random_problem(state.range(0));
  memory_term_reduction last;
  for (auto _ : state) {
    auto r = reduce_memory_terms(p.num_lives, p.intervals, {}, Policy{});
    if (!r) {
      state.SkipWithError(r.error().to_string().c_str());
      return;
    }
    last = std::move(*r);
    benchmark::DoNotOptimize(last.terms_after);
  }
  state.counters["primitives"] = static_cast<double>(p.intervals.size());
  state.counters["time_steps"] = static_cast<double>(p.num_lives);
  state.counters["terms_before"] = static_cast<double>(last.terms_before);
  state.counters["terms_after"] = static_cast<double>(last.terms_after);
  state.counters["groups"] = static_cast<double>(last.groups.size());
  state.counters["sweeps"] = static_cast<double>(last.iterations);
}

void bm_xla_layout_baseline(benchmark::State& state) {
  const auto p = random_problem(state.range(0));
  xla_layout_result last;
  for (auto _ : state) {
    last = xla_layout_reduce(p.num_lives, p.intervals);
    benchmark::DoNotOptimize(last.intervals.data());
  }
  auto ours = reduce_memory_terms(p.num_lives, p.intervals);
  bool same = ours && ours->intervals == last.intervals && ours->groups.size() == last.groups.size();
  for (std::size_t g = 0; same && g < last.groups.size(); ++g) {
    same = std::vector<std::int64_t>(last.groups[g].begin(), last.groups[g].end()) == ours->groups[g];
  }
  if (!same) state.SkipWithError("the XLA-layout baseline and xla_compatible_policy disagree");
  state.counters["primitives"] = static_cast<double>(p.intervals.size());
  state.counters["groups"] = static_cast<double>(last.groups.size());
}

// Terms on the staircase/nested family (training-step instances with seeds first..first+count-1;
// the unit test uses 1000..1199), relative to xla_compatible on the same instances:
// terms_vs_xla < 1 means fewer terms.
template <class Policy>
void bm_family(benchmark::State& state) {
  std::vector<term_problem> problems;
  std::vector<std::int64_t> xla_terms;
  const auto first = static_cast<std::uint64_t>(state.range(0));
  for (std::uint64_t s = 0; s < static_cast<std::uint64_t>(state.range(1)); ++s) {
    problems.push_back(training_step_problem(first + s));
    xla_terms.push_back(reduce_memory_terms(problems.back().num_lives, problems.back().intervals)->terms_after);
  }
  double ratio = 0, before = 0, after = 0;
  for (auto _ : state) {
    ratio = before = after = 0;
    for (std::size_t i = 0; i < problems.size(); ++i) {
      auto r = reduce_memory_terms(problems[i].num_lives, problems[i].intervals, {}, Policy{});
      before += static_cast<double>(r->terms_before);
      after += static_cast<double>(r->terms_after);
      ratio += static_cast<double>(r->terms_after) / static_cast<double>(xla_terms[i]);
    }
  }
  state.counters["terms_before"] = before;
  state.counters["terms_after"] = after;
  state.counters["terms_vs_xla"] = ratio / static_cast<double>(problems.size());
}

BENCHMARK(bm_reduce<xla_compatible_policy>)
    ->Name("reduce/xla_compatible")
    ->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
// The XLA layout grows about quadratically (one loaded run: 0.25 s of CPU at 10^4 primitives,
// 34 s at 10^5; its final clean-up erases vanished groups one by one from the middle of two
// vectors), so it stops at 10^4.
BENCHMARK(bm_xla_layout_baseline)
    ->Name("reduce/xla_layout_baseline")
    ->RangeMultiplier(10)->Range(1000, 10000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_reduce<split_aware_policy>)
    ->Name("reduce/split_aware")
    ->RangeMultiplier(10)->Range(1000, 100000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_family<xla_compatible_policy>)
    ->Name("family/xla_compatible")->ArgNames({"seed", "count"})->Args({1000, 200})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_family<split_aware_policy>)
    ->Name("family/split_aware")->ArgNames({"seed", "count"})
    ->Args({1000, 200})->Args({5000, 200})->Args({1, 1000})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
