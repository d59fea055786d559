// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory-resource concept family: `memory_resource` (allocate / deallocate / ==),
/// `try_allocating_resource` (adds a noexcept `try_allocate`), the free function
/// `try_allocate(r, bytes, alignment)` that works for both, and `resource_ref<R>`, a non-owning
/// handle that lets adaptors and pools borrow a resource they must not own.
///
/// Contract the compiler cannot check:
/// - `allocate(bytes, alignment)` returns a pointer aligned to `alignment` (a power of two) with
///   at least `bytes` usable bytes, never null; it throws `xlamem::out_of_memory` (a
///   `std::bad_alloc`) when the memory cannot be had, and `xlamem::exception` for a malformed
///   request (alignment not a power of two).
/// - `deallocate(p, bytes, alignment)` is noexcept and takes the exact `bytes` and `alignment`
///   passed to the `allocate` that returned `p`.
/// - `a == b` means memory from one may be returned to the other.
/// - `try_allocate`, where present, never throws and returns the error instead.
/// - Thread safety is per model and documented there.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// The alignment used when a caller does not say: that of `std::max_align_t`.
inline constexpr std::size_t default_alignment = alignof(std::max_align_t);

/// A source of raw memory: `allocate(bytes, alignment) -> void*` (throws on failure),
/// `deallocate(p, bytes, alignment)` (noexcept), and `==`.
template <class R>
concept memory_resource = std::equality_comparable<R> &&
    requires(R& r, void* p, std::size_t bytes, std::size_t alignment) {
  { r.allocate(bytes, alignment) } -> std::same_as<void*>;
  r.deallocate(p, bytes, alignment);
  requires noexcept(r.deallocate(p, bytes, alignment));
};

/// A memory resource that also reports failure as a value:
/// `try_allocate(bytes, alignment) noexcept -> result<void*>`.
template <class R>
concept try_allocating_resource = memory_resource<R> &&
    requires(R& r, std::size_t bytes, std::size_t alignment) {
  { r.try_allocate(bytes, alignment) }
  noexcept->std::same_as<result<void*>>;
};

/// `r.try_allocate(bytes, alignment)` when the resource has it; otherwise `r.allocate` with its
/// exception turned into an error (`out_of_memory` for `std::bad_alloc`, the carried error for
/// `xlamem::exception`). Never throws.
template <memory_resource R>
[[nodiscard]] result<void*> try_allocate(R& r, std::size_t bytes,
                                         std::size_t alignment = default_alignment) noexcept {
  if constexpr (try_allocating_resource<R>) {
    return r.try_allocate(bytes, alignment);
  } else {
#if XLAMEM_USE_EXCEPTIONS
    try {
      return r.allocate(bytes, alignment);
    } catch (const exception& e) {
      return e.get();
    } catch (const std::bad_alloc& e) {
      return error(errc::out_of_memory, e.what());
    } catch (...) {
      return error(errc::internal, "allocate threw an unexpected exception");
    }
#else
    return r.allocate(bytes, alignment);
#endif
  }
}

namespace detail {
/// The pointer in `r`, or throws its error (`out_of_memory` for `errc::out_of_memory`): the
/// body of every `allocate` written over its own `try_allocate`.
[[nodiscard]] inline void* value_or_throw(result<void*> r) {
  if (!r.has_value()) throw_error(r.error());
  return *r;
}
}  // namespace detail

/// The error for a request whose alignment is not a power of two, naming the resource.
[[nodiscard]] inline error bad_alignment_error(const char* resource, std::size_t alignment) {
  return error(errc::invalid_argument, std::string(resource) + ": alignment " +
                                           std::to_string(alignment) + " is not a power of two");
}

/// A non-owning reference to a resource, itself a `memory_resource` with the same properties.
/// Use it to put an adaptor or a pool over a resource that lives elsewhere (pools are not
/// copyable). The referenced resource must outlive the reference.
/// @tparam R the referenced resource type.
template <memory_resource R>
class resource_ref : public forward_properties<resource_ref<R>, R> {
 public:
  explicit resource_ref(R& r) noexcept : r_(std::addressof(r)) {}

  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return r_->allocate(bytes, alignment);
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    r_->deallocate(p, bytes, alignment);
  }
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    return xlamem::try_allocate(*r_, bytes, alignment);
  }
  /// The referenced resource.
  [[nodiscard]] R& get() const noexcept { return *r_; }

  friend bool operator==(const resource_ref& a, const resource_ref& b) noexcept {
    return a.r_ == b.r_ || *a.r_ == *b.r_;
  }

 private:
  R* r_;
};

/// `resource_ref` to `r`: `statistics_adaptor adaptor(borrow(pool));`.
template <memory_resource R>
[[nodiscard]] resource_ref<R> borrow(R& r) noexcept {
  return resource_ref<R>(r);
}

namespace detail {

// The least a memory resource can be, declared host-accessible: templates over resources are
// checked against it right after their definition.
struct archetype_resource {
  void* allocate(std::size_t bytes, std::size_t alignment);
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept;
  friend bool operator==(const archetype_resource&, const archetype_resource&) noexcept;
  friend void get_property(const archetype_resource&, host_accessible) noexcept;
};

}  // namespace detail

static_assert(memory_resource<detail::archetype_resource>);
static_assert(!try_allocating_resource<detail::archetype_resource>);
static_assert(memory_resource<resource_ref<detail::archetype_resource>>);
static_assert(try_allocating_resource<resource_ref<detail::archetype_resource>>);
static_assert(has_property<resource_ref<detail::archetype_resource>, host_accessible>);
static_assert(!has_property<resource_ref<detail::archetype_resource>, pinned>);

}  // namespace xlamem
