// SPDX-License-Identifier: Apache-2.0
// `xlamem propagate FILE.hlo`: memory-space propagation (XLA's MemorySpacePropagation) on an HLO
// text module; prints the module after propagation as HLO text, or with --json one object per
// instruction output leaf (computation, instruction, index, memory_space, split_config) under
// "leaves".
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "commands.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace xlamem::cli {

namespace {

struct propagate_options {
  std::string file;
  bool json = false;
  bool short_form = false;
  std::string computation;
};

/// What --json prints after the command.
struct propagate_result {
  std::string file;
  bool changed = false;
  std::vector<hlo::memory_space_leaf> leaves;
};
template <class F>
void visit_fields(const propagate_result& r, F&& f) {
  f("file", r.file);
  f("changed", r.changed);
  f("leaves", r.leaves);
}

int run_propagate(const propagate_options& o) {
  auto text = read_input(o.file);
  if (!text) return fail("propagate", text.error());
  auto m = hlo::parse_module(*text, display_name(o.file));
  if (!m) return fail("propagate", m.error());
  result<bool> changed = false;
  if (o.computation.empty()) {
    changed = propagate_memory_spaces(*m);
  } else {
    const auto c = m->find_computation(o.computation);
    if (!c) return fail("propagate", fmt::format("{}: no computation named '{}'", display_name(o.file), o.computation));
    changed = propagate_memory_spaces_from(*m, *c);
  }
  if (!changed) return fail("propagate", changed.error());
  if (o.json) {
    fmt::print("{}\n", json_document("propagate", propagate_result{display_name(o.file), *changed, memory_space_leaves(*m)}));
  } else {
    fmt::print("{}", hlo::to_string(*m, o.short_form ? hlo::short_form() : hlo::print_options{}));
  }
  fmt::print(stderr, "xlamem propagate: {}\n", *changed ? "changed" : "unchanged");
  return 0;
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
                "print one JSON object: changed, and leaves (one per instruction output leaf: computation, "
                "instruction, index, memory_space, split_config)");
  cmd->add_flag("--short", o->short_form, "print HLO in the short form (no %, signatures or operand shapes)");
  cmd->add_option("--computation", o->computation,
                  "propagate only from this computation's own parameters and root (XLA RunOnComputation)");
  cmd->footer("Exit status: 0 on success, 3 for unreadable or malformed input. 'changed' or "
              "'unchanged' is reported on standard error.");
  cmd->callback([o, &ctx] { ctx.exit_code = run_propagate(*o); });
}

}  // namespace xlamem::cli
