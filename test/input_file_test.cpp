// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/input_file.hpp: readers take only regular files within the size limit
// (exactly at the limit too), standard input bounded the same way, and quote_token.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/reliability_helpers.hpp"
#include "xlamem/input_file.hpp"

TEST_SUITE("reliability/checked") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("quote_token keeps a bounded prefix of a token") {
    CHECK(quote_token("abc") == "'abc'");
    const std::string big(5'000'000, 'x');
    const auto q = quote_token(big);
    CHECK(q.size() < max_quoted_chars + 8);
    CHECK(contains(q, "\xE2\x80\xA6"));
    CHECK(quote_token("a\nb\x01") == "'a\\nb?'");
  }
}

TEST_SUITE("reliability/input") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("readers take only regular files, within the size limit") {
    const std::string dir = fs::temp_directory_path().string();
    auto r = read_input_file(dir);
    REQUIRE(!r);
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(contains(r.error().message(), dir + ": is a directory"));
    if (fs::exists("/dev/zero")) {
      r = read_input_file("/dev/zero");
      REQUIRE(!r);
      CHECK(contains(r.error().message(), "/dev/zero: is not a regular file"));
      CHECK(!hlo::read_module_file("/dev/zero"));
      CHECK(!read_interval_csv_file("/dev/zero"));
      CHECK(!read_memory_terms_csv_file("/dev/zero"));
      CHECK(!read_buffer_assignment_dump("/dev/zero"));
    }
    r = read_input_file(dir + "/xlamem-no-such-file");
    REQUIRE(!r);
    CHECK(r.error().code() == errc::not_found);
    const auto f = temp_file("limit.txt", std::string(100, 'a'));
    r = read_input_file(f.string(), input_limits{99});
    REQUIRE(!r);
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(contains(r.error().message(), "larger than the limit of 99 bytes"));
    r = read_input_file(f.string(), input_limits{100});
    REQUIRE(r.has_value());
    CHECK(r->size() == 100);
    auto m = hlo::read_module_file(dir);
    REQUIRE(!m);
    CHECK(contains(m.error().message(), "is a directory"));
    fs::remove(f);
  }
}

TEST_SUITE("core/input_file") {
  namespace fs = std::filesystem;
  using namespace xlamem;

  // A file in the temporary folder with `bytes` in it, removed at the end.
  struct scratch_file {
    fs::path path;
    scratch_file(const std::string& name, const std::string& bytes)
        : path(fs::temp_directory_path() / ("xlamem-input-" + std::to_string(::getpid()) + "-" + name)) {
      std::ofstream(path, std::ios::binary) << bytes;
    }
    ~scratch_file() {
      std::error_code ec;
      fs::remove(path, ec);
    }
    scratch_file(const scratch_file&) = delete;
    scratch_file& operator=(const scratch_file&) = delete;
    [[nodiscard]] std::string str() const { return path.string(); }
  };

  TEST_CASE("the default limit is 1 GiB; every message starts with the path") {
    CHECK(input_limits{}.max_bytes == std::uint64_t{1} << 30);
    const std::string missing = (fs::temp_directory_path() / "xlamem-input-missing" / "x.hlo").string();
    auto r = read_input_file(missing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::not_found);
    CHECK(r.error().message() == missing + ": cannot open the file (it does not exist)");
    const std::string dir = fs::temp_directory_path().string();
    r = read_input_file(dir);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == dir + ": is a directory, not a regular file");
  }

  TEST_CASE("contents come back byte for byte: empty, binary, and exactly at the limit") {
    const scratch_file empty("empty", "");
    auto r = read_input_file(empty.str());
    REQUIRE(r.has_value());
    CHECK(r->empty());
    r = read_input_file(empty.str(), input_limits{0});  // 0 bytes fit a limit of 0
    REQUIRE(r.has_value());

    std::string binary;
    for (int k = 0; k < 256; ++k) binary += static_cast<char>(k);
    binary += std::string("\0\r\n\x1a", 4);
    const scratch_file bin("binary", binary);
    r = read_input_file(bin.str());
    REQUIRE(r.has_value());
    CHECK(*r == binary);

    // Over one 64 KiB read: the bound holds across reads, to the byte.
    const std::string big(200'001, 'q');
    const scratch_file large("large", big);
    r = read_input_file(large.str(), input_limits{200'001});
    REQUIRE(r.has_value());
    CHECK(r->size() == 200'001);
    r = read_input_file(large.str(), input_limits{200'000});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::resource_exhausted);
    CHECK(r.error().message() == large.str() + ": input is larger than the limit of 200000 bytes");
  }

  TEST_CASE("open_input_file hands back an open handle, or the same errors as read_input_file") {
    const scratch_file f("stream", "line 1\nline 2\n");
    auto h = open_input_file(f.str());
    REQUIRE(h.has_value());
    char buf[32] = {};
    CHECK(std::fread(buf, 1, sizeof buf, h->get()) == 14);
    CHECK(std::string(buf) == "line 1\nline 2\n");
    auto small = open_input_file(f.str(), input_limits{13});
    REQUIRE_FALSE(small.has_value());
    CHECK(small.error().code() == errc::resource_exhausted);
    CHECK(small.error().message() == f.str() + ": input is larger than the limit of 13 bytes");
    auto dir = open_input_file(fs::temp_directory_path().string());
    REQUIRE_FALSE(dir.has_value());
    CHECK(dir.error().code() == errc::invalid_argument);
  }

  TEST_CASE("a named pipe is refused by name, without blocking on it") {
    const fs::path fifo = fs::temp_directory_path() / ("xlamem-input-fifo-" + std::to_string(::getpid()));
    fs::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto r = read_input_file(fifo.string());  // would block forever if it were opened
    fs::remove(fifo);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(r.error().message() == fifo.string() + ": is not a regular file (a device, pipe or socket); give a file");
  }

  TEST_CASE("read_standard_input reads a pipe whole, bounded like a file, named <stdin>") {
    // In a child whose standard input is a pipe holding `text`; the exit code says what it saw.
    const auto read_in_child = [](const std::string& text, std::uint64_t limit) {
      int fds[2];
      REQUIRE(::pipe(fds) == 0);
      REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
      ::close(fds[1]);
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::dup2(fds[0], STDIN_FILENO);
        const auto r = read_standard_input(input_limits{limit});
        if (r.has_value()) ::_exit(*r == text ? 0 : 1);
        const bool named = r.error().message() ==
                           "<stdin>: input is larger than the limit of " + std::to_string(limit) + " bytes";
        ::_exit(r.error().code() == errc::resource_exhausted && named ? 2 : 3);
      }
      ::close(fds[0]);
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFEXITED(status));
      return WEXITSTATUS(status);
    };
    const std::string text(5'000, 'z');
    CHECK(read_in_child(text, 5'000) == 0);  // exactly the limit
    CHECK(read_in_child(text, 4'999) == 2);  // one byte over
    CHECK(read_in_child("", 0) == 0);
  }

  TEST_CASE("quote_token: exactly 60 bytes kept whole, 61 cut with an ellipsis; non-ASCII as '?'") {
    static_assert(max_quoted_chars == 60);
    const std::string sixty(60, 'a');
    CHECK(quote_token(sixty) == "'" + sixty + "'");
    CHECK(quote_token(sixty + "b") == "'" + sixty + "\xE2\x80\xA6'");
    CHECK(quote_token("") == "''");
    CHECK(quote_token("tab\there") == "'tab?here'");
    CHECK(quote_token("del\x7f") == "'del?'");
    CHECK(quote_token("caf\xC3\xA9") == "'caf?" "?'");  // each byte of a UTF-8 sequence
    CHECK(quote_token(std::string_view("nul\0x", 5)) == "'nul?x'");
    CHECK(quote_token("a\n") == "'a\\n'");
    // The cut counts input bytes, so escapes can make the text longer than 60.
    const std::string newlines(70, '\n');
    std::string expected = "'";
    for (int k = 0; k < 60; ++k) expected += "\\n";
    CHECK(quote_token(newlines) == expected + "\xE2\x80\xA6'");
  }
}
