// SPDX-License-Identifier: Apache-2.0
// `xlamem reduce` (issue 7): not registered until its implementation lands.
#include "commands.hpp"

namespace xlamem::cli {

void add_reduce_command(CLI::App& /*app*/, context& /*ctx*/) {}

}  // namespace xlamem::cli
