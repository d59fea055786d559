// SPDX-License-Identifier: Apache-2.0
// The tool's commands on one CLI11 app, parsed and run: command_line.hpp.
#include "command_line.hpp"

#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>

#include <fmt/format.h>

#include "commands.hpp"
#include "xlamem/output_file.hpp"
#include "xlamem/version.hpp"

xlamem::result<void> xlamem::cli::write_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  return xlamem::write_output_file(path, text);
}

namespace xlamem::cli {
namespace {

/// Help and version through stdout and stderr as C streams, as all other output goes, rather
/// than CLI11's std::cout, which a caller that redirects `stdout` would not catch.
int print_exit(const CLI::App& app, const CLI::Error& e) {
  std::ostringstream out, err;
  const int status = app.exit(e, out, err);
  fmt::print("{}", out.str());
  fmt::print(stderr, "{}", err.str());
  return status;
}

/// A negative number for an unsigned option (a count, a seed) is bad input: CLI11 converts with
/// strtoull, which would take -1 as 2^64 - 1 (`--top -1` listing everything, a seed nobody gave).
void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator not_negative(
      [](const std::string& s) -> std::string {
        const auto first = s.find_first_not_of(" \t");
        return first != std::string::npos && s[first] == '-' ? s + " is negative; give 0 or more" : std::string();
      },
      "");  // no description: the help shows the type alone, as before
  for (auto* command : app.get_subcommands({})) {
    for (auto* option : command->get_options()) {
      if (option->get_type_name().starts_with("UINT")) option->check(not_negative);
    }
  }
}

/// The command named on the line, or "" for none; an unknown one is a usage error.
int check_command(const CLI::App& app, int argc, const char* const* argv, std::string& command) {
  if (argc <= 1 || argv[1][0] == '-') return 0;
  command = argv[1];
  bool known = false;
  std::string names;
  for (const auto* sub : app.get_subcommands({})) {
    known = known || sub->get_name() == command;
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (known) return 0;
  fmt::print(stderr, "xlamem: error: unknown command '{}' (commands: {}; 'xlamem --help' says more)\n", command, names);
  return exit_usage;
}

/// Parses and runs; the exit status of a parse that ends the run (help, a bad option), none
/// when a command ran (or none was named).
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv, const std::string& who) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return print_exit(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_exit(app, e);
  } catch (const CLI::CallForVersion& e) {
    return print_exit(app, e);
  } catch (const CLI::ValidationError& e) {  // a value out of its allowed set: bad input
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return exit_bad_input;
  } catch (const CLI::ConversionError& e) {
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return exit_bad_input;
  } catch (const CLI::ParseError& e) {  // unknown options, missing arguments
    fmt::print(stderr, "{}: error: {} (see '{} --help')\n", who, e.what(), who);
    return exit_usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return exit_bad_input;
  }
  return std::nullopt;
}

}  // namespace

static_assert(std::is_same_v<cancellation_flag, std::atomic<bool>>, "command_line.hpp names the flag's type");

int run_command_line(int argc, const char* const* argv, const std::atomic<bool>* cancel) {
  CLI::App app{
      "xlamem: memory planning and diagnosis for ML programs (the memory report of a compiled "
      "program and the diff of two, buffer packing, memory-space propagation, memory-term reduction, sharding strategies under a "
      "memory limit)",
      "xlamem"};
  app.set_version_flag("--version", std::string("xlamem ") + xlamem::version_string);
  app.require_subcommand(0, 1);
  app.footer(
      "Run 'xlamem COMMAND --help' for the options of a command. Exit status: 0 success, 1 a "
      "capacity proven infeasible (pack) or no answer within the memory limit (shard, autoshard), 2 usage error, 3 bad input; errors read "
      "'xlamem COMMAND: error: FILE:LINE:COL: message'.");

  context ctx;
  ctx.cancel = cancel;
  add_autoshard_command(app, ctx);
  add_diff_command(app, ctx);
  add_pack_command(app, ctx);
  add_propagate_command(app, ctx);
  add_plan_command(app, ctx);
  add_reduce_command(app, ctx);
  add_shard_command(app, ctx);
  refuse_negative_unsigned(app);

  std::string command;
  if (const int status = check_command(app, argc, argv, command); status != 0) return status;
  const std::string who = command.empty() ? "xlamem" : "xlamem " + command;
  if (const auto status = parse(app, argc, argv, who)) return *status;
  if (app.get_subcommands().empty()) fmt::print("{}", app.help());
  // Output lost on a full disk or a closed pipe is a failure, not a success.
  if (auto flushed = xlamem::flush_standard_output(); !flushed) {
    fmt::print(stderr, "{}: error: {}\n", who, flushed.error().message());
    return exit_bad_input;
  }
  return app.get_subcommands().empty() ? 0 : ctx.exit_code;
}

}  // namespace xlamem::cli
