// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/allocation_log.hpp: event kinds and the one-line format, the
// cuda_allocation_log concept, and the three policies (no-op, callback, FILE* stream), the
// stream one from several threads and on stderr.
#include "xlamem/cuda/allocation_log.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cuda_test_support.hpp"

using namespace xlamem;
using xlamem::test::pointer_text;
using xlamem::test::recording_log;

// The concept: the models, and near misses that differ from a model in one way.
namespace {
struct log_that_may_throw {
  void record(const cuda_allocation_event&) {}
};
struct log_with_other_name {
  void write(const cuda_allocation_event&) noexcept {}
};
struct log_taking_a_copy {
  void record(cuda_allocation_event) noexcept {}
};
struct log_with_const_record_only {
  void record(const cuda_allocation_event&) const noexcept {}
};

// Reads a whole file from its start.
std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  return text;
}

// Splits text into lines without their newlines.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// A callback that copies the event's fields into a recording_log.
void record_into(void* context, const cuda_allocation_event& e) {
  static_cast<recording_log*>(context)->record(e);
}
}  // namespace

static_assert(cuda_allocation_log<no_allocation_log>);
static_assert(cuda_allocation_log<callback_allocation_log>);
static_assert(cuda_allocation_log<stream_allocation_log>);
static_assert(cuda_allocation_log<recording_log>);
static_assert(!cuda_allocation_log<log_that_may_throw>);  // record must be noexcept
static_assert(!cuda_allocation_log<log_with_other_name>);
static_assert(cuda_allocation_log<log_taking_a_copy>);  // callable with the event is enough
static_assert(cuda_allocation_log<log_with_const_record_only>);
static_assert(!cuda_allocation_log<int>);

TEST_SUITE("cuda/allocation_log") {
  TEST_CASE("event kinds have lowercase names; an unknown value is \"unknown\"") {
    static_assert(to_string(cuda_allocation_event_kind::allocate) == "allocate");
    CHECK(to_string(cuda_allocation_event_kind::free) == "free");
    CHECK(to_string(cuda_allocation_event_kind::allocate_failed) == "allocate_failed");
    CHECK(to_string(cuda_allocation_event_kind::free_failed) == "free_failed");
    CHECK(to_string(static_cast<cuda_allocation_event_kind>(99)) == "unknown");
  }

  TEST_CASE("an event is one line: resource, kind, sizes, pointer, device, then the message") {
    int object = 0;
    cuda_allocation_event e;
    e.kind = cuda_allocation_event_kind::allocate;
    e.resource = "cuda_vmm_device_memory";
    e.device_ordinal = 3;
    e.size = 1000;
    e.reserved = 2097152;
    e.pointer = &object;
    CHECK(to_string(e) == "cuda_vmm_device_memory: allocate 1000 bytes (2097152 reserved) at " +
                              pointer_text(&object) + " on device 3");

    e.kind = cuda_allocation_event_kind::allocate_failed;
    e.pointer = nullptr;
    e.reserved = 0;
    e.message = "cuMemCreate(2097152 bytes) on device 3: CUDA_ERROR_OUT_OF_MEMORY (out of memory)";
    CHECK(to_string(e) == "cuda_vmm_device_memory: allocate_failed 1000 bytes (0 reserved) at " +
                              pointer_text(nullptr) +
                              " on device 3: cuMemCreate(2097152 bytes) on device 3: "
                              "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  }

  TEST_CASE("a default event: no resource, device -1, nothing reserved, no message") {
    const cuda_allocation_event e;
    CHECK(e.kind == cuda_allocation_event_kind::allocate);
    CHECK(e.device_ordinal == -1);
    CHECK(e.size == 0);
    CHECK(e.reserved == 0);
    CHECK(e.pointer == nullptr);
    CHECK(e.message.empty());
    CHECK(to_string(e) ==
          ": allocate 0 bytes (0 reserved) at " + pointer_text(nullptr) + " on device -1");
  }

  TEST_CASE("no_allocation_log records nothing, even in a constant expression") {
    static_assert([] {
      no_allocation_log log;
      log.record(cuda_allocation_event{});
      return true;
    }());
    static_assert(std::is_empty_v<no_allocation_log>);
    no_allocation_log log;
    log.record(cuda_allocation_event{});
  }

  TEST_CASE("callback_allocation_log passes its context and the event; without fn it is a no-op") {
    recording_log seen;
    callback_allocation_log cb{&record_into, &seen};
    int object = 0;
    cuda_allocation_event e;
    e.kind = cuda_allocation_event_kind::free_failed;
    e.resource = "cuda_device_memory";
    e.device_ordinal = 1;
    e.size = 8;
    e.reserved = 256;
    e.pointer = &object;
    e.message = "refused";
    cb.record(e);
    cb.record(e);
    REQUIRE(seen.kinds.size() == 2);
    CHECK(seen.kinds[0] == cuda_allocation_event_kind::free_failed);
    CHECK(seen.resources[0] == "cuda_device_memory");
    CHECK(seen.ordinals[0] == 1);
    CHECK(seen.sizes[0] == 8);
    CHECK(seen.reserved[0] == 256);
    CHECK(seen.pointers[0] == &object);
    CHECK(seen.messages[0] == "refused");

    const callback_allocation_log empty;
    CHECK((empty.fn == nullptr));
    CHECK(empty.context == nullptr);
    callback_allocation_log unset{nullptr, &seen};
    unset.record(e);  // no function: nothing happens
    CHECK(seen.kinds.size() == 2);
  }

  TEST_CASE("stream_allocation_log writes to_string(event) and a newline per event, in order") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    stream_allocation_log log{f};
    cuda_allocation_event a;
    a.resource = "cuda_async_memory";
    a.device_ordinal = 0;
    a.size = 64;
    a.reserved = 64;
    cuda_allocation_event b = a;
    b.kind = cuda_allocation_event_kind::free_failed;
    b.message = "cuMemFreeAsync: CUDA_ERROR_INVALID_VALUE (invalid argument)";
    log.record(a);
    log.record(b);
    CHECK(read_all(f) == to_string(a) + "\n" + to_string(b) + "\n");
    std::fclose(f);
  }

  TEST_CASE("stream_allocation_log from 8 threads: every line whole") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    stream_allocation_log log{f};
    std::set<std::string> expected;
    std::vector<cuda_allocation_event> events(8);
    for (int t = 0; t < 8; ++t) {
      cuda_allocation_event& e = events[static_cast<std::size_t>(t)];
      e.resource = "cuda_device_memory";
      e.device_ordinal = t;
      e.size = static_cast<std::size_t>(1000 + t);
      e.reserved = e.size;
      e.message = "a message long enough that two threads writing at once would interleave";
      expected.insert(to_string(e));
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) log.record(events[static_cast<std::size_t>(t)]);
      });
    }
    for (auto& th : threads) th.join();
    const std::vector<std::string> lines = lines_of(read_all(f));
    CHECK(lines.size() == 8 * 200);
    int broken = 0;
    for (const std::string& line : lines) broken += expected.count(line) == 0 ? 1 : 0;
    CHECK(broken == 0);
    std::fclose(f);
  }

  TEST_CASE("stream_allocation_log without a file writes to stderr") {
    std::FILE* capture = std::tmpfile();
    REQUIRE(capture != nullptr);
    std::fflush(stderr);
    const int saved = ::dup(STDERR_FILENO);
    REQUIRE(saved >= 0);
    REQUIRE(::dup2(::fileno(capture), STDERR_FILENO) >= 0);
    cuda_allocation_event e;
    e.resource = "cuda_pinned_host_memory";
    e.device_ordinal = 0;
    e.size = 4096;
    e.reserved = 4096;
    stream_allocation_log log;  // file == nullptr
    log.record(e);
    std::fflush(stderr);
    REQUIRE(::dup2(saved, STDERR_FILENO) >= 0);
    ::close(saved);
    CHECK(log.file == nullptr);
    CHECK(read_all(capture) == to_string(e) + "\n");
    std::fclose(capture);
  }
}
