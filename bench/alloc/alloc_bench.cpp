// SPDX-License-Identifier: Apache-2.0
// alloc_bench: fixed_block_pool free-list policies against the strongest baselines we can run
// here, in one run: an XLA-style pool (mutex + std::queue, RAII handle, StatusOr-shaped
// result), glibc malloc/free of the same size, and mimalloc / jemalloc through their own APIs.
// Patterns: an acquire+release pair (1, 2 and 8 threads: 8 oversubscribe this 2-core machine),
// a burst (acquire 64, release 64), and a hand-off (one thread acquires, another releases,
// through a single-producer single-consumer ring: a runtime's transfer threads). "default" is
// what `fixed_block_pool<Upstream>` gives without naming a policy (`per_cpu_cache_policy`).
// Pool variants: each free-list policy used directly, through `try_acquire_many` /
// `release_many` ("+bulk"), and through a per-thread `local_cache` ("+cache"); the default
// lists (no owner bias, no system call) and the opt-in `owner_biased<...>` lists ("biased_")
// side by side.
// The summary at the end prints the headline ratios from this run's figures.
//
// mimalloc and jemalloc are opened with dlopen(RTLD_LOCAL) and called through dlsym'd
// mi_malloc/mi_free and mallocx/dallocx: Debian's builds of both export unprefixed malloc/free,
// so linking them would silently replace glibc malloc for the glibc baseline. The program
// prints which library `malloc` resolves to so the baseline can be checked.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/heap_memory.hpp"

namespace {

using namespace xlamem;

constexpr std::size_t block_bytes = 64;  // XLA pools scalars; 64 B keeps blocks on own cache lines
constexpr std::size_t block_alignment = 64;
constexpr std::uint32_t block_count = 128;  // XLA's kNumElems
constexpr int burst = 64;

// The XLA HostMemoryPool shape: one allocation, absl::Mutex-like lock + std::queue<void*>,
// Acquire() -> StatusOr<Handle> (here result<handle>), move-only Handle releasing on
// destruction.
class xla_style_pool {
 public:
  class handle {
   public:
    handle(xla_style_pool* pool, void* ptr) : pool_(pool), ptr_(ptr) {}
    handle(handle&& other) noexcept
        : pool_(other.pool_), ptr_(std::exchange(other.ptr_, nullptr)) {}
    handle& operator=(handle&& other) noexcept {
      if (ptr_ != nullptr) pool_->release(ptr_);
      pool_ = other.pool_;
      ptr_ = std::exchange(other.ptr_, nullptr);
      return *this;
    }
    ~handle() {
      if (ptr_ != nullptr) pool_->release(ptr_);
    }
    void* data() const { return ptr_; }

   private:
    xla_style_pool* pool_;
    void* ptr_;
  };

  xla_style_pool()
      : memory_(static_cast<std::byte*>(
            ::operator new(block_count* block_bytes, std::align_val_t(block_alignment)))) {
    for (std::uint32_t i = 0; i < block_count; ++i) free_.push(memory_ + i * block_bytes);
  }
  ~xla_style_pool() { ::operator delete(memory_, std::align_val_t(block_alignment)); }

  result<handle> try_acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      return error(errc::resource_exhausted,
                   "All 128 elements in the host memory pool are in use.");
    }
    void* p = free_.front();
    free_.pop();
    return handle(this, p);
  }
  void release(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push(p);
  }

 private:
  std::byte* memory_;
  std::mutex mutex_;
  std::queue<void*> free_;
};

template <class F>
using pool_t = fixed_block_pool<aligned_heap_memory, F, fail_policy>;

template <class F, class E = fail_policy>
std::unique_ptr<fixed_block_pool<aligned_heap_memory, F, E>> make_pool() {
  return std::make_unique<fixed_block_pool<aligned_heap_memory, F, E>>(
      aligned_heap_memory{}, pool_options{.block_count = block_count,
                                          .block_size = block_bytes,
                                          .alignment = block_alignment,
                                          .name = "bench"});
}

using biased_lock_free = owner_biased<lock_free_policy>;
using biased_mutex_fifo = owner_biased<mutex_fifo_policy>;

// A pool two threads have used: an owner bias is revoked, so every call takes the
// synchronised path (compare-exchange, or the mutex), whichever thread calls. (The default
// lists have no bias: this changes nothing for them.)
template <class F>
std::unique_ptr<pool_t<F>> make_shared_pool() {
  auto pool = make_pool<F>();
  std::thread([&] { (void)pool->acquire(); }).join();  // claims a bias
  (void)pool->acquire();                               // revokes it
  return pool;
}

// The shared pools, used by the two-thread runs, the ":shared" runs and the local_cache
// variants; built in main(). The one-thread `biased_` runs without a suffix build their own
// pool, used by that thread alone (the owner bias holds, as for a pool that one worker owns).
std::unique_ptr<pool_t<per_cpu_cache_policy>> default_pool;
std::unique_ptr<pool_t<lock_free_policy>> lock_free_pool;
std::unique_ptr<pool_t<mutex_fifo_policy>> mutex_fifo_pool;
std::unique_ptr<pool_t<biased_lock_free>> biased_lock_free_pool;
std::unique_ptr<pool_t<biased_mutex_fifo>> biased_mutex_fifo_pool;
std::unique_ptr<pool_t<single_thread_policy>> single_thread_pool;
std::unique_ptr<xla_style_pool> xla_pool;

// mimalloc / jemalloc entry points, from dlopen.
void* (*mi_malloc_fn)(std::size_t) = nullptr;
void (*mi_free_fn)(void*) = nullptr;
void* (*je_mallocx_fn)(std::size_t, int) = nullptr;
void (*je_dallocx_fn)(void*, int) = nullptr;

// The XLA-shaped API: Acquire() -> StatusOr<Handle>.
void xla_pair(benchmark::State& state) {
  for (auto _ : state) {
    auto h = xla_pool->try_acquire();
    if (!h.has_value()) {
      state.SkipWithError("pool exhausted");
      break;
    }
    benchmark::DoNotOptimize(h->data());
  }
  state.SetItemsProcessed(state.iterations());
}

void xla_burst(benchmark::State& state) {
  std::vector<xla_style_pool::handle> held;
  held.reserve(burst);
  for (auto _ : state) {
    for (int i = 0; i < burst; ++i) {
      auto h = xla_pool->try_acquire();
      if (!h.has_value()) {
        state.SkipWithError("pool exhausted");
        return;
      }
      benchmark::DoNotOptimize(h->data());
      held.push_back(std::move(*h));
    }
    held.clear();
  }
  state.SetItemsProcessed(state.iterations() * burst);
}

// Our pools through `acquire()` (a handle, or out_of_memory thrown on exhaustion).
template <class Source>
void pool_pair(benchmark::State& state, Source& source) {
  for (auto _ : state) {
    auto h = source.acquire();
    benchmark::DoNotOptimize(h.data());
  }
  state.SetItemsProcessed(state.iterations());
}

template <class Source>
void pool_burst(benchmark::State& state, Source& source) {
  using handle = decltype(source.acquire());
  handle held[burst];
  for (auto _ : state) {
    for (auto& h : held) {
      h = source.acquire();
      benchmark::DoNotOptimize(h.data());
    }
    for (auto& h : held) h.reset();
  }
  state.SetItemsProcessed(state.iterations() * burst);
}

// One thread: a pool of its own (an owner bias holds). Two threads: the shared pool.
template <class F>
void owned_or_shared_pair(benchmark::State& state, pool_t<F>& shared) {
  if (state.threads() > 1) return pool_pair(state, shared);
  auto pool = make_pool<F>();
  pool_pair(state, *pool);
}

// A benchmark that runs `pattern(state, pool)` on a pool of its own, built in the (one)
// benchmark thread: an owner bias holds.
template <class F, class E = fail_policy, class Pattern>
auto on_own_pool(Pattern pattern) {
  return [pattern](benchmark::State& state) {
    auto pool = make_pool<F, E>();
    pattern(state, *pool);
  };
}

// try_acquire_many / release_many: one synchronised step per 64 blocks.
template <class Pool>
void pool_burst_bulk(benchmark::State& state, Pool& pool) {
  typename Pool::handle held[burst];
  for (auto _ : state) {
    if (!pool.try_acquire_many(held).has_value()) {
      state.SkipWithError("pool exhausted");
      return;
    }
    benchmark::DoNotOptimize(held[burst - 1].data());
    pool.release_many(held);
  }
  state.SetItemsProcessed(state.iterations() * burst);
}

// A per-thread local_cache in front of the shared pool (made by each benchmark thread).
template <class Pool>
void cached_pair(benchmark::State& state, Pool& pool) {
  typename Pool::local_cache cache(pool);
  pool_pair(state, cache);
}

template <class Pool>
void cached_burst(benchmark::State& state, Pool& pool) {
  typename Pool::local_cache cache(pool, 64);
  pool_burst(state, cache);
}

template <class Alloc, class Free>
void malloc_pair(benchmark::State& state, Alloc alloc, Free release) {
  for (auto _ : state) {
    void* p = alloc(block_bytes);
    benchmark::DoNotOptimize(p);
    release(p);
  }
  state.SetItemsProcessed(state.iterations());
}

template <class Alloc, class Free>
void malloc_burst(benchmark::State& state, Alloc alloc, Free release) {
  void* held[burst];
  for (auto _ : state) {
    for (auto& p : held) {
      p = alloc(block_bytes);
      benchmark::DoNotOptimize(p);
    }
    for (auto* p : held) release(p);
  }
  state.SetItemsProcessed(state.iterations() * burst);
}

void* glibc_alloc(std::size_t n) { return std::malloc(n); }
void glibc_free(void* p) { std::free(p); }
void* mi_alloc(std::size_t n) { return mi_malloc_fn(n); }
void mi_release(void* p) { mi_free_fn(p); }
void* je_alloc(std::size_t n) { return je_mallocx_fn(n, 0); }
void je_release(void* p) { je_dallocx_fn(p, 0); }

// Prints the headline ratios of variants and baselines, after the usual console output.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred) continue;
      auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      std::string name = r.benchmark_name();
      // With repetitions keep the median; otherwise the single run.
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name != "median") continue;
        name = name.substr(0, name.rfind('_'));
      } else if (r.repetitions > 1) {
        continue;
      }
      rate_[name] = it->second.value;
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nRatios (throughput of the first / throughput of the second; >1 means faster)\n");
    const std::string t1 = "/threads:1";
    const std::string t2 = "/real_time/threads:2";
    const std::string t8 = "/real_time/threads:8";
    std::printf(" The default pool (per_cpu_cache_policy) against every peer, every pattern:\n");
    for (const char* peer : {"glibc_malloc", "mimalloc", "jemalloc", "xla_mutex_queue"}) {
      const std::string p = peer;
      ratio("pair 1T: default / " + p, "pair/default" + t1, "pair/" + p + t1);
      ratio("pair 2T: default / " + p, "pair/default" + t2, "pair/" + p + t2);
      ratio("pair 8T: default / " + p, "pair/default" + t8, "pair/" + p + t8);
      ratio("burst: default / " + p, "burst/default", "burst/" + p);
      ratio("handoff: default / " + p, "handoff/default" + t2, "handoff/" + p + t2);
    }
    ratio("pair 1T: default / lock_free", "pair/default" + t1, "pair/lock_free" + t1);
    ratio("pair 1T: default / lock_free+cache (a placed local_cache)", "pair/default" + t1,
          "pair/lock_free+cache" + t1);
    ratio("handoff: default / lock_free", "handoff/default" + t2, "handoff/lock_free" + t2);
    std::printf(" Headline lines of the named lists (then the opt-in owner bias):\n");
    ratio("pair 1T: lock_free / xla_mutex_queue (>= 2)", "pair/lock_free" + t1,
          "pair/xla_mutex_queue" + t1);
    ratio("pair 1T: lock_free / glibc_malloc", "pair/lock_free" + t1, "pair/glibc_malloc" + t1);
    ratio("pair 1T: lock_free,wait_policy / glibc_malloc", "pair/lock_free,wait_policy" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: lock_free / floor (2 atomic RMW)", "pair/lock_free" + t1,
          "pair/floor_two_atomic_rmw" + t1);
    ratio("pair 1T: floor (2 atomic RMW) / glibc_malloc", "pair/floor_two_atomic_rmw" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: lock_free+cache / glibc_malloc", "pair/lock_free+cache" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: single_thread / glibc_malloc", "pair/single_thread" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: single_thread / xla_mutex_queue (>= 10)", "pair/single_thread" + t1,
          "pair/xla_mutex_queue" + t1);
    ratio("pair 1T: biased_lock_free (owned) / glibc_malloc", "pair/biased_lock_free" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: biased_lock_free:shared / glibc_malloc", "pair/biased_lock_free:shared" + t1,
          "pair/glibc_malloc" + t1);
    ratio("pair 1T: biased_lock_free (owned) / lock_free", "pair/biased_lock_free" + t1,
          "pair/lock_free" + t1);
    ratio("pair 1T: biased_lock_free:shared / lock_free", "pair/biased_lock_free:shared" + t1,
          "pair/lock_free" + t1);
    ratio("pair 1T: biased_mutex_fifo (owned) / mutex_fifo", "pair/biased_mutex_fifo" + t1,
          "pair/mutex_fifo" + t1);
    ratio("pair 2T: lock_free / xla_mutex_queue (>= 2)", "pair/lock_free" + t2,
          "pair/xla_mutex_queue" + t2);
    ratio("pair 2T: lock_free+cache / xla_mutex_queue (>= 2)", "pair/lock_free+cache" + t2,
          "pair/xla_mutex_queue" + t2);
    ratio("pair 2T: biased_lock_free / lock_free", "pair/biased_lock_free" + t2,
          "pair/lock_free" + t2);
    for (const char* policy :
         {"lock_free", "lock_free+bulk", "lock_free+cache", "mutex_fifo", "mutex_fifo+bulk",
          "mutex_fifo+cache", "biased_lock_free", "biased_lock_free:shared", "biased_mutex_fifo",
          "biased_mutex_fifo:shared", "single_thread", "single_thread+bulk"}) {
      ratio(std::string("burst: ") + policy + " / mimalloc", std::string("burst/") + policy,
            "burst/mimalloc");
    }
    std::printf(" Every pool variant against every peer:\n");
    for (const char* peer : {"xla_mutex_queue", "glibc_malloc", "mimalloc", "jemalloc"}) {
      for (const char* policy :
           {"lock_free", "lock_free+cache", "mutex_fifo", "mutex_fifo+cache", "biased_lock_free",
            "biased_lock_free:shared", "biased_mutex_fifo", "biased_mutex_fifo:shared",
            "single_thread"}) {
        ratio(std::string("pair 1T: ") + policy + " / " + peer, std::string("pair/") + policy + t1,
              std::string("pair/") + peer + t1);
      }
      for (const char* policy : {"lock_free", "lock_free+cache", "mutex_fifo", "mutex_fifo+cache",
                                 "biased_lock_free", "biased_mutex_fifo"}) {
        ratio(std::string("pair 2T: ") + policy + " / " + peer, std::string("pair/") + policy + t2,
              std::string("pair/") + peer + t2);
      }
      for (const char* policy :
           {"lock_free", "lock_free+bulk", "lock_free+cache", "mutex_fifo", "mutex_fifo+bulk",
            "mutex_fifo+cache", "biased_lock_free", "biased_lock_free:shared",
            "biased_mutex_fifo", "biased_mutex_fifo:shared", "single_thread",
            "single_thread+bulk"}) {
        ratio(std::string("burst: ") + policy + " / " + peer, std::string("burst/") + policy,
              std::string("burst/") + peer);
      }
    }
  }

 private:
  void ratio(const std::string& label, const std::string& a, const std::string& b) {
    auto ia = rate_.find(a);
    auto ib = rate_.find(b);
    if (ia == rate_.end() || ib == rate_.end() || ib->second <= 0) {
      std::printf("  %-58s     n/a (not run)\n", label.c_str());
      return;
    }
    std::printf("  %-58s  %6.2fx\n", label.c_str(), ia->second / ib->second);
  }
  std::map<std::string, double> rate_;
};

// A single-producer single-consumer ring of 32 slots: the hand-off channel every allocator
// in the hand-off rows shares (the same code around each, so the ratio is the allocator's).
template <class T>
class handoff_ring {
 public:
  static constexpr std::uint64_t size = 32;
  void put(T&& v) {
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    while (t - head_.load(std::memory_order_acquire) == size) std::this_thread::yield();
    slots_[t % size] = std::move(v);
    tail_.store(t + 1, std::memory_order_release);
  }
  T take() {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    while (tail_.load(std::memory_order_acquire) == h) std::this_thread::yield();
    T v = std::move(slots_[h % size]);
    head_.store(h + 1, std::memory_order_release);
    return v;
  }

 private:
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  alignas(64) T slots_[size]{};
};

// Thread 0 produces (acquires and hands over), thread 1 consumes (releases); both run the
// same iteration count. Items are hand-offs (counted on the producer).
template <class T, class Produce, class Consume>
void handoff(benchmark::State& state, Produce produce, Consume consume) {
  static handoff_ring<T>* ring = nullptr;
  if (state.thread_index() == 0) ring = new handoff_ring<T>();
  static std::atomic<int> ready{0};
  // Both threads see the ring before either starts.
  ready.fetch_add(1);
  while (ready.load() % 2 != 0) std::this_thread::yield();
  if (state.thread_index() == 0) {
    for (auto _ : state) ring->put(produce());
    state.SetItemsProcessed(state.iterations());
  } else {
    for (auto _ : state) consume(ring->take());
  }
  // Both done with the ring before it goes.
  ready.fetch_add(1);
  while (ready.load() % 2 != 0) std::this_thread::yield();
  if (state.thread_index() == 0) {
    delete ring;
    ring = nullptr;
  }
}

template <class Pool>
void pool_handoff(benchmark::State& state, Pool& pool) {
  using handle = typename Pool::handle;
  handoff<handle>(
      state, [&] { return pool.acquire(); }, [](handle h) { benchmark::DoNotOptimize(h.data()); });
}

void xla_handoff(benchmark::State& state) {
  using handle = std::optional<xla_style_pool::handle>;
  handoff<handle>(
      state, [] { return handle(*xla_pool->try_acquire()); },
      [](handle h) { benchmark::DoNotOptimize(h->data()); });
}

template <class Alloc, class Free>
void malloc_handoff(benchmark::State& state, Alloc alloc, Free release) {
  handoff<void*>(
      state, [&] { return alloc(block_bytes); }, [&](void* p) { release(p); });
}

// One thread: CPU time (the shared 2-core machine preempts us; CPU time is what the code
// costs). Two threads: wall-clock throughput of both together, the only honest measure of
// contention.
template <class Fn>
void add(const std::string& name, Fn fn, bool threaded) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->Threads(1);
  if (threaded) benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Threads(2);
}

// 1, 2 and 8 threads (8 on this 2-core machine: oversubscribed, threads preempted mid-call).
template <class Fn>
void add_oversubscribed(const std::string& name, Fn fn) {
  add(name, fn, true);
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Threads(8);
}

template <class Fn>
void add_handoff(const std::string& name, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Threads(2);
}

template <class Fn>
void add_single(const std::string& name, Fn fn) {
  add(name, fn, false);
}

// The floor of any shared (no thread cache) free list: one atomic read-modify-write to take a
// block and one to give it back.
void two_atomic_rmw(benchmark::State& state) {
  static std::atomic<std::uint64_t> word{0};
  for (auto _ : state) {
    word.fetch_add(1, std::memory_order_acq_rel);
    word.fetch_add(1, std::memory_order_acq_rel);
  }
  state.SetItemsProcessed(state.iterations());
}

[[maybe_unused]] void* open_library(const char* soname, char** argv) {
  void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) return lib;
  const std::string why = ::dlerror();
  // Debian's jemalloc uses initial-exec TLS; dlopen needs glibc's optional static TLS surplus,
  // which can only be raised before the process starts: re-execute once with it raised.
  if (why.find("static TLS") != std::string::npos &&
      std::getenv("XLAMEM_BENCH_REEXEC") == nullptr) {
    ::setenv("XLAMEM_BENCH_REEXEC", "1", 1);
    ::setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=65536", 1);
    ::execv("/proc/self/exe", argv);
  }
  std::fprintf(stderr, "alloc_bench: cannot open %s: %s\n", soname, why.c_str());
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  default_pool = make_pool<per_cpu_cache_policy>();
  lock_free_pool = make_pool<lock_free_policy>();
  mutex_fifo_pool = make_pool<mutex_fifo_policy>();
  biased_lock_free_pool = make_shared_pool<biased_lock_free>();
  biased_mutex_fifo_pool = make_shared_pool<biased_mutex_fifo>();
  single_thread_pool = make_pool<single_thread_policy>();
  xla_pool = std::make_unique<xla_style_pool>();

#ifdef XLAMEM_BENCH_MIMALLOC
  if (void* lib = open_library(XLAMEM_BENCH_MIMALLOC, argv)) {
    mi_malloc_fn = reinterpret_cast<void* (*)(std::size_t)>(::dlsym(lib, "mi_malloc"));
    mi_free_fn = reinterpret_cast<void (*)(void*)>(::dlsym(lib, "mi_free"));
  }
#endif
#ifdef XLAMEM_BENCH_JEMALLOC
  if (void* lib = open_library(XLAMEM_BENCH_JEMALLOC, argv)) {
    je_mallocx_fn = reinterpret_cast<void* (*)(std::size_t, int)>(::dlsym(lib, "mallocx"));
    je_dallocx_fn = reinterpret_cast<void (*)(void*, int)>(::dlsym(lib, "dallocx"));
  }
#endif
  Dl_info info{};
  void* (*malloc_ptr)(std::size_t) = &std::malloc;
  if (::dladdr(reinterpret_cast<void*>(malloc_ptr), &info) != 0 && info.dli_fname != nullptr) {
    std::printf("glibc baseline: malloc resolves to %s\n", info.dli_fname);
  }
  std::printf("mimalloc: %s, jemalloc: %s\n",
              mi_malloc_fn ? "mi_malloc/mi_free via dlopen" : "absent",
              je_mallocx_fn ? "mallocx/dallocx via dlopen" : "absent");

  // The default lists: no owner bias, so one pool serves every row (its first thread is no
  // different from any other).
  add_oversubscribed("pair/default", [](benchmark::State& s) { pool_pair(s, *default_pool); });
  add_oversubscribed("pair/lock_free", [](benchmark::State& s) { pool_pair(s, *lock_free_pool); });
  add_single("pair/lock_free,wait_policy",
             on_own_pool<lock_free_policy, wait_policy>([](auto& s, auto& p) { pool_pair(s, p); }));
  add(
      "pair/lock_free+cache", [](benchmark::State& s) { cached_pair(s, *lock_free_pool); }, true);
  add(
      "pair/mutex_fifo", [](benchmark::State& s) { pool_pair(s, *mutex_fifo_pool); }, true);
  add(
      "pair/mutex_fifo+cache", [](benchmark::State& s) { cached_pair(s, *mutex_fifo_pool); }, true);
  // The opt-in owner bias: one thread on a pool of its own (the bias holds), one thread on a
  // pool two threads have used (":shared", revoked), two threads on that pool.
  add(
      "pair/biased_lock_free",
      [](benchmark::State& s) { owned_or_shared_pair(s, *biased_lock_free_pool); }, true);
  add_single("pair/biased_lock_free:shared",
             [](benchmark::State& s) { pool_pair(s, *biased_lock_free_pool); });
  // An owned pool that waits when exhausted: its releases skip the waiter wake-up.
  add_single("pair/biased_lock_free,wait_policy",
             on_own_pool<biased_lock_free, wait_policy>([](auto& s, auto& p) { pool_pair(s, p); }));
  add(
      "pair/biased_mutex_fifo",
      [](benchmark::State& s) { owned_or_shared_pair(s, *biased_mutex_fifo_pool); }, true);
  add_single("pair/biased_mutex_fifo:shared",
             [](benchmark::State& s) { pool_pair(s, *biased_mutex_fifo_pool); });
  add_single("pair/single_thread", [](benchmark::State& s) { pool_pair(s, *single_thread_pool); });
  add_oversubscribed("pair/xla_mutex_queue", xla_pair);
  add_single("pair/floor_two_atomic_rmw", two_atomic_rmw);
  add_oversubscribed("pair/glibc_malloc",
                     [](benchmark::State& s) { malloc_pair(s, glibc_alloc, glibc_free); });
  if (mi_malloc_fn != nullptr && mi_free_fn != nullptr) {
    add_oversubscribed("pair/mimalloc",
                       [](benchmark::State& s) { malloc_pair(s, mi_alloc, mi_release); });
  }
  if (je_mallocx_fn != nullptr && je_dallocx_fn != nullptr) {
    add_oversubscribed("pair/jemalloc",
                       [](benchmark::State& s) { malloc_pair(s, je_alloc, je_release); });
  }

  add_handoff("handoff/default", [](benchmark::State& s) { pool_handoff(s, *default_pool); });
  add_handoff("handoff/lock_free", [](benchmark::State& s) { pool_handoff(s, *lock_free_pool); });
  add_handoff("handoff/xla_mutex_queue", xla_handoff);
  add_handoff("handoff/glibc_malloc",
              [](benchmark::State& s) { malloc_handoff(s, glibc_alloc, glibc_free); });
  if (mi_malloc_fn != nullptr && mi_free_fn != nullptr) {
    add_handoff("handoff/mimalloc",
                [](benchmark::State& s) { malloc_handoff(s, mi_alloc, mi_release); });
  }
  if (je_mallocx_fn != nullptr && je_dallocx_fn != nullptr) {
    add_handoff("handoff/jemalloc",
                [](benchmark::State& s) { malloc_handoff(s, je_alloc, je_release); });
  }

  const auto burst_pattern = [](auto& s, auto& p) { pool_burst(s, p); };
  const auto bulk_pattern = [](auto& s, auto& p) { pool_burst_bulk(s, p); };
  benchmark::RegisterBenchmark("burst/default",
                               [](benchmark::State& s) { pool_burst(s, *default_pool); });
  benchmark::RegisterBenchmark("burst/lock_free",
                               [](benchmark::State& s) { pool_burst(s, *lock_free_pool); });
  benchmark::RegisterBenchmark("burst/lock_free+bulk",
                               [](benchmark::State& s) { pool_burst_bulk(s, *lock_free_pool); });
  benchmark::RegisterBenchmark("burst/lock_free+cache",
                               [](benchmark::State& s) { cached_burst(s, *lock_free_pool); });
  benchmark::RegisterBenchmark("burst/mutex_fifo",
                               [](benchmark::State& s) { pool_burst(s, *mutex_fifo_pool); });
  benchmark::RegisterBenchmark("burst/mutex_fifo+bulk",
                               [](benchmark::State& s) { pool_burst_bulk(s, *mutex_fifo_pool); });
  benchmark::RegisterBenchmark("burst/mutex_fifo+cache",
                               [](benchmark::State& s) { cached_burst(s, *mutex_fifo_pool); });
  benchmark::RegisterBenchmark("burst/biased_lock_free",
                               on_own_pool<biased_lock_free>(burst_pattern));
  benchmark::RegisterBenchmark("burst/biased_lock_free+bulk",
                               on_own_pool<biased_lock_free>(bulk_pattern));
  benchmark::RegisterBenchmark("burst/biased_lock_free:shared",
                               [](benchmark::State& s) { pool_burst(s, *biased_lock_free_pool); });
  benchmark::RegisterBenchmark("burst/biased_mutex_fifo",
                               on_own_pool<biased_mutex_fifo>(burst_pattern));
  benchmark::RegisterBenchmark("burst/biased_mutex_fifo:shared",
                               [](benchmark::State& s) { pool_burst(s, *biased_mutex_fifo_pool); });
  benchmark::RegisterBenchmark("burst/single_thread",
                               [](benchmark::State& s) { pool_burst(s, *single_thread_pool); });
  benchmark::RegisterBenchmark("burst/single_thread+bulk", [](benchmark::State& s) {
    pool_burst_bulk(s, *single_thread_pool);
  });
  benchmark::RegisterBenchmark("burst/xla_mutex_queue", xla_burst);
  benchmark::RegisterBenchmark(
      "burst/glibc_malloc", [](benchmark::State& s) { malloc_burst(s, glibc_alloc, glibc_free); });
  if (mi_malloc_fn != nullptr && mi_free_fn != nullptr) {
    benchmark::RegisterBenchmark(
        "burst/mimalloc", [](benchmark::State& s) { malloc_burst(s, mi_alloc, mi_release); });
  }
  if (je_mallocx_fn != nullptr && je_dallocx_fn != nullptr) {
    benchmark::RegisterBenchmark(
        "burst/jemalloc", [](benchmark::State& s) { malloc_burst(s, je_alloc, je_release); });
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  single_thread_pool.reset();
  biased_mutex_fifo_pool.reset();
  biased_lock_free_pool.reset();
  mutex_fifo_pool.reset();
  lock_free_pool.reset();
  default_pool.reset();
  xla_pool.reset();
  return 0;
}
