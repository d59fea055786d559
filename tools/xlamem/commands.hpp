// SPDX-License-Identifier: Apache-2.0
// The subcommands of the xlamem tool. Each lives in its own file and registers itself on the
// app; `context` carries the exit status a subcommand decides on.
#pragma once

#include <CLI/CLI.hpp>

namespace xlamem::cli {

/// Shared state of one invocation of the tool.
struct context {
  int exit_code = 0;
};

/// Exit status for bad input (unreadable or malformed files, impossible options).
inline constexpr int exit_bad_input = 3;

void add_pack_command(CLI::App& app, context& ctx);       // pack.cpp: buffer packing
void add_propagate_command(CLI::App& app, context& ctx);  // propagate.cpp: memory spaces
void add_plan_command(CLI::App& app, context& ctx);       // plan.cpp: buffer assignment
void add_reduce_command(CLI::App& app, context& ctx);     // reduce.cpp: memory terms

}  // namespace xlamem::cli
