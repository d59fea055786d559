// SPDX-License-Identifier: Apache-2.0
// `xlamem shard`: choose one sharding strategy per instruction under a memory limit (XLA's
// auto-sharding problem, Google's IOPDDL format), or score a given solution with --evaluate.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "commands.hpp"
#include "xlamem/available_cpus.hpp"
#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/io/sharding/iopddl_solution.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/sharding/sharding_text.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/solver.hpp"

namespace xlamem::cli {
namespace {

/// Exit status when the time limit ran out before any answer existed (reading did not finish).
constexpr int exit_no_answer = 4;

struct shard_options {
  std::string file;
  double time_limit = 10.0;
  unsigned threads = 0;  // 0: one per CPU this process may use (affinity and cgroup quota)
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> work_limit;
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

/// The time limit ran out while reading: no answer, said plainly (status "no_answer").
int report_no_answer(const shard_options& opt, const error& why) {
  if (opt.json) {
    json_writer w(1);
    w.begin_object();
    w.field("command", std::string_view("shard"));
    w.field("file", display_name(opt.file));
    w.field("status", std::string_view("no_answer"));
    w.field("reason", why.message());
    w.end_object();
    fmt::print("{}\n", w.take());
  } else {
    fmt::print("status: no_answer (the time limit of {} s ran out before the problem was read)\n", opt.time_limit);
  }
  fmt::print(stderr, "xlamem shard: no answer: {}\n", terminal_text(why.message()));
  return exit_no_answer;
}

int run_shard(const shard_options& opt) {
  if (auto bad = time_limit_problem(opt.time_limit)) return fail("shard", *bad);
  // The time limit covers the whole command, reading included (as the contest counts it): one
  // deadline from here that every phase keeps (reading, presolve, search, the answer's scoring).
  // A limit of 0 is a deadline already passed: the first answer, at once.
  const auto start = solve_clock::now();
  const solve_deadline deadline = opt.evaluate.empty() ? deadline_after(start, opt.time_limit) : solve_deadline();
  auto p = opt.file == "-" ? read_iopddl_stream(stdin, "<stdin>", iopddl_limits(), deadline)
                           : read_iopddl(opt.file, iopddl_limits(), deadline);
  if (!p && p.error().code() == errc::deadline_exceeded) return report_no_answer(opt, p.error());
  if (!p) return fail("shard", p.error());
  if (!opt.evaluate.empty()) return run_evaluate(opt, *p);
  if (deadline_passed(deadline)) {  // read, but no time left for even the first answer
    return report_no_answer(opt, make_error(errc::deadline_exceeded, display_name(opt.file) + ": the time limit ran out as reading ended"));
  }
  const double read_seconds = std::chrono::duration<double>(solve_clock::now() - start).count();

  sharding::solve_options so;
  so.time_limit = opt.time_limit;
  so.deadline = deadline;
  so.started = start;  // the reading counts, in the limit and in every time reported
  so.threads = opt.threads != 0 ? opt.threads : available_cpus();
  so.seed = opt.seed;
  so.work_limit = opt.work_limit;
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
  // A bound that contradicted the answer: the output says the bound is unknown; a build with
  // assertions stops here, so that the tests cannot miss it.
  if (!r->internal_error.empty()) fmt::print(stderr, "xlamem shard: internal error: {}\n", r->internal_error);
  assert(r->internal_error.empty());
  sharding_report report{display_name(opt.file), &*p, &*r, so.threads, opt.time_limit, read_seconds, std::nullopt,
                         opt.work_limit, opt.seed};
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
                  "wall-clock seconds for the whole command, reading included (default 10; 0: the first answer; inf: no limit)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "threads to search with (default: one per CPU this process may use, after its affinity and cgroup quota)")
      ->check(CLI::Range(0u, 1024u));  // more threads than CPUs work, slower
  cmd->add_option("--seed", opt->seed, "seed of the random choices (default 1)");
  cmd->add_option("--work-limit", opt->work_limit,
                  "steps of search after which to stop; the search is then paced in steps, so with --threads 1 the "
                  "same seed gives the same answer on every run (unless the time limit comes first)");
  cmd->add_option("--output", opt->output, "write the solution line [s0, s1, ...] to this file");
  cmd->add_option("--evaluate", opt->evaluate, "score this solution file instead of solving");
  cmd->add_flag("--json", opt->json, "print one JSON object (costs and usages as decimal strings)");
  cmd->add_flag("--quiet", opt->quiet, "no progress lines on standard error");
  cmd->footer("Exit status: 0 an answer within the limit and permitted, 1 an answer that is not, 3 bad input, "
              "4 no answer (the time limit ran out while reading).");
  cmd->callback([opt, &ctx] { ctx.exit_code = run_shard(*opt); });
}

}  // namespace xlamem::cli
