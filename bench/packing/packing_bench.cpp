// SPDX-License-Identifier: Apache-2.0
// Packing benchmarks, each compared in the same run with the strongest baseline available:
//  - decision/<file>: time to a placement within 1,048,576 bytes (the MiniMalloc paper's
//    problem); counter mm_seconds is MiniMalloc's median on this machine class (from
//    ../shared/docs/packing.md) and speedup = mm_seconds / our seconds;
//  - heuristic/<file>/<policy>: XLA best fit (the baseline), first fit, skyline and the
//    default portfolio; counters peak, peak_over_lb, vs_xla (peak / XLA's peak);
//  - scaling/<policy>/<n>: generated instances of 10^3, 10^4, 10^5 buffers;
//  - best_peak/<file>: `minimize_peak` with 60 s per file, registered only when the
//    environment has XLAMEM_PACKING_LONG=1 (11 minutes; see docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/packing/packing.hpp"

using namespace xlamem;

namespace {

const char* const files[] = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"};
// MiniMalloc, decision at 1048576, median of 3 runs on this machine class (packing.md §3).
const std::map<std::string, double> minimalloc_seconds = {
    {"A", 8.41}, {"B", 5.72}, {"C", 1.02}, {"D", 4.86}, {"E", 5.09}, {"F", 8.53},
    {"G", 1.86}, {"H", 2.75}, {"I", 5.67}, {"J", 1.85}, {"K", 0.84}};
// MiniMalloc's best known peaks (decision probing, packing.md §3.2).
const std::map<std::string, std::int64_t> minimalloc_best = {{"D", 1031168}, {"J", 1035264}};

packing_problem load(const std::string& name) {
  const std::string path = std::string(XLAMEM_BENCH_SHARED_DATA) + "/minimalloc/challenging/" + name + ".1048576.csv";
  auto r = read_interval_csv_file(path);
  if (!r) return {};
  return std::move(r->problem);
}

/// Random intervals: lifetimes mostly short with a tail of long ones, sizes log-uniform
/// 256 B .. 16 MiB, about 40 buffers live at a time.
packing_problem generated(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  packing_problem p;
  p.buffers.reserve(n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    interval_buffer b;
    b.id = std::to_string(i);
    b.lower = static_cast<std::int64_t>(i);
    const double r = u(rng);
    b.upper = b.lower + 1 + static_cast<std::int64_t>(r < 0.97 ? u(rng) * 60 : u(rng) * 600);
    b.size = static_cast<std::int64_t>(256.0 * std::pow(2.0, u(rng) * 16.0)) / 256 * 256;
    p.buffers.push_back(std::move(b));
  }
  return p;
}

void decision(benchmark::State& state, const std::string& name) {
  const auto p = load(name);
  if (p.buffers.empty()) {
    state.SkipWithError("../shared/data/minimalloc is absent");
    return;
  }
  search_result last;
  for (auto _ : state) {
    search_options o;
    o.capacity = 1048576;
    o.time_limit = 60;
    last = *pack_within(p, o);
    benchmark::DoNotOptimize(last);
  }
  const bool ok = has_answer(last.status) && validate(p, last.solution).has_value() &&
                  peak_of(p, last.solution) <= 1048576;
  if (!ok) state.SkipWithError("not solved within 60 s");
  state.counters["seconds"] = last.seconds;
  state.counters["mm_seconds"] = minimalloc_seconds.at(name);
  state.counters["speedup"] = minimalloc_seconds.at(name) / last.seconds;
  state.counters["nodes"] = static_cast<double>(last.nodes);
}

template <class H>
void heuristic(benchmark::State& state, const std::string& name, H h) {
  const auto p = load(name);
  if (p.buffers.empty()) {
    state.SkipWithError("../shared/data/minimalloc is absent");
    return;
  }
  const interval_graph g(p);
  placement s;
  for (auto _ : state) {
    s = h.place(p, g);
    benchmark::DoNotOptimize(s);
  }
  if (!validate(p, s)) state.SkipWithError("invalid placement");
  const auto peak = static_cast<double>(peak_of(p, s));
  state.counters["peak"] = peak;
  state.counters["peak_over_lb"] = peak / static_cast<double>(lower_bound(p));
  state.counters["vs_xla"] = peak / static_cast<double>(peak_of(p, xla_best_fit{}.place(p, g)));
}

template <class H>
void scaling(benchmark::State& state, H h) {
  const auto p = generated(static_cast<std::size_t>(state.range(0)), 42);
  placement s;
  for (auto _ : state) {
    const interval_graph g(p);  // part of the cost: conflicts are found per call
    s = h.place(p, g);
    benchmark::DoNotOptimize(s);
  }
  if (!validate(p, s)) state.SkipWithError("invalid placement");
  const interval_graph g(p);
  state.counters["peak_over_lb"] = static_cast<double>(peak_of(p, s)) / static_cast<double>(lower_bound(p));
  state.counters["vs_xla"] =
      static_cast<double>(peak_of(p, s)) / static_cast<double>(peak_of(p, xla_best_fit{}.place(p, g)));
  state.counters["conflicts"] = static_cast<double>(g.edge_count());
}

void best_peak(benchmark::State& state, const std::string& name) {
  const auto p = load(name);
  minimize_result last;
  for (auto _ : state) {
    minimize_options o;
    o.time_limit = 60;
    last = *minimize_peak(p, o);
  }
  if (!validate(p, last.solution)) state.SkipWithError("invalid placement");
  state.counters["peak"] = static_cast<double>(last.peak);
  state.counters["lower_bound"] = static_cast<double>(last.lower_bound);
  state.counters["optimal"] = last.optimal ? 1 : 0;
  if (minimalloc_best.count(name) != 0) {
    state.counters["mm_best"] = static_cast<double>(minimalloc_best.at(name));
    state.counters["vs_mm"] = static_cast<double>(last.peak) / static_cast<double>(minimalloc_best.at(name));
  }
}

const bool registered = [] {
  for (const char* f : files) {
    const std::string name = f;
    benchmark::RegisterBenchmark(("decision/" + name).c_str(), decision, name)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const char* f : files) {
    const std::string name = f;
    benchmark::RegisterBenchmark(("heuristic/" + name + "/xla-best-fit").c_str(),
                                 [name](benchmark::State& s) { heuristic(s, name, xla_best_fit{}); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("heuristic/" + name + "/first-fit").c_str(),
                                 [name](benchmark::State& s) { heuristic(s, name, first_fit{}); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("heuristic/" + name + "/skyline").c_str(),
                                 [name](benchmark::State& s) { heuristic(s, name, skyline_fit{}); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("heuristic/" + name + "/portfolio").c_str(),
                                 [name](benchmark::State& s) { heuristic(s, name, portfolio_fit{}); })
        ->Unit(benchmark::kMicrosecond);
  }
  for (const std::int64_t n : {1000, 10000, 100000}) {
    benchmark::RegisterBenchmark("scaling/xla-best-fit", [](benchmark::State& s) { scaling(s, xla_best_fit{}); })
        ->Arg(n)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("scaling/portfolio", [](benchmark::State& s) { scaling(s, portfolio_fit{}); })
        ->Arg(n)
        ->Unit(benchmark::kMillisecond);
  }
  if (const char* env = std::getenv("XLAMEM_PACKING_LONG"); env != nullptr && std::string(env) == "1") {
    for (const char* f : files) {
      const std::string name = f;
      benchmark::RegisterBenchmark(("best_peak/" + name).c_str(), best_peak, name)
          ->Iterations(1)
          ->Unit(benchmark::kSecond)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
