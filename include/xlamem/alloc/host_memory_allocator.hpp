// SPDX-License-Identifier: Apache-2.0
/// @file
/// `host_memory_allocator`: the pluggable allocator for host staging buffers that PJRT calls
/// `HostMemoryAllocator`, as a small copyable type-erased value instead of a virtual interface
/// owned through `unique_ptr`. Options carry the alignment, DMA map/unmap hooks (called on
/// every allocation and release, e.g. to register staging memory with a device) and, per
/// allocation, a NUMA node hint. Allocations come back as `owned_host_ptr`, a
/// `unique_ptr<std::byte[]>` whose deleter is a plain function pointer + context (no
/// `std::function`). Any host-accessible xlamem resource plugs in.
///
/// Lifetime: every `owned_host_ptr` must be destroyed before the last copy of the allocator
/// that made it. Thread safety: as the wrapped resource (and the hooks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "xlamem/align.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// DMA registration hooks, after PJRT's map_fn / unmap_fn: `map(context, device, p, bytes)` runs
/// after each allocation (its error fails the allocation), `unmap(context, device, p)` before
/// each release (its error cannot be reported and is ignored).
struct dma_hooks {
  result<void> (*map)(void* context, std::optional<int> device, void* p,
                      std::size_t bytes) = nullptr;
  result<void> (*unmap)(void* context, std::optional<int> device, void* p) = nullptr;
  void* context = nullptr;
};

/// Options fixed when the allocator is made.
struct host_allocator_options {
  /// Every allocation is aligned to at least this (a power of two).
  std::size_t alignment = 64;
  /// DMA map/unmap hooks; unset hooks are not called.
  dma_hooks dma{};
};

/// The NUMA node hint meaning "no preference".
inline constexpr int no_numa_affinity = -1;

/// Per-allocation options.
struct host_allocate_options {
  /// Preferred NUMA node; honoured by resources with `allocate_on_node(bytes, alignment, node)`,
  /// ignored by others.
  int numa_node = no_numa_affinity;
  /// The device the buffer stages for, passed to the DMA hooks.
  std::optional<int> local_device{};
};

/// Deleter of `owned_host_ptr`: `fn(p, context)`.
struct host_deleter {
  void (*fn)(void* p, void* context) = nullptr;
  void* context = nullptr;
  void operator()(std::byte* p) const noexcept {
    if (p != nullptr && fn != nullptr) fn(p, context);
  }
};

/// An owned host buffer.
using owned_host_ptr = std::unique_ptr<std::byte[], host_deleter>;

/// A resource that can place memory on a NUMA node.
template <class R>
concept numa_aware_resource = memory_resource<R> &&
    requires(R& r, std::size_t bytes, std::size_t alignment, int node) {
  { r.allocate_on_node(bytes, alignment, node) } -> std::same_as<void*>;
};

namespace detail {

class host_allocator_state {
 public:
  explicit host_allocator_state(host_allocator_options options) : options_(options) {}
  host_allocator_state(const host_allocator_state&) = delete;
  host_allocator_state& operator=(const host_allocator_state&) = delete;
  virtual ~host_allocator_state() = default;

  virtual result<void*> allocate_raw(std::size_t bytes, std::size_t alignment,
                                     int node) noexcept = 0;
  virtual void deallocate_raw(void* p, std::size_t bytes, std::size_t alignment) noexcept = 0;

  [[nodiscard]] const host_allocator_options& options() const noexcept { return options_; }

 private:
  host_allocator_options options_;
};

template <class R>
class host_allocator_model final : public host_allocator_state {
 public:
  host_allocator_model(R resource, host_allocator_options options)
      : host_allocator_state(options), resource_(std::move(resource)) {}

  result<void*> allocate_raw(std::size_t bytes, std::size_t alignment, int node) noexcept override {
    if constexpr (numa_aware_resource<R>) {
      if (node != no_numa_affinity) {
#if XLAMEM_USE_EXCEPTIONS
        try {
          return resource_.allocate_on_node(bytes, alignment, node);
        } catch (const exception& e) {
          return e.get();
        } catch (const std::bad_alloc& e) {
          return error(errc::out_of_memory, e.what());
        }
#else
        return resource_.allocate_on_node(bytes, alignment, node);
#endif
      }
    }
    (void)node;
    return xlamem::try_allocate(resource_, bytes, alignment);
  }
  void deallocate_raw(void* p, std::size_t bytes, std::size_t alignment) noexcept override {
    resource_.deallocate(p, bytes, alignment);
  }

 private:
  R resource_;
};

// Lives just before the user pointer.
struct host_block_header {
  std::size_t total;   // bytes taken from the resource
  std::size_t offset;  // user pointer - resource pointer
  int device;          // -1: none
};

}  // namespace detail

/// A copyable, type-erased host allocator with PJRT HostMemoryAllocator semantics: a request of
/// 0 bytes gives a null pointer; others give a pointer aligned to `options().alignment`.
class host_memory_allocator {
 public:
  /// Plugs in `resource`, which must be host-accessible.
  /// @throws exception (invalid_argument) when the alignment is not a power of two.
  template <memory_resource R>
  requires has_property<R, host_accessible> host_memory_allocator(
      R resource, host_allocator_options options = {})
      : state_(std::make_shared<detail::host_allocator_model<R>>(std::move(resource),
                                                                 checked(options))) {}

  /// A buffer of `bytes`, or an error naming the request (from the resource or the map hook).
  [[nodiscard]] result<owned_host_ptr> try_allocate(
      std::size_t bytes, const host_allocate_options& how = {}) const noexcept {
    if (bytes == 0) return owned_host_ptr(nullptr, host_deleter{&release, state_.get()});
    const auto& opts = state_->options();
    const std::size_t alignment = effective_alignment(opts.alignment);
    const std::size_t header = align_up(sizeof(detail::host_block_header), alignment);
    if (bytes > SIZE_MAX - header) {
      return error(errc::out_of_memory, "host_memory_allocator: a request of " +
                                            std::to_string(bytes) + " bytes is too large");
    }
    auto raw = state_->allocate_raw(header + bytes, alignment, how.numa_node);
    if (!raw.has_value()) {
      return raw.error().with_context("host_memory_allocator: allocating " + std::to_string(bytes) +
                                      " bytes");
    }
    std::byte* user = static_cast<std::byte*>(*raw) + header;
    auto* h =
        reinterpret_cast<detail::host_block_header*>(user - sizeof(detail::host_block_header));
    *h = detail::host_block_header{header + bytes, header, how.local_device.value_or(-1)};
    if (opts.dma.map != nullptr) {
      auto mapped = opts.dma.map(opts.dma.context, how.local_device, user, bytes);
      if (!mapped.has_value()) {
        state_->deallocate_raw(*raw, header + bytes, alignment);
        return mapped.error().with_context("host_memory_allocator: DMA map of " +
                                           std::to_string(bytes) + " bytes");
      }
    }
    return owned_host_ptr(user, host_deleter{&release, state_.get()});
  }

  /// A buffer of `bytes`. @throws out_of_memory (or `exception` for a failed map hook).
  [[nodiscard]] owned_host_ptr allocate(std::size_t bytes,
                                        const host_allocate_options& how = {}) const {
    auto r = try_allocate(bytes, how);
    if (!r.has_value()) throw_error(r.error());
    return std::move(*r);
  }

  /// The options the allocator was made with.
  [[nodiscard]] const host_allocator_options& options() const noexcept { return state_->options(); }

  /// Copies share one state (and one resource) and compare equal.
  friend bool operator==(const host_memory_allocator& a, const host_memory_allocator& b) noexcept {
    return a.state_ == b.state_;
  }

 private:
  static host_allocator_options checked(host_allocator_options options) {
    if (!is_power_of_two(options.alignment)) {
      throw_error(bad_alignment_error("host_memory_allocator", options.alignment));
    }
    return options;
  }

  static std::size_t effective_alignment(std::size_t alignment) noexcept {
    return alignment < alignof(detail::host_block_header) ? alignof(detail::host_block_header)
                                                          : alignment;
  }

  static void release(void* p, void* context) noexcept {
    auto* state = static_cast<detail::host_allocator_state*>(context);
    auto* user = static_cast<std::byte*>(p);
    const auto* h = reinterpret_cast<const detail::host_block_header*>(
        user - sizeof(detail::host_block_header));
    const auto& opts = state->options();
    if (opts.dma.unmap != nullptr) {
      const std::optional<int> device =
          h->device >= 0 ? std::optional<int>(h->device) : std::nullopt;
      (void)opts.dma.unmap(opts.dma.context, device, p);
    }
    const std::size_t total = h->total;
    state->deallocate_raw(user - h->offset, total, effective_alignment(opts.alignment));
  }

  std::shared_ptr<detail::host_allocator_state> state_;
};

static_assert(std::is_constructible_v<host_memory_allocator, detail::archetype_resource>);
static_assert(std::is_copy_constructible_v<host_memory_allocator>);

}  // namespace xlamem
