// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/output_file.hpp: a whole file written and replaced, and every failure
// (missing folder, a folder as the target, a full disk, a lost standard output) named as an error.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "xlamem/output_file.hpp"

TEST_SUITE("core/output_file") {
  namespace fs = std::filesystem;
  using namespace xlamem;

  std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  fs::path scratch(const std::string& name) {
    return fs::temp_directory_path() / ("xlamem-output-" + std::to_string(::getpid()) + "-" + name);
  }

  TEST_CASE("system_reason is the system's wording of an errno value") {
    CHECK(system_reason(ENOSPC) == "No space left on device");
    CHECK(system_reason(ENOENT) == "No such file or directory");
    CHECK(system_reason(EACCES) == "Permission denied");
  }

  TEST_CASE("write_output_file writes every byte, and replaces what was there") {
    const fs::path p = scratch("replace.txt");
    std::string text;
    for (int k = 0; k < 300'000; ++k) text += static_cast<char>(k % 251);  // binary, several buffers
    REQUIRE(write_output_file(p.string(), text).has_value());
    CHECK(slurp(p) == text);
    REQUIRE(write_output_file(p.string(), "short").has_value());  // truncated, not overlaid
    CHECK(slurp(p) == "short");
    REQUIRE(write_output_file(p.string(), "").has_value());
    CHECK(fs::exists(p));
    CHECK(fs::file_size(p) == 0);
    fs::remove(p);
  }

  TEST_CASE("a missing folder or a folder as the target: unavailable, naming the path and reason") {
    const fs::path missing = scratch("no-such-folder") / "out.txt";
    auto r = write_output_file(missing.string(), "x");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(r.error().message() == missing.string() + ": cannot open for writing: No such file or directory");
    CHECK_FALSE(fs::exists(missing));

    const std::string dir = fs::temp_directory_path().string();
    r = write_output_file(dir, "x");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(r.error().message() == dir + ": cannot open for writing: Is a directory");
  }

  TEST_CASE("a full disk (/dev/full) is a write error, never a silent success") {
    if (!fs::exists("/dev/full")) return;
    auto r = write_output_file("/dev/full", std::string(10, 'x'));  // fits the buffer: fails at flush
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::unavailable);
    CHECK(r.error().message() == "/dev/full: write error: No space left on device");
    r = write_output_file("/dev/full", std::string(1 << 20, 'x'));  // larger than the buffer: fails at write
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "/dev/full: write error: No space left on device");
  }

  TEST_CASE("flush_standard_output: fine here; an error when standard output is a full disk") {
    CHECK(flush_standard_output().has_value());
    if (!fs::exists("/dev/full")) return;
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (std::freopen("/dev/full", "w", stdout) == nullptr) ::_exit(9);
      std::fputs("lost", stdout);  // buffered: lost at the flush
      const auto r = flush_standard_output();
      if (r.has_value()) ::_exit(1);
      ::_exit(r.error().code() == errc::unavailable &&
                      r.error().message() == "cannot write standard output: No space left on device"
                  ? 0
                  : 2);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}
