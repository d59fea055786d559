// SPDX-License-Identifier: Apache-2.0
/// @file
/// `limiting_adaptor<Upstream>`: caps the bytes outstanding through it; a request that would
/// pass the cap fails with `out_of_memory` (thrown by `allocate`, returned by `try_allocate`)
/// without reaching the upstream. Bytes are counted as requested. Thread-safe (atomic
/// counter); equal only to itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// A byte cap over `Upstream`.
template <memory_resource Upstream>
class limiting_adaptor : public forward_properties<limiting_adaptor<Upstream>, Upstream> {
 public:
  /// @param limit the most bytes that may be outstanding at once.
  limiting_adaptor(Upstream upstream, std::size_t limit)
      : upstream_(std::move(upstream)), limit_(limit) {}
  limiting_adaptor(const limiting_adaptor&) = delete;
  limiting_adaptor& operator=(const limiting_adaptor&) = delete;

  /// @throws out_of_memory when the cap would be passed, or when the upstream refuses.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ || used > limit_ - bytes) {
        return error(errc::out_of_memory, "limiting_adaptor: " + std::to_string(bytes) +
                                              " more bytes would pass the " + "limit of " +
                                              std::to_string(limit_) + " bytes (" +
                                              std::to_string(used) + " in use)");
      }
    } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    auto r = xlamem::try_allocate(upstream_, bytes, alignment);
    if (!r.has_value()) used_.fetch_sub(bytes, std::memory_order_relaxed);
    return r;
  }

  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    upstream_.deallocate(p, bytes, alignment);
    used_.fetch_sub(bytes, std::memory_order_relaxed);
  }

  /// The cap in bytes.
  [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
  /// Bytes outstanding now.
  [[nodiscard]] std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }

  friend bool operator==(const limiting_adaptor& a, const limiting_adaptor& b) noexcept {
    return &a == &b;
  }

 private:
  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_;
  std::size_t limit_;
  std::atomic<std::size_t> used_{0};
};

static_assert(memory_resource<limiting_adaptor<detail::archetype_resource>>);
static_assert(try_allocating_resource<limiting_adaptor<detail::archetype_resource>>);
static_assert(has_property<limiting_adaptor<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
