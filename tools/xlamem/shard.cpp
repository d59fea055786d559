// SPDX-License-Identifier: Apache-2.0
// `xlamem shard`: choose one sharding strategy per instruction under a memory limit (XLA's
// auto-sharding problem, Google's IOPDDL format), or score a given solution with --evaluate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <fmt/core.h>

#include "commands.hpp"
#include "xlamem/io/iopddl_json.hpp"
#include "xlamem/io/iopddl_solution.hpp"
#include "xlamem/io/json.hpp"
#include "xlamem/io/sharding_text.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/solver.hpp"

namespace xlamem::cli {
namespace {

struct shard_options {
  std::string file;
  double time_limit = 10.0;
  unsigned threads = 0;  // 0: one per hardware thread
  std::uint64_t seed = 1;
  std::string output;
  std::string evaluate;
  bool json = false;
  bool quiet = false;
};

int run_evaluate(const shard_options& opt, const sharding::problem& p) {
  auto a = read_iopddl_solution(opt.evaluate, p);
  if (!a) return fail("shard", a.error());
  auto ev = sharding::evaluate(p, *a);
  if (!ev) return fail("shard", ev.error().with_context(opt.evaluate));
  const sharding_evaluation_report report{display_name(opt.file), opt.evaluate, &p, &*ev};
  fmt::print("{}", opt.json ? json_document("shard", report) + "\n" : sharding_evaluation_text(report));
  return ev->allowed() ? 0 : 1;
}

int run_shard(const shard_options& opt) {
  if (auto bad = time_limit_problem(opt.time_limit)) return fail("shard", *bad);
  // The time limit covers the whole command, reading included (as the contest counts it).
  const auto start = std::chrono::steady_clock::now();
  auto p = opt.file == "-" ? read_iopddl_stream(stdin, "<stdin>") : read_iopddl(opt.file);
  if (!p) return fail("shard", p.error());
  if (!opt.evaluate.empty()) return run_evaluate(opt, *p);
  const double read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  sharding::solve_options so;
  so.time_limit = std::max(0.0, opt.time_limit - read_seconds);
  so.threads = opt.threads != 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  so.seed = opt.seed;
  if (!opt.quiet && opt.time_limit >= 10) {  // progress for long runs, on stderr
    so.progress_interval = 5.0;
    so.progress = [](const sharding::solve_progress& s) {
      fmt::print(stderr, "xlamem shard: {:6.1f} s of solving: {} {}, lower bound {:.0f}\n", s.seconds,
                 s.feasible ? "best cost" : "no assignment within the limit yet; least excess at cost",
                 s.best_cost.to_string(), s.lower_bound);
    };
  }
  auto r = sharding::solve(*p, so);
  if (!r) return fail("shard", r.error().with_context(display_name(opt.file)));
  // Times from the start of the command, reading included.
  r->seconds += read_seconds;
  if (r->seconds_to_first_feasible >= 0) r->seconds_to_first_feasible += read_seconds;
  if (r->seconds_to_best >= 0) r->seconds_to_best += read_seconds;
  sharding_report report{display_name(opt.file), &*p, &*r, so.threads, opt.time_limit, read_seconds, std::nullopt};
  if (!opt.output.empty()) {
    if (auto ok = write_iopddl_solution(opt.output, r->strategies); !ok) return fail("shard", ok.error());
    report.output = opt.output;
  }
  fmt::print("{}", opt.json ? json_document("shard", report) + "\n" : sharding_text(report));
  return r->feasible && r->forbidden_choices == 0 ? 0 : 1;
}

}  // namespace

void add_shard_command(CLI::App& app, context& ctx) {
  auto opt = std::make_shared<shard_options>();
  auto* cmd = app.add_subcommand(
      "shard", "Choose a sharding strategy per instruction under a memory limit (XLA's auto-sharding problem, IOPDDL)");
  cmd->add_option("FILE", opt->file, "IOPDDL problem (JSON, plain or gzip); '-' reads standard input")->required();
  cmd->add_option("--time-limit", opt->time_limit,
                  "wall-clock seconds for the whole command, reading included (default 10)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "threads to search with (default: one per hardware thread)")
      ->check(CLI::Range(0u, 1024u));
  cmd->add_option("--seed", opt->seed, "seed of the random choices (default 1)");
  cmd->add_option("--output", opt->output, "write the solution line [s0, s1, ...] to this file");
  cmd->add_option("--evaluate", opt->evaluate, "score this solution file instead of solving");
  cmd->add_flag("--json", opt->json, "print one JSON object (costs and usages as decimal strings)");
  cmd->add_flag("--quiet", opt->quiet, "no progress lines on standard error");
  cmd->callback([opt, &ctx] { ctx.exit_code = run_shard(*opt); });
}

}  // namespace xlamem::cli
