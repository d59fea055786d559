// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/concurrency.hpp.
#include <doctest/doctest.h>

#include <cerrno>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/concurrency") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("per_cpu_cache (default) + fail: 10^6 pairs over 2 and 4 threads") {
    stress_combination<per_cpu_cache_policy, fail_policy>(1'000'000);
  }
  TEST_CASE("per_cpu_cache + wait") { stress_combination<per_cpu_cache_policy, wait_policy>(100'000); }
  TEST_CASE("per_cpu_cache + grow") { stress_combination<per_cpu_cache_policy, grow_policy>(100'000); }
  TEST_CASE("per_cpu_cache + fallback") {
    stress_combination<per_cpu_cache_policy, fallback_policy>(100'000);
  }
  TEST_CASE("per_cpu_cache + fail with debug checks") {
    stress_combination<per_cpu_cache_policy, fail_policy, debug_checks>(100'000);
  }
  TEST_CASE("lock_free + fail: 10^6 pairs over 2 and 4 threads") {
    stress_combination<lock_free_policy, fail_policy>(100'000);
  }
  TEST_CASE("lock_free + wait") { stress_combination<lock_free_policy, wait_policy>(100'000); }
  TEST_CASE("lock_free + grow") { stress_combination<lock_free_policy, grow_policy>(100'000); }
  TEST_CASE("lock_free + fallback") {
    stress_combination<lock_free_policy, fallback_policy>(100'000);
  }
  TEST_CASE("mutex_fifo + fail") { stress_combination<mutex_fifo_policy, fail_policy>(100'000); }
  TEST_CASE("mutex_fifo + wait") { stress_combination<mutex_fifo_policy, wait_policy>(100'000); }
  TEST_CASE("mutex_fifo + grow") { stress_combination<mutex_fifo_policy, grow_policy>(100'000); }
  TEST_CASE("mutex_fifo + fallback") {
    stress_combination<mutex_fifo_policy, fallback_policy>(100'000);
  }
  TEST_CASE("lock_free + fail with debug checks") {
    stress_combination<lock_free_policy, fail_policy, debug_checks>(100'000);
  }
  TEST_CASE("mutex_fifo + wait with debug checks") {
    stress_combination<mutex_fifo_policy, wait_policy, debug_checks>(100'000);
  }
  TEST_CASE("owner_biased lock_free + fail") {
    stress_combination<owner_biased<lock_free_policy>, fail_policy>(100'000);
  }
  TEST_CASE("owner_biased mutex_fifo + wait") {
    stress_combination<owner_biased<mutex_fifo_policy>, wait_policy>(100'000);
  }

  TEST_CASE_TEMPLATE("local_cache per thread over a shared pool", F, per_cpu_cache_policy,
                     lock_free_policy, mutex_fifo_policy) {
    for (int threads : {2, 4}) {
      using pool_t = fixed_block_pool<aligned_heap_memory, F>;
      pool_t pool(aligned_heap_memory{},
                  pool_options{.block_count = static_cast<std::uint32_t>(3 * threads),
                               .block_size = 64,
                               .alignment = 64,
                               .name = "cached"});
      std::atomic<std::uint64_t> corrupt{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
          typename pool_t::local_cache cache(pool, 4);
          std::uint64_t bad = 0;
          for (std::uint64_t k = 0; k < 50'000 / static_cast<std::uint64_t>(threads);) {
            auto h = cache.try_acquire();
            if (!h.has_value()) {
              std::this_thread::yield();
              continue;
            }
            const std::uint64_t id = (static_cast<std::uint64_t>(t + 1) << 40) | k;
            *h->template get<std::uint64_t>() = id;
            std::this_thread::yield();
            if (*h->template get<std::uint64_t>() != id) ++bad;
            ++k;
          }
          corrupt.fetch_add(bad);
        });
      }
      for (auto& th : ts) th.join();
      CHECK(corrupt.load() == 0);
      typename pool_t::handle all[12];
      CHECK(
          pool.try_acquire_many(std::span(all, static_cast<std::size_t>(3 * threads))).has_value());
    }
  }

  // The owner works without synchronisation until a second thread arrives at a varying point
  // of its run; ids written into the blocks catch a block held twice across the revocation.
  // With wait_policy the owner's owned releases skip the waiter wake-up: a thread that would
  // wait has revoked first, so it must still see every block the owner released.
  TEST_CASE_TEMPLATE("owner bias revoked while the owner works", pool_t,
                     fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<mutex_fifo_policy>>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>,
                                      wait_policy>,
                     fixed_block_pool<aligned_heap_memory, owner_biased<mutex_fifo_policy>,
                                      wait_policy>) {
    std::uint64_t corrupt_total = 0;
    for (std::uint64_t round = 0; round < 100; ++round) {
      pool_t pool(aligned_heap_memory{},
                  pool_options{.block_count = 3, .block_size = 64, .alignment = 64});
      std::atomic<std::uint64_t> owner_ops{0};
      std::atomic<bool> stop{false};
      std::atomic<std::uint64_t> corrupt{0};
      const auto work = [&](std::uint64_t who, std::uint64_t pairs, bool counts) {
        typename pool_t::handle held[2];
        std::uint64_t ids[2] = {0, 0};
        std::uint64_t bad = 0;
        for (std::uint64_t k = 0; counts ? !stop.load(std::memory_order_relaxed) : k < pairs; ++k) {
          auto& slot = held[k & 1];
          if (slot) {
            if (*slot.template get<std::uint64_t>() != ids[k & 1]) ++bad;
            slot.reset();
          } else if (auto h = pool.try_acquire(); h.has_value()) {
            ids[k & 1] = (who << 48) | k;
            *h->template get<std::uint64_t>() = ids[k & 1];
            slot = std::move(*h);
          }
          if (counts) owner_ops.store(k + 1, std::memory_order_relaxed);
        }
        corrupt.fetch_add(bad);
      };
      std::thread owner([&] { work(1, 0, true); });
      std::thread joiner([&] {
        while (owner_ops.load(std::memory_order_relaxed) < 1 + (round * 37) % 500) {
        }
        work(2, 2'000, false);
        stop.store(true);
      });
      joiner.join();
      owner.join();
      corrupt_total += corrupt.load();
      CHECK(pool.free_list().owner_bias_state() == owner_bias::state_kind::shared);
      typename pool_t::handle all[3];
      CHECK(pool.try_acquire_many(all).has_value());  // every block came back
      if constexpr (pool_t::exhaustion_type::action == exhaustion_action::fail) {
        CHECK_FALSE(pool.try_acquire().has_value());  // and no block twice
      }
    }
    CHECK(corrupt_total == 0);
  }

#if defined(__linux__)
  // A seccomp filter that kills the process on `membarrier` (as a sandbox that allows only
  // known system calls would): pools with `lock_free_policy` and `mutex_fifo_policy`, shared by
  // two threads in the hand-off pattern, must run to the end under it; an owner-biased pool
  // and the default `per_cpu_cache_policy` (which registers for the drain fence) are killed,
  // which shows the filter bites. Under a filter that refuses `membarrier` with an error
  // instead, the default pool falls back to its lock-free list and runs to the end.
  TEST_CASE("the named lock-free and mutex pools make no membarrier system call") {
    const auto run_filtered = [](auto body, std::uint32_t action = SECCOMP_RET_KILL_PROCESS) {
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        sock_filter code[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, action),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
          ::_exit(3);  // no filter: reported below as a failure, never as a pass
        }
        ::_exit(body());
      }
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      return status;
    };
    // Acquire on one thread, release on the other, both ways, then a local_cache on each.
    const auto hand_off = [](auto& pool) {
      using pool_t = std::remove_reference_t<decltype(pool)>;
      int bad = 0;
      for (int round = 0; round < 200; ++round) {
        typename pool_t::handle h = pool.acquire();
        *h.template get<int>() = round;
        std::thread([&] {
          if (*h.template get<int>() != round) ++bad;
          h.reset();
          auto mine = pool.acquire();
          h = std::move(mine);
        }).join();
        h.reset();
      }
      std::thread t([&] {
        typename pool_t::local_cache cache(pool, 4);
        for (int k = 0; k < 1000; ++k) (void)cache.acquire();
      });
      {
        typename pool_t::local_cache cache(pool, 4);
        for (int k = 0; k < 1000; ++k) (void)cache.acquire();
      }
      t.join();
      return bad;
    };
    const auto exercise = [&](auto pool_tag) {
      using pool_t = typename decltype(pool_tag)::type;
      return [&] {
        pool_t pool(aligned_heap_memory{},
                    pool_options{.block_count = 16, .block_size = 16, .name = "sandboxed"});
        return hand_off(pool);
      };
    };
    const auto exited_cleanly = [](int status) {
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    };
    using lf = fixed_block_pool<aligned_heap_memory, lock_free_policy>;
    using mf = fixed_block_pool<aligned_heap_memory, mutex_fifo_policy>;
    using lf_wait = fixed_block_pool<aligned_heap_memory, lock_free_policy, wait_policy>;
    using mf_grow = fixed_block_pool<aligned_heap_memory, mutex_fifo_policy, grow_policy>;
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<lf>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<mf>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<lf_wait>{}))));
    CHECK(exited_cleanly(run_filtered(exercise(std::type_identity<mf_grow>{}))));
    // The control: the opt-in owner bias registers for membarrier on first use.
    using per_cpu = fixed_block_pool<aligned_heap_memory, per_cpu_cache_policy>;
    const auto refused = SECCOMP_RET_ERRNO | static_cast<std::uint32_t>(EPERM);
    CHECK(exited_cleanly(run_filtered(
        [&] {
          per_cpu pool(aligned_heap_memory{},
                       pool_options{.block_count = 16, .block_size = 16, .name = "refused"});
          return pool.free_list().per_cpu() ? 4 : hand_off(pool);  // fell back, and works
        },
        refused)));
    if (detail::rseq_usable()) {
      const int status = run_filtered(exercise(std::type_identity<per_cpu>{}));
      CHECK(WIFSIGNALED(status));
    }
    if (owner_bias::supported()) {
      using biased = fixed_block_pool<aligned_heap_memory, owner_biased<lock_free_policy>>;
      const int status = run_filtered(exercise(std::type_identity<biased>{}));
      CHECK(WIFSIGNALED(status));
      if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSYS);
    }
  }
#endif

  TEST_CASE_TEMPLATE("bulk acquire/release under contention", F, lock_free_policy,
                     mutex_fifo_policy) {
    using pool_t = fixed_block_pool<aligned_heap_memory, F>;
    pool_t pool(aligned_heap_memory{},
                pool_options{.block_count = 7, .block_size = 64, .alignment = 64});
    std::atomic<std::uint64_t> corrupt{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&, t] {
        typename pool_t::handle hs[3];
        std::uint64_t bad = 0;
        for (std::uint64_t k = 0; k < 10'000;) {
          if (!pool.try_acquire_many(hs).has_value()) {
            std::this_thread::yield();
            continue;
          }
          for (std::size_t j = 0; j < 3; ++j)
            *hs[j].template get<std::uint64_t>() =
                (static_cast<std::uint64_t>(t) << 40) | (k * 3 + j);
          for (std::size_t j = 0; j < 3; ++j) {
            if (*hs[j].template get<std::uint64_t>() !=
                ((static_cast<std::uint64_t>(t) << 40) | (k * 3 + j)))
              ++bad;
          }
          pool.release_many(hs);
          ++k;
        }
        corrupt.fetch_add(bad);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(corrupt.load() == 0);
  }

  TEST_CASE("lock_free_policy: threads drain every index exactly once, then churn") {
    constexpr std::uint32_t n = 1000;
    constexpr int threads = 4;
    lock_free_policy list(n, 8);
    list.push_range(0, n);
    // Phase 1: all threads pop until the list is empty; every index lands exactly once.
    std::vector<std::atomic<int>> taken(n);
    std::vector<std::vector<std::uint32_t>> mine(threads);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (std::uint32_t i = list.pop(); i != free_list_npos; i = list.pop()) {
          if (i < n) taken[i].fetch_add(1, std::memory_order_relaxed);
          mine[t].push_back(i);
        }
      });
    }
    for (auto& th : ts) th.join();
    ts.clear();
    CHECK(std::all_of(taken.begin(), taken.end(), [](const auto& c) { return c.load() == 1; }));
    // Phase 2: each thread returns its share, then churns through pop/push and
    // pop_many/push_many, owning each index it holds exclusively (an owner table catches an
    // index handed to two threads at once).
    std::vector<std::atomic<int>> owner(n);
    std::atomic<std::uint64_t> errors{0};
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (std::uint32_t i : mine[t]) list.push(i);
        std::uint64_t bad = 0;
        std::uint32_t batch[6];
        for (int k = 0; k < 20'000; ++k) {
          std::uint32_t got = 0;
          if (k % 3 == 0) {
            got = list.pop_many(batch, 6);
          } else if ((batch[0] = list.pop()) != free_list_npos) {
            got = 1;
          }
          for (std::uint32_t j = 0; j < got; ++j) {
            int expected = 0;
            if (batch[j] >= n || !owner[batch[j]].compare_exchange_strong(expected, t + 1)) ++bad;
          }
          for (std::uint32_t j = 0; j < got; ++j) {
            if (batch[j] < n) owner[batch[j]].store(0);
          }
          if (got > 1 || k % 2 == 0) {
            list.push_many(batch, got);
          } else {
            for (std::uint32_t j = 0; j < got; ++j) list.push(batch[j]);
          }
        }
        errors.fetch_add(bad);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(errors.load() == 0);
    CHECK(drain(list, n).size() == n);  // nothing lost, nothing duplicated
  }

  TEST_CASE("lock_free_policy never reports empty while a block is free (double collect)") {
    // T threads share T indices and each holds at most one: while a thread is inside pop() it
    // holds none, so at least one index is free at every instant of that call, and pop() must
    // never return npos, although the free ones keep moving between stripes. (A single pass
    // over the stripes could miss a block moving from a stripe not yet visited to one already
    // visited; on a machine with few cores that window is rarely hit, so this is a smoke test
    // there and a sharper one on many cores.)
    for (int threads : {2, 4}) {
      const auto n = static_cast<std::uint32_t>(threads);
      lock_free_policy list(n, 64);  // as many stripes as indices
      CHECK(list.stripe_count() == n);
      list.push_range(0, n);
      std::atomic<std::uint64_t> empty{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&] {
          std::uint64_t misses = 0;
          for (int k = 0; k < 50'000; ++k) {
            const std::uint32_t i = list.pop();
            if (i == free_list_npos) {
              ++misses;
              continue;
            }
            // push() returns it to the stripe it was popped from, push_range() to stripe 0:
            // free indices keep moving between stripes whatever CPUs the threads run on.
            if (k % 2 == 0) {
              list.push(i);
            } else {
              list.push_range(i, 1);
            }
          }
          empty.fetch_add(misses);
        });
      }
      for (auto& th : ts) th.join();
      CAPTURE(threads);
      CHECK(empty.load() == 0);
      CHECK(drain(list, n).size() == n);
    }
  }

  TEST_CASE("wait_policy wakes up when another thread releases") {
    fixed_block_pool<aligned_heap_memory, lock_free_policy, wait_policy> pool(
        aligned_heap_memory{}, pool_options{.block_count = 1, .block_size = 8},
        wait_policy{std::chrono::seconds(30)});
    auto held = pool.acquire();
    std::atomic<bool> got{false};
    std::thread waiter([&] {
      auto h = pool.acquire();  // blocks until the main thread releases
      got.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(got.load());
    held.reset();
    waiter.join();
    CHECK(got.load());
  }

  TEST_CASE("statistics, limiting and fault-injection adaptors stay exact under threads") {
    statistics_adaptor<aligned_heap_memory> stats{aligned_heap_memory{}};
    limiting_adaptor<resource_ref<decltype(stats)>> cap(borrow(stats), 1u << 30);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < 5000; ++i) cap.deallocate(cap.allocate(16, 16), 16, 16);
      });
    }
    for (auto& th : ts) th.join();
    CHECK(stats.statistics().total_count == 20000);
    CHECK(stats.statistics().current_bytes == 0);
    CHECK(cap.used() == 0);
  }
}
