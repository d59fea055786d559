// SPDX-License-Identifier: Apache-2.0
// A tour of xlamem/alloc: the XLA HostMemoryPool use case (a predicate read back per loop
// iteration) with a fixed-block pool, a per-thread cache, adaptors that measure and limit, and
// the pluggable host allocator with DMA hooks.
#include <cstdio>
#include <thread>
#include <vector>

#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/heap_memory.hpp"
#include "xlamem/alloc/host_memory_allocator.hpp"
#include "xlamem/alloc/limiting_adaptor.hpp"
#include "xlamem/alloc/statistics_adaptor.hpp"

using namespace xlamem;

int main() {
  // 1. XLA's pool: 128 one-byte predicates, mutex + FIFO, fail when exhausted. Swap the
  //    policies to get a lock-free pool that waits up to 10 ms instead of failing. (With CUDA,
  //    the upstream would be the pinned host memory resource.)
  statistics_adaptor<aligned_heap_memory> upstream{aligned_heap_memory{}};
  fixed_block_pool<resource_ref<decltype(upstream)>, lock_free_policy, wait_policy> pool(
      borrow(upstream),
      pool_options{.block_count = 128, .block_size = 1, .alignment = 1, .name = "while-predicates"},
      wait_policy{std::chrono::milliseconds(10)});
  std::printf("pool '%s': %u blocks of %zu byte(s) from %lld upstream allocation(s)\n",
              pool.name().c_str(), pool.block_count(), pool.block_size(),
              static_cast<long long>(upstream.statistics().total_count));

  {
    auto predicate = pool.acquire();  // a move-only handle
    *predicate.get<bool>() = true;    // as if copied back from the device
    std::printf("predicate = %s\n", *predicate.get<bool>() ? "true" : "false");
    auto wrong = predicate.try_get<double>();  // an 8-byte type does not fit a 1-byte block
    std::printf("get<double>: %s\n", wrong.has_value() ? "ok" : wrong.error().to_string().c_str());
  }  // released here

  // 2. Worker threads with their own cache: acquire/release without atomics.
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t) {
    workers.emplace_back([&pool] {
      decltype(pool)::local_cache cache(pool, 16);
      for (int i = 0; i < 100000; ++i) {
        auto h = cache.acquire();
        *h.get<bool>() = (i & 1) != 0;
      }
    });
  }
  for (auto& w : workers) w.join();

  // 3. Exhaustion is an error naming the pool, N and B.
  fixed_block_pool<aligned_heap_memory, mutex_fifo_policy> tiny(
      aligned_heap_memory{}, pool_options{.block_count = 2, .block_size = 4, .name = "tiny"});
  auto a = tiny.acquire();
  auto b = tiny.acquire();
  auto c = tiny.try_acquire();
  std::printf("%s\n", c.error().to_string().c_str());

  // 4. The pluggable host allocator over a capped heap, with DMA hooks.
  limiting_adaptor<aligned_heap_memory> capped(aligned_heap_memory{}, 1 << 20);
  host_memory_allocator staging(
      borrow(capped),
      host_allocator_options{
          .alignment = 4096,
          .dma = {[](void*, std::optional<int> device, void*, std::size_t bytes) -> result<void> {
                    std::printf("map %zu bytes for device %d\n", bytes, device.value_or(-1));
                    return {};
                  },
                  [](void*, std::optional<int>, void*) -> result<void> { return {}; }, nullptr}});
  {
    owned_host_ptr buffer = staging.allocate(64 * 1024, host_allocate_options{.local_device = 0});
    std::printf("staging buffer at alignment 4096: %s, %zu bytes in use\n",
                is_aligned(buffer.get(), 4096) ? "yes" : "no", capped.used());
  }
  auto too_big = staging.try_allocate(2 << 20);
  std::printf("%s\n", too_big.error().to_string().c_str());
  return 0;
}
