// SPDX-License-Identifier: Apache-2.0
/// @file
/// `cuda_vmm_device_memory`: device memory through CUDA virtual memory management, the path
/// XLA's CudaDeviceAllocator takes by default. One allocation is:
/// `cuMemCreate` (physical memory) → `cuMemAddressReserve` (a virtual range) → `cuMemMap` →
/// `cuMemSetAccess` (read/write for the own device) → `cuMemRelease` of the handle (the mapping
/// keeps the memory alive). Every step undoes the earlier ones when it fails. A free is
/// `cuCtxSynchronize` (optional, on by default: unmapping is immediate, unlike `cuMemFree`, so
/// work still queued on the memory would fault) → `cuMemUnmap` → `cuMemAddressFree`.
///
/// Sizes are rounded up to `max(alignment, options.alignment, granularity)` where the
/// granularity comes from `cuMemGetAllocationGranularity` (2 MiB on current GPUs), so a 1-byte
/// request takes 2 MiB; `allocation_size()` says how much. The rounding is a pure function of
/// (bytes, alignment), so no per-allocation bookkeeping is kept.
///
/// Thread safety: all members may be called concurrently. Copies are equal.
#pragma once

#include <cuda.h>

#include <algorithm>
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

/// Options of `cuda_vmm_device_memory`.
struct cuda_vmm_options {
  /// A minimum padding and alignment unit on top of the granularity (XLA uses 4096); 0 means
  /// the granularity alone. A power of two.
  std::size_t alignment = 0;
  /// Use the driver's recommended granularity instead of the minimum.
  bool recommended_granularity = false;
  /// `cuCtxSynchronize` before unmapping, so a free behaves like `cuMemFree` (off only when the
  /// caller guarantees no queued work uses the memory).
  bool synchronize_before_unmap = true;
};

/// Device memory through the VMM API. See the file comment.
/// @tparam Log the log policy.
template <cuda_allocation_log Log = no_allocation_log>
class cuda_vmm_device_memory
    : public detail::cuda_resource_base<cuda_vmm_device_memory<Log>, Log> {
 public:
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_vmm_device_memory";

  /// Retains device `ordinal`'s primary context, checks the VMM entry points and the device's
  /// support, and reads the allocation granularity.
  /// @returns `unavailable` without a driver, device or the entry points; `unimplemented` when
  /// the device does not support VMM; `invalid_argument` for a bad `options.alignment`.
  [[nodiscard]] static result<cuda_vmm_device_memory> create(
      std::shared_ptr<const cuda_driver> driver, int ordinal = 0, cuda_vmm_options options = {},
      Log log = {}) {
    if (options.alignment != 0 && !is_power_of_two(options.alignment)) {
      return error(errc::invalid_argument, std::string(name) + "::create: options.alignment " +
                                               std::to_string(options.alignment) +
                                               " is not a power of two");
    }
    auto ctx = detail::retain_for_create(name, std::move(driver), ordinal);
    if (!ctx) return ctx.error();
    const cuda_driver& d = ctx->driver();
    const cuda_driver_api& api = d.api();
    if (auto r = detail::require_entry_points(
            d, {
                   {api.mem_create != nullptr, "cuMemCreate"},
                   {api.mem_release != nullptr, "cuMemRelease"},
                   {api.mem_address_reserve != nullptr, "cuMemAddressReserve"},
                   {api.mem_address_free != nullptr, "cuMemAddressFree"},
                   {api.mem_map != nullptr, "cuMemMap"},
                   {api.mem_unmap != nullptr, "cuMemUnmap"},
                   {api.mem_set_access != nullptr, "cuMemSetAccess"},
                   {api.mem_get_allocation_granularity != nullptr,
                    "cuMemGetAllocationGranularity"},
               });
        !r) {
      return r.error();
    }
    if (auto r = detail::require_device_support(
            *ctx, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
            "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)", name,
            "virtual memory management");
        !r) {
      return r.error();
    }
    const CUmemAllocationProp prop = properties_of(ctx->device());
    std::size_t granularity = 0;
    if (auto r = d.check(api.mem_get_allocation_granularity(
                             &granularity, &prop,
                             options.recommended_granularity ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                                             : CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                         "cuMemGetAllocationGranularity(device " + std::to_string(ordinal) + ")");
        !r) {
      return r.error();
    }
    if (granularity == 0 || !is_power_of_two(granularity)) {
      return error(errc::internal, std::string(name) + ": the driver reports granularity " +
                                       std::to_string(granularity) + ", not a power of two");
    }
    return cuda_vmm_device_memory(std::move(*ctx), granularity, options, std::move(log));
  }

  /// At least `bytes` (rounded up, see `allocation_size`) at `alignment`.
  /// @throws out_of_memory when the device is full; `exception` for other failures.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment))
      return fail(bad_alignment_error("cuda_vmm_device_memory", alignment), bytes);
    const std::size_t unit = unit_of(alignment);
    const auto padded = checked_align_up(bytes == 0 ? 1 : bytes, unit);
    if (!padded || *padded > SIZE_MAX) {
      return fail(error(errc::out_of_memory,
                        detail::cuda_call(name, "cuMemCreate", bytes, ordinal()) +
                            ": the size overflows when rounded to " + std::to_string(unit)),
                  bytes);
    }
    const auto size = static_cast<std::size_t>(*padded);
    const cuda_driver& d = context_.driver();
    const cuda_driver_api& api = d.api();
    auto scope = context_.make_current();
    if (!scope) return fail(scope.error().with_context(std::string(name)), bytes);

    const CUmemAllocationProp prop = properties_of(context_.device());
    CUmemGenericAllocationHandle handle{};
    if (const CUresult r = api.mem_create(&handle, size, &prop, 0); r != CUDA_SUCCESS) {
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemCreate", size, ordinal())), bytes);
    }
    CUdeviceptr ptr = 0;
    if (const CUresult r = api.mem_address_reserve(&ptr, size, unit, 0, 0); r != CUDA_SUCCESS) {
      (void)api.mem_release(handle);
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemAddressReserve", size, ordinal())),
                  bytes);
    }
    if (const CUresult r = api.mem_map(ptr, size, 0, handle, 0); r != CUDA_SUCCESS) {
      (void)api.mem_address_free(ptr, size);
      (void)api.mem_release(handle);
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemMap", size, ordinal())), bytes);
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = context_.device();
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (const CUresult r = api.mem_set_access(ptr, size, &access, 1); r != CUDA_SUCCESS) {
      (void)api.mem_unmap(ptr, size);
      (void)api.mem_address_free(ptr, size);
      (void)api.mem_release(handle);
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemSetAccess", size, ordinal())),
                  bytes);
    }
    // The mapping holds the physical memory from here on; it goes back at cuMemUnmap.
    if (const CUresult r = api.mem_release(handle); r != CUDA_SUCCESS) {
      (void)api.mem_unmap(ptr, size);
      (void)api.mem_address_free(ptr, size);
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemRelease", size, ordinal())), bytes);
    }
    void* p = detail::to_pointer(ptr);
    detail::log_event(log_, cuda_allocation_event_kind::allocate, name, ordinal(), bytes, size, p);
    return p;
  }

  /// Returns memory from `allocate` with the same `bytes` and `alignment`.
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    if (p == nullptr) return;
    const std::size_t size = allocation_size(bytes, alignment);
    const cuda_driver& d = context_.driver();
    const cuda_driver_api& api = d.api();
    auto scope = context_.make_current();
    if (!scope) {
      free_failed(p, bytes, size, scope.error().message());
      return;
    }
    if (options_.synchronize_before_unmap) {
      if (const CUresult r = api.ctx_synchronize(); r != CUDA_SUCCESS) {
        // Unmapping memory a faulted device may still use is what the sync is there to avoid;
        // keep the mapping (a leak) rather than risk it.
        free_failed(p, bytes, size,
                    d.make_error(r, detail::cuda_call(name, "cuCtxSynchronize", size, ordinal()))
                        .message());
        return;
      }
    }
    const CUdeviceptr ptr = detail::to_deviceptr(p);
    if (const CUresult r = api.mem_unmap(ptr, size); r != CUDA_SUCCESS) {
      free_failed(
          p, bytes, size,
          d.make_error(r, detail::cuda_call(name, "cuMemUnmap", size, ordinal())).message());
#if XLAMEM_DEBUG_CHECKS
      if (r == CUDA_ERROR_INVALID_VALUE) {
        XLAMEM_MISUSE(
            "cuda_vmm_device_memory: cuMemUnmap refused a range (CUDA_ERROR_INVALID_VALUE): "
            "not from this resource, freed twice, or freed with another size");
      }
#endif
      return;
    }
    if (const CUresult r = api.mem_address_free(ptr, size); r != CUDA_SUCCESS) {
      free_failed(
          p, bytes, size,
          d.make_error(r, detail::cuda_call(name, "cuMemAddressFree", size, ordinal())).message());
      return;
    }
    detail::log_event(log_, cuda_allocation_event_kind::free, name, ordinal(), bytes, size, p);
  }

  /// The bytes an allocation of `bytes` at `alignment` really takes:
  /// `align_up(max(bytes, 1), max(alignment, options.alignment, granularity))` (saturating).
  [[nodiscard]] std::size_t allocation_size(
      std::size_t bytes, std::size_t alignment = default_alignment) const noexcept {
    const auto padded = checked_align_up(bytes == 0 ? 1 : bytes, unit_of(alignment));
    return padded && *padded <= SIZE_MAX ? static_cast<std::size_t>(*padded) : SIZE_MAX;
  }

  /// The driver's allocation granularity for this device (minimum or recommended).
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  /// The options given to `create`.
  [[nodiscard]] const cuda_vmm_options& options() const noexcept { return options_; }

  /// Equal when they map memory of the same device through the same driver with the same
  /// rounding (so sizes agree at free).
  friend bool operator==(const cuda_vmm_device_memory& a,
                         const cuda_vmm_device_memory& b) noexcept {
    return a.context_ == b.context_ && a.granularity_ == b.granularity_ &&
           a.options_.alignment == b.options_.alignment;
  }
  friend constexpr void get_property(const cuda_vmm_device_memory&, device_accessible) noexcept {}

 private:
  cuda_vmm_device_memory(cuda_primary_context context, std::size_t granularity,
                         cuda_vmm_options options, Log log)
      : base(std::move(context), std::move(log)),
        granularity_(granularity),
        options_(options) {}

  static CUmemAllocationProp properties_of(CUdevice device) noexcept {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
  }

  [[nodiscard]] std::size_t unit_of(std::size_t alignment) const noexcept {
    return std::max({alignment, options_.alignment, granularity_});
  }
  using base = detail::cuda_resource_base<cuda_vmm_device_memory, Log>;
  using base::context_;
  using base::log_;
  using base::ordinal;
  using base::fail;
  void free_failed(void* p, std::size_t bytes, std::size_t reserved,
                   std::string_view why) noexcept {
    detail::free_failed(log_, name, ordinal(), p, bytes, reserved, why);
  }

  std::size_t granularity_;
  cuda_vmm_options options_;
};

static_assert(memory_resource<cuda_vmm_device_memory<>>);
static_assert(try_allocating_resource<cuda_vmm_device_memory<>>);
static_assert(has_property<cuda_vmm_device_memory<>, device_accessible>);
static_assert(!has_property<cuda_vmm_device_memory<>, host_accessible>);
static_assert(cuda_device_resource<cuda_vmm_device_memory<>>);

}  // namespace xlamem
