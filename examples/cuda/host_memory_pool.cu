// SPDX-License-Identifier: Apache-2.0
// XLA's HostMemoryPool use case with xlamem: a while loop whose condition is computed on the
// device. Every iteration the host needs the predicate, so it takes one pinned scalar from a
// pool (no cuMemHostAlloc per execution), copies the device predicate into it, and reads it.
// Four "executions" run concurrently from four threads, as several XLA executables would; the
// pool's 128 values bound how many can be in flight, and a 129th acquire is refused with a
// clear resource_exhausted error instead of blocking.
//
// Built with nvcc (the kernels); the memory goes through xlamem's driver table. Without a CUDA
// driver or device it prints why and exits 0.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "xlamem/cuda/cuda.hpp"

namespace {

// The loop body: one step of the loop state.
__global__ void body(std::int32_t* counter) { *counter += 1; }

// The loop condition: pred = counter < trip_count.
__global__ void condition(const std::int32_t* counter, std::int32_t trip_count,
                          std::int32_t* pred) {
  *pred = *counter < trip_count ? 1 : 0;
}

__global__ void reset(std::int32_t* counter) { *counter = 0; }

// One execution of the while loop; returns the iterations the host observed, or -1.
int run_loop(const xlamem::cuda_driver& driver, const xlamem::cuda_primary_context& context,
             xlamem::cuda_pinned_scalar_pool<std::int32_t>& pool, std::int32_t* state,
             std::int32_t trip_count) {
  std::int32_t* counter = state;
  std::int32_t* pred = state + 1;
  reset<<<1, 1>>>(counter);
  int iterations = 0;
  for (;;) {
    condition<<<1, 1>>>(counter, trip_count, pred);
    if (cudaGetLastError() != cudaSuccess) return -1;
    // Per execution: a pinned scalar from the pool, the device predicate copied into it.
    auto value = pool.try_acquire();
    if (!value) {
      std::printf("  %s\n", value.error().to_string().c_str());
      return -1;
    }
    auto scope = context.make_current();
    if (!scope) return -1;
    const CUresult r = driver.api().memcpy_dtoh(value->get(), xlamem::detail::to_deviceptr(pred),
                                                sizeof(std::int32_t));
    if (auto e = driver.check(r, "cuMemcpyDtoH(predicate)"); !e) {
      std::printf("  %s\n", e.error().to_string().c_str());
      return -1;
    }
    if (**value == 0) break;  // the handle goes back to the pool here
    body<<<1, 1>>>(counter);
    ++iterations;
  }
  return iterations;
}

}  // namespace

int main() {
  auto driver = xlamem::cuda_driver::load();
  if (!driver) {
    std::printf("host_memory_pool: skipped: %s\n", driver.error().to_string().c_str());
    return 0;
  }
  auto count = (*driver)->device_count();
  if (!count || *count == 0) {
    std::printf("host_memory_pool: skipped: %s\n",
                count ? "the CUDA driver reports no device" : count.error().to_string().c_str());
    return 0;
  }

  // One pool per device, as XLA keeps one per StreamExecutor: 128 int32 in pinned memory.
  auto pool = xlamem::cuda_pinned_scalar_pool<std::int32_t>::create(*driver, 0);
  auto device = xlamem::cuda_device_memory<>::create(*driver, 0);
  if (!pool || !device) {
    std::printf("host_memory_pool: %s\n",
                (!pool ? pool.error() : device.error()).to_string().c_str());
    return 1;
  }

  constexpr int executions = 4;
  std::vector<xlamem::device_allocation> states;
  for (int e = 0; e < executions; ++e) {
    states.push_back(xlamem::device_allocation::allocate(*device, 2 * sizeof(std::int32_t)));
  }
  std::printf("pool: %u pinned int32 values; device state: %s ...\n", pool->count(),
              states[0].to_string().c_str());

  std::vector<int> observed(executions, 0);
  std::vector<std::thread> threads;
  for (int e = 0; e < executions; ++e) {
    threads.emplace_back([&, e] {
      const auto i = static_cast<std::size_t>(e);
      cudaSetDevice(0);
      observed[i] = run_loop(**driver, device->context(), *pool,
                             static_cast<std::int32_t*>(states[i].address()), 10 * (e + 1));
    });
  }
  for (auto& t : threads) t.join();
  bool ok = true;
  for (int e = 0; e < executions; ++e) {
    const int got = observed[static_cast<std::size_t>(e)];
    std::printf("execution %d: %d iterations (expected %d)\n", e, got, 10 * (e + 1));
    ok = ok && got == 10 * (e + 1);
  }

  // More executions in flight than values: the 129th acquire fails at once, naming the pool.
  std::vector<xlamem::cuda_pinned_scalar_pool<std::int32_t>::handle> held;
  for (std::uint32_t i = 0; i < pool->count(); ++i) held.push_back(pool->acquire());
  auto extra = pool->try_acquire();
  std::printf("acquire #%u: %s\n", pool->count() + 1,
              extra ? "unexpectedly succeeded" : extra.error().to_string().c_str());
  ok = ok && !extra;
  return ok ? 0 : 1;
}
