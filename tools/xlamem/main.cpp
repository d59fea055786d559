// SPDX-License-Identifier: Apache-2.0
// xlamem: the command-line front end of the library.
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

namespace {
// One command is one job, and memory goes back to the system at exit. Planning a large
// module frees its analyses (hundreds of MB at 10^6 instructions) just before the report
// allocates as much again; glibc returns each block of 32 MB and more to the system when it is
// freed, so the report faulted every page in afresh: 130,000 page faults, a seventh of the CPU
// time of `plan` at 10^6 instructions. Large blocks stay in the heap for reuse instead.
void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  constexpr int one_gib = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, one_gib);
  mallopt(M_TRIM_THRESHOLD, one_gib);
#endif
}
}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  CLI::App app{
      "xlamem: memory planning and diagnosis for ML programs (the memory report of a compiled "
      "program and the diff of two, buffer packing, memory-space propagation, memory-term reduction, sharding strategies under a "
      "memory limit)",
      "xlamem"};
  app.set_version_flag("--version", std::string("xlamem ") + xlamem::version_string);
  app.require_subcommand(0, 1);
  app.footer(
      "Run 'xlamem COMMAND --help' for the options of a command. Exit status: 0 success, 1 a "
      "capacity proven infeasible (pack) or no answer within the memory limit (shard), 2 usage error, 3 bad input; errors read "
      "'xlamem COMMAND: error: FILE:LINE:COL: message'.");

  xlamem::cli::context ctx;
  xlamem::cli::add_diff_command(app, ctx);
  xlamem::cli::add_pack_command(app, ctx);
  xlamem::cli::add_propagate_command(app, ctx);
  xlamem::cli::add_plan_command(app, ctx);
  xlamem::cli::add_reduce_command(app, ctx);
  xlamem::cli::add_shard_command(app, ctx);

  // The command named on the line, for messages; an unknown one is a usage error that lists them.
  std::string command;
  if (argc > 1 && argv[1][0] != '-') {
    command = argv[1];
    bool known = false;
    std::string names;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == command;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "xlamem: error: unknown command '{}' (commands: {}; 'xlamem --help' says more)\n", command,
                 names);
      return xlamem::cli::exit_usage;
    }
  }
  const std::string who = command.empty() ? "xlamem" : "xlamem " + command;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {  // a value out of its allowed set: bad input
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return xlamem::cli::exit_bad_input;
  } catch (const CLI::ConversionError& e) {
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return xlamem::cli::exit_bad_input;
  } catch (const CLI::ParseError& e) {  // unknown options, missing arguments
    fmt::print(stderr, "{}: error: {} (see '{} --help')\n", who, e.what(), who);
    return xlamem::cli::exit_usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", who, e.what());
    return xlamem::cli::exit_bad_input;
  }
  if (app.get_subcommands().empty()) fmt::print("{}", app.help());
  // Output lost on a full disk or a closed pipe is a failure, not a success.
  if (auto flushed = xlamem::flush_standard_output(); !flushed) {
    fmt::print(stderr, "{}: error: {}\n", who, flushed.error().message());
    return xlamem::cli::exit_bad_input;
  }
  return app.get_subcommands().empty() ? 0 : ctx.exit_code;
}
