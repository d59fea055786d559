// SPDX-License-Identifier: Apache-2.0
// HLO reader throughput on the largest real module (nv_maxtext, 0.6 MB), against two baselines
// measured in the same run: the floor any HLO reader must pay (one pass over the bytes that
// tracks strings, brackets and lines) and the naive way (std::istringstream word tokenizing,
// which does not even build an IR). Also the printer, the dataflow analysis and the
// whole-module memory-space propagation on the same module.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "../../test/support/hlo_generators.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace {

std::string load(const char* file) {
  auto t = xlamem::hlo::read_text_file(std::string(XLAMEM_BENCH_SHARED_DATA) + "/hlo/xla-models/" + file);
  return t ? std::move(*t) : std::string();
}

/// The module texts, read once per run (a bench TU, not a header, so statics are fine).
const std::string& module_text(const char* name) {
  static const std::string maxtext = load("nv_maxtext_1n1g_jit_train_step_before_optimization.hlo");
  static const std::string dus = load("in_place_dynamic_update_slice_fusion.hlo");
  return std::string_view(name) == "maxtext" ? maxtext : dus;
}

bool skip_without_data(benchmark::State& state, const std::string& text) {
  if (!text.empty()) return false;
  state.SkipWithError("shared/data/hlo is absent");
  return true;
}

void bm_read_hlo(benchmark::State& state) {
  const std::string& text = module_text("maxtext");
  if (skip_without_data(state, text)) return;
  std::size_t instructions = 0;
  for (auto _ : state) {
    auto m = xlamem::hlo::parse_module(text, "maxtext.hlo");
    if (!m) {
      state.SkipWithError(m.error().to_string().c_str());
      return;
    }
    instructions = m->instructions.size();
    benchmark::DoNotOptimize(m->instructions.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(bm_read_hlo)->Unit(benchmark::kMillisecond);

/// Baseline floor: one pass that tracks strings, bracket depth and lines, and builds nothing.
void bm_baseline_bracket_scan(benchmark::State& state) {
  const std::string& text = module_text("maxtext");
  if (skip_without_data(state, text)) return;
  for (auto _ : state) {
    std::size_t depth = 0, lines = 0, max_depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"') in_string = false;
        continue;
      }
      switch (c) {
        case '"': in_string = true; break;
        case '{': case '(': case '[': ++depth; max_depth = depth > max_depth ? depth : max_depth; break;
        case '}': case ')': case ']': --depth; break;
        case '\n': ++lines; break;
        default: break;
      }
    }
    benchmark::DoNotOptimize(lines);
    benchmark::DoNotOptimize(max_depth);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(bm_baseline_bracket_scan)->Unit(benchmark::kMillisecond);

/// Baseline, the naive way: iostream word tokenizing (allocates a string per token).
void bm_baseline_istringstream_words(benchmark::State& state) {
  const std::string& text = module_text("maxtext");
  if (skip_without_data(state, text)) return;
  for (auto _ : state) {
    std::istringstream in(text);
    std::string word;
    std::size_t words = 0;
    while (in >> word) ++words;
    benchmark::DoNotOptimize(words);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(bm_baseline_istringstream_words)->Unit(benchmark::kMillisecond);

void bm_print_hlo(benchmark::State& state) {
  const std::string& text = module_text("maxtext");
  if (skip_without_data(state, text)) return;
  auto m = xlamem::hlo::parse_module(text);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string out = xlamem::hlo::to_string(*m);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(bm_print_hlo)->Unit(benchmark::kMillisecond);

void bm_dataflow(benchmark::State& state) {
  const std::string& text = module_text(state.range(0) == 0 ? "maxtext" : "dus");
  if (skip_without_data(state, text)) return;
  auto m = xlamem::hlo::parse_module(text);
  std::size_t values = 0;
  for (auto _ : state) {
    auto a = xlamem::dataflow_analysis<xlamem::hlo::module>::run(*m);
    values = a->values().size();
    benchmark::DoNotOptimize(values);
  }
  state.counters["instructions"] = static_cast<double>(m->instructions.size());
  state.counters["values"] = static_cast<double>(values);
}
BENCHMARK(bm_dataflow)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void bm_propagate_memory_spaces(benchmark::State& state) {
  const std::string& text = module_text("maxtext");
  if (skip_without_data(state, text)) return;
  auto m = xlamem::hlo::parse_module(text);
  for (auto _ : state) {
    auto r = xlamem::propagate_memory_spaces(*m);
    benchmark::DoNotOptimize(*r);
  }
  state.counters["instructions"] = static_cast<double>(m->instructions.size());
}
BENCHMARK(bm_propagate_memory_spaces)->Unit(benchmark::kMillisecond);

}  // namespace

/// A call chain of N computations (values flow down the parameters and back up the
/// call outputs): read, dataflow (SSA form) and the whole plan with XLA's best fit. The worklist
/// makes this near-linear; the round-robin sweeps it replaced took 9 s at N = 10^4.
void bm_call_chain(benchmark::State& state) {
  const auto depth = static_cast<std::size_t>(state.range(0));
  const std::string text = xlamem::test::call_chain_module(depth);
  for (auto _ : state) {
    auto m = xlamem::hlo::parse_module(text, "chain");
    if (!m) {
      state.SkipWithError(m.error().to_string().c_str());
      return;
    }
    xlamem::buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    auto a = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, o);
    if (!a) {
      state.SkipWithError(a.error().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(a->stats());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(bm_call_chain)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
