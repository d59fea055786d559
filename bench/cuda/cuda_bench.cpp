// SPDX-License-Identifier: Apache-2.0
// GPU allocation costs, every contender in one run so the ratios are meaningful:
// - device_pair/<source>/<bytes>: one allocate + free for 256 B, 64 KiB and 16 MiB with
//   cuMemAlloc/cuMemFree, the driver's stream-ordered pool (synchronous interface, and pure
//   stream-ordered), VMM (with and without the synchronise before unmap), and fixed_block_pool
//   over cuMemAlloc'd device memory.
// - pinned_pair/<source>/<bytes>: cuMemHostAlloc/cuMemFreeHost against fixed_block_pool over
//   pinned memory, for 4 B (XLA's per-execution scalar), 256 B, 64 KiB and 16 MiB.
// - pinned_pool_threads/<free list>: acquire + release of a 4-byte pinned scalar from 1-8
//   threads, lock-free against mutex FIFO (XLA's HostMemoryPool design).
// bench/gpu/table.py turns the JSON into the table of docs/benchmarks.md, with ratios.
//
// Without a CUDA driver or device it prints why and exits 0 (writing a JSON file that says
// so when --benchmark_out is given). --fake-driver runs everything over the emulated driver of
// test/cuda/fake_driver.hpp instead: a smoke test of this program on machines without a GPU
// (its timings mean nothing).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "xlamem/alloc/exhaustion.hpp"
#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/free_list.hpp"
#include "xlamem/cuda/cuda.hpp"

using namespace xlamem;

namespace {

constexpr std::size_t device_alignment = 256;

// allocate + deallocate of `bytes` from `r`, per iteration.
template <class Resource>
void pair(benchmark::State& state, Resource& r, std::size_t bytes) {
  for (auto _ : state) {
    auto p = r.try_allocate(bytes, device_alignment);
    if (!p) {
      state.SkipWithError(p.error().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(*p);
    r.deallocate(*p, bytes, device_alignment);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

// acquire + release of one pool block, per iteration.
template <class Pool>
void acquire_release(benchmark::State& state, Pool& pool) {
  for (auto _ : state) {
    auto h = pool.try_acquire();
    if (!h) {
      state.SkipWithError(h.error().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(h->data());
  }
  state.counters["bytes"] =
      benchmark::Counter(static_cast<double>(pool.block_size()), benchmark::Counter::kAvgThreads);
}

std::string size_name(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

// Everything the benchmarks use, created once.
struct gpu_state {
  std::shared_ptr<const cuda_driver> driver;
  std::optional<cuda_device_memory<>> device;
  std::optional<cuda_async_memory<>> async;
  std::optional<cuda_vmm_device_memory<>> vmm;
  std::optional<cuda_vmm_device_memory<>> vmm_nosync;
  std::optional<cuda_pinned_host_memory<>> pinned_mem;
  std::vector<std::unique_ptr<cuda_device_pool<>>> device_pools;
  std::vector<std::unique_ptr<cuda_pinned_pool<>>> pinned_pools;
  std::unique_ptr<cuda_pinned_pool<lock_free_policy>> scalar_lock_free;
  std::unique_ptr<cuda_pinned_pool<mutex_fifo_policy>> scalar_mutex_fifo;
};

template <class T>
bool ok(const result<T>& r, const char* what) {
  if (r) return true;
  std::fprintf(stderr, "cuda_bench: %s: %s\n", what, r.error().to_string().c_str());
  return false;
}

int skip(const std::string& reason, int argc, char** argv) {
  std::printf("cuda_bench: skipped: %s\n", reason.c_str());
  for (int i = 1; i < argc; ++i) {
    const char* prefix = "--benchmark_out=";
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) {
      if (std::FILE* f = std::fopen(argv[i] + std::strlen(prefix), "w")) {
        std::string escaped;
        for (char c : reason) {
          if (c == '"' || c == '\\') escaped += '\\';
          escaped += c;
        }
        std::fprintf(f, "{\n  \"context\": {\"skipped\": \"%s\"},\n  \"benchmarks\": []\n}\n",
                     escaped.c_str());
        std::fclose(f);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool fake = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fake-driver") == 0) {
      fake = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int nargs = static_cast<int>(args.size());

  gpu_state g;
  if (fake) {
    xlamem::test::fake_gpu::reset();
    xlamem::test::fake_gpu::get().memory_limit = std::size_t(8) << 30;
    auto d = cuda_driver::from_api(xlamem::test::fake_api(), "fake driver");
    if (!ok(d, "fake driver")) return 1;
    g.driver = *d;
  } else {
    auto d = cuda_driver::load();
    if (!d) return skip(d.error().to_string(), nargs, args.data());
    auto n = (*d)->device_count();
    if (!n) return skip(n.error().to_string(), nargs, args.data());
    if (*n == 0) return skip("the CUDA driver reports no device", nargs, args.data());
    g.driver = *d;
  }
  auto props = g.driver->device_properties(0);
  if (!ok(props, "device_properties")) return 1;
  benchmark::AddCustomContext("gpu", props->name);
  benchmark::AddCustomContext("gpu_memory_mib", std::to_string(props->total_memory >> 20));
  benchmark::AddCustomContext("cuda_driver_version", std::to_string(g.driver->version()));
  benchmark::AddCustomContext("cuda_driver", g.driver->source());

  auto device = cuda_device_memory<>::create(g.driver, 0);
  if (!ok(device, "cuda_device_memory")) return 1;
  g.device.emplace(*device);
  auto pinned_mem = cuda_pinned_host_memory<>::create(g.driver, 0);
  if (!ok(pinned_mem, "cuda_pinned_host_memory")) return 1;
  g.pinned_mem.emplace(*pinned_mem);
  if (auto a = cuda_async_memory<>::create(g.driver, 0); ok(a, "cuda_async_memory"))
    g.async.emplace(*a);
  if (auto v = cuda_vmm_device_memory<>::create(g.driver, 0); ok(v, "cuda_vmm_device_memory"))
    g.vmm.emplace(*v);
  cuda_vmm_options nosync;
  nosync.synchronize_before_unmap = false;
  if (auto v = cuda_vmm_device_memory<>::create(g.driver, 0, nosync);
      ok(v, "cuda_vmm_device_memory")) {
    g.vmm_nosync.emplace(*v);
  }

  const std::size_t device_sizes[] = {256, std::size_t(64) << 10, std::size_t(16) << 20};
  for (std::size_t bytes : device_sizes) {
    const std::string s = size_name(bytes);
    benchmark::RegisterBenchmark(("device_pair/cuMemAlloc/" + s).c_str(),
                                 [&g, bytes](benchmark::State& st) { pair(st, *g.device, bytes); });
    if (g.async) {
      benchmark::RegisterBenchmark(
          ("device_pair/async_pool/" + s).c_str(),
          [&g, bytes](benchmark::State& st) { pair(st, *g.async, bytes); });
      benchmark::RegisterBenchmark(("device_pair/async_pool_stream_ordered/" + s).c_str(),
                                   [&g, bytes](benchmark::State& st) {
                                     for (auto _ : st) {
                                       auto p =
                                           g.async->try_allocate_async(bytes, g.async->stream());
                                       if (!p) {
                                         st.SkipWithError(p.error().to_string().c_str());
                                         break;
                                       }
                                       benchmark::DoNotOptimize(*p);
                                       g.async->deallocate_async(*p, bytes, g.async->stream());
                                     }
                                     (void)g.async->synchronize();
                                     st.counters["bytes"] = static_cast<double>(bytes);
                                   });
    }
    if (g.vmm) {
      benchmark::RegisterBenchmark(("device_pair/vmm/" + s).c_str(),
                                   [&g, bytes](benchmark::State& st) { pair(st, *g.vmm, bytes); });
    }
    if (g.vmm_nosync) {
      benchmark::RegisterBenchmark(
          ("device_pair/vmm_nosync/" + s).c_str(),
          [&g, bytes](benchmark::State& st) { pair(st, *g.vmm_nosync, bytes); });
    }
    pool_options o;
    o.block_count = bytes >= (std::size_t(16) << 20) ? 16 : 64;
    o.block_size = bytes;
    o.alignment = device_alignment;
    o.name = "device pool " + s;
    auto pool = cuda_device_pool<>::create(*g.device, o);
    if (ok(pool, "cuda_device_pool")) {
      g.device_pools.push_back(std::move(*pool));
      auto* p = g.device_pools.back().get();
      benchmark::RegisterBenchmark(("device_pair/fixed_block_pool/" + s).c_str(),
                                   [p](benchmark::State& st) { acquire_release(st, *p); });
    }
  }

  const std::size_t pinned_sizes[] = {4, 256, std::size_t(64) << 10, std::size_t(16) << 20};
  for (std::size_t bytes : pinned_sizes) {
    const std::string s = size_name(bytes);
    benchmark::RegisterBenchmark(
        ("pinned_pair/cuMemHostAlloc/" + s).c_str(),
        [&g, bytes](benchmark::State& st) { pair(st, *g.pinned_mem, bytes); });
    pool_options o;
    o.block_count = bytes >= (std::size_t(16) << 20) ? 16 : 128;
    o.block_size = bytes;
    o.alignment = bytes < 256 ? bytes : 256;
    o.name = "pinned pool " + s;
    auto pool = cuda_pinned_pool<>::create(*g.pinned_mem, o);
    if (ok(pool, "cuda_pinned_pool")) {
      g.pinned_pools.push_back(std::move(*pool));
      auto* p = g.pinned_pools.back().get();
      benchmark::RegisterBenchmark(("pinned_pair/fixed_block_pool/" + s).c_str(),
                                   [p](benchmark::State& st) { acquire_release(st, *p); });
    }
  }

  pool_options scalar;
  scalar.block_count = 128;
  scalar.block_size = 4;
  scalar.alignment = 4;
  scalar.name = "pinned scalars";
  if (auto p = cuda_pinned_pool<lock_free_policy>::create(*g.pinned_mem, scalar);
      ok(p, "lock-free pool")) {
    g.scalar_lock_free = std::move(*p);
    benchmark::RegisterBenchmark(
        "pinned_pool_threads/lock_free",
        [&g](benchmark::State& st) { acquire_release(st, *g.scalar_lock_free); })
        ->ThreadRange(1, 8)
        ->UseRealTime();
  }
  if (auto p = cuda_pinned_pool<mutex_fifo_policy>::create(*g.pinned_mem, scalar);
      ok(p, "mutex pool")) {
    g.scalar_mutex_fifo = std::move(*p);
    benchmark::RegisterBenchmark(
        "pinned_pool_threads/mutex_fifo",
        [&g](benchmark::State& st) { acquire_release(st, *g.scalar_mutex_fifo); })
        ->ThreadRange(1, 8)
        ->UseRealTime();
  }

  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
