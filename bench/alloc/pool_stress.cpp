// SPDX-License-Identifier: Apache-2.0
// pool_stress: the default pool (per-CPU caches) under a long multi-threaded run, checked by
// counting: every acquire marks its block in use with an atomic exchange (finding it marked
// means one block went to two holders), every release clears the mark, and at the end every
// block must be acquirable again, each once. Threads hold a few blocks, hand some to a
// neighbour (released on another thread, often another CPU), and re-pin themselves to other
// CPUs now and then (sched_setaffinity), so every path of the free list runs: stacks, refills,
// spills, drains on exhaustion, restarts.
//
//   pool_stress [OPERATIONS] [THREADS] [BLOCKS]     (defaults 10^8, 8, 128)
// Prints the counts and exits 0 only when nothing was lost or doubled.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/heap_memory.hpp"

namespace {

using pool_t = xlamem::fixed_block_pool<xlamem::aligned_heap_memory>;

struct shared_state {
  explicit shared_state(std::uint32_t blocks, int threads)
      : in_use(blocks), mailboxes(static_cast<std::size_t>(threads)) {}
  std::vector<std::atomic<std::uint8_t>> in_use;
  std::atomic<std::uint64_t> doubled{0};
  std::atomic<std::uint64_t> acquired{0};
  std::atomic<std::uint64_t> released{0};  // (contended counters: the checks, not the speed)
  struct mailbox {
    std::mutex m;
    std::vector<pool_t::handle> handles;
  };
  std::vector<mailbox> mailboxes;  // hand-offs to thread t land in mailboxes[t]
  std::vector<std::atomic<bool>> finished = std::vector<std::atomic<bool>>(mailboxes.size());
};

void release(shared_state& s, pool_t::handle& h) {
  s.in_use[h.index()].store(0, std::memory_order_relaxed);
  h.reset();
  s.released.fetch_add(1, std::memory_order_relaxed);
}

// Runs until this thread made `operations` acquires and releases (hand-offs count where
// they are released).
void worker(pool_t& pool, shared_state& s, int t, int threads, std::uint64_t operations,
            const std::vector<int>& cpus) {
  std::uint64_t rng = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(t + 1);
  std::vector<pool_t::handle> held;
  std::uint64_t done = 0;
  for (std::uint64_t step = 0; done < operations; ++step) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    if (step % 65536 == 0 && cpus.size() > 1) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[rng % cpus.size()], &set);
      (void)::sched_setaffinity(0, sizeof set, &set);
    }
    if (step % 64 == 0) {  // take what a neighbour handed over, release it here
      auto& box = s.mailboxes[static_cast<std::size_t>(t)];
      std::vector<pool_t::handle> got;
      {
        std::lock_guard<std::mutex> lock(box.m);
        got.swap(box.handles);
      }
      for (auto& h : got) release(s, h);
      done += got.size();
    }
    const unsigned choice = static_cast<unsigned>(rng % 8);
    if (held.empty() || (held.size() < 4 && choice < 4)) {
      auto h = pool.try_acquire();
      if (!h.has_value()) continue;  // exhausted right now: others hold everything
      if (s.in_use[h->index()].exchange(1, std::memory_order_relaxed) != 0) {
        s.doubled.fetch_add(1, std::memory_order_relaxed);
      }
      s.acquired.fetch_add(1, std::memory_order_relaxed);
      held.push_back(std::move(*h));
      ++done;
    } else if (choice != 7) {
      release(s, held.back());
      held.pop_back();
      ++done;
    } else {  // hand the block to the next thread still running, which releases it
      const auto next = static_cast<std::size_t>((t + 1) % threads);
      if (s.finished[next].load(std::memory_order_acquire)) {
        release(s, held.back());
        held.pop_back();
        ++done;
        continue;
      }
      auto& box = s.mailboxes[next];
      std::lock_guard<std::mutex> lock(box.m);
      box.handles.push_back(std::move(held.back()));
      held.pop_back();
    }
  }
  for (auto& h : held) release(s, h);
  s.finished[static_cast<std::size_t>(t)].store(true, std::memory_order_release);
  // What arrived meanwhile (a hand-off that raced with the flag waits for main's sweep).
  auto& box = s.mailboxes[static_cast<std::size_t>(t)];
  std::lock_guard<std::mutex> lock(box.m);
  for (auto& h : box.handles) release(s, h);
  box.handles.clear();
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t operations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000'000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  const auto blocks = static_cast<std::uint32_t>(argc > 3 ? std::atoi(argv[3]) : 128);
  if (operations == 0 || threads < 1 || blocks < 1) {
    std::fprintf(stderr, "usage: pool_stress [OPERATIONS >= 1] [THREADS >= 1] [BLOCKS >= 1]\n");
    return 2;
  }
  pool_t pool(xlamem::aligned_heap_memory{},
              xlamem::pool_options{.block_count = blocks, .block_size = 64, .alignment = 64,
                                   .name = "stress"});
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  shared_state s(blocks, threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back(worker, std::ref(pool), std::ref(s), t, threads,
                    operations / static_cast<std::uint64_t>(threads), std::cref(cpus));
  }
  for (auto& th : ts) th.join();
  for (auto& box : s.mailboxes) {
    for (auto& h : box.handles) release(s, h);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<pool_t::handle> all;
  for (;;) {
    auto h = pool.try_acquire();
    if (!h.has_value()) break;
    if (s.in_use[h->index()].exchange(1) != 0) s.doubled.fetch_add(1);
    all.push_back(std::move(*h));
  }
  const bool ok = s.doubled.load() == 0 && s.acquired.load() == s.released.load() &&
                  all.size() == blocks;
  std::printf("pool_stress: %llu operations on %d threads over %zu CPUs, %u blocks, per-CPU %s "
              "(at most %u blocks per CPU): %llu acquires, %llu releases, %llu doubled, "
              "%zu of %u blocks back at the end, %.2f s: %s\n",
              static_cast<unsigned long long>(operations), threads, cpus.size(), blocks,
              pool.free_list().per_cpu() ? "yes" : "no", pool.free_list().cache_limit(),
              static_cast<unsigned long long>(s.acquired.load()),
              static_cast<unsigned long long>(s.released.load()),
              static_cast<unsigned long long>(s.doubled.load()), all.size(), blocks, seconds,
              ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
