// SPDX-License-Identifier: Apache-2.0
// The subcommands of the xlamem tool. Each lives in its own file and registers itself on the
// app; `context` carries the exit status a subcommand decides on. The tool parses arguments,
// reads input, calls the library's front door (packing/solvers.hpp, io/report/memory_report_input.hpp,
// report/diff.hpp, ...) and writes what it returns with the writers of io/. What every
// subcommand shares is here, so that they look alike: one error format, `-` for standard
// input, the library's solver and backend names, one JSON style (io/codec/json.hpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "xlamem/error.hpp"
#include "xlamem/hlo/backend.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/packing/solvers.hpp"

namespace xlamem::cli {

/// Shared state of one invocation of the tool.
struct context {
  int exit_code = 0;
  /// Set by another thread (the Python package's, on Ctrl-C): the solvers stop with what they
  /// have. Null: never (the executable, where Ctrl-C ends the process).
  const cancellation_flag* cancel = nullptr;
};

/// Exit status for bad input (unreadable or malformed files, impossible options).
inline constexpr int exit_bad_input = 3;
/// Exit status for a usage error (unknown command or option).
inline constexpr int exit_usage = 2;

/// Prints `xlamem CMD: error: MESSAGE` (MESSAGE names FILE:LINE:COL where the input has a
/// place) and returns the bad-input exit status.
inline int fail(std::string_view command, std::string_view message) {
  // Messages quote file names and input text: never raw to the terminal.
  fmt::print(stderr, "xlamem {}: error: {}\n", command, terminal_text(message));
  return exit_bad_input;
}
/// The same for a library error: its message (which names the place), without the code.
inline int fail(std::string_view command, const error& e) { return fail(command, e.message()); }

/// The text of `file`, or of standard input for `-`, through the library's bounded reader.
inline result<std::string> read_input(const std::string& file) {
  return file == "-" ? read_standard_input() : read_input_file(file);
}

/// How a file is named in messages: `<stdin>` for `-`.
inline std::string display_name(const std::string& file) { return file == "-" ? "<stdin>" : file; }

/// Writes `text` to `path` (creating its folder); false when it cannot (command_line.cpp).
result<void> write_file(const std::string& path, const std::string& text);

/// The --solver help text: every solver of the library's table, what it is, its aliases.
inline std::string solver_help() { return "packer: " + solvers_help(); }

/// The --backend check: a clear message for a name that is not one of the library's presets.
inline CLI::Validator backend_check() {
  return CLI::Validator(
      [](const std::string& s) -> std::string {
        auto b = hlo::parse_backend(s);
        return b ? std::string() : b.error().message();
      },
      "cpu|gpu");
}

/// Checks a --time-limit value: a finite number of seconds, not negative.
inline std::optional<std::string> time_limit_problem(double seconds) {
  if (std::isnan(seconds)) return std::string("--time-limit nan is not a number of seconds (0: at once, inf: no limit)");
  if (seconds < 0) return fmt::format("--time-limit {} is negative; give 0 or more seconds (0: at once, inf: no limit)", seconds);
  return std::nullopt;
}

/// The memory report of FILE (a module, XLA's dump, a dump folder, or `-`) as `r` asks.
inline result<report::memory_report> load_report(const std::string& file, const report_request& r) {
  if (auto problem = time_limit_problem(r.time_limit)) return error(errc::invalid_argument, *problem);
  if (file != "-") return read_memory_report(file, r);
  auto text = read_standard_input();
  if (!text) return text.error();
  return report_from_text(*text, "<stdin>", r);
}

void add_autoshard_command(CLI::App& app, context& ctx);  // autoshard.cpp: shardings of a module
void add_diff_command(CLI::App& app, context& ctx);       // diff.cpp: two compilations
void add_pack_command(CLI::App& app, context& ctx);       // pack.cpp: buffer packing
void add_propagate_command(CLI::App& app, context& ctx);  // propagate.cpp: memory spaces
void add_plan_command(CLI::App& app, context& ctx);       // plan.cpp: buffer assignment
void add_reduce_command(CLI::App& app, context& ctx);     // reduce.cpp: memory terms
void add_shard_command(CLI::App& app, context& ctx);      // shard.cpp: sharding strategies

}  // namespace xlamem::cli
