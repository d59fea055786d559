// SPDX-License-Identifier: Apache-2.0
// Planning (buffer assignment + CompiledMemoryStats) of every real model in
// ../shared/data/hlo/xla-models and of the oracle transformer train step: time per solver,
// with the temporary heap against XLA best fit in the same run (counters `temp`,
// `temp_over_lb`, `temp_over_xla`). `end_to_end/*` also parses the module text: the
// acceptance figure is end_to_end on the largest model with the heuristic solver (< 100 ms).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

namespace {

namespace fs = std::filesystem;
using xlamem::buffer_assignment;
using xlamem::buffer_assignment_options;
using xlamem::hlo::module;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct model {
  std::string name;
  std::string text;
  module m;
  std::int64_t xla_temp = 0;
};

std::vector<model>& models() {
  static std::vector<model> ms;  // benchmark-program state, not a library global
  return ms;
}

std::int64_t temp_of(const buffer_assignment<module>& a) { return a.stats().temp_size_in_bytes; }
std::int64_t lb_of(const buffer_assignment<module>& a) {
  std::int64_t lb = 0;
  for (const auto& h : a.heaps()) lb += h.lower_bound;
  return lb;
}

void plan_bench(benchmark::State& state, const model* md, const char* solver, double limit, bool parse) {
  buffer_assignment_options o;
  o.solver = *xlamem::find_solver(solver);
  o.time_limit = limit;
  std::int64_t temp = 0, lb = 0;
  for (auto _ : state) {
    if (parse) {
      auto m = xlamem::hlo::parse_module(md->text, md->name);
      if (!m) {
        state.SkipWithError(m.error().to_string().c_str());
        return;
      }
      auto a = buffer_assignment<module>::run(*m, o);
      if (!a) {
        state.SkipWithError(a.error().to_string().c_str());
        return;
      }
      temp = temp_of(*a);
      lb = lb_of(*a);
      benchmark::DoNotOptimize(a);
    } else {
      auto a = buffer_assignment<module>::run(md->m, o);
      if (!a) {
        state.SkipWithError(a.error().to_string().c_str());
        return;
      }
      temp = temp_of(*a);
      lb = lb_of(*a);
      benchmark::DoNotOptimize(a);
    }
  }
  state.counters["temp"] = static_cast<double>(temp);
  state.counters["temp_over_lb"] = lb > 0 ? static_cast<double>(temp) / static_cast<double>(lb) : 1.0;
  state.counters["temp_over_xla"] = md->xla_temp > 0 ? static_cast<double>(temp) / static_cast<double>(md->xla_temp) : 1.0;
  state.counters["instructions"] = static_cast<double>(md->m.instructions.size());
}

void load(const fs::path& p, const std::string& name) {
  model md;
  md.name = name;
  md.text = slurp(p);
  auto m = xlamem::hlo::parse_module(md.text, name);
  if (!m) return;
  md.m = std::move(*m);
  buffer_assignment_options o;
  o.solver = *xlamem::find_solver("xla");
  if (auto a = buffer_assignment<module>::run(md.m, o)) md.xla_temp = a->stats().temp_size_in_bytes;
  models().push_back(std::move(md));
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path shared = XLAMEM_BENCH_SHARED_DATA;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(shared / "hlo" / "xla-models", ec)) {
    if (e.path().extension() == ".hlo") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  models().reserve(files.size() + 1);
  for (const auto& f : files) load(f, f.stem().string());
  // The oracle transformer train step (our own JAX program, optimised and scheduled by XLA).
  const fs::path oracle = fs::path(__FILE__).parent_path().parent_path().parent_path() / "test" / "data" / "xla-oracle" /
                          "transformer_train_step" / "jit_transformer_train_step.cpu_after_optimizations.txt";
  if (fs::is_regular_file(oracle, ec)) load(oracle, "oracle_transformer_train_step");
  const model* largest = nullptr;  // the largest real model of xla-models
  for (const auto& md : models()) {
    if (md.name.rfind("oracle_", 0) != 0 && (largest == nullptr || md.m.instructions.size() > largest->m.instructions.size())) {
      largest = &md;
    }
    const model* p = &md;
    benchmark::RegisterBenchmark(("plan/" + md.name + "/xla").c_str(), plan_bench, p, "xla", 0.0, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("plan/" + md.name + "/heuristic").c_str(), plan_bench, p, "heuristic", 0.0, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("plan/" + md.name + "/search_0.2s").c_str(), plan_bench, p, "search", 0.2, false)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  std::vector<const model*> e2e{largest};
  if (!models().empty() && models().back().name.rfind("oracle_", 0) == 0) e2e.push_back(&models().back());
  for (const model* md : e2e) {
    if (md == nullptr) continue;
    for (const char* k : {"xla", "heuristic"}) {
      benchmark::RegisterBenchmark(("end_to_end/" + md->name + "/" + std::string(k)).c_str(), plan_bench,
                                   md, k, 0.0, true)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
