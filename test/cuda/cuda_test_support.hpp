// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test files of test/cuda/ (inline, so a file that uses none of them
// compiles without warnings): a fresh fake driver, a log policy that records every event, a
// child-process runner for XLAMEM_MISUSE, and the GPU suites' driver and round trip.
#pragma once

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/driver.hpp"

namespace xlamem::test {

/// A fresh fake GPU (every observation and setting reset) and a driver over it.
inline std::shared_ptr<const cuda_driver> fake_driver() {
  fake_gpu::reset();
  auto d = cuda_driver::from_api(fake_api(), "fake driver");
  REQUIRE(d.has_value());
  return *d;
}

/// Whether `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// `p` as the headers' `to_string` functions print it ("%p").
inline std::string pointer_text(const void* p) {
  char s[32];
  std::snprintf(s, sizeof s, "%p", p);
  return s;
}

/// Records every event a resource logs, field by field.
struct recording_log {
  std::vector<cuda_allocation_event_kind> kinds;
  std::vector<std::string> resources;
  std::vector<std::size_t> sizes;
  std::vector<std::size_t> reserved;
  std::vector<const void*> pointers;
  std::vector<int> ordinals;
  std::vector<std::string> messages;
  void record(const cuda_allocation_event& e) noexcept {
    kinds.push_back(e.kind);
    resources.emplace_back(e.resource);
    sizes.push_back(e.size);
    reserved.push_back(e.reserved);
    pointers.push_back(e.pointer);
    ordinals.push_back(e.device_ordinal);
    messages.emplace_back(e.message);
  }
};
static_assert(cuda_allocation_log<recording_log>);

/// A `callback_allocation_log` function that counts events in an `int`.
inline void count_events(void* context, const cuda_allocation_event&) {
  ++*static_cast<int*>(context);
}

/// How a child process ended, and what it wrote to stderr.
struct child_outcome {
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  std::string stderr_text;
  [[nodiscard]] bool aborted() const { return signal == SIGABRT; }
};

/// Runs `f` in a forked child with stderr captured (no core file), so that a call which ends
/// in XLAMEM_MISUSE (an abort) can be checked. The child exits 0 when `f` returns. Only for
/// the fake driver: a child must not use a real CUDA driver its parent initialised.
template <class F>
child_outcome run_in_child(F f) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit no_core{0, 0};
    (void)::setrlimit(RLIMIT_CORE, &no_core);
    std::signal(SIGABRT, SIG_DFL);  // doctest's crash handler would report and carry on
    ::close(pipe_fds[0]);
    (void)::dup2(pipe_fds[1], STDERR_FILENO);
    ::alarm(30);  // a hang fails the test instead of blocking it
    f();
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  child_outcome out;
  char buffer[512];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    out.stderr_text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  out.exited = WIFEXITED(status);
  if (out.exited) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

/// The GPU suites' driver: the real one (required), or the fake one with 3 GiB of "device
/// memory" under --fake-gpu.
inline std::shared_ptr<const cuda_driver> real_driver() {
  if (fake_gpu_mode()) {
    auto f = fake_driver();
    fake_gpu::get().memory_limit = std::size_t(3) << 30;
    return f;
  }
  auto d = cuda_driver::load();
  REQUIRE_MESSAGE(d.has_value(), (d.has_value() ? std::string() : d.error().to_string()));
  return *d;
}

/// Copies host→device→host through the driver and checks the bytes match.
inline void check_round_trip(const cuda_primary_context& ctx, void* device, std::size_t bytes) {
  const cuda_driver& d = ctx.driver();
  std::vector<unsigned char> in(bytes), out(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i)
    in[i] = static_cast<unsigned char>((i * 131u + 7u) & 0xFFu);
  auto scope = ctx.make_current();
  REQUIRE(scope.has_value());
  REQUIRE(
      d.check(d.api().memcpy_htod(detail::to_deviceptr(device), in.data(), bytes), "cuMemcpyHtoD")
          .has_value());
  REQUIRE(
      d.check(d.api().memcpy_dtoh(out.data(), detail::to_deviceptr(device), bytes), "cuMemcpyDtoH")
          .has_value());
  CHECK(in == out);
}

}  // namespace xlamem::test
