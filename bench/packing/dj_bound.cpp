// SPDX-License-Identifier: Apache-2.0
// `dj_bound FILE.csv [--seconds S] [--total T] [--capacity C] [--hint-seconds H]
// [--certificates DIR]`: can a
// window of consecutive sections (buffers clipped to it, a relaxation) prove a lower bound
// above max live bytes (MiniMalloc's D and J)? Runs `window_survey` at capacity C
// (default: max live) with S seconds per window and prints every maximal feasible window (its
// placement is the certificate that no window inside it proves more than C) and every minimal
// open window (timed out, or proven infeasible: then the bound C + granule is certified).
// `--hint-seconds H` first runs `minimize_peak` on the whole problem for H seconds; windows
// where its placement, restricted, stays under C need no search.
// `--certificates DIR` writes each feasible window's relaxation and placement as an interval
// CSV with an `offset` column; `dj_bound --check FILE.csv [C]` re-checks one (valid, peak <= C).
// `dj_bound FILE.csv --relaxation FIRST END OUT.csv` writes the window [FIRST, END)'s relaxation
// (to decide one open window with a longer search: `xlamem pack OUT.csv --capacity C`); with
// `--spanning-below` it leaves out the buffers live over the whole window (stacked at the
// bottom without loss) and prints their bytes, to decide the rest at C minus them;
// `dj_bound FILE.csv --restore FIRST END REST_PLACEMENT.csv OUT.csv` puts them back (stacked
// from offset 0, the rest shifted up) and checks the window's placement.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xlamem/io/packing/interval_csv.hpp"
#include "xlamem/packing/packing.hpp"

namespace {
const char* status_name(xlamem::solve_status s) {
  return s == xlamem::solve_status::infeasible ? "INFEASIBLE" : std::string_view(to_string(s)).data();
}

// The relaxation of FILE's window [first, end) of sections, or nothing (after a message).
std::optional<xlamem::packing_problem> read_window(const char* path, const char* first_arg, const char* end_arg) {
  using namespace xlamem;
  auto file = read_interval_csv_file(path);
  if (!file) {
    std::fprintf(stderr, "dj_bound: %s\n", file.error().to_string().c_str());
    return std::nullopt;
  }
  const interval_graph g(file->problem);
  const auto first = std::strtoull(first_arg, nullptr, 10), end = std::strtoull(end_arg, nullptr, 10);
  if (first >= end || end > g.section_count()) {
    std::fprintf(stderr, "dj_bound: window [%s, %s) not inside the %zu sections\n", first_arg, end_arg,
                 g.section_count());
    return std::nullopt;
  }
  return window_relaxation(file->problem, g, first, end);
}

// The buffers of p live over all of its times. They can be stacked at the bottom without
// loss: moving one there shifts only what was under it, up by its size (alignments of 1 only).
std::vector<bool> spanning(const xlamem::packing_problem& p) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    lo = i == 0 ? p.buffers[i].lower : std::min(lo, p.buffers[i].lower);
    hi = i == 0 ? p.buffers[i].upper : std::max(hi, p.buffers[i].upper);
  }
  std::vector<bool> out;
  for (const auto& b : p.buffers) out.push_back(b.lower == lo && b.upper == hi && !b.fixed_offset);
  return out;
}

bool unaligned(const xlamem::packing_problem& p) {
  return std::all_of(p.buffers.begin(), p.buffers.end(), [](const auto& b) { return b.alignment == 1; });
}
}  // namespace

int main(int argc, char** argv) {
  using namespace xlamem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: dj_bound FILE.csv [--seconds S] [--total T] [--capacity C] [--hint-seconds H] "
                         "[--certificates DIR]\n"
                         "       dj_bound --check CERTIFICATE.csv [C]\n"
                         "       dj_bound FILE.csv --relaxation FIRST END OUT.csv [--spanning-below]\n"
                         "       dj_bound FILE.csv --restore FIRST END REST_PLACEMENT.csv OUT.csv\n");
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
  if ((argc == 6 || argc == 7) && std::string(argv[2]) == "--relaxation") {
    const bool spanning_below = argc == 7 && std::string(argv[6]) == "--spanning-below";
    if (argc == 7 && !spanning_below) {
      std::fprintf(stderr, "dj_bound: unknown option %s\n", argv[6]);
      return 3;
    }
    auto sub = read_window(argv[1], argv[3], argv[4]);
    if (!sub) return 3;
    if (spanning_below && !unaligned(*sub)) {
      std::fprintf(stderr, "dj_bound: --spanning-below needs alignments of 1\n");
      return 3;
    }
    const auto span = spanning(*sub);
    packing_problem rest;
    std::int64_t below = 0;
    for (std::size_t i = 0; i < sub->buffers.size(); ++i) {
      if (spanning_below && span[i]) below += sub->buffers[i].size;
      else rest.buffers.push_back(sub->buffers[i]);
    }
    if (auto w = write_interval_csv_file(argv[5], rest, nullptr); !w) {
      std::fprintf(stderr, "dj_bound: %s\n", w.error().to_string().c_str());
      return 3;
    }
    std::printf("%s: window [%s,%s) buffers=%zu", argv[5], argv[3], argv[4], rest.buffers.size());
    if (spanning_below) {
      std::printf(" spanning_buffers=%zu spanning_bytes=%lld (decide the rest at capacity - spanning_bytes)",
                  sub->buffers.size() - rest.buffers.size(), static_cast<long long>(below));
    }
    std::printf("\n");
    return 0;
  }
  if (argc == 7 && std::string(argv[2]) == "--restore") {
    auto sub = read_window(argv[1], argv[3], argv[4]);
    if (!sub) return 3;
    auto rest = read_interval_csv_file(argv[5]);
    if (!rest || !rest->offsets) {
      std::fprintf(stderr, "dj_bound: %s\n", rest ? "no offset column" : rest.error().to_string().c_str());
      return 3;
    }
    std::map<std::string, std::int64_t> offset_of;
    for (std::size_t i = 0; i < rest->problem.buffers.size(); ++i) {
      offset_of[rest->problem.buffers[i].id] = rest->offsets->offsets[i];
    }
    if (!unaligned(*sub)) {
      std::fprintf(stderr, "dj_bound: --restore needs alignments of 1\n");
      return 3;
    }
    const auto span = spanning(*sub);
    std::int64_t below = 0;
    for (std::size_t i = 0; i < sub->buffers.size(); ++i) below += span[i] ? sub->buffers[i].size : 0;
    placement s;
    std::int64_t stacked = 0;
    for (std::size_t i = 0; i < sub->buffers.size(); ++i) {
      const auto& b = sub->buffers[i];
      if (span[i]) {
        s.offsets.push_back(stacked);
        stacked += b.size;
      } else if (auto it = offset_of.find(b.id); it != offset_of.end()) {
        s.offsets.push_back(it->second + below);
      } else {
        std::fprintf(stderr, "dj_bound: %s has no offset for buffer %s\n", argv[5], b.id.c_str());
        return 3;
      }
    }
    if (auto w = write_interval_csv_file(argv[6], *sub, &s); !w) {
      std::fprintf(stderr, "dj_bound: %s\n", w.error().to_string().c_str());
      return 3;
    }
    const auto ok = validate(*sub, s);
    std::printf("%s: window [%s,%s) buffers=%zu valid=%s peak=%lld\n", argv[6], argv[3], argv[4],
                sub->buffers.size(), ok ? "yes" : ok.error().to_string().c_str(),
                static_cast<long long>(peak_of(*sub, s)));
    return ok ? 0 : 1;
  }
  window_survey_options o;
  std::string certificates;
  double hint_seconds = 0;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string arg = argv[a];
    if (arg == "--seconds") o.seconds_per_window = std::atof(argv[a + 1]);
    else if (arg == "--total") o.time_limit = std::atof(argv[a + 1]);
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
    mo.time_limit = hint_seconds;
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
