// SPDX-License-Identifier: Apache-2.0
// The front door of the xlamem tool: its commands, their options and defaults, help, output
// and exit status, in one function. The executable (main.cpp) calls it with the process's
// arguments; the Python package calls it too (`python -m xlamem`, python/src/command_line.cpp),
// so that both front ends are one program and cannot drift apart.
#pragma once

#include <atomic>

namespace xlamem::cli {

/// Runs `xlamem ARGS...` (`argv[0]` is the program's name, then the command and its options),
/// writing to stdout and stderr and reading stdin for `-`; returns the exit status. Once
/// `cancel` (when given: the library's `cancellation_flag`, deadline.hpp, which this
/// light header does not include) is set by another thread, the solvers of `plan`, `diff` and
/// `pack` stop with what they have.
int run_command_line(int argc, const char* const* argv, const std::atomic<bool>* cancel = nullptr);

}  // namespace xlamem::cli
