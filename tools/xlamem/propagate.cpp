// SPDX-License-Identifier: Apache-2.0
// `xlamem propagate` (issue 5): not registered until its implementation lands.
#include "commands.hpp"

namespace xlamem::cli {

void add_propagate_command(CLI::App& /*app*/, context& /*ctx*/) {}

}  // namespace xlamem::cli
