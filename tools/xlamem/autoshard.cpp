// SPDX-License-Identifier: Apache-2.0
// `xlamem autoshard MODULE --mesh 2x4 --memory-limit 16GiB`: shardings for an unpartitioned HLO
// module (what jax.jit(f).lower(...).as_text(dialect="hlo") prints) that fit a per-device memory
// limit at the least predicted time, on a machine preset; the summary or JSON, and with
// --output the module annotated with sharding= attributes for XLA's SPMD partitioner.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "commands.hpp"
#include "xlamem/autoshard/autoshard.hpp"
#include "xlamem/available_cpus.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/autoshard/autoshard_text.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/sharding/mesh.hpp"

namespace xlamem::cli {
namespace {

struct autoshard_options {
  std::string file;
  std::string mesh;
  std::string memory_limit;
  std::string machine = std::string(sharding::default_machine_name);
  double time_limit = 10.0;
  unsigned threads = 0;  // 0: one per CPU this process may use
  std::uint64_t seed = 1;
  std::size_t max_strategies = sharding::default_max_strategies;
  std::string output;
  bool json = false;
};

int run_autoshard(const autoshard_options& opt) {
  if (auto bad = time_limit_problem(opt.time_limit)) return fail("autoshard", *bad);
  const auto start = solve_clock::now();
  auto mesh = sharding::parse_mesh(opt.mesh);
  if (!mesh) return fail("autoshard", mesh.error().with_context("--mesh"));
  auto machine = sharding::machine_for(opt.machine, *mesh);
  if (!machine) return fail("autoshard", machine.error().with_context("--machine"));
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  if (!opt.memory_limit.empty()) {
    const auto bytes = parse_byte_size(opt.memory_limit);
    if (!bytes) {
      return fail("autoshard", fmt::format("--memory-limit '{}' is not a size (write 16GiB, 512MiB, 8GB or 1000000)",
                                           opt.memory_limit));
    }
    limit = *bytes;
  }
  auto text = read_input(opt.file);
  if (!text) return fail("autoshard", text.error());
  auto m = hlo::parse_module(*text, display_name(opt.file));
  if (!m) return fail("autoshard", m.error());

  autoshard::module_options o;
  o.shard.memory_limit = limit;
  o.shard.max_strategies = opt.max_strategies;
  o.shard.solve.time_limit = opt.time_limit;
  o.shard.solve.deadline = deadline_after(start, opt.time_limit);  // 0: at once
  o.shard.solve.started = start;  // reading and parsing count
  o.shard.solve.threads = opt.threads != 0 ? opt.threads : available_cpus();
  o.shard.solve.seed = opt.seed;
  auto answer = autoshard::auto_shard_module(*m, *mesh, *machine, o, !opt.output.empty());
  if (!answer) return fail("autoshard", answer.error().with_context(display_name(opt.file)));
  autoshard_report report{display_name(opt.file), mesh->to_string(), opt.machine, limit, opt.time_limit, &*answer,
                          std::nullopt};
  if (!opt.output.empty()) {
    if (auto ok = write_file(opt.output, hlo::to_string(*m)); !ok) return fail("autoshard", ok.error());
    report.output = opt.output;
  }
  fmt::print("{}", opt.json ? json_document("autoshard", report) + "\n" : autoshard_text(report));
  return answer->result.solve.feasible ? 0 : 1;
}

}  // namespace

void add_autoshard_command(CLI::App& app, context& ctx) {
  auto opt = std::make_shared<autoshard_options>();
  auto* cmd = app.add_subcommand(
      "autoshard", "Shard an unpartitioned HLO module over a device mesh within a per-device memory limit");
  cmd->add_option("MODULE", opt->file,
                  "HLO text before SPMD partitioning (jax.jit(f).lower(...).as_text(dialect=\"hlo\")); '-' reads standard input")
      ->required();
  cmd->add_option("--mesh", opt->mesh, "device mesh: sizes '2x4' (axes x, y, ...) or named 'data=2,model=4'")->required();
  cmd->add_option("--memory-limit", opt->memory_limit,
                  "bytes per device the values held may take at any time: 16GiB, 512MiB, 8GB, 1000000 (default: no limit)");
  cmd->add_option("--machine", opt->machine,
                  "machine preset pricing compute and links: h100-8-nvlink, h100-2x8-ib, tpu-v5e-256, cpu-host-8 (default)")
      ->capture_default_str();
  cmd->add_option("--time-limit", opt->time_limit, "wall-clock seconds for the whole command, reading included (default 10; 0: the first answer; inf: no limit)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "threads to search with (default: one per CPU this process may use)")
      ->check(CLI::Range(0u, 1024u));
  cmd->add_option("--seed", opt->seed, "seed of the random choices (default 1)");
  cmd->add_option("--max-strategies", opt->max_strategies, "strategies kept per instruction, the cheapest (default 64)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--output", opt->output, "write the module with a sharding= attribute on every entry instruction");
  cmd->add_flag("--json", opt->json, "print one JSON object");
  cmd->footer("Exit status: 0 shardings within the limit, 1 none fits (the least-memory answer is printed), 3 bad input.");
  cmd->callback([opt, &ctx] { ctx.exit_code = run_autoshard(*opt); });
}

}  // namespace xlamem::cli
