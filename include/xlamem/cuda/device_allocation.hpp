// SPDX-License-Identifier: Apache-2.0
/// @file
/// `device_allocation`: an owned piece of device memory (XLA's `se::MemoryAllocation` from
/// `CudaDeviceAllocator::Allocate`): address, size, device ordinal, a unique id, `to_string`,
/// and the free on destruction. It works over any `cuda_device_resource`, i.e. any memory
/// resource with `device_accessible` but not `host_accessible` that names its device and driver
/// (`cuda_device_memory`, `cuda_vmm_device_memory`, `cuda_async_memory`).
///
/// - A request of 0 bytes gives an allocation with a null address and no driver call (XLA).
/// - `size()` is what the resource reserved when it says (`allocation_size`, e.g. the VMM
///   granularity rounding), else the bytes asked for.
/// - Ids come from the resource's driver object: unique among allocations through that driver
///   (one per process when the driver is shared, as intended), never 0, never reused.
/// - The resource must outlive its allocations. Move-only; not thread-safe per object.
#pragma once

#include <cuda.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// A device memory resource (device-accessible, not host-accessible) that names its device and
/// its driver.
template <class R>
concept cuda_device_resource =
    memory_resource<R> && has_property<R, device_accessible> && !has_property<R, host_accessible> &&
    requires(const R& r) {
  { r.device_ordinal() } -> std::convertible_to<int>;
  { r.driver() } -> std::same_as<const cuda_driver&>;
};

static_assert(cuda_device_resource<cuda_device_memory<>>);
static_assert(!cuda_device_resource<detail::archetype_resource>);  // host memory, no device

namespace detail {

template <class R>
concept reports_allocation_size = requires(const R& r, std::size_t n) {
  { r.allocation_size(n, n) } -> std::convertible_to<std::size_t>;
};

}  // namespace detail

/// An owned device allocation that frees itself. See the file comment.
class device_allocation {
 public:
  /// The alignment `allocate` asks for when the caller does not say: the 256 bytes every CUDA
  /// allocation routine guarantees.
  static constexpr std::size_t default_device_alignment = 256;

  /// An empty allocation (null address, size 0, id 0).
  device_allocation() noexcept = default;

  /// `bytes` from `resource` (which must outlive the allocation).
  /// @returns the resource's error (naming the call and the CUresult) on failure.
  template <cuda_device_resource R>
  [[nodiscard]] static result<device_allocation> try_allocate(
      R& resource, std::size_t bytes, std::size_t alignment = default_device_alignment) noexcept {
    device_allocation a;
    a.ordinal_ = resource.device_ordinal();
    a.alignment_ = alignment;
    a.requested_ = bytes;
    if (bytes == 0) return a;
    auto p = xlamem::try_allocate(resource, bytes, alignment);
    if (!p) return p.error();
    a.address_ = *p;
    a.resource_ = &resource;
    a.release_ = [](void* r, void* ptr, std::size_t n, std::size_t align) noexcept {
      static_cast<R*>(r)->deallocate(ptr, n, align);
    };
    if constexpr (detail::reports_allocation_size<R>) {
      a.size_ = resource.allocation_size(bytes, alignment);
    } else {
      a.size_ = bytes;
    }
    a.id_ = resource.driver().next_allocation_id();
    return a;
  }

  /// Like `try_allocate`. @throws out_of_memory or `exception` with the resource's error.
  template <cuda_device_resource R>
  [[nodiscard]] static device_allocation allocate(
      R& resource, std::size_t bytes, std::size_t alignment = default_device_alignment) {
    auto r = try_allocate(resource, bytes, alignment);
    if (!r) throw_error(r.error());
    return std::move(*r);
  }

  device_allocation(device_allocation&& other) noexcept { swap(other); }
  /// Frees this allocation first, then takes `other`'s.
  device_allocation& operator=(device_allocation&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  device_allocation(const device_allocation&) = delete;
  device_allocation& operator=(const device_allocation&) = delete;
  ~device_allocation() { reset(); }

  /// Frees the memory now; the allocation becomes empty.
  void reset() noexcept {
    if (address_ != nullptr) release_(resource_, address_, requested_, alignment_);
    address_ = nullptr;
    resource_ = nullptr;
    release_ = nullptr;
    size_ = requested_ = 0;
    id_ = 0;
  }

  /// The device address (null for an empty or 0-byte allocation).
  [[nodiscard]] void* address() const noexcept { return address_; }
  /// The address as the driver's `CUdeviceptr`.
  [[nodiscard]] CUdeviceptr device_pointer() const noexcept {
    return detail::to_deviceptr(address_);
  }
  /// Usable bytes: the padded size when the resource reports one, else the bytes asked for.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The bytes asked for.
  [[nodiscard]] std::size_t requested_size() const noexcept { return requested_; }
  /// The alignment asked for.
  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }
  /// The device ordinal (-1 for a default-constructed allocation).
  [[nodiscard]] int device_ordinal() const noexcept { return ordinal_; }
  /// Unique among allocations through the same driver object; 0 when empty.
  [[nodiscard]] std::uint64_t unique_id() const noexcept { return id_; }
  /// Whether it holds memory.
  [[nodiscard]] explicit operator bool() const noexcept { return address_ != nullptr; }

  /// "device_allocation{id=7, device=0, address=0x7f3a00000000, size=2097152, requested=1000}".
  [[nodiscard]] std::string to_string() const {
    char address[32];
    std::snprintf(address, sizeof address, "%p", address_);
    return "device_allocation{id=" + std::to_string(id_) + ", device=" + std::to_string(ordinal_) +
           ", address=" + address + ", size=" + std::to_string(size_) +
           ", requested=" + std::to_string(requested_) + "}";
  }

 private:
  void swap(device_allocation& o) noexcept {
    std::swap(address_, o.address_);
    std::swap(size_, o.size_);
    std::swap(requested_, o.requested_);
    std::swap(alignment_, o.alignment_);
    std::swap(ordinal_, o.ordinal_);
    std::swap(id_, o.id_);
    std::swap(resource_, o.resource_);
    std::swap(release_, o.release_);
  }

  void* address_ = nullptr;
  std::size_t size_ = 0;
  std::size_t requested_ = 0;
  std::size_t alignment_ = default_device_alignment;
  int ordinal_ = -1;
  std::uint64_t id_ = 0;
  void* resource_ = nullptr;
  void (*release_)(void*, void*, std::size_t, std::size_t) noexcept = nullptr;
};

}  // namespace xlamem
