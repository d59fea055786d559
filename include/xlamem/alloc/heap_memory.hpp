// SPDX-License-Identifier: Apache-2.0
/// @file
/// `aligned_heap_memory`: the host upstream over the aligned global `operator new`. Stateless,
/// thread-safe, every instance equal to every other.
#pragma once

#include <cstddef>
#include <new>
#include <string>

#include "xlamem/align.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Host memory from `::operator new(bytes, std::align_val_t)`. A request of 0 bytes returns a
/// unique non-null pointer (as `operator new` does). Thread-safe.
class aligned_heap_memory {
 public:
  /// @throws out_of_memory when the heap refuses; `exception` (invalid_argument) when
  /// `alignment` is not a power of two.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    if (!is_power_of_two(alignment))
      throw_error(bad_alignment_error("aligned_heap_memory", alignment));
    void* p = ::operator new(bytes, std::align_val_t(alignment), std::nothrow);
    if (p == nullptr) {
      XLAMEM_THROW(out_of_memory("aligned_heap_memory: cannot allocate " + std::to_string(bytes) +
                                 " bytes at alignment " + std::to_string(alignment)));
    }
    return p;
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment)) return bad_alignment_error("aligned_heap_memory", alignment);
    void* p = ::operator new(bytes, std::align_val_t(alignment), std::nothrow);
    if (p == nullptr) {
      return error(errc::out_of_memory, "aligned_heap_memory: cannot allocate " +
                                            std::to_string(bytes) + " bytes at alignment " +
                                            std::to_string(alignment));
    }
    return p;
  }

  void deallocate(void* p, std::size_t /*bytes*/,
                  std::size_t alignment = default_alignment) noexcept {
    ::operator delete(p, std::align_val_t(alignment));
  }

  friend constexpr bool operator==(const aligned_heap_memory&,
                                   const aligned_heap_memory&) noexcept {
    return true;
  }
  friend constexpr void get_property(const aligned_heap_memory&, host_accessible) noexcept {}
};

static_assert(memory_resource<aligned_heap_memory>);
static_assert(try_allocating_resource<aligned_heap_memory>);
static_assert(has_property<aligned_heap_memory, host_accessible>);
static_assert(!has_property<aligned_heap_memory, device_accessible>);
static_assert(memory_resource<resource_ref<aligned_heap_memory>>);
static_assert(has_property<resource_ref<aligned_heap_memory>, host_accessible>);

}  // namespace xlamem
