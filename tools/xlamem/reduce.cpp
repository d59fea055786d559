// SPDX-License-Identifier: Apache-2.0
// `xlamem reduce`: memory-term reduction of primitives given as closed intervals in a
// CSV file with columns id,first,last (first > last: no interval), with a policy of the
// library's table (memory_terms/named_policies.hpp).
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "commands.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/memory_terms/memory_terms_csv.hpp"
#include "xlamem/io/memory_terms/memory_terms_text.hpp"
#include "xlamem/memory_terms/named_policies.hpp"

namespace xlamem::cli {
namespace {

struct reduce_options {
  std::string file;
  std::string policy = std::string(memory_term_policies.front().name);
  std::int64_t max_iterations = std::numeric_limits<std::int64_t>::max();
  bool json = false;
};

int run_reduce(const reduce_options& opt) {
  const std::string name = display_name(opt.file);
  auto text = read_input(opt.file);
  if (!text) return fail("reduce", text.error());
  auto intervals = read_memory_terms_csv(*text, name);
  if (!intervals) return fail("reduce", intervals.error());
  if (intervals->empty()) return fail("reduce", name + ":1:1: no primitives (expected rows id,first,last)");
  const auto policy = parse_memory_term_policy(opt.policy);
  if (!policy) return fail("reduce", policy.error());
  auto r = reduce_memory_terms(*intervals, *policy, {opt.max_iterations});
  if (!r) return fail("reduce", name + ": " + r.error().message());
  const memory_terms_report report{name, policy->name, &*r};
  fmt::print("{}", opt.json ? json_document("reduce", report) + "\n" : memory_terms_text(report));
  return 0;
}

}  // namespace

void add_reduce_command(CLI::App& app, context& ctx) {
  auto opt = std::make_shared<reduce_options>();
  auto* cmd = app.add_subcommand(
      "reduce", "Reduce the memory terms of ILP memory constraints (XLA auto-sharding's MemoryTermReducer)");
  cmd->add_option("FILE", opt->file, "CSV with columns id,first,last (closed intervals; first > last: none); '-' reads standard input")
      ->required();
  cmd->add_option("--policy", opt->policy, "xla_compatible (XLA's exact result) or split_aware (fewer terms)")
      ->capture_default_str();
  cmd->add_option("--max-iterations", opt->max_iterations, "at most this many sweeps (default: unlimited)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  cmd->add_flag("--json", opt->json,
                "print terms_before, terms_after, intervals, groups, reduced_times as JSON");
  cmd->callback([opt, &ctx] { ctx.exit_code = run_reduce(*opt); });
}

}  // namespace xlamem::cli
