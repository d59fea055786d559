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
/// - A free the driver refuses is given to the log policy (`free_failed`); a
///   `CUDA_ERROR_INVALID_VALUE` there (a pointer this resource did not hand out, or a double
///   free) is then reported to `XLAMEM_MISUSE`, in every build.
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
#include "xlamem/cuda/detail/resource.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Device memory from `cuMemAlloc`. See the file comment for alignment and failure behaviour.
/// @tparam Log the log policy (`no_allocation_log`, `callback_allocation_log`, ...).
template <cuda_allocation_log Log = no_allocation_log>
class cuda_device_memory : public detail::cuda_resource_base<cuda_device_memory<Log>, Log> {
 public:
  /// The alignment `cuMemAlloc` guarantees; larger ones cost the difference in bytes.
  static constexpr std::size_t native_alignment = 256;
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_device_memory";

  /// Over a retained primary context (which also names the device).
  explicit cuda_device_memory(cuda_primary_context context, Log log = {})
      : base(std::move(context), std::move(log)) {}

  /// Retains device `ordinal`'s primary context and checks that the driver has `cuMemAlloc`.
  /// @returns `unavailable` without a driver or device, `out_of_range` for a bad ordinal.
  [[nodiscard]] static result<cuda_device_memory> create(std::shared_ptr<const cuda_driver> driver,
                                                         int ordinal = 0, Log log = {}) {
    auto ctx = detail::retain_for_create(name, std::move(driver), ordinal);
    if (!ctx) return ctx.error();
    const cuda_driver_api& api = ctx->driver().api();
    if (auto r = detail::require_entry_points(
            ctx->driver(),
            {{api.mem_alloc != nullptr, "cuMemAlloc"}, {api.mem_free != nullptr, "cuMemFree"}});
        !r) {
      return r.error();
    }
    return cuda_device_memory(std::move(*ctx), std::move(log));
  }

  /// At least `bytes` of device memory aligned to `alignment`.
  /// @throws out_of_memory when the device is full; `exception` for a bad alignment or a driver
  /// failure (its message names the call, the CUresult and its description).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
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
    const cuda_driver_api& api = context_.driver().api();
    const std::size_t extra = alignment > native_alignment ? alignment - native_alignment : 0;
    const std::size_t reserved = (bytes == 0 ? 1 : bytes) + extra;
    detail::scoped_free(
        log_, name, context_, p, bytes, reserved, "cuMemFree",
        [&] {
          CUdeviceptr start = detail::to_deviceptr(p);
          // A larger alignment at free than at allocation is misuse; without the entry point
          // (then no over-aligned allocation was made) the pointer is freed as given.
          if (extra != 0 && api.mem_get_address_range != nullptr) {
            CUdeviceptr range_start = 0;
            if (api.mem_get_address_range(&range_start, nullptr, start) == CUDA_SUCCESS)
              start = range_start;
          }
          return api.mem_free(start);
        },
        "cuda_device_memory: cuMemFree refused a pointer (CUDA_ERROR_INVALID_VALUE): "
        "not from this resource, or freed twice");
  }

  /// Equal when they allocate on the same device through the same driver.
  friend bool operator==(const cuda_device_memory& a, const cuda_device_memory& b) noexcept {
    return a.context_ == b.context_;
  }
  friend constexpr void get_property(const cuda_device_memory&, device_accessible) noexcept {}

 private:
  using base = detail::cuda_resource_base<cuda_device_memory, Log>;
  using base::context_;
  using base::log_;
  using base::ordinal;
  using base::fail;
};

static_assert(memory_resource<cuda_device_memory<>>);
static_assert(try_allocating_resource<cuda_device_memory<>>);
static_assert(has_property<cuda_device_memory<>, device_accessible>);
static_assert(!has_property<cuda_device_memory<>, host_accessible>);
static_assert(memory_resource<cuda_device_memory<callback_allocation_log>>);

}  // namespace xlamem
