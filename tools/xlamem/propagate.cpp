// SPDX-License-Identifier: Apache-2.0
// `xlamem propagate FILE.hlo`: memory-space propagation (XLA's MemorySpacePropagation) on an HLO
// text module; prints the module after propagation as HLO text, or with --json one object per
// instruction output leaf (computation, instruction, index, memory_space, split_config).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace xlamem::cli {

namespace {

struct propagate_options {
  std::string file;
  bool json = false;
  bool short_form = false;
  std::string computation;
};

result<std::string> read_input(const std::string& file) {
  if (file != "-") return hlo::read_text_file(file);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buf, 1, sizeof buf, stdin);
    text.append(buf, got);
    if (got < sizeof buf) break;
  }
  return text;
}

nlohmann::ordered_json leaves_json(const hlo::module& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& c : m.computations) {
    for (const auto id : c.instructions) {
      const auto& in = m[id];
      hlo::for_each_subshape(in.shape, [&](const shape_index& index, const hlo::shape& s) {
        if (s.is_tuple()) return;
        nlohmann::ordered_json leaf;
        leaf["computation"] = c.name;
        leaf["instruction"] = in.name;
        leaf["index"] = index;
        leaf["memory_space"] = s.has_layout ? s.layout.memory_space : 0;
        if (s.has_layout && !s.layout.split_configs.empty()) {
          const auto& sc = s.layout.split_configs.front();
          leaf["split_config"] = {{"dimension", sc.dimension}, {"indices", sc.indices}};
        } else {
          leaf["split_config"] = nullptr;
        }
        out.push_back(std::move(leaf));
      });
    }
  }
  return out;
}

void run_propagate(const propagate_options& o, context& ctx) {
  auto text = read_input(o.file);
  if (!text) {
    fmt::print(stderr, "xlamem propagate: {}\n", text.error().to_string());
    ctx.exit_code = exit_bad_input;
    return;
  }
  auto m = hlo::parse_module(*text, o.file == "-" ? std::string_view("<stdin>") : std::string_view(o.file));
  if (!m) {
    fmt::print(stderr, "xlamem propagate: {}\n", m.error().to_string());
    ctx.exit_code = exit_bad_input;
    return;
  }
  result<bool> changed = false;
  if (o.computation.empty()) {
    changed = propagate_memory_spaces(*m);
  } else {
    const auto c = m->find_computation(o.computation);
    if (!c) {
      fmt::print(stderr, "xlamem propagate: no computation named '{}' in {}\n", o.computation, o.file);
      ctx.exit_code = exit_bad_input;
      return;
    }
    auto analysis = dataflow_analysis<hlo::module>::run(*m, dataflow_options{true});
    if (!analysis) {
      changed = analysis.error();
    } else {
      changed = propagate_memory_spaces(*m, *analysis, *c);
    }
  }
  if (!changed) {
    fmt::print(stderr, "xlamem propagate: {}\n", changed.error().to_string());
    ctx.exit_code = exit_bad_input;
    return;
  }
  if (o.json) {
    fmt::print("{}\n", leaves_json(*m).dump(1));
  } else {
    const std::string out = hlo::to_string(*m, o.short_form ? hlo::short_form() : hlo::print_options{});
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  fmt::print(stderr, "xlamem propagate: {}\n", *changed ? "changed" : "unchanged");
  ctx.exit_code = 0;
}

}  // namespace

void add_propagate_command(CLI::App& app, context& ctx) {
  auto o = std::make_shared<propagate_options>();
  CLI::App* cmd = app.add_subcommand(
      "propagate",
      "Memory-space propagation (XLA MemorySpacePropagation): copy memory space S(n) and split "
      "config SC(d:i) from the caller side of every fusion into the fused computations, then "
      "print the module");
  cmd->add_option("FILE", o->file, "HLO text module ('-' reads standard input)")->required();
  cmd->add_flag("--json", o->json,
                "print a JSON array with one object per instruction output leaf: computation, "
                "instruction, index, memory_space, split_config");
  cmd->add_flag("--short", o->short_form, "print HLO in the short form (no %, signatures or operand shapes)");
  cmd->add_option("--computation", o->computation,
                  "propagate only from this computation's own parameters and root (XLA RunOnComputation)");
  cmd->footer("Exit status: 0 on success, 3 for unreadable or malformed input. 'changed' or "
              "'unchanged' is reported on standard error.");
  cmd->callback([o, &ctx] { run_propagate(*o, ctx); });
}

}  // namespace xlamem::cli
