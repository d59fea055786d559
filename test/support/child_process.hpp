// SPDX-License-Identifier: Apache-2.0
// A test body run in a child process with its standard error in a pipe: for what ends a
// process (an abort from a misuse hook, a leak report at exit) and what it printed on the way.
#pragma once

#include <doctest/doctest.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <string>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xlamem::test {

/// How a child ended (`waitpid`'s status) and what it printed on standard error.
struct child_run {
  int status = 0;
  std::string err;
};

/// Runs `body` in a forked child that exits 0 after it (an abort stays an abort: the test
/// runner's crash report is switched off there).
template <class F>
child_run run_in_child(F body) {
  child_run out;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    std::signal(SIGABRT, SIG_DFL);
    body();
    std::fflush(stderr);
    ::_exit(0);
  }
  ::close(fds[1]);
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.err.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  REQUIRE(::waitpid(pid, &out.status, 0) == pid);
  return out;
}

}  // namespace xlamem::test
