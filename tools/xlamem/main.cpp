// SPDX-License-Identifier: Apache-2.0
// xlamem: the command-line front end of the library (its commands: command_line.hpp).
#include <cstdlib>  // before the test of __GLIBC__, which a C library header defines

#include "command_line.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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
  return xlamem::cli::run_command_line(argc, argv);
}
