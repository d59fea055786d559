// SPDX-License-Identifier: Apache-2.0
// Running the library on a worker thread while the calling thread, without the GIL, watches
// for Ctrl-C: for every call of the extension that may take long (xlamem_module.cpp,
// command_line.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include <chrono>
#include <future>

#include "xlamem/deadline.hpp"

namespace xlamem::python {

/// How often the calling thread looks for a Python signal while the library works: a Ctrl-C
/// is seen within this, and the solvers stop within one check of their flag after it.
inline constexpr auto signal_poll = std::chrono::milliseconds(20);

/// Runs `work(flag)` on a worker thread while this one, without the GIL, waits for it and
/// every `signal_poll` runs Python's signal handlers (PyErr_CheckSignals, with the GIL). When
/// one raises (Ctrl-C: KeyboardInterrupt), the flag is set, the worker is waited for (the
/// solvers read the flag with their clock and return what they have) and its answer dropped,
/// and the handler's exception is raised. Off the main thread Python runs no handlers: the
/// call then simply waits. Called with the GIL held; `work` must not touch Python without
/// taking the GIL itself.
template <class Work>
auto interruptible(Work&& work) {
  cancellation_flag cancel{false};
  auto task = std::async(std::launch::async, [&] { return work(cancel); });
  while (true) {
    bool done = false;
    {
      nanobind::gil_scoped_release unlocked;
      done = task.wait_for(signal_poll) == std::future_status::ready;
    }
    if (done) return task.get();
    if (PyErr_CheckSignals() != 0) {
      cancel.store(true, std::memory_order_relaxed);
      {
        nanobind::gil_scoped_release unlocked;
        task.wait();
      }
      throw nanobind::python_error();  // the handler's exception, still set
    }
  }
}

}  // namespace xlamem::python
