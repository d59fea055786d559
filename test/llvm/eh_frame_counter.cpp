// SPDX-License-Identifier: Apache-2.0
// Counts the process's EH-frame registrations: this test executable defines libgcc's
// `__register_frame` and `__deregister_frame`, so LLVM's calls (through its PLT) land here first;
// each counts, then forwards to the unwinder's own (the next definition, found with dlsym).
// libgcc 13 and later drop a duplicate registration and abort on the second deregistration of
// the same section; libgcc 12 (Debian 12's, the only one its packages offer) tolerates both, so
// the sections registered now are tracked here to show what libgcc 13 would refuse.
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <set>

#include "eh_frame_counter.hpp"

namespace {

std::atomic<long> registered{0};
std::atomic<long> deregistered{0};
std::mutex sections_mutex;
std::set<void*> sections;  // registered and not yet deregistered
long duplicates = 0;       // registrations of a section registered already
long unmatched = 0;        // deregistrations of a section not registered

using frame_function = void (*)(void*);

frame_function next_definition(const char* name) {
  return reinterpret_cast<frame_function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

namespace xlamem::test {

eh_frame_counts eh_frame_registrations() {
  const std::lock_guard lock(sections_mutex);
  return {registered.load(), deregistered.load(), duplicates, unmatched};
}

}  // namespace xlamem::test

extern "C" {

void __register_frame(void* section) {
  static const frame_function next = next_definition("__register_frame");
  ++registered;
  {
    const std::lock_guard lock(sections_mutex);
    if (!sections.insert(section).second) ++duplicates;
  }
  if (next != nullptr) next(section);
}

void __deregister_frame(void* section) {
  static const frame_function next = next_definition("__deregister_frame");
  ++deregistered;
  {
    const std::lock_guard lock(sections_mutex);
    if (sections.erase(section) == 0) ++unmatched;
  }
  if (next != nullptr) next(section);
}

}  // extern "C"
