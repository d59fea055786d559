// SPDX-License-Identifier: Apache-2.0
// Plans a layer graph that is not HLO (layer_graph.hpp) end to end with xlamem's generic passes:
// live ranges, buffer assignment with the donated KV cache (an input/output alias) and the
// in-place cache update, XLA-style memory statistics, and a picture of the temporary heap.
//
//   plan_layers [--svg OUT.svg]
//
// Prints the live ranges, the statistics, the allocation table and a few facts the runtime
// cares about; check_output.py (a meson test) holds the output to hand-computed figures.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "layer_graph.hpp"
#include "xlamem/io/xla/buffer_assignment_text.hpp"
#include "xlamem/io/xla/live_range_text.hpp"
#include "xlamem/io/xla/memory_stats_text.hpp"
#include "xlamem/io/codec/svg.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/liveness.hpp"

namespace {

using plan_type = xlamem::buffer_assignment<rt::network>;

/// The allocation holding the value defined by layer `layer`, or -1.
long long allocation_of(const plan_type& plan, std::size_t layer) {
  const auto& df = plan.dataflow();
  const auto v = df.value_defined_at(df.number(layer), {});
  if (!v) return -1;
  const auto s = plan.slice_of(*v);
  return s ? static_cast<long long>(s->allocation) : -1;
}

long long offset_of(const plan_type& plan, std::size_t layer) {
  const auto& df = plan.dataflow();
  const auto v = df.value_defined_at(df.number(layer), {});
  const auto s = v ? plan.slice_of(*v) : std::nullopt;
  return s ? static_cast<long long>(s->offset) : -1;
}

std::size_t layer_named(const rt::network& n, const char* name) {
  for (std::size_t i = 0; i < n.layers.size(); ++i) {
    if (n.layers[i].name == name) return i;
  }
  return n.layers.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::string svg_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--svg") == 0 && i + 1 < argc) {
      svg_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: plan_layers [--svg OUT.svg]\n");
      return 2;
    }
  }
  const rt::network net = rt::decoder_step();

  auto ranges = xlamem::live_range_analysis<rt::network>::run(net);
  if (!ranges) {
    std::fprintf(stderr, "plan_layers: %s\n", ranges.error().to_string().c_str());
    return 1;
  }
  std::fputs(xlamem::live_range_text(net, *ranges).c_str(), stdout);

  xlamem::buffer_assignment_options o;
  o.alignment = 64;
  auto plan = plan_type::run(net, o);
  if (!plan) {
    std::fprintf(stderr, "plan_layers: %s\n", plan.error().to_string().c_str());
    return 1;
  }
  if (auto ok = plan->validate(net); !ok) {
    std::fprintf(stderr, "plan_layers: invalid plan: %s\n", ok.error().to_string().c_str());
    return 1;
  }
  const auto& st = plan->stats();
  std::printf("\n%s\n", xlamem::memory_stats_text(st).c_str());
  std::printf("peak_memory_in_bytes=%lld\n\n", static_cast<long long>(st.peak_memory_in_bytes));
  std::fputs(xlamem::buffer_assignment_text(net, *plan).c_str(), stdout);

  // What the runtime wants to know.
  const auto cache = layer_named(net, "kv_cache"), kv_new = layer_named(net, "kv_new");
  const auto embed = layer_named(net, "embed"), act = layer_named(net, "act");
  std::printf("\nkv_new in kv_cache's allocation: %s\n", allocation_of(*plan, cache) == allocation_of(*plan, kv_new) ? "yes" : "no");
  std::printf("act over embed's bytes: %s\n",
              allocation_of(*plan, embed) == allocation_of(*plan, act) && offset_of(*plan, embed) == offset_of(*plan, act)
                  ? "yes"
                  : "no");
  for (const auto& h : plan->heaps()) {
    std::printf("temporary heap: %lld bytes, lower bound %lld, %zu items\n", static_cast<long long>(h.size),
                static_cast<long long>(h.lower_bound), h.problem.buffers.size());
  }

  if (!svg_path.empty()) {
    // The temporary heap over time: one rectangle per value, [start, end] of its live range.
    std::vector<xlamem::layout_rect> rects;
    for (const auto& h : plan->heaps()) {
      for (const auto& x : plan->allocations()[h.allocation].values) {
        if (!ranges->has_range(x.value)) continue;
        const auto r = plan->liveness().range(x.value);
        rects.push_back({r.start, r.end + 1, x.offset, x.size, plan->liveness().value_name(net, x.value, true)});
      }
    }
    xlamem::layout_svg_options so;
    so.title = net.name + ": temporary heap";
    if (auto ok = xlamem::write_svg_file(svg_path, xlamem::layout_svg(rects, so)); !ok) {
      std::fprintf(stderr, "plan_layers: %s\n", ok.error().to_string().c_str());
      return 1;
    }
    std::printf("picture: %s (%zu buffers)\n", svg_path.c_str(), rects.size());
  }
  return 0;
}
