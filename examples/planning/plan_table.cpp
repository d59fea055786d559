// SPDX-License-Identifier: Apache-2.0
// Plans every .hlo file given (files or directories) with XLA best fit and with the default
// solver and prints the per-model Markdown table of docs/benchmarks.md: parameter, output and
// temporary bytes, the temporaries' lower bound, temp/lower bound for both, planning times.
//
//   plan_table DIR_OR_FILE...       e.g. plan_table ../shared/data/hlo/xla-models
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

namespace fs = std::filesystem;
using plan_type = xlamem::buffer_assignment<xlamem::hlo::module>;

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::directory_iterator(argv[i], ec)) {
        const auto ext = e.path().extension();
        if (ext == ".hlo" || ext == ".txt") files.push_back(e.path());
      }
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  std::printf("| model | instructions | parameters (B) | outputs (B) | temp, XLA best fit (B) | temp, default (B) | "
              "temp lower bound (B) | XLA/LB | default/LB | plan ms (XLA) | plan ms (default) | valid |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  int status = 0;
  for (const auto& f : files) {
    auto m = xlamem::hlo::read_module_file(f.string());
    if (!m) {
      std::fprintf(stderr, "%s\n", m.error().to_string().c_str());
      status = 1;
      continue;
    }
    auto run = [&](const char* solver, double& ms) {
      xlamem::buffer_assignment_options o;
      o.solver = *xlamem::find_solver(solver);
      const auto t0 = std::chrono::steady_clock::now();
      auto a = plan_type::run(*m, o);
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return a;
    };
    double xms = 0, dms = 0;
    auto x = run("xla", xms);
    auto d = run("search", dms);
    if (!x || !d) {
      std::fprintf(stderr, "%s: %s\n", f.string().c_str(), (!x ? x.error() : d.error()).to_string().c_str());
      status = 1;
      continue;
    }
    const bool valid = x->validate(*m).has_value() && d->validate(*m).has_value();
    std::int64_t lb = 0;
    for (const auto& h : d->heaps()) lb += h.lower_bound;
    const auto& s = d->stats();
    auto ratio = [&](std::int64_t t) { return lb > 0 ? static_cast<double>(t) / static_cast<double>(lb) : 1.0; };
    std::printf("| %s | %zu | %lld | %lld | %lld | %lld | %lld | %.4f | %.4f | %.1f | %.1f | %s |\n",
                f.stem().string().c_str(), m->instructions.size(),
                static_cast<long long>(s.argument_size_in_bytes + s.host_argument_size_in_bytes),
                static_cast<long long>(s.output_size_in_bytes + s.host_output_size_in_bytes),
                static_cast<long long>(x->stats().temp_size_in_bytes), static_cast<long long>(s.temp_size_in_bytes),
                static_cast<long long>(lb), ratio(x->stats().temp_size_in_bytes), ratio(s.temp_size_in_bytes), xms, dms,
                valid ? "yes" : "NO");
    if (!valid) status = 1;
  }
  return status;
}
