// SPDX-License-Identifier: Apache-2.0
// A small outside program that uses xlamem the way a user would, built against the installed
// headers (or the subproject): a pool, a plan (buffer assignment of an HLO module read from
// text) and a packing. Exits 0 only when every answer is the expected one.
#include <cstdio>
#include <string>

#include <xlamem/alloc/fixed_block_pool.hpp>
#include <xlamem/alloc/heap_memory.hpp>
#include <xlamem/hlo/graph_model.hpp>
#include <xlamem/hlo/reader.hpp>
#include <xlamem/io/xla/memory_stats_text.hpp>
#include <xlamem/packing/packing.hpp>
#include <xlamem/passes/buffer_assignment.hpp>
#include <xlamem/xlamem.hpp>

namespace {

int fail(const char* what, const std::string& why = {}) {
  std::fprintf(stderr, "consumer: %s%s%s\n", what, why.empty() ? "" : ": ", why.c_str());
  return 1;
}

// Two 64-byte values live at once at most besides the parameters and the output.
constexpr const char* module_text = R"(HloModule consumer, entry_computation_layout={(f32[16]{0}, f32[16]{0})->f32[16]{0}}

ENTRY %main (a: f32[16], b: f32[16]) -> f32[16] {
  %a = f32[16]{0} parameter(0)
  %b = f32[16]{0} parameter(1)
  %sum = f32[16]{0} add(f32[16]{0} %a, f32[16]{0} %b)
  %prod = f32[16]{0} multiply(f32[16]{0} %sum, f32[16]{0} %a)
  %neg = f32[16]{0} negate(f32[16]{0} %prod)
  ROOT %out = f32[16]{0} add(f32[16]{0} %neg, f32[16]{0} %sum)
}
)";

}  // namespace

int main() {
  using namespace xlamem;

  // A pool: four 64-byte blocks, every one distinct, a fifth refused.
  fixed_block_pool<aligned_heap_memory> pool(
      aligned_heap_memory{}, pool_options{.block_count = 4, .block_size = 64, .name = "consumer"});
  {
    fixed_block_pool<aligned_heap_memory>::handle hs[4];
    for (auto& h : hs) h = pool.acquire();
    if (hs[0].data() == hs[3].data()) return fail("pool handed out one block twice");
    auto extra = pool.try_acquire();
    if (extra.has_value() || extra.error().code() != errc::resource_exhausted) {
      return fail("pool: a fifth block from four");
    }
  }

  // A plan: buffer assignment of a module read from text, validated.
  auto m = hlo::parse_module(module_text, "consumer.hlo");
  if (!m) return fail("reading the module", m.error().to_string());
  buffer_assignment_options options;
  options.solver = *find_solver("xla");
  auto plan = buffer_assignment<hlo::module>::run(*m, options);
  if (!plan) return fail("planning", plan.error().to_string());
  if (auto ok = plan->validate(*m); !ok) return fail("invalid plan", ok.error().to_string());
  const auto& stats = plan->stats();
  if (stats.argument_size_in_bytes != 128 || stats.output_size_in_bytes != 64) {
    return fail("plan statistics", xlamem::memory_stats_text(stats));
  }
  if (stats.temp_size_in_bytes <= 0 || stats.temp_size_in_bytes > 192) {
    return fail("plan temporaries", xlamem::memory_stats_text(stats));
  }

  // A packing: three buffers, two of them live together; the optimum is their sum.
  packing_problem p;
  p.buffers = {{"x", 0, 2, 32, 1, {}}, {"y", 1, 3, 16, 1, {}}, {"z", 2, 4, 32, 1, {}}};
  const auto best = minimize_peak(p, minimize_options{});
  if (!best || !validate(p, best->solution)) return fail("packing");
  if (best->peak != 48 || lower_bound(p) != 48) return fail("packing peak");

  std::printf("xlamem %s consumer ok: pool, plan (temp %lld bytes), packing (peak %lld)\n",
              version_string, static_cast<long long>(stats.temp_size_in_bytes),
              static_cast<long long>(best->peak));
  return 0;
}
