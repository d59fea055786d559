// SPDX-License-Identifier: Apache-2.0
/// @file
/// Pinned (page-locked) host memory, the host side of asynchronous device copies:
/// - `cuda_pinned_host_memory`: fresh memory from `cuMemHostAlloc` with the portable /
///   device-map / write-combined flags (`cuda_host_alloc_flags`), returned with
///   `cuMemFreeHost`. Page-aligned; a larger alignment is refused (`invalid_argument`).
/// - `cuda_host_registration<Upstream>`: memory from any host resource, pinned with
///   `cuMemHostRegister` after it is allocated and unpinned before it goes back.
/// - `cuda_registered_range`: pins an existing buffer for as long as the object lives.
///
/// All three declare `host_accessible`, `device_accessible` (unified addressing maps pinned
/// memory into every device's address space on 64-bit systems) and `pinned`.
/// Pinning is slow (about 0.4 s per GiB) and `cuMemHostAlloc` + `cuMemFreeHost` cost far more
/// than a pool: pool the memory (`cuda_pinned_pool` in pinned_pool.hpp).
///
/// Thread safety: all members may be called concurrently. Copies are equal.
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

/// Flags of `cuMemHostAlloc`.
struct cuda_host_alloc_flags {
  /// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not only the one current at
  /// allocation. On by default, since the resource may be used from any context.
  bool portable = true;
  /// `CU_MEMHOSTALLOC_DEVICEMAP`: map into the device address space (implied under unified
  /// addressing; needed for `cuMemHostGetDevicePointer` on old systems).
  bool device_map = false;
  /// `CU_MEMHOSTALLOC_WRITECOMBINED`: faster host→device transfers, very slow host reads.
  bool write_combined = false;

  /// The flag word passed to the driver.
  [[nodiscard]] constexpr unsigned int value() const noexcept {
    return (portable ? CU_MEMHOSTALLOC_PORTABLE : 0u) |
           (device_map ? CU_MEMHOSTALLOC_DEVICEMAP : 0u) |
           (write_combined ? CU_MEMHOSTALLOC_WRITECOMBINED : 0u);
  }
};

/// Pinned host memory from `cuMemHostAlloc`. See the file comment.
/// @tparam Log the log policy.
template <cuda_allocation_log Log = no_allocation_log>
class cuda_pinned_host_memory
    : public detail::cuda_resource_base<cuda_pinned_host_memory<Log>, Log> {
 public:
  /// The alignment `cuMemHostAlloc` gives (a page); larger ones are refused.
  static constexpr std::size_t native_alignment = 4096;
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_pinned_host_memory";

  /// Over a retained primary context: `cuMemHostAlloc` needs a current context.
  explicit cuda_pinned_host_memory(cuda_primary_context context, cuda_host_alloc_flags flags = {},
                                   Log log = {})
      : base(std::move(context), std::move(log)), flags_(flags) {}

  /// Retains device `ordinal`'s primary context and checks the entry points.
  /// @returns `unavailable` without a driver or device.
  [[nodiscard]] static result<cuda_pinned_host_memory> create(
      std::shared_ptr<const cuda_driver> driver, int ordinal = 0, cuda_host_alloc_flags flags = {},
      Log log = {}) {
    auto ctx = detail::retain_for_create(name, std::move(driver), ordinal);
    if (!ctx) return ctx.error();
    const cuda_driver_api& api = ctx->driver().api();
    if (auto r = detail::require_entry_points(ctx->driver(),
                                              {{api.mem_host_alloc != nullptr, "cuMemHostAlloc"},
                                               {api.mem_free_host != nullptr, "cuMemFreeHost"}});
        !r) {
      return r.error();
    }
    return cuda_pinned_host_memory(std::move(*ctx), flags, std::move(log));
  }

  /// At least `bytes` of pinned host memory.
  /// @throws out_of_memory when pinning fails for lack of memory; `exception` otherwise.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment))
      return fail(bad_alignment_error("cuda_pinned_host_memory", alignment), bytes);
    if (alignment > native_alignment) {
      return fail(error(errc::invalid_argument,
                        std::string(name) + ": alignment " + std::to_string(alignment) +
                            " exceeds the page alignment (4096) cuMemHostAlloc gives"),
                  bytes);
    }
    const cuda_driver& d = context_.driver();
    if (d.api().mem_host_alloc == nullptr)
      return fail(d.missing_entry_point("cuMemHostAlloc"), bytes);
    const std::size_t request = bytes == 0 ? 1 : bytes;
    auto scope = context_.make_current();
    if (!scope) return fail(scope.error().with_context(std::string(name)), bytes);
    void* p = nullptr;
    if (const CUresult r = d.api().mem_host_alloc(&p, request, flags_.value()); r != CUDA_SUCCESS) {
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemHostAlloc", request, ordinal())),
                  bytes);
    }
    detail::log_event(log_, cuda_allocation_event_kind::allocate, name, ordinal(), bytes, request,
                      p);
    return p;
  }

  /// Returns memory from `allocate`.
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    (void)alignment;
    if (p == nullptr) return;
    const cuda_driver_api& api = context_.driver().api();
    detail::scoped_free(
        log_, name, context_, p, bytes, bytes == 0 ? 1 : bytes, "cuMemFreeHost",
        [&] { return api.mem_free_host(p); },
        "cuda_pinned_host_memory: cuMemFreeHost refused a pointer "
        "(CUDA_ERROR_INVALID_VALUE): not from cuMemHostAlloc, or freed twice");
  }

  /// The device address of pinned memory `p` (`cuMemHostGetDevicePointer`); equal to `p` under
  /// unified addressing.
  [[nodiscard]] result<CUdeviceptr> device_pointer(void* p) const {
    const cuda_driver& d = context_.driver();
    if (auto r = d.require(d.api().mem_host_get_device_pointer, "cuMemHostGetDevicePointer"); !r) {
      return r.error();
    }
    auto scope = context_.make_current();
    if (!scope) return scope.error();
    CUdeviceptr dp = 0;
    if (auto r = d.check(d.api().mem_host_get_device_pointer(&dp, p, 0),
                         std::string(name) + ": cuMemHostGetDevicePointer");
        !r) {
      return r.error();
    }
    return dp;
  }

  /// The flags given at construction.
  [[nodiscard]] cuda_host_alloc_flags flags() const noexcept { return flags_; }

  /// Equal when they use the same context (cuMemFreeHost takes any pinned allocation).
  friend bool operator==(const cuda_pinned_host_memory& a,
                         const cuda_pinned_host_memory& b) noexcept {
    return a.context_ == b.context_;
  }
  friend constexpr void get_property(const cuda_pinned_host_memory&, host_accessible) noexcept {}
  friend constexpr void get_property(const cuda_pinned_host_memory&, device_accessible) noexcept {}
  friend constexpr void get_property(const cuda_pinned_host_memory&, pinned) noexcept {}

 private:
  using base = detail::cuda_resource_base<cuda_pinned_host_memory, Log>;
  using base::context_;
  using base::log_;
  using base::ordinal;
  using base::fail;

  cuda_host_alloc_flags flags_;
};

static_assert(memory_resource<cuda_pinned_host_memory<>>);
static_assert(try_allocating_resource<cuda_pinned_host_memory<>>);
static_assert(has_property<cuda_pinned_host_memory<>, host_accessible>);
static_assert(has_property<cuda_pinned_host_memory<>, device_accessible>);
static_assert(has_property<cuda_pinned_host_memory<>, pinned>);
static_assert(!has_property<cuda_pinned_host_memory<>, executable>);

/// Pins an existing host range with `cuMemHostRegister` for as long as it lives, then unpins it
/// (`cuMemHostUnregister`). Move-only.
class cuda_registered_range {
 public:
  /// `CU_MEMHOSTREGISTER_PORTABLE`: the default flags of `pin`.
  static constexpr unsigned int default_flags = CU_MEMHOSTREGISTER_PORTABLE;

  /// Pins `[p, p + bytes)` in `context`.
  /// @returns `invalid_argument` for a null or empty range, `already_exists` when (part of) it
  /// is already pinned, or the driver's other errors, naming the call.
  [[nodiscard]] static result<cuda_registered_range> pin(const cuda_primary_context& context,
                                                         void* p, std::size_t bytes,
                                                         unsigned int flags = default_flags) {
    if (p == nullptr || bytes == 0) {
      return error(errc::invalid_argument,
                   "cuda_registered_range::pin: the range is null or empty");
    }
    const cuda_driver& d = context.driver();
    if (auto r = d.require(d.api().mem_host_register, "cuMemHostRegister"); !r) return r.error();
    if (auto r = d.require(d.api().mem_host_unregister, "cuMemHostUnregister"); !r)
      return r.error();
    auto scope = context.make_current();
    if (!scope) return scope.error();
    if (auto r = d.check(d.api().mem_host_register(p, bytes, flags),
                         detail::cuda_call("cuda_registered_range", "cuMemHostRegister", bytes,
                                           context.ordinal()));
        !r) {
      return r.error();
    }
    return cuda_registered_range(context, p, bytes);
  }

  cuda_registered_range(cuda_registered_range&& o) noexcept
      : context_(std::move(o.context_)),
        data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)) {}
  cuda_registered_range& operator=(cuda_registered_range&&) = delete;
  cuda_registered_range(const cuda_registered_range&) = delete;
  cuda_registered_range& operator=(const cuda_registered_range&) = delete;
  ~cuda_registered_range() { reset(); }

  /// Unpins now; errors cannot be reported and are ignored.
  void reset() noexcept {
    if (data_ == nullptr) return;
    auto scope = context_.make_current();
    if (scope) (void)context_.driver().api().mem_host_unregister(data_);
    data_ = nullptr;
    size_ = 0;
  }

  /// The pinned range's start (null once reset).
  [[nodiscard]] void* data() const noexcept { return data_; }
  /// The pinned range's length.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  cuda_registered_range(const cuda_primary_context& context, void* p, std::size_t bytes)
      : context_(context), data_(p), size_(bytes) {}

  cuda_primary_context context_;
  void* data_;
  std::size_t size_;
};

/// Host memory from `Upstream`, pinned with `cuMemHostRegister` while allocated. A request of
/// 0 bytes is passed to the upstream and not pinned.
/// @tparam Upstream a host-accessible memory resource (e.g. `aligned_heap_memory`).
/// @tparam Log the log policy.
template <memory_resource Upstream, cuda_allocation_log Log = no_allocation_log>
class cuda_host_registration
    : public detail::cuda_resource_base<cuda_host_registration<Upstream, Log>, Log> {
  static_assert(has_property<Upstream, host_accessible>,
                "cuda_host_registration: the upstream must declare host_accessible; only host "
                "memory can be registered with cuMemHostRegister");

 public:
  /// The resource's name in messages and log events.
  static constexpr std::string_view name = "cuda_host_registration";

  /// Pins memory of `upstream` in `context` with `flags` (`CU_MEMHOSTREGISTER_*`).
  cuda_host_registration(cuda_primary_context context, Upstream upstream,
                         unsigned int flags = cuda_registered_range::default_flags, Log log = {})
      : base(std::move(context), std::move(log)),
        upstream_(std::move(upstream)),
        flags_(flags) {}

  /// Upstream memory, then pinned.
  /// @throws out_of_memory / `exception` with the upstream's or the driver's error.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    auto p = xlamem::try_allocate(upstream_, bytes, alignment);
    if (!p || bytes == 0) return p;
    const cuda_driver& d = context_.driver();
    auto fail = [&](error e) -> result<void*> {
      upstream_.deallocate(*p, bytes, alignment);
      return detail::allocation_failed(log_, name, ordinal(), std::move(e), bytes);
    };
    if (d.api().mem_host_register == nullptr)
      return fail(d.missing_entry_point("cuMemHostRegister"));
    auto scope = context_.make_current();
    if (!scope) return fail(scope.error().with_context(std::string(name)));
    if (const CUresult r = d.api().mem_host_register(*p, bytes, flags_); r != CUDA_SUCCESS) {
      return fail(d.make_error(r, detail::cuda_call(name, "cuMemHostRegister", bytes, ordinal())));
    }
    detail::log_event(log_, cuda_allocation_event_kind::allocate, name, ordinal(), bytes, bytes,
                      *p);
    return p;
  }

  /// Unpins, then returns the memory to the upstream. Memory that may still be pinned (the
  /// context could not be made current, or the driver refused the unpin for another reason than
  /// "not registered") is kept, a leak the log names, as every resource keeps memory the driver
  /// would not free: handed back, the upstream would give it out again still registered.
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    if (p == nullptr) return;
    if (bytes != 0) {
      const cuda_driver& d = context_.driver();
      auto scope = context_.make_current();
      if (!scope) {
        detail::free_failed(log_, name, ordinal(), p, bytes, bytes, scope.error().message());
        return;
      }
      if (const CUresult r = d.api().mem_host_unregister(p); r != CUDA_SUCCESS) {
        detail::free_failed(log_, name, ordinal(), p, bytes, bytes,
                            d.make_error(r, detail::cuda_call(name, "cuMemHostUnregister", bytes, ordinal())).message());
        if (r != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) return;  // not pinned: it may go back
      } else {
        detail::log_event(log_, cuda_allocation_event_kind::free, name, ordinal(), bytes, bytes, p);
      }
    }
    upstream_.deallocate(p, bytes, alignment);
  }

  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }
  /// The `cuMemHostRegister` flags.
  [[nodiscard]] unsigned int flags() const noexcept { return flags_; }

  friend bool operator==(const cuda_host_registration& a,
                         const cuda_host_registration& b) noexcept {
    return a.context_ == b.context_ && a.upstream_ == b.upstream_;
  }
  friend constexpr void get_property(const cuda_host_registration&, host_accessible) noexcept {}
  friend constexpr void get_property(const cuda_host_registration&, device_accessible) noexcept {}
  friend constexpr void get_property(const cuda_host_registration&, pinned) noexcept {}

 private:
  using base = detail::cuda_resource_base<cuda_host_registration, Log>;
  using base::context_;
  using base::log_;
  using base::ordinal;

  // Not [[no_unique_address]]: see log_ in cuda_resource_base.
  Upstream upstream_;
  unsigned int flags_;
};

static_assert(memory_resource<cuda_host_registration<detail::archetype_resource>>);
static_assert(try_allocating_resource<cuda_host_registration<detail::archetype_resource>>);
static_assert(has_property<cuda_host_registration<detail::archetype_resource>, pinned>);
static_assert(has_property<cuda_host_registration<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
