// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/restartable_sequences.hpp: the per-CPU stack sections (pop, push,
// many of each, the calling-CPU pair) commit, report empty or full, and restart on a wrong CPU or a
// blocked stack; atomic among signalled threads on one CPU. Without rseq (glibc.pthread.rseq=0) all restart.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "xlamem/alloc/restartable_sequences.hpp"

TEST_SUITE("alloc/restartable_sequences") {
  using namespace xlamem::detail;

  // Runs `body(cpu)` on a thread pinned to one CPU of this process's mask (so the sections see a
  // stable CPU id); false when pinning is not possible.
  template <class F>
  bool on_one_cpu(F body) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mask)) ++cpu;
    if (cpu == CPU_SETSIZE) return false;
    bool pinned = false;
    std::thread([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pinned = ::sched_setaffinity(0, sizeof one, &one) == 0;
      if (pinned) body(cpu);
    }).join();
    return pinned;
  }

  // Repeats a section while it restarts (a preemption or signal): a pinned thread's CPU is right.
  template <class Section>
  rseq_outcome settle(Section section) {
    rseq_outcome r = rseq_outcome::restarted;
    for (int tries = 0; tries < 1000 && r == rseq_outcome::restarted; ++tries) r = section();
    return r;
  }

  std::vector<std::uint32_t> contents(const cpu_stack& s) {
    return std::vector<std::uint32_t>(s.slots, s.slots + s.count);
  }

  TEST_CASE("a cpu_stack is 512 bytes on a 128-byte boundary: count, blocked, then 126 slots; outcomes as the assembly writes them") {
    static_assert(sizeof(cpu_stack) == 512 && alignof(cpu_stack) == 128);
    static_assert(offsetof(cpu_stack, count) == 0 && offsetof(cpu_stack, blocked) == 4 &&
                  offsetof(cpu_stack, slots) == 8);
    static_assert(cpu_stack::max_slots == 126);
    static_assert(static_cast<std::uint32_t>(rseq_outcome::done) == 0 &&
                  static_cast<std::uint32_t>(rseq_outcome::empty) == 1 &&
                  static_cast<std::uint32_t>(rseq_outcome::full) == 2 &&
                  static_cast<std::uint32_t>(rseq_outcome::restarted) == 3);
    const cpu_stack fresh;
    CHECK(fresh.count == 0);
    CHECK(fresh.blocked == 0);
    std::vector<cpu_stack> many(3);  // over-aligned elements keep their alignment in a vector
    for (const auto& s : many) CHECK(reinterpret_cast<std::uintptr_t>(&s) % 128 == 0);
  }

  TEST_CASE("usable only where built, registered by glibc and granted the fence") {
    if (!rseq_sections_built) {
      CHECK_FALSE(rseq_usable());
      CHECK_FALSE(rseq_fence());
      CHECK(rseq_offset() == 0);
      CHECK(rseq_area(0) == nullptr);
      CHECK(rseq_cpu(nullptr) < 0);
      return;
    }
    const bool usable = rseq_usable();
    CHECK(usable == rseq_usable());  // registration for the fence is idempotent
    if (usable) CHECK(rseq_fence());
    CHECK(configured_cpus() >= 1);
    std::int32_t seen = -1;
    int os_cpu = -1;
    REQUIRE(on_one_cpu([&](int cpu) {
      seen = rseq_cpu(rseq_area(rseq_offset()));
      os_cpu = cpu;
    }));
#if XLAMEM_DETAIL_RSEQ_SECTIONS
    if (__rseq_size == 0) {
      CHECK(seen < 0);  // glibc did not register (glibc.pthread.rseq=0): the area shows no CPU
      CHECK_FALSE(usable);
    } else {
      CHECK(seen == os_cpu);  // the kernel keeps the pinned thread's CPU in its area
      CHECK(static_cast<std::uint32_t>(seen) < configured_cpus());
    }
#endif
  }

  TEST_CASE("explicit-CPU sections: push and pop, empty and full, many at once, in stack order") {
    REQUIRE(on_one_cpu([&](int) {
      char* const area = rseq_area(rseq_offset());
      const std::int32_t me = rseq_cpu(area);
      if (me < 0) return;  // covered by the next test case
      const auto cpu = static_cast<std::uint32_t>(me);
      cpu_stack s;
      std::uint32_t out = 0;
      CHECK(settle([&] { return rseq_pop(area, &s, cpu, out); }) == rseq_outcome::empty);
      for (const std::uint32_t v : {5u, 6u, 7u}) {
        CHECK(settle([&] { return rseq_push(area, &s, cpu, v, cpu_stack::max_slots); }) == rseq_outcome::done);
      }
      CHECK(contents(s) == std::vector<std::uint32_t>{5, 6, 7});
      CHECK(settle([&] { return rseq_push(area, &s, cpu, 8, 3); }) == rseq_outcome::full);  // limit 3 reached
      CHECK(s.count == 3);
      CHECK(settle([&] { return rseq_pop(area, &s, cpu, out); }) == rseq_outcome::done);
      CHECK(out == 7);  // last in, first out
      CHECK(contents(s) == std::vector<std::uint32_t>{5, 6});

      const std::uint32_t in[] = {10, 11, 12};
      CHECK(settle([&] { return rseq_push_many(area, &s, cpu, in, 3, cpu_stack::max_slots); }) == rseq_outcome::done);
      CHECK(contents(s) == std::vector<std::uint32_t>{5, 6, 10, 11, 12});
      CHECK(settle([&] { return rseq_push_many(area, &s, cpu, in, 3, 7); }) == rseq_outcome::full);  // 8 > 7
      CHECK(s.count == 5);
      CHECK(settle([&] { return rseq_push_many(area, &s, cpu, in, 2, 7); }) == rseq_outcome::done);  // exactly 7
      CHECK(contents(s) == std::vector<std::uint32_t>{5, 6, 10, 11, 12, 10, 11});

      std::uint32_t taken[cpu_stack::max_slots] = {};
      std::uint32_t got = 0;
      CHECK(settle([&] { return rseq_pop_many(area, &s, cpu, taken, 2, got); }) == rseq_outcome::done);
      CHECK(got == 2);
      CHECK(std::vector<std::uint32_t>(taken, taken + 2) == std::vector<std::uint32_t>{10, 11});  // top two, bottom first
      CHECK(settle([&] { return rseq_pop_many(area, &s, cpu, taken, 10, got); }) == rseq_outcome::done);
      CHECK(got == 5);  // fewer than asked: all there were
      CHECK(std::vector<std::uint32_t>(taken, taken + 5) == std::vector<std::uint32_t>{5, 6, 10, 11, 12});
      CHECK(s.count == 0);
      got = 99;
      CHECK(settle([&] { return rseq_pop_many(area, &s, cpu, taken, 1, got); }) == rseq_outcome::empty);
      CHECK(got == 0);  // nothing taken, said so
      out = 42;
      CHECK(settle([&] { return rseq_pop(area, &s, cpu, out); }) == rseq_outcome::empty);
      CHECK(out == 42);  // left alone: there was nothing to load
      // Zero entries: nothing moves, and the count-down copy loops never run (they would wrap).
      CHECK(rseq_push_many(area, &s, cpu, in, 0, 0) == rseq_outcome::done);
      CHECK(rseq_pop_many(area, &s, cpu, taken, 0, got) == rseq_outcome::done);
      CHECK(got == 0);
      CHECK(s.count == 0);

      // A full stack: every slot written (the last at byte 511), and no room for one more.
      constexpr std::uint32_t n = cpu_stack::max_slots;
      std::uint32_t all[n];
      for (std::uint32_t k = 0; k < n; ++k) all[k] = 100 + k;
      CHECK(settle([&] { return rseq_push_many(area, &s, cpu, all, n, n); }) == rseq_outcome::done);
      CHECK(s.count == n);
      CHECK(s.slots[n - 1] == 100 + n - 1);
      CHECK(settle([&] { return rseq_push(area, &s, cpu, 1, n); }) == rseq_outcome::full);
    }));
  }

  TEST_CASE("a section restarts, changing nothing, on another CPU's stack, a blocked stack, or without rseq") {
    REQUIRE(on_one_cpu([&](int) {
      char* const area = rseq_area(rseq_offset());
      const std::int32_t me = rseq_cpu(area);
      // Without rseq every CPU is "another CPU"; with it, pick one that is not ours.
      const std::uint32_t other = me < 0 ? 0u : static_cast<std::uint32_t>(me) + 1;
      cpu_stack s;
      s.count = 2;
      s.slots[0] = 40;
      s.slots[1] = 41;
      std::uint32_t out = 0;
      std::uint32_t got = 0;
      std::uint32_t buf[4] = {1, 2, 3, 4};
      CHECK(rseq_pop(area, &s, other, out) == rseq_outcome::restarted);
      CHECK(rseq_push(area, &s, other, 9, 30) == rseq_outcome::restarted);
      CHECK(rseq_pop_many(area, &s, other, buf, 2, got) == rseq_outcome::restarted);
      CHECK(rseq_push_many(area, &s, other, buf, 2, 30) == rseq_outcome::restarted);
      CHECK(contents(s) == std::vector<std::uint32_t>{40, 41});
      CHECK(std::vector<std::uint32_t>(buf, buf + 4) == std::vector<std::uint32_t>{1, 2, 3, 4});

      const std::uint32_t cpus = configured_cpus();
      std::vector<cpu_stack> stacks(cpus == 0 ? 1 : cpus);
      if (me >= 0) {
        const auto cpu = static_cast<std::uint32_t>(me);
        s.blocked = 1;  // a drainer holds it
        CHECK(rseq_pop(area, &s, cpu, out) == rseq_outcome::restarted);
        CHECK(rseq_push(area, &s, cpu, 9, 30) == rseq_outcome::restarted);
        CHECK(rseq_pop_many(area, &s, cpu, buf, 2, got) == rseq_outcome::restarted);
        CHECK(rseq_push_many(area, &s, cpu, buf, 2, 30) == rseq_outcome::restarted);
        CHECK(contents(s) == std::vector<std::uint32_t>{40, 41});
        s.blocked = 0;
        CHECK(settle([&] { return rseq_pop(area, &s, cpu, out); }) == rseq_outcome::done);
        CHECK(out == 41);
        // The calling-CPU pair: a CPU id not below `cpus` restarts, as does a blocked stack.
        CHECK(rseq_push_local(rseq_offset(), stacks.data(), cpu, 9, 30) == rseq_outcome::restarted);
        CHECK(rseq_pop_local(rseq_offset(), stacks.data(), cpu, out) == rseq_outcome::restarted);
        stacks[cpu].blocked = 1;
        CHECK(rseq_push_local(rseq_offset(), stacks.data(), cpus, 9, 30) == rseq_outcome::restarted);
        stacks[cpu].blocked = 0;
      } else {
        CHECK(rseq_push_local(rseq_offset(), stacks.data(), cpus, 9, 30) == rseq_outcome::restarted);
        CHECK(rseq_pop_local(rseq_offset(), stacks.data(), cpus, out) == rseq_outcome::restarted);
      }
      for (const auto& st : stacks) CHECK(st.count == 0);
    }));
  }

  TEST_CASE("the calling-CPU pair finds this CPU's stack by itself and leaves the others alone") {
    REQUIRE(on_one_cpu([&](int) {
      const std::int32_t me = rseq_cpu(rseq_area(rseq_offset()));
      if (me < 0) return;
      const std::uint32_t cpus = configured_cpus();
      REQUIRE(static_cast<std::uint32_t>(me) < cpus);
      std::vector<cpu_stack> stacks(cpus);
      const std::ptrdiff_t offset = rseq_offset();
      for (const std::uint32_t v : {1u, 2u, 3u}) {
        CHECK(settle([&] { return rseq_push_local(offset, stacks.data(), cpus, v, 3); }) == rseq_outcome::done);
      }
      CHECK(settle([&] { return rseq_push_local(offset, stacks.data(), cpus, 4, 3); }) == rseq_outcome::full);
      for (std::uint32_t c = 0; c < cpus; ++c) {
        CHECK(stacks[c].count == (c == static_cast<std::uint32_t>(me) ? 3u : 0u));
      }
      CHECK(contents(stacks[static_cast<std::size_t>(me)]) == std::vector<std::uint32_t>{1, 2, 3});
      std::uint32_t out = 0;
      for (const std::uint32_t expect : {3u, 2u, 1u}) {
        CHECK(settle([&] { return rseq_pop_local(offset, stacks.data(), cpus, out); }) == rseq_outcome::done);
        CHECK(out == expect);
      }
      CHECK(settle([&] { return rseq_pop_local(offset, stacks.data(), cpus, out); }) == rseq_outcome::empty);
    }));
  }

  TEST_CASE("threads on one CPU share a stack through the sections, signalled throughout: nothing lost or doubled") {
    if (!rseq_usable()) return;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    REQUIRE(::sched_getaffinity(0, sizeof mask, &mask) == 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mask)) ++cpu;
    REQUIRE(cpu < CPU_SETSIZE);
    cpu_stack shared;
    constexpr int threads = 4;
    constexpr std::uint32_t per_thread = 300'000;  // several scheduler time slices: preemptions happen
    std::vector<std::vector<std::uint32_t>> popped(threads);
    std::atomic<int> unpinned{0};
    std::atomic<int> stuck{0};
    std::atomic<int> running{threads};
    // Signals interrupt the threads at arbitrary instructions, inside sections too: the kernel
    // then resumes them at the abort address, and the section must have changed nothing.
    struct sigaction quiet {};
    struct sigaction previous {};
    quiet.sa_handler = [](int) {};
    REQUIRE(::sigaction(SIGUSR1, &quiet, &previous) == 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (::sched_setaffinity(0, sizeof one, &one) != 0) {
          unpinned.fetch_add(1);
          running.fetch_sub(1);
          return;
        }
        char* const area = rseq_area(rseq_offset());
        const auto c = static_cast<std::uint32_t>(cpu);
        for (std::uint32_t k = 0; k < per_thread; ++k) {
          const std::uint32_t value = (static_cast<std::uint32_t>(t) << 24) | k;
          rseq_outcome r = rseq_outcome::restarted;
          for (int tries = 0; r != rseq_outcome::done && tries < 1'000'000; ++tries) {
            r = rseq_push(area, &shared, c, value, cpu_stack::max_slots);
            if (r == rseq_outcome::full) std::this_thread::yield();
          }
          if (r != rseq_outcome::done) {
            stuck.fetch_add(1);
            break;
          }
          if (k % 2 == 1) {  // pop two for every two pushed: the stack stays shallow
            for (int n = 0; n < 2; ++n) {
              std::uint32_t out = 0;
              rseq_outcome p = rseq_outcome::restarted;
              for (int tries = 0; p == rseq_outcome::restarted && tries < 1'000'000; ++tries) {
                p = rseq_pop(area, &shared, c, out);
              }
              if (p == rseq_outcome::done) popped[static_cast<std::size_t>(t)].push_back(out);
            }
          }
        }
        running.fetch_sub(1);
      });
    }
    while (running.load() > 0) {
      for (auto& th : ts) ::pthread_kill(th.native_handle(), SIGUSR1);  // joined only below: still valid
    }
    for (auto& th : ts) th.join();
    REQUIRE(::sigaction(SIGUSR1, &previous, nullptr) == 0);
    REQUIRE(unpinned.load() == 0);
    REQUIRE(stuck.load() == 0);
    // Every value pushed comes back exactly once, from a pop or from what is left.
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(threads) * per_thread, 0);
    std::size_t foreign = 0;
    const auto note = [&](std::uint32_t v) {
      const std::uint32_t t = v >> 24;
      const std::uint32_t k = v & 0xFFFFFFu;
      if (t >= static_cast<std::uint32_t>(threads) || k >= per_thread) {
        ++foreign;
        return;
      }
      ++seen[static_cast<std::size_t>(t) * per_thread + k];
    };
    for (const auto& v : popped) {
      for (const std::uint32_t x : v) note(x);
    }
    for (std::uint32_t k = 0; k < shared.count; ++k) note(shared.slots[k]);
    CHECK(foreign == 0);
    CHECK(std::count(seen.begin(), seen.end(), std::uint8_t{1}) == static_cast<std::ptrdiff_t>(seen.size()));
  }
}
