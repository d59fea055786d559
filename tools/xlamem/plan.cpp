// SPDX-License-Identifier: Apache-2.0
// `xlamem plan` (issue 6): not registered until its implementation lands.
#include "commands.hpp"

namespace xlamem::cli {

void add_plan_command(CLI::App& /*app*/, context& /*ctx*/) {}

}  // namespace xlamem::cli
