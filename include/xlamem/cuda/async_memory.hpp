// SPDX-License-Identifier: Apache-2.0
/// @file
/// `cuda_async_memory`: stream-ordered device memory from a CUDA memory pool
/// (`cuMemPoolCreate`, `cuMemAllocFromPoolAsync`, `cuMemFreeAsync`), the driver's own caching
/// allocator. The pool keeps freed memory up to a release threshold (default: everything; the
/// driver's default of 0 hands memory back to the OS at every synchronisation) and tracks used
/// and reserved bytes with high watermarks, which `usage()` reads and
/// `reset_high_watermarks()` resets.
///
/// Two interfaces:
/// - `memory_resource` (`allocate` / `deallocate`): ordered on the resource's stream (its own
///   non-blocking stream unless `options.stream` names one); `allocate` synchronises that stream
///   so the memory is ready for the host and every stream, `deallocate` does not wait.
/// - stream-ordered: `try_allocate_async(bytes, stream)` / `deallocate_async(p, bytes, stream)`:
///   the memory is valid in `stream` order only, as with `cuMemAllocAsync`.
///
/// Alignment: the pool guarantees 256 bytes; larger alignments are refused (`invalid_argument`;
/// use `cuda_vmm_device_memory`). A request of 0 bytes allocates 1.
///
/// Thread safety: all members may be called concurrently. Copies share the pool and the stream
/// (destroyed with the last copy) and are equal.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "xlamem/align.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/detail/resource.hpp"
#include "xlamem/cuda/device_allocation.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Options of `cuda_async_memory`.
struct cuda_async_options {
  /// Bytes the pool keeps reserved across synchronisations (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`).
  std::uint64_t release_threshold = UINT64_MAX;
  /// The stream `allocate`/`deallocate` are ordered on; null: the resource creates its own
  /// non-blocking stream. A stream given here must outlive the resource.
  CUstream stream = nullptr;
};

/// Used and reserved bytes of a memory pool, current and high watermark.
struct cuda_pool_usage {
  std::uint64_t used_current = 0;      ///< bytes handed out now
  std::uint64_t used_high = 0;         ///< most bytes handed out at once since the last reset
  std::uint64_t reserved_current = 0;  ///< bytes the pool holds from the driver now
  std::uint64_t reserved_high = 0;     ///< most bytes held at once since the last reset
};

/// Stream-ordered device memory from a CUDA memory pool. See the file comment.
/// @tparam Log the log policy.
template <cuda_allocation_log Log = no_allocation_log>
class cuda_async_memory {
 public:
  /// The alignment pool allocations guarantee; larger ones are refused.
  static constexpr std::size_t native_alignment = 256;
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_async_memory";

  /// Retains device `ordinal`'s primary context, creates a pool on it (and a stream unless
  /// `options.stream` is given) and sets the release threshold.
  /// @returns `unavailable` without a driver, device or the pool entry points;
  /// `unimplemented` when the device has no memory-pool support.
  [[nodiscard]] static result<cuda_async_memory> create(std::shared_ptr<const cuda_driver> driver,
                                                        int ordinal = 0,
                                                        cuda_async_options options = {},
                                                        Log log = {}) {
    auto ctx = detail::retain_for_create(name, std::move(driver), ordinal);
    if (!ctx) return ctx.error();
    const cuda_driver& d = ctx->driver();
    const cuda_driver_api& api = d.api();
    if (auto r = detail::require_entry_points(
            d, {
                   {api.mem_pool_create != nullptr, "cuMemPoolCreate"},
                   {api.mem_pool_destroy != nullptr, "cuMemPoolDestroy"},
                   {api.mem_pool_set_attribute != nullptr, "cuMemPoolSetAttribute"},
                   {api.mem_pool_get_attribute != nullptr, "cuMemPoolGetAttribute"},
                   {api.mem_pool_trim_to != nullptr, "cuMemPoolTrimTo"},
                   {api.mem_alloc_from_pool_async != nullptr, "cuMemAllocFromPoolAsync"},
                   {api.mem_free_async != nullptr, "cuMemFreeAsync"},
                   {api.stream_create != nullptr, "cuStreamCreate"},
                   {api.stream_destroy != nullptr, "cuStreamDestroy"},
                   {api.stream_synchronize != nullptr, "cuStreamSynchronize"},
               });
        !r) {
      return r.error();
    }
    if (auto r = detail::require_device_support(*ctx, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                                "cuDeviceGetAttribute(MEMORY_POOLS_SUPPORTED)",
                                                name, "stream-ordered memory pools");
        !r) {
      return r.error();
    }
    auto scope = ctx->make_current();
    if (!scope) return scope.error().with_context(std::string(name) + "::create");
    auto s = std::make_shared<state>(*ctx);
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = ctx->device();
    if (auto r = d.check(api.mem_pool_create(&s->pool, &props),
                         "cuMemPoolCreate(device " + std::to_string(ordinal) + ")");
        !r) {
      return r.error();
    }
    cuuint64_t threshold = options.release_threshold;
    if (auto r = d.check(
            api.mem_pool_set_attribute(s->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            "cuMemPoolSetAttribute(RELEASE_THRESHOLD)");
        !r) {
      return r.error();
    }
    if (options.stream != nullptr) {
      s->stream = options.stream;
    } else {
      if (auto r = d.check(api.stream_create(&s->stream, CU_STREAM_NON_BLOCKING),
                           "cuStreamCreate(device " + std::to_string(ordinal) + ")");
          !r) {
        return r.error();
      }
      s->owns_stream = true;
    }
    return cuda_async_memory(std::move(s), options, std::move(log));
  }

  /// At least `bytes`, ready for the host and every stream when this returns.
  /// @throws out_of_memory when the pool cannot grow; `exception` for other failures.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    auto p = try_allocate_async(bytes, state_->stream, alignment);
    if (!p) return p;
    const cuda_driver& d = driver();
    if (const CUresult r = d.api().stream_synchronize(state_->stream); r != CUDA_SUCCESS) {
      deallocate_async(*p, bytes, state_->stream, alignment);
      return fail(d.make_error(r, detail::cuda_call(name, "cuStreamSynchronize", bytes, ordinal())),
                  bytes);
    }
    return p;
  }

  /// Frees on the resource's stream (in stream order; does not wait).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    deallocate_async(p, bytes, state_->stream, alignment);
  }

  /// `bytes` valid in `stream` order (`cuMemAllocFromPoolAsync`).
  [[nodiscard]] result<void*> try_allocate_async(
      std::size_t bytes, CUstream stream, std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment))
      return fail(bad_alignment_error("cuda_async_memory", alignment), bytes);
    if (alignment > native_alignment) {
      return fail(error(errc::invalid_argument,
                        std::string(name) + ": alignment " + std::to_string(alignment) +
                            " exceeds the 256 bytes memory pools guarantee; use "
                            "cuda_vmm_device_memory for larger alignments"),
                  bytes);
    }
    const std::size_t request = bytes == 0 ? 1 : bytes;
    const cuda_driver& d = driver();
    auto scope = state_->context.make_current();
    if (!scope) return fail(scope.error().with_context(std::string(name)), bytes);
    CUdeviceptr ptr = 0;
    if (const CUresult r = d.api().mem_alloc_from_pool_async(&ptr, request, state_->pool, stream);
        r != CUDA_SUCCESS) {
      return fail(
          d.make_error(r, detail::cuda_call(name, "cuMemAllocFromPoolAsync", request, ordinal())),
          bytes);
    }
    void* p = detail::to_pointer(ptr);
    detail::log_event(log_, cuda_allocation_event_kind::allocate, name, ordinal(), bytes, request,
                      p);
    return p;
  }

  /// Frees `p` in `stream` order (`cuMemFreeAsync`).
  void deallocate_async(void* p, std::size_t bytes, CUstream stream,
                        std::size_t alignment = default_alignment) noexcept {
    (void)alignment;
    if (p == nullptr) return;
    const cuda_driver& d = driver();
    detail::scoped_free(
        log_, name, state_->context, p, bytes, bytes == 0 ? 1 : bytes, "cuMemFreeAsync",
        [&] { return d.api().mem_free_async(detail::to_deviceptr(p), stream); },
        "cuda_async_memory: cuMemFreeAsync refused a pointer (CUDA_ERROR_INVALID_VALUE): "
        "not from a memory pool, or freed twice");
  }

  /// Waits for the resource's stream (and so for its pending frees).
  [[nodiscard]] result<void> synchronize() const {
    auto scope = state_->context.make_current();
    if (!scope) return scope.error();
    return driver().check(driver().api().stream_synchronize(state_->stream),
                          std::string(name) + ": cuStreamSynchronize");
  }

  /// Used and reserved bytes, current and high watermark (`cuMemPoolGetAttribute`).
  [[nodiscard]] result<cuda_pool_usage> usage() const {
    cuda_pool_usage u;
    struct query {
      CUmemPool_attribute attribute;
      const char* what;
      std::uint64_t* out;
    };
    const query queries[] = {
        {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, "USED_MEM_CURRENT", &u.used_current},
        {CU_MEMPOOL_ATTR_USED_MEM_HIGH, "USED_MEM_HIGH", &u.used_high},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, "RESERVED_MEM_CURRENT", &u.reserved_current},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, "RESERVED_MEM_HIGH", &u.reserved_high},
    };
    for (const query& q : queries) {
      cuuint64_t v = 0;
      if (auto r =
              driver().check(driver().api().mem_pool_get_attribute(state_->pool, q.attribute, &v),
                             std::string(name) + ": cuMemPoolGetAttribute(" + q.what + ")");
          !r) {
        return r.error();
      }
      *q.out = v;
    }
    return u;
  }

  /// Resets both high watermarks to the current values.
  [[nodiscard]] result<void> reset_high_watermarks() {
    for (const CUmemPool_attribute a :
         {CU_MEMPOOL_ATTR_USED_MEM_HIGH, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH}) {
      cuuint64_t zero = 0;  // the only value the driver accepts: "reset to current"
      if (auto r =
              driver().check(driver().api().mem_pool_set_attribute(state_->pool, a, &zero),
                             std::string(name) + ": cuMemPoolSetAttribute(reset high watermark)");
          !r) {
        return r;
      }
    }
    return {};
  }

  /// Returns reserved memory above `keep_bytes` to the driver (`cuMemPoolTrimTo`).
  [[nodiscard]] result<void> trim_to(std::size_t keep_bytes) {
    return driver().check(
        driver().api().mem_pool_trim_to(state_->pool, keep_bytes),
        std::string(name) + ": cuMemPoolTrimTo(" + std::to_string(keep_bytes) + ")");
  }

  /// The pool handle.
  [[nodiscard]] CUmemoryPool pool() const noexcept { return state_->pool; }
  /// The stream `allocate`/`deallocate` use.
  [[nodiscard]] CUstream stream() const noexcept { return state_->stream; }
  /// The options given to `create`.
  [[nodiscard]] const cuda_async_options& options() const noexcept { return options_; }
  /// The device ordinal.
  [[nodiscard]] int device_ordinal() const noexcept { return state_->context.ordinal(); }
  /// The retained primary context.
  [[nodiscard]] const cuda_primary_context& context() const noexcept { return state_->context; }
  /// The driver.
  [[nodiscard]] const cuda_driver& driver() const noexcept { return state_->context.driver(); }
  /// The log policy.
  [[nodiscard]] Log& log() noexcept { return log_; }

  /// Equal when they share one pool.
  friend bool operator==(const cuda_async_memory& a, const cuda_async_memory& b) noexcept {
    return a.state_ == b.state_;
  }
  friend constexpr void get_property(const cuda_async_memory&, device_accessible) noexcept {}

 private:
  // The pool and stream, destroyed with the last copy of the resource.
  struct state {
    explicit state(cuda_primary_context c) noexcept : context(std::move(c)) {}
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
      const cuda_driver_api& api = context.driver().api();
      auto scope = context.make_current();
      if (!scope) return;
      if (owns_stream && stream != nullptr) {
        (void)api.stream_synchronize(stream);
        (void)api.stream_destroy(stream);
      }
      // Outstanding allocations keep the pool's memory alive until they are freed.
      if (pool != nullptr) (void)api.mem_pool_destroy(pool);
    }

    cuda_primary_context context;
    CUmemoryPool pool = nullptr;
    CUstream stream = nullptr;
    bool owns_stream = false;
  };

  cuda_async_memory(std::shared_ptr<state> s, cuda_async_options options, Log log)
      : state_(std::move(s)), options_(options), log_(std::move(log)) {}

  [[nodiscard]] int ordinal() const noexcept { return state_->context.ordinal(); }

  result<void*> fail(error e, std::size_t bytes) noexcept {
    return detail::allocation_failed(log_, name, ordinal(), std::move(e), bytes);
  }

  std::shared_ptr<state> state_;
  cuda_async_options options_;
  // Deliberately not [[no_unique_address]]: nvcc 13.0 fails with "internal error during
  // structure layout" when a class ending in such a member is itself a [[no_unique_address]]
  // member (as the upstream of fixed_block_pool). A byte per resource object costs nothing.
  Log log_;
};

static_assert(memory_resource<cuda_async_memory<>>);
static_assert(try_allocating_resource<cuda_async_memory<>>);
static_assert(has_property<cuda_async_memory<>, device_accessible>);
static_assert(cuda_device_resource<cuda_async_memory<>>);

}  // namespace xlamem
