// SPDX-License-Identifier: Apache-2.0
// The EH-frame registrations this process made so far (test/llvm/eh_frame_counter.cpp).
#pragma once

namespace xlamem::test {

struct eh_frame_counts {
  long registered = 0;
  long deregistered = 0;
  long duplicates = 0;  ///< a section registered while registered already (libgcc 13 drops it)
  long unmatched = 0;   ///< a section deregistered while not registered (libgcc 13 aborts)
};

eh_frame_counts eh_frame_registrations();

}  // namespace xlamem::test
