// SPDX-License-Identifier: Apache-2.0
// Reads IOPDDL problem files (plain or gzip) with xlamem's streaming reader and prints, per file,
// the read time, the counts, and the bytes of the problem's arrays, then the evaluation of
// strategy 0 everywhere. Peak memory is measured around it, one file per process:
//   /usr/bin/time -v build-release/bench/sharding/read_iopddl FILE
// (bench/sharding/read_all.sh runs it on the shared instances and prints a table).
#include <chrono>
#include <cstdio>
#include <string>

#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/sharding/evaluate.hpp"

namespace {
template <class V>
std::size_t bytes_of(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: read_iopddl FILE...\n");
    return 2;
  }
  int status = 0;
  for (int k = 1; k < argc; ++k) {
    const auto start = std::chrono::steady_clock::now();
    auto p = xlamem::read_iopddl(argv[k]);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!p) {
      std::fprintf(stderr, "%s\n", p.error().to_string().c_str());
      status = 3;
      continue;
    }
    const std::size_t array_bytes = bytes_of(p->intervals) + bytes_of(p->strategy_offsets) + bytes_of(p->costs) +
                                    bytes_of(p->usages) + bytes_of(p->edges) + bytes_of(p->edge_offsets) +
                                    bytes_of(p->edge_costs);
    auto e = xlamem::sharding::evaluate(*p, xlamem::sharding::assignment(p->node_count(), 0));
    std::printf("%s: read %.3f s, %zu nodes, %zu edges, %zu strategies, %zu edge costs, arrays %.1f MiB; "
                "strategy 0: cost %s, peak %s at %lld, %s\n",
                argv[k], seconds, p->node_count(), p->edge_count(), p->costs.size(), p->edge_costs.size(),
                static_cast<double>(array_bytes) / (1 << 20), e->cost.to_string().c_str(),
                e->peak_usage.to_string().c_str(), static_cast<long long>(e->peak_time),
                e->feasible ? "feasible" : "over the limit");
  }
  return status;
}
