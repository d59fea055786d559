// SPDX-License-Identifier: Apache-2.0
/// @file
/// Pools over CUDA memory, as aliases of `fixed_block_pool`:
/// - `cuda_pinned_pool<...>`: blocks of pinned host memory (one `cuMemHostAlloc` for all);
/// - `cuda_device_pool<...>`: blocks of device memory (one `cuMemAlloc` for all);
/// and `cuda_pinned_scalar_pool<T>`, XLA's `HostMemoryPool`: N (default 128) values of one
/// trivially copyable type in pinned memory, acquired per execution to read a device scalar
/// (a loop predicate, a branch index) without pinning memory each time. Its handles are typed:
/// `handle.get()` is a `T*`, so there is no run-time type check to fail.
///
/// Thread safety: as `fixed_block_pool` with the chosen free list (lock-free by default).
/// Handles must not outlive their pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "xlamem/alloc/exhaustion.hpp"
#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/free_list.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/cuda/pinned_host_memory.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// A fixed-block pool of pinned host memory.
template <free_list_policy FreeList = per_cpu_cache_policy, exhaustion_policy Exhaustion = fail_policy,
          cuda_allocation_log Log = no_allocation_log>
using cuda_pinned_pool = fixed_block_pool<cuda_pinned_host_memory<Log>, FreeList, Exhaustion>;

/// A fixed-block pool of device memory.
template <free_list_policy FreeList = per_cpu_cache_policy, exhaustion_policy Exhaustion = fail_policy,
          cuda_allocation_log Log = no_allocation_log>
using cuda_device_pool = fixed_block_pool<cuda_device_memory<Log>, FreeList, Exhaustion>;

static_assert(memory_resource<cuda_pinned_pool<>>);
static_assert(has_property<cuda_pinned_pool<>, pinned>);
static_assert(has_property<cuda_pinned_pool<>, host_accessible>);
static_assert(memory_resource<cuda_device_pool<>>);
static_assert(has_property<cuda_device_pool<>, device_accessible>);
static_assert(!has_property<cuda_device_pool<>, host_accessible>);

/// XLA's HostMemoryPool: `count` values of `T` in pinned host memory, handed out as typed
/// move-only handles. Exhaustion follows `Exhaustion` (default: fail at once with
/// `resource_exhausted`, as XLA does).
/// @tparam T a trivially copyable value type (bool, int32_t, ...).
template <class T, free_list_policy FreeList = per_cpu_cache_policy,
          exhaustion_policy Exhaustion = fail_policy, cuda_allocation_log Log = no_allocation_log>
class cuda_pinned_scalar_pool {
  static_assert(std::is_trivially_copyable_v<T>,
                "cuda_pinned_scalar_pool: T must be trivially copyable (the device writes it "
                "with a memory copy)");

 public:
  /// The untyped pool underneath.
  using pool_type = cuda_pinned_pool<FreeList, Exhaustion, Log>;
  /// XLA's `kNumElems`.
  static constexpr std::uint32_t default_count = 128;

  /// A move-only owner of one `T` in pinned memory; returns it to the pool on destruction.
  class handle {
   public:
    handle() noexcept = default;
    /// The value's address in pinned host memory (null when empty).
    [[nodiscard]] T* get() const noexcept { return static_cast<T*>(block_.data()); }
    /// The value. @pre the handle is not empty.
    [[nodiscard]] T& operator*() const noexcept { return *get(); }
    [[nodiscard]] T* operator->() const noexcept { return get(); }
    /// Whether the handle holds a value.
    [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(block_); }
    /// Returns the value to the pool now.
    void reset() noexcept { block_.reset(); }

   private:
    friend class cuda_pinned_scalar_pool;
    explicit handle(typename pool_type::handle block) noexcept : block_(std::move(block)) {}
    typename pool_type::handle block_;
  };

  /// `count` values of `T` pinned in device `ordinal`'s context (one `cuMemHostAlloc`).
  /// @returns `unavailable` without a driver or device; the driver's error when pinning fails.
  [[nodiscard]] static result<cuda_pinned_scalar_pool> create(
      std::shared_ptr<const cuda_driver> driver, int ordinal = 0,
      std::uint32_t count = default_count, std::string name = "cuda_pinned_scalar_pool",
      Exhaustion exhaustion = {}, Log log = {}) {
    auto memory =
        cuda_pinned_host_memory<Log>::create(std::move(driver), ordinal, {}, std::move(log));
    if (!memory) return memory.error().with_context(name);
    pool_options options;
    options.block_count = count;
    options.block_size = sizeof(T);
    options.alignment = alignof(T);
    options.name = std::move(name);
    auto pool = pool_type::create(std::move(*memory), std::move(options), exhaustion);
    if (!pool) return pool.error();
    return cuda_pinned_scalar_pool(std::move(*pool));
  }

  /// A value, or `resource_exhausted` (naming the pool and its size) when all are in use.
  [[nodiscard]] result<handle> try_acquire() noexcept {
    auto h = pool_->try_acquire();
    if (!h) return h.error();
    return handle(std::move(*h));
  }

  /// A value. @throws out_of_memory (a std::bad_alloc) when all are in use.
  [[nodiscard]] handle acquire() { return handle(pool_->acquire()); }

  /// Number of values.
  [[nodiscard]] std::uint32_t count() const noexcept { return pool_->block_count(); }
  /// The untyped pool.
  [[nodiscard]] pool_type& pool() noexcept { return *pool_; }

 private:
  explicit cuda_pinned_scalar_pool(std::unique_ptr<pool_type> pool) noexcept
      : pool_(std::move(pool)) {}

  std::unique_ptr<pool_type> pool_;
};

}  // namespace xlamem
