// SPDX-License-Identifier: Apache-2.0
// The subcommands of the xlamem tool. Each lives in its own file and registers itself on the
// app; `context` carries the exit status a subcommand decides on. What every subcommand shares
// is here, so that they look alike: one error format, `-` for standard input, one solver
// vocabulary, one JSON style (snake_case keys, bytes as integers, one top-level object with
// "command" and "file").
#pragma once

#include <array>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"

namespace xlamem::cli {

/// Shared state of one invocation of the tool.
struct context {
  int exit_code = 0;
};

/// Exit status for bad input (unreadable or malformed files, impossible options).
inline constexpr int exit_bad_input = 3;
/// Exit status for a usage error (unknown command or option).
inline constexpr int exit_usage = 2;

/// Prints `xlamem CMD: error: MESSAGE` (MESSAGE names FILE:LINE:COL where the input has a
/// place) and returns the bad-input exit status.
inline int fail(std::string_view command, std::string_view message) {
  fmt::print(stderr, "xlamem {}: error: {}\n", command, message);
  return exit_bad_input;
}
/// The same for a library error: its message (which names the place), without the code.
inline int fail(std::string_view command, const error& e) { return fail(command, e.message()); }

/// The text of `file`, or of standard input for `-`, through the library's bounded reader
/// (regular files only, at most `input_limits::max_bytes`). Errors name the file.
inline result<std::string> read_input(const std::string& file) {
  return file == "-" ? read_standard_input() : read_input_file(file);
}

/// How a file is named in messages: `<stdin>` for `-`.
inline std::string display_name(const std::string& file) { return file == "-" ? "<stdin>" : file; }

/// The packers `plan` and `pack` share, by one set of names.
enum class solver_id { search, heuristic, xla, first_fit, skyline };

struct solver_name {
  solver_id id;
  std::string_view name;
  std::string_view aliases;  ///< older spellings still accepted, comma-separated
  std::string_view what;
};

inline constexpr std::array<solver_name, 5> solver_names{{
    {solver_id::search, "search", "auto,best", "exact/anytime search within --time-limit (the default)"},
    {solver_id::heuristic, "heuristic", "portfolio", "the best of the fast heuristics"},
    {solver_id::xla, "xla", "xla-best-fit", "XLA's best fit (its heap simulator's default)"},
    {solver_id::first_fit, "first-fit", "", "first fit, largest buffer first"},
    {solver_id::skyline, "skyline", "", "skyline fit"},
}};

inline std::string_view name_of(solver_id id) {
  for (const auto& s : solver_names) {
    if (s.id == id) return s.name;
  }
  return "search";
}

/// The solver named `s` (a name or an alias), or nullopt.
inline std::optional<solver_id> parse_solver(std::string_view s) {
  for (const auto& e : solver_names) {
    if (e.name == s) return e.id;
    std::string_view rest = e.aliases;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      if (rest.substr(0, comma) == s) return e.id;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return std::nullopt;
}

/// "unknown solver 'x' (expected search, heuristic, xla, first-fit or skyline)".
inline std::string unknown_solver_message(std::string_view s) {
  std::string names;
  for (std::size_t i = 0; i < solver_names.size(); ++i) {
    names += i == 0 ? "" : i + 1 == solver_names.size() ? " or " : ", ";
    names += solver_names[i].name;
  }
  return fmt::format("unknown solver '{}' (expected {})", s, names);
}

/// The --solver help text: every name, what it is, its aliases.
inline std::string solver_help() {
  std::string s = "packer:";
  for (const auto& e : solver_names) {
    s += fmt::format(" {} ({}{}{});", e.name, e.what, e.aliases.empty() ? "" : "; also ", e.aliases);
  }
  s.pop_back();
  return s;
}

/// The --backend check: a clear message for anything but cpu or gpu.
inline CLI::Validator backend_check() {
  return CLI::Validator(
      [](const std::string& s) -> std::string {
        if (s == "cpu" || s == "gpu") return {};
        return "unknown backend '" + s + "' (expected cpu, XLA:CPU's rules, or gpu, XLA:GPU's on NVIDIA)";
      },
      "cpu|gpu");
}

/// Checks a --time-limit value: a finite number of seconds, not negative.
inline std::optional<std::string> time_limit_problem(double seconds) {
  if (std::isnan(seconds)) return std::string("--time-limit nan is not a number of seconds");
  if (std::isinf(seconds)) return std::string("--time-limit must be a finite number of seconds, not infinite");
  if (seconds < 0) return fmt::format("--time-limit {} is negative; give 0 or more seconds", seconds);
  return std::nullopt;
}

void add_diff_command(CLI::App& app, context& ctx);       // diff.cpp: two compilations
void add_pack_command(CLI::App& app, context& ctx);       // pack.cpp: buffer packing
void add_propagate_command(CLI::App& app, context& ctx);  // propagate.cpp: memory spaces
void add_plan_command(CLI::App& app, context& ctx);       // plan.cpp: buffer assignment
void add_reduce_command(CLI::App& app, context& ctx);     // reduce.cpp: memory terms
void add_shard_command(CLI::App& app, context& ctx);      // shard.cpp: sharding strategies

}  // namespace xlamem::cli
