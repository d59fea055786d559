// SPDX-License-Identifier: Apache-2.0
/// @file
/// `cuda_device_memory`: device memory from `cuMemAlloc` / `cuMemFree` (XLA's CudaDeviceAllocator
/// with `use_vmm = false`), a `memory_resource` with the `device_accessible` property.
///
/// - Alignment: the driver guarantees 256 bytes; a request for more is over-allocated by the
///   difference and its base found again with `cuMemGetAddressRange` when it is freed.
/// - A request of 0 bytes allocates 1 byte, so every pointer is unique and non-null.
/// - Every call makes the device's primary context current and restores the previous one.
/// - `cuMemFree` synchronises the device (driver behaviour), so a pool over this resource pays
///   that only when the pool itself is destroyed.
/// - A free the driver refuses is given to the log policy (`free_failed`); with debug checks an
///   `CUDA_ERROR_INVALID_VALUE` there (a pointer this resource did not hand out, or a double
///   free) is reported to `XLAMEM_MISUSE`.
///
/// Thread safety: all members may be called concurrently (the driver is thread-safe, and the
/// log policy must be). Copies share the retained context and are equal.
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
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Device memory from `cuMemAlloc`. See the file comment for alignment and failure behaviour.
/// @tparam Log the log policy (`no_allocation_log`, `callback_allocation_log`, ...).
template <cuda_allocation_log Log = no_allocation_log>
class cuda_device_memory {
 public:
  /// The alignment `cuMemAlloc` guarantees; larger ones cost the difference in bytes.
  static constexpr std::size_t native_alignment = 256;
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_device_memory";

  /// Over a retained primary context (which also names the device).
  explicit cuda_device_memory(cuda_primary_context context, Log log = {})
      : context_(std::move(context)), log_(std::move(log)) {}

  /// Retains device `ordinal`'s primary context and checks that the driver has `cuMemAlloc`.
  /// @returns `unavailable` without a driver or device, `out_of_range` for a bad ordinal.
  [[nodiscard]] static result<cuda_device_memory> create(std::shared_ptr<const cuda_driver> driver,
                                                         int ordinal = 0, Log log = {}) {
    auto ctx = cuda_primary_context::retain(std::move(driver), ordinal);
    if (!ctx) return ctx.error().with_context(std::string(name) + "::create");
    const cuda_driver& d = ctx->driver();
    if (auto r = d.require(d.api().mem_alloc, "cuMemAlloc"); !r) return r.error();
    if (auto r = d.require(d.api().mem_free, "cuMemFree"); !r) return r.error();
    return cuda_device_memory(std::move(*ctx), std::move(log));
  }

  /// At least `bytes` of device memory aligned to `alignment`.
  /// @throws out_of_memory when the device is full; `exception` for a bad alignment or a driver
  /// failure (its message names the call, the CUresult and its description).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    auto r = try_allocate(bytes, alignment);
    if (!r) throw_error(r.error());
    return *r;
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment))
      return fail(bad_alignment_error("cuda_device_memory", alignment), bytes);
    const std::size_t extra = alignment > native_alignment ? alignment - native_alignment : 0;
    const std::size_t request = (bytes == 0 ? 1 : bytes) + extra;
    if (request < bytes) {
      return fail(error(errc::out_of_memory,
                        detail::cuda_call(name, "cuMemAlloc", bytes, ordinal()) +
                            ": the size overflows with alignment " + std::to_string(alignment)),
                  bytes);
    }
    const cuda_driver& d = context_.driver();
    if (d.api().mem_alloc == nullptr) return fail(d.missing_entry_point("cuMemAlloc"), bytes);
    if (extra != 0 && d.api().mem_get_address_range == nullptr) {
      // Without it the base of an over-aligned allocation cannot be found again at free.
      return fail(d.missing_entry_point("cuMemGetAddressRange"), bytes);
    }
    auto scope = context_.make_current();
    if (!scope) return fail(scope.error().with_context(std::string(name)), bytes);
    CUdeviceptr base = 0;
    if (const CUresult r = d.api().mem_alloc(&base, request); r != CUDA_SUCCESS) {
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemAlloc", request, ordinal())),
                  bytes);
    }
    void* p = detail::to_pointer(static_cast<CUdeviceptr>(align_up(base, alignment)));
    detail::log_event(log_, cuda_allocation_event_kind::allocate, name, ordinal(), bytes, request,
                      p);
    return p;
  }

  /// Returns memory from `allocate` with the same `bytes` and `alignment`.
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    if (p == nullptr) return;
    const cuda_driver& d = context_.driver();
    const std::size_t extra = alignment > native_alignment ? alignment - native_alignment : 0;
    const std::size_t reserved = (bytes == 0 ? 1 : bytes) + extra;
    auto scope = context_.make_current();
    if (!scope) {
      free_failed(p, bytes, reserved, scope.error().message());
      return;
    }
    CUdeviceptr base = detail::to_deviceptr(p);
    if (extra != 0) {
      CUdeviceptr start = 0;
      if (d.api().mem_get_address_range(&start, nullptr, base) == CUDA_SUCCESS) base = start;
    }
    if (const CUresult r = d.api().mem_free(base); r != CUDA_SUCCESS) {
      free_failed(
          p, bytes, reserved,
          d.make_error(r, detail::cuda_call(name, "cuMemFree", bytes, ordinal())).message());
#if XLAMEM_DEBUG_CHECKS
      if (r == CUDA_ERROR_INVALID_VALUE) {
        XLAMEM_MISUSE(
            "cuda_device_memory: cuMemFree refused a pointer (CUDA_ERROR_INVALID_VALUE): "
            "not from this resource, or freed twice");
      }
#endif
      return;
    }
    detail::log_event(log_, cuda_allocation_event_kind::free, name, ordinal(), bytes, reserved, p);
  }

  /// The device ordinal.
  [[nodiscard]] int device_ordinal() const noexcept { return context_.ordinal(); }
  /// The retained primary context.
  [[nodiscard]] const cuda_primary_context& context() const noexcept { return context_; }
  /// The driver.
  [[nodiscard]] const cuda_driver& driver() const noexcept { return context_.driver(); }
  /// The log policy.
  [[nodiscard]] Log& log() noexcept { return log_; }

  /// Equal when they allocate on the same device through the same driver.
  friend bool operator==(const cuda_device_memory& a, const cuda_device_memory& b) noexcept {
    return a.context_ == b.context_;
  }
  friend constexpr void get_property(const cuda_device_memory&, device_accessible) noexcept {}

 private:
  [[nodiscard]] int ordinal() const noexcept { return context_.ordinal(); }

  result<void*> fail(error e, std::size_t bytes) noexcept {
    detail::log_event(log_, cuda_allocation_event_kind::allocate_failed, name, ordinal(), bytes, 0,
                      nullptr, e.message());
    return e;
  }

  void free_failed(void* p, std::size_t bytes, std::size_t reserved,
                   std::string_view why) noexcept {
    detail::log_event(log_, cuda_allocation_event_kind::free_failed, name, ordinal(), bytes,
                      reserved, p, why);
  }

  cuda_primary_context context_;
  // Deliberately not [[no_unique_address]]: nvcc 13.0 fails with "internal error during
  // structure layout" when a class ending in such a member is itself a [[no_unique_address]]
  // member (as the upstream of fixed_block_pool). A byte per resource object costs nothing.
  Log log_;
};

static_assert(memory_resource<cuda_device_memory<>>);
static_assert(try_allocating_resource<cuda_device_memory<>>);
static_assert(has_property<cuda_device_memory<>, device_accessible>);
static_assert(!has_property<cuda_device_memory<>, host_accessible>);
static_assert(memory_resource<cuda_device_memory<callback_allocation_log>>);

}  // namespace xlamem
