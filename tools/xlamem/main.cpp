// SPDX-License-Identifier: Apache-2.0
// xlamem: the command-line front end of the library.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.hpp"
#include "xlamem/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "xlamem: memory planning for ML programs (buffer packing, buffer assignment, memory "
      "statistics, memory-space propagation, memory-term reduction)",
      "xlamem"};
  app.set_version_flag("--version", std::string("xlamem ") + xlamem::version_string);
  app.require_subcommand(0, 1);
  app.footer("Run 'xlamem COMMAND --help' for the options of a command.");

  xlamem::cli::context ctx;
  xlamem::cli::add_pack_command(app, ctx);
  xlamem::cli::add_propagate_command(app, ctx);
  xlamem::cli::add_plan_command(app, ctx);
  xlamem::cli::add_reduce_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : xlamem::cli::exit_bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xlamem: error: %s\n", e.what());
    return xlamem::cli::exit_bad_input;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  return ctx.exit_code;
}
