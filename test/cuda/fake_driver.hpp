// SPDX-License-Identifier: Apache-2.0
// A fake CUDA driver for the CPU tests: a cuda_driver_api table whose entry points emulate a
// GPU with host memory (device pointers are host addresses), track every allocation, mapping,
// registration, context switch and pool, and fail on request. It lets the tests check the
// resources' logic (context restore, error messages, cleanup of partial work, logging) on a
// machine without a GPU. Test-only: its state is one process-wide object guarded by a mutex.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "xlamem/cuda/driver.hpp"

namespace xlamem::test {

struct fake_gpu {
  // Configuration (set by a test before it creates resources).
  int device_count = 1;
  CUresult init_result = CUDA_SUCCESS;
  bool vmm_supported = true;
  bool pools_supported = true;
  std::size_t granularity = 2u << 20;
  std::size_t memory_limit = std::size_t(1) << 30;  // bytes of "device memory"

  // Failure injection: the next call of that name returns the result, once.
  std::map<std::string, CUresult> fail_next;

  // Observations.
  int retained[8] = {};
  std::map<std::uintptr_t, std::size_t> device_allocations;  // base -> size (cuMemAlloc)
  std::size_t device_bytes = 0;
  std::map<std::uintptr_t, std::size_t> host_allocations;  // cuMemHostAlloc
  std::vector<unsigned int> host_alloc_flags;
  std::map<std::uintptr_t, std::size_t> registrations;              // cuMemHostRegister
  std::map<CUmemGenericAllocationHandle, std::size_t> vmm_handles;  // not yet released
  std::map<std::uintptr_t, std::size_t> vmm_reservations;           // VA ranges
  std::map<std::uintptr_t, CUmemGenericAllocationHandle> vmm_mappings;
  std::set<CUmemGenericAllocationHandle> vmm_released_but_mapped;
  int access_sets = 0;
  int ctx_synchronizes = 0;
  int context_switches = 0;
  std::vector<CUcontext> contexts_at_alloc;  // current context seen by each cuMemAlloc
  // Pools and streams.
  int pools_live = 0;
  int streams_live = 0;
  int stream_syncs = 0;
  std::uint64_t release_threshold = 0;
  std::uint64_t pool_used = 0, pool_used_high = 0, pool_reserved = 0, pool_reserved_high = 0;
  std::map<std::uintptr_t, std::size_t> pool_allocations;

  std::mutex mutex;
  CUmemGenericAllocationHandle next_handle = 1;
  char context_storage[8] = {};
  char pool_storage[4] = {};
  char stream_storage[4] = {};

  static fake_gpu& get() {
    static fake_gpu instance;
    return instance;
  }
  static CUcontext& current() {
    thread_local CUcontext c = nullptr;
    return c;
  }
  // Resets every observation and the configuration (call at the start of a test).
  static void reset() {
    fake_gpu& f = get();
    std::lock_guard<std::mutex> lock(f.mutex);
    for (auto& [p, n] : f.device_allocations)
      ::operator delete(reinterpret_cast<void*>(p), std::align_val_t(256));
    for (auto& [p, n] : f.host_allocations)
      ::operator delete(reinterpret_cast<void*>(p), std::align_val_t(4096));
    for (auto& [p, n] : f.vmm_reservations)
      ::operator delete(reinterpret_cast<void*>(p), std::align_val_t(4096));
    for (auto& [p, n] : f.pool_allocations)
      ::operator delete(reinterpret_cast<void*>(p), std::align_val_t(256));
    f.device_count = 1;
    f.init_result = CUDA_SUCCESS;
    f.vmm_supported = f.pools_supported = true;
    f.granularity = 2u << 20;
    f.memory_limit = std::size_t(1) << 30;
    f.fail_next.clear();
    std::fill(std::begin(f.retained), std::end(f.retained), 0);
    f.device_allocations.clear();
    f.device_bytes = 0;
    f.host_allocations.clear();
    f.host_alloc_flags.clear();
    f.registrations.clear();
    f.vmm_handles.clear();
    f.vmm_reservations.clear();
    f.vmm_mappings.clear();
    f.vmm_released_but_mapped.clear();
    f.access_sets = f.ctx_synchronizes = f.context_switches = 0;
    f.contexts_at_alloc.clear();
    f.pools_live = f.streams_live = f.stream_syncs = 0;
    f.release_threshold = 0;
    f.pool_used = f.pool_used_high = f.pool_reserved = f.pool_reserved_high = 0;
    f.pool_allocations.clear();
    current() = nullptr;
  }

  CUresult injected(const char* call) {
    auto it = fail_next.find(call);
    if (it == fail_next.end()) return CUDA_SUCCESS;
    const CUresult r = it->second;
    fail_next.erase(it);
    return r;
  }
  CUcontext context_of(int ordinal) {
    return reinterpret_cast<CUcontext>(&context_storage[ordinal]);
  }
  bool is_context(CUcontext c) {
    auto* p = reinterpret_cast<char*>(c);
    return p >= context_storage && p < context_storage + 8;
  }
};

#define XLAMEM_FAKE_LOCK         \
  fake_gpu& f = fake_gpu::get(); \
  std::lock_guard<std::mutex> lock(f.mutex)
#define XLAMEM_FAKE_INJECT(call) \
  if (const CUresult injected_ = f.injected(call); injected_ != CUDA_SUCCESS) return injected_

inline CUresult fake_init(unsigned int) {
  XLAMEM_FAKE_LOCK;
  return f.init_result;
}
inline CUresult fake_driver_get_version(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
inline CUresult fake_get_error_name(CUresult r, const char** s) {
  *s = detail::cu_result_name(r);
  return *s != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
inline CUresult fake_get_error_string(CUresult r, const char** s) {
  *s = detail::cu_result_description(r);
  return *s != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
inline CUresult fake_device_get_count(int* n) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuDeviceGetCount");
  *n = f.device_count;
  return CUDA_SUCCESS;
}
inline CUresult fake_device_get(CUdevice* d, int ordinal) {
  XLAMEM_FAKE_LOCK;
  if (ordinal < 0 || ordinal >= f.device_count) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
inline CUresult fake_device_get_name(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<std::size_t>(len), "%s", "xlamem fake GPU");
  return CUDA_SUCCESS;
}
inline CUresult fake_device_get_attribute(int* v, CUdevice_attribute a, CUdevice) {
  XLAMEM_FAKE_LOCK;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *v = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      *v = f.vmm_supported ? 1 : 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      *v = f.pools_supported ? 1 : 0;
      break;
    default:
      *v = 0;
  }
  return CUDA_SUCCESS;
}
inline CUresult fake_device_total_mem(std::size_t* bytes, CUdevice) {
  XLAMEM_FAKE_LOCK;
  *bytes = f.memory_limit;
  return CUDA_SUCCESS;
}
inline CUresult fake_primary_ctx_retain(CUcontext* c, CUdevice d) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuDevicePrimaryCtxRetain");
  ++f.retained[d];
  *c = f.context_of(d);
  return CUDA_SUCCESS;
}
inline CUresult fake_primary_ctx_release(CUdevice d) {
  XLAMEM_FAKE_LOCK;
  if (f.retained[d] == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --f.retained[d];
  return CUDA_SUCCESS;
}
inline CUresult fake_ctx_get_current(CUcontext* c) {
  *c = fake_gpu::current();
  return CUDA_SUCCESS;
}
inline CUresult fake_ctx_set_current(CUcontext c) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuCtxSetCurrent");
  ++f.context_switches;
  fake_gpu::current() = c;
  return CUDA_SUCCESS;
}
inline CUresult fake_ctx_synchronize() {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuCtxSynchronize");
  if (!f.is_context(fake_gpu::current())) return CUDA_ERROR_INVALID_CONTEXT;
  ++f.ctx_synchronizes;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_alloc(CUdeviceptr* p, std::size_t n) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemAlloc");
  if (!f.is_context(fake_gpu::current())) return CUDA_ERROR_INVALID_CONTEXT;
  f.contexts_at_alloc.push_back(fake_gpu::current());
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  if (f.device_bytes + n > f.memory_limit) return CUDA_ERROR_OUT_OF_MEMORY;
  void* m = ::operator new(n, std::align_val_t(256));
  f.device_allocations[reinterpret_cast<std::uintptr_t>(m)] = n;
  f.device_bytes += n;
  *p = reinterpret_cast<std::uintptr_t>(m);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_free(CUdeviceptr p) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemFree");
  if (!f.is_context(fake_gpu::current())) return CUDA_ERROR_INVALID_CONTEXT;
  auto it = f.device_allocations.find(static_cast<std::uintptr_t>(p));
  if (it == f.device_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  f.device_bytes -= it->second;
  ::operator delete(reinterpret_cast<void*>(it->first), std::align_val_t(256));
  f.device_allocations.erase(it);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_get_address_range(CUdeviceptr* base, std::size_t* size, CUdeviceptr p) {
  XLAMEM_FAKE_LOCK;
  for (auto& [b, n] : f.device_allocations) {
    if (p >= b && p < b + n) {
      if (base != nullptr) *base = b;
      if (size != nullptr) *size = n;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}
inline CUresult fake_memcpy_htod(CUdeviceptr d, const void* h, std::size_t n) {
  std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(d)), h, n);
  return CUDA_SUCCESS;
}
inline CUresult fake_memcpy_dtoh(void* h, CUdeviceptr d, std::size_t n) {
  std::memcpy(h, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(d)), n);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_host_alloc(void** p, std::size_t n, unsigned int flags) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemHostAlloc");
  if (!f.is_context(fake_gpu::current())) return CUDA_ERROR_INVALID_CONTEXT;
  void* m = ::operator new(n, std::align_val_t(4096));
  f.host_allocations[reinterpret_cast<std::uintptr_t>(m)] = n;
  f.host_alloc_flags.push_back(flags);
  *p = m;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_free_host(void* p) {
  XLAMEM_FAKE_LOCK;
  auto it = f.host_allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == f.host_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  ::operator delete(p, std::align_val_t(4096));
  f.host_allocations.erase(it);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_host_register(void* p, std::size_t n, unsigned int) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemHostRegister");
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (auto& [b, m] : f.registrations) {
    if (a < b + m && b < a + n) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  f.registrations[a] = n;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_host_unregister(void* p) {
  XLAMEM_FAKE_LOCK;
  if (f.registrations.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) {
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_host_get_device_pointer(CUdeviceptr* d, void* p, unsigned int) {
  *d = reinterpret_cast<std::uintptr_t>(p);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_create(CUmemGenericAllocationHandle* h, std::size_t n,
                                const CUmemAllocationProp* prop, unsigned long long) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemCreate");
  if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || n % f.granularity != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *h = f.next_handle++;
  f.vmm_handles[*h] = n;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_release(CUmemGenericAllocationHandle h) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemRelease");
  if (f.vmm_handles.erase(h) == 0) return CUDA_ERROR_INVALID_VALUE;
  for (auto& [p, mh] : f.vmm_mappings) {
    if (mh == h) f.vmm_released_but_mapped.insert(h);
  }
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_address_reserve(CUdeviceptr* p, std::size_t n, std::size_t align,
                                         CUdeviceptr, unsigned long long) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemAddressReserve");
  if (n % f.granularity != 0) return CUDA_ERROR_INVALID_VALUE;
  // Backed by host memory so tests may touch it; aligned to at most a page (the fake does not
  // need the real alignment, only the bookkeeping).
  (void)align;
  void* m = ::operator new(n, std::align_val_t(4096));
  f.vmm_reservations[reinterpret_cast<std::uintptr_t>(m)] = n;
  *p = reinterpret_cast<std::uintptr_t>(m);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_address_free(CUdeviceptr p, std::size_t n) {
  XLAMEM_FAKE_LOCK;
  auto it = f.vmm_reservations.find(static_cast<std::uintptr_t>(p));
  if (it == f.vmm_reservations.end() || it->second != n) return CUDA_ERROR_INVALID_VALUE;
  ::operator delete(reinterpret_cast<void*>(it->first), std::align_val_t(4096));
  f.vmm_reservations.erase(it);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_map(CUdeviceptr p, std::size_t n, std::size_t,
                             CUmemGenericAllocationHandle h, unsigned long long) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemMap");
  auto r = f.vmm_reservations.find(static_cast<std::uintptr_t>(p));
  auto hh = f.vmm_handles.find(h);
  if (r == f.vmm_reservations.end() || hh == f.vmm_handles.end() || r->second != n ||
      hh->second != n) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  f.vmm_mappings[static_cast<std::uintptr_t>(p)] = h;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_unmap(CUdeviceptr p, std::size_t n) {
  XLAMEM_FAKE_LOCK;
  auto it = f.vmm_mappings.find(static_cast<std::uintptr_t>(p));
  auto r = f.vmm_reservations.find(static_cast<std::uintptr_t>(p));
  if (it == f.vmm_mappings.end() || r == f.vmm_reservations.end() || r->second != n) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  f.vmm_released_but_mapped.erase(it->second);
  f.vmm_mappings.erase(it);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_set_access(CUdeviceptr p, std::size_t, const CUmemAccessDesc* desc,
                                    std::size_t count) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemSetAccess");
  if (f.vmm_mappings.count(static_cast<std::uintptr_t>(p)) == 0 || count != 1 ||
      desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  ++f.access_sets;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_get_allocation_granularity(std::size_t* g, const CUmemAllocationProp*,
                                                    CUmemAllocationGranularity_flags) {
  XLAMEM_FAKE_LOCK;
  *g = f.granularity;
  return CUDA_SUCCESS;
}
inline CUresult fake_stream_create(CUstream* s, unsigned int) {
  XLAMEM_FAKE_LOCK;
  ++f.streams_live;
  *s = reinterpret_cast<CUstream>(&f.stream_storage[0]);
  return CUDA_SUCCESS;
}
inline CUresult fake_stream_destroy(CUstream) {
  XLAMEM_FAKE_LOCK;
  --f.streams_live;
  return CUDA_SUCCESS;
}
inline CUresult fake_stream_synchronize(CUstream) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuStreamSynchronize");
  ++f.stream_syncs;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_pool_create(CUmemoryPool* p, const CUmemPoolProps* props) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemPoolCreate");
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  ++f.pools_live;
  *p = reinterpret_cast<CUmemoryPool>(&f.pool_storage[0]);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_pool_destroy(CUmemoryPool) {
  XLAMEM_FAKE_LOCK;
  --f.pools_live;
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_pool_set_attribute(CUmemoryPool, CUmemPool_attribute a, void* v) {
  XLAMEM_FAKE_LOCK;
  const auto value = *static_cast<cuuint64_t*>(v);
  switch (a) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      f.release_threshold = value;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (value != 0) return CUDA_ERROR_INVALID_VALUE;
      f.pool_used_high = f.pool_used;
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (value != 0) return CUDA_ERROR_INVALID_VALUE;
      f.pool_reserved_high = f.pool_reserved;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_pool_get_attribute(CUmemoryPool, CUmemPool_attribute a, void* v) {
  XLAMEM_FAKE_LOCK;
  auto* out = static_cast<cuuint64_t*>(v);
  switch (a) {
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      *out = f.pool_used;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      *out = f.pool_used_high;
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      *out = f.pool_reserved;
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      *out = f.pool_reserved_high;
      break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *out = f.release_threshold;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_pool_trim_to(CUmemoryPool, std::size_t keep) {
  XLAMEM_FAKE_LOCK;
  f.pool_reserved =
      std::max<std::uint64_t>(f.pool_used, std::min<std::uint64_t>(f.pool_reserved, keep));
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_alloc_from_pool_async(CUdeviceptr* p, std::size_t n, CUmemoryPool,
                                               CUstream) {
  XLAMEM_FAKE_LOCK;
  XLAMEM_FAKE_INJECT("cuMemAllocFromPoolAsync");
  if (!f.is_context(fake_gpu::current())) return CUDA_ERROR_INVALID_CONTEXT;
  void* m = ::operator new(n, std::align_val_t(256));
  f.pool_allocations[reinterpret_cast<std::uintptr_t>(m)] = n;
  f.pool_used += n;
  f.pool_used_high = std::max(f.pool_used_high, f.pool_used);
  f.pool_reserved = std::max(f.pool_reserved, f.pool_used);
  f.pool_reserved_high = std::max(f.pool_reserved_high, f.pool_reserved);
  *p = reinterpret_cast<std::uintptr_t>(m);
  return CUDA_SUCCESS;
}
inline CUresult fake_mem_free_async(CUdeviceptr p, CUstream) {
  XLAMEM_FAKE_LOCK;
  auto it = f.pool_allocations.find(static_cast<std::uintptr_t>(p));
  if (it == f.pool_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  f.pool_used -= it->second;
  ::operator delete(reinterpret_cast<void*>(it->first), std::align_val_t(256));
  f.pool_allocations.erase(it);
  return CUDA_SUCCESS;
}

#undef XLAMEM_FAKE_LOCK
#undef XLAMEM_FAKE_INJECT

/// Whether the GPU suites run over the fake driver (main.cpp's --fake-gpu, a smoke test of the
/// GPU suites themselves on machines without a GPU).
inline bool& fake_gpu_mode() {
  static bool on = false;
  return on;
}

/// The fake's full entry-point table.
inline cuda_driver_api fake_api() {
  cuda_driver_api a;
  a.init = fake_init;
  a.driver_get_version = fake_driver_get_version;
  a.get_error_name = fake_get_error_name;
  a.get_error_string = fake_get_error_string;
  a.device_get_count = fake_device_get_count;
  a.device_get = fake_device_get;
  a.device_get_name = fake_device_get_name;
  a.device_get_attribute = fake_device_get_attribute;
  a.device_total_mem = fake_device_total_mem;
  a.primary_ctx_retain = fake_primary_ctx_retain;
  a.primary_ctx_release = fake_primary_ctx_release;
  a.ctx_get_current = fake_ctx_get_current;
  a.ctx_set_current = fake_ctx_set_current;
  a.ctx_synchronize = fake_ctx_synchronize;
  a.mem_alloc = fake_mem_alloc;
  a.mem_free = fake_mem_free;
  a.mem_get_address_range = fake_mem_get_address_range;
  a.memcpy_htod = fake_memcpy_htod;
  a.memcpy_dtoh = fake_memcpy_dtoh;
  a.mem_host_alloc = fake_mem_host_alloc;
  a.mem_free_host = fake_mem_free_host;
  a.mem_host_register = fake_mem_host_register;
  a.mem_host_unregister = fake_mem_host_unregister;
  a.mem_host_get_device_pointer = fake_mem_host_get_device_pointer;
  a.mem_create = fake_mem_create;
  a.mem_release = fake_mem_release;
  a.mem_address_reserve = fake_mem_address_reserve;
  a.mem_address_free = fake_mem_address_free;
  a.mem_map = fake_mem_map;
  a.mem_unmap = fake_mem_unmap;
  a.mem_set_access = fake_mem_set_access;
  a.mem_get_allocation_granularity = fake_mem_get_allocation_granularity;
  a.stream_create = fake_stream_create;
  a.stream_destroy = fake_stream_destroy;
  a.stream_synchronize = fake_stream_synchronize;
  a.mem_pool_create = fake_mem_pool_create;
  a.mem_pool_destroy = fake_mem_pool_destroy;
  a.mem_pool_set_attribute = fake_mem_pool_set_attribute;
  a.mem_pool_get_attribute = fake_mem_pool_get_attribute;
  a.mem_pool_trim_to = fake_mem_pool_trim_to;
  a.mem_alloc_from_pool_async = fake_mem_alloc_from_pool_async;
  a.mem_free_async = fake_mem_free_async;
  return a;
}

}  // namespace xlamem::test
