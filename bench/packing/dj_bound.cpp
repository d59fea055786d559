// SPDX-License-Identifier: Apache-2.0
// `dj_bound FILE.csv [--seconds S] [--total T] [--capacity C] [--hint-seconds H]
// [--certificates DIR]`: can a
// window of consecutive sections (buffers clipped to it, a relaxation) prove a lower bound
// above max live bytes (issue 18, MiniMalloc's D and J)? Runs `window_survey` at capacity C
// (default: max live) with S seconds per window and prints every maximal feasible window (its
// placement is the certificate that no window inside it proves more than C) and every minimal
// open window (timed out, or proven infeasible: then the bound C + granule is certified).
// `--hint-seconds H` first runs `minimize_peak` on the whole problem for H seconds; windows
// where its placement, restricted, stays under C need no search.
// `--certificates DIR` writes each feasible window's relaxation and placement as an interval
// CSV with an `offset` column; `dj_bound --check FILE.csv [C]` re-checks one (valid, peak <= C).
// `dj_bound FILE.csv --relaxation FIRST END OUT.csv` writes the window [FIRST, END)'s relaxation
// (to decide one open window with a longer search: `xlamem pack OUT.csv --capacity C`).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "xlamem/io/interval_csv.hpp"
#include "xlamem/packing/packing.hpp"

namespace {
const char* status_name(xlamem::search_status s) {
  return s == xlamem::search_status::feasible     ? "feasible"
         : s == xlamem::search_status::infeasible ? "INFEASIBLE"
                                                  : "timed_out";
}
}  // namespace

int main(int argc, char** argv) {
  using namespace xlamem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: dj_bound FILE.csv [--seconds S] [--total T] [--capacity C] [--hint-seconds H] "
                         "[--certificates DIR]\n"
                         "       dj_bound --check CERTIFICATE.csv [C]\n"
                         "       dj_bound FILE.csv --relaxation FIRST END OUT.csv\n");
    return 3;
  }
  if (std::string(argv[1]) == "--check") {
    if (argc < 3) return 3;
    auto file = read_interval_csv_file(argv[2]);
    if (!file || !file->offsets) {
      std::fprintf(stderr, "dj_bound: %s\n", file ? "no offset column" : file.error().to_string().c_str());
      return 3;
    }
    const auto ok = validate(file->problem, *file->offsets);
    const auto peak = peak_of(file->problem, *file->offsets);
    const bool within = argc < 4 || peak <= std::atoll(argv[3]);
    std::printf("%s buffers=%zu valid=%s peak=%lld within=%s\n", argv[2], file->problem.buffers.size(),
                ok ? "yes" : ok.error().to_string().c_str(), static_cast<long long>(peak), within ? "yes" : "NO");
    return ok && within ? 0 : 1;
  }
  if (argc == 6 && std::string(argv[2]) == "--relaxation") {
    auto file = read_interval_csv_file(argv[1]);
    if (!file) {
      std::fprintf(stderr, "dj_bound: %s\n", file.error().to_string().c_str());
      return 3;
    }
    const interval_graph g(file->problem);
    const auto first = std::strtoull(argv[3], nullptr, 10), end = std::strtoull(argv[4], nullptr, 10);
    if (first >= end || end > g.section_count()) {
      std::fprintf(stderr, "dj_bound: window [%s, %s) not inside the %zu sections\n", argv[3], argv[4],
                   g.section_count());
      return 3;
    }
    const auto sub = window_relaxation(file->problem, g, first, end);
    if (auto w = write_interval_csv_file(argv[5], sub, nullptr); !w) {
      std::fprintf(stderr, "dj_bound: %s\n", w.error().to_string().c_str());
      return 3;
    }
    std::printf("%s: window [%s,%s) buffers=%zu\n", argv[5], argv[3], argv[4], sub.buffers.size());
    return 0;
  }
  window_survey_options o;
  std::string certificates;
  double hint_seconds = 0;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string arg = argv[a];
    if (arg == "--seconds") o.seconds_per_window = std::atof(argv[a + 1]);
    else if (arg == "--total") o.time_limit_seconds = std::atof(argv[a + 1]);
    else if (arg == "--capacity") o.capacity = std::atoll(argv[a + 1]);
    else if (arg == "--certificates") certificates = argv[a + 1];
    else if (arg == "--hint-seconds") hint_seconds = std::atof(argv[a + 1]);
    else {
      std::fprintf(stderr, "dj_bound: unknown option %s\n", arg.c_str());
      return 3;
    }
  }
  auto file = read_interval_csv_file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "dj_bound: %s\n", file.error().to_string().c_str());
    return 3;
  }
  const packing_problem& p = file->problem;
  const interval_graph g(p);
  if (hint_seconds > 0) {
    minimize_options mo;
    mo.time_limit_seconds = hint_seconds;
    const auto h = minimize_peak(p, mo);
    if (!h) {
      std::fprintf(stderr, "dj_bound: %s\n", h.error().to_string().c_str());
      return 3;
    }
    std::printf("hint: minimize_peak %.0f s, peak=%lld\n", hint_seconds, static_cast<long long>(h->peak));
    o.hints.push_back(h->solution);
  }
  const auto r = window_survey(p, o);
  if (!r) {
    std::fprintf(stderr, "dj_bound: %s\n", r.error().to_string().c_str());
    return 3;
  }
  std::printf("%s buffers=%zu sections=%zu max_live=%lld granule=%lld capacity=%lld searches=%zu seconds=%.1f\n",
              argv[1], p.buffers.size(), g.section_count(), static_cast<long long>(lower_bound(p)),
              static_cast<long long>(packing_granule(p)), static_cast<long long>(r->capacity), r->searches, r->seconds);
  for (const auto& v : r->feasible) {
    std::string where;
    if (!certificates.empty()) {
      where = certificates + "/window_" + std::to_string(v.first) + "_" + std::to_string(v.end) + ".csv";
      const auto sub = window_relaxation(p, g, v.first, v.end);
      if (auto w = write_interval_csv_file(where, sub, &v.solution); !w) {
        std::fprintf(stderr, "dj_bound: %s\n", w.error().to_string().c_str());
        return 3;
      }
    }
    std::printf("  maximal feasible [%zu,%zu) width=%zu buffers=%zu peak<=%lld s=%.2f %s\n", v.first, v.end,
                v.end - v.first, v.buffers, static_cast<long long>(r->capacity), v.seconds, where.c_str());
  }
  for (const auto& v : r->open) {
    std::printf("  minimal open     [%zu,%zu) width=%zu buffers=%zu %s s=%.2f\n", v.first, v.end, v.end - v.first,
                v.buffers, status_name(v.status), v.seconds);
  }
  if (r->lower_bound > 0) {
    std::printf("certified lower bound %lld (a window proven infeasible at %lld)\n",
                static_cast<long long>(r->lower_bound), static_cast<long long>(r->capacity));
  } else if (r->complete) {
    std::printf("no window bound: every window inside a feasible one packs at %lld; the %zu open windows timed out\n",
                static_cast<long long>(r->capacity), r->open.size());
  } else {
    std::printf("incomplete: the total time limit stopped the survey\n");
  }
  return 0;
}
