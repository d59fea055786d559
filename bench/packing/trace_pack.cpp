// SPDX-License-Identifier: Apache-2.0
// `trace_pack FILE.csv [SECONDS] [--inclusive-upper]`: the default solver (`minimize_peak`)
// on one real or generated trace, as one line: buffers, sections, conflicting pairs (counted),
// peak / lower bound, optimal, whether the time limit stopped it, CPU and wall seconds, and
// whether the placement is valid. With an `offset` column it also validates the file's own
// placement and prints its peak (IREE's plan for iree_mobilebert). `--inclusive-upper` reads
// `upper` as the last live step (IREE's convention). Peak memory: run under /usr/bin/time -v.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/packing/packing.hpp"

int main(int argc, char** argv) {
  using namespace xlamem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: trace_pack FILE.csv [SECONDS] [--inclusive-upper]\n");
    return 3;
  }
  double limit = 2.0;
  bool inclusive = false;
  for (int a = 2; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--inclusive-upper") inclusive = true;
    else limit = std::atof(argv[a]);
  }
  auto file = read_interval_csv_file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "trace_pack: %s\n", file.error().to_string().c_str());
    return 3;
  }
  packing_problem& p = file->problem;
  if (inclusive) {
    for (auto& b : p.buffers) b.upper += 1;
  }
  const auto c0 = std::clock();
  const auto w0 = std::chrono::steady_clock::now();
  const interval_graph g(p);
  minimize_options o;
  o.time_limit = limit;
  const auto r = minimize_peak(p, o);
  if (!r) {
    std::fprintf(stderr, "trace_pack: %s\n", r.error().to_string().c_str());
    return 3;
  }
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const auto lb = lower_bound(p);
  const bool valid = validate(p, r->solution).has_value();
  std::printf("%s buffers=%zu sections=%zu conflicts=%zu peak=%lld lower_bound=%lld peak/lb=%.5f optimal=%s "
              "stopped=%s cpu_s=%.3f wall_s=%.3f valid=%s",
              argv[1], p.buffers.size(), g.section_count(), g.edge_count(), static_cast<long long>(r->peak),
              static_cast<long long>(lb), lb > 0 ? static_cast<double>(r->peak) / static_cast<double>(lb) : 1.0,
              r->optimal ? "yes" : "no", r->stopped_by_time_limit ? "yes" : "no", cpu, wall, valid ? "yes" : "NO");
  if (file->offsets) {
    const bool own_valid = validate(p, *file->offsets).has_value();
    std::printf(" file_plan_peak=%lld file_plan/lb=%.5f file_plan_valid=%s", static_cast<long long>(peak_of(p, *file->offsets)),
                lb > 0 ? static_cast<double>(peak_of(p, *file->offsets)) / static_cast<double>(lb) : 1.0,
                own_valid ? "yes" : "no");
  }
  std::printf("\n");
  return valid ? 0 : 1;
}
