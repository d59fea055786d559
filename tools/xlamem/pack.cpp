// SPDX-License-Identifier: Apache-2.0
// `xlamem pack` (issue 4): not registered until its implementation lands.
#include "commands.hpp"

namespace xlamem::cli {

void add_pack_command(CLI::App& /*app*/, context& /*ctx*/) {}

}  // namespace xlamem::cli
