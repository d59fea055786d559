// SPDX-License-Identifier: Apache-2.0
// `xlamem reduce` (issue 7): memory-term reduction of primitives given as closed intervals in a
// CSV file with columns id,first,last (first > last: no interval).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "xlamem/io/memory_terms_csv.hpp"
#include "xlamem/memory_terms/memory_terms.hpp"

namespace xlamem::cli {
namespace {

struct reduce_options {
  std::string file;
  std::string policy = std::string(xla_compatible_policy::name);
  std::int64_t max_iterations = std::numeric_limits<std::int64_t>::max();
  bool json = false;
};

template <class Policy>
result<memory_term_reduction> run(const std::vector<term_interval>& intervals, std::int64_t num_lives,
                                  std::int64_t max_iterations) {
  auto r = reduce_memory_terms(num_lives, intervals, {max_iterations}, Policy{});
  if (r) {
    if (auto ok = verify_memory_terms(intervals, *r); !ok) return ok.error();
  }
  return r;
}

int run_reduce(const reduce_options& opt) {
  auto text = read_input(opt.file);
  if (!text) return fail("reduce", text.error());
  auto intervals = read_memory_terms_csv(*text, display_name(opt.file));
  if (!intervals) return fail("reduce", intervals.error());
  if (intervals->empty()) {
    return fail("reduce", display_name(opt.file) + ":1:1: no primitives (expected rows id,first,last)");
  }
  std::int64_t num_lives = 0;  // as auto-sharding: the last valid end + 1
  for (const auto& iv : *intervals) {
    if (iv.valid()) num_lives = std::max(num_lives, iv.last + 1);
  }
  result<memory_term_reduction> r = error(errc::invalid_argument, "");
  if (opt.policy == xla_compatible_policy::name) {
    r = run<xla_compatible_policy>(*intervals, num_lives, opt.max_iterations);
  } else if (opt.policy == split_aware_policy::name) {
    r = run<split_aware_policy>(*intervals, num_lives, opt.max_iterations);
  } else {
    return fail("reduce", fmt::format("unknown policy '{}' (expected {} or {})", opt.policy,
                                      xla_compatible_policy::name, split_aware_policy::name));
  }
  if (!r) return fail("reduce", display_name(opt.file) + ": " + r.error().message());
  if (opt.json) {
    nlohmann::ordered_json j;
    j["command"] = "reduce";
    j["file"] = display_name(opt.file);
    j["policy"] = opt.policy;
    j["num_lives"] = r->num_lives;
    j["terms_before"] = r->terms_before;
    j["terms_after"] = r->terms_after;
    j["intervals"] = nlohmann::ordered_json::array();
    for (const auto& iv : r->intervals) j["intervals"].push_back({iv.first, iv.last});
    j["groups"] = r->groups;
    j["reduced_times"] = r->reduced_times;
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  fmt::print("{}: {} primitives over {} time steps, policy {}\n", display_name(opt.file), r->num_primitives,
             r->num_lives, opt.policy);
  fmt::print("terms: {} -> {} ({} groups, {} sweeps)\n", r->terms_before, r->terms_after,
             r->groups.size(), r->iterations);
  for (std::int64_t p = 0; p < r->num_primitives; ++p) {
    const auto& iv = r->intervals[static_cast<std::size_t>(p)];
    if (iv.valid()) fmt::print("primitive {}: [{}, {}]\n", p, iv.first, iv.last);
    else fmt::print("primitive {}: none\n", p);
  }
  for (std::size_t g = 0; g < r->groups.size(); ++g) {
    const auto& iv = r->intervals[static_cast<std::size_t>(r->num_primitives) + g];
    std::string members;
    for (const auto m : r->groups[g]) members += (members.empty() ? "" : " ") + std::to_string(m);
    fmt::print("group {} = {{{}}}: [{}, {}]\n", g, members, iv.first, iv.last);
  }
  std::string times;
  for (const auto t : r->reduced_times) times += (times.empty() ? "" : " ") + std::to_string(t);
  fmt::print("reduced times: {}\n", times);
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
