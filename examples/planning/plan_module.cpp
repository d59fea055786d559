// SPDX-License-Identifier: Apache-2.0
// Plans one HLO module with the library API: buffer assignment with the default solver, then
// XLA's CompiledMemoryStats (what JAX prints for compiled.memory_analysis()), the temporary
// heap against its lower bound, and the allocation table in XLA's dump format.
//
//   plan_module [FILE.hlo]     (default: examples/planning/mlp_train_step.hlo)
#include <cstdio>
#include <string>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/xla/buffer_assignment_text.hpp"
#include "xlamem/io/xla/memory_stats_text.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

#ifndef XLAMEM_EXAMPLE_MODEL
#define XLAMEM_EXAMPLE_MODEL "examples/planning/mlp_train_step.hlo"
#endif

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : XLAMEM_EXAMPLE_MODEL;
  auto m = xlamem::hlo::read_module_file(file);
  if (!m) {
    std::fprintf(stderr, "plan_module: %s\n", m.error().to_string().c_str());
    return 1;
  }
  xlamem::buffer_assignment_options options;  // 64-byte alignment, search solver (1 s budget)
  options.time_limit = 0.5;
  auto plan = xlamem::buffer_assignment<xlamem::hlo::module>::run(*m, options);
  if (!plan) {
    std::fprintf(stderr, "plan_module: %s\n", plan.error().to_string().c_str());
    return 1;
  }
  if (auto ok = plan->validate(*m); !ok) {
    std::fprintf(stderr, "plan_module: invalid plan: %s\n", ok.error().to_string().c_str());
    return 1;
  }
  std::printf("%s\n", xlamem::memory_stats_text(plan->stats()).c_str());
  std::printf("peak %lld bytes at time %lld\n", static_cast<long long>(plan->stats().peak_memory_in_bytes),
              static_cast<long long>(plan->peak_time()));
  for (const auto& h : plan->heaps()) {
    std::printf("temporary heap (memory space %lld): %lld bytes, lower bound %lld, %zu buffers\n",
                static_cast<long long>(h.color), static_cast<long long>(h.size), static_cast<long long>(h.lower_bound),
                h.problem.buffers.size());
  }
  std::fputs(xlamem::buffer_assignment_text(*m, *plan).c_str(), stdout);
  return 0;
}
