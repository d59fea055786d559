// SPDX-License-Identifier: Apache-2.0
/// @file
/// `statistics_adaptor<Upstream>`: counts bytes and allocations passing through it (current,
/// peak, total), with a stack of scopes so a caller can measure one region (`push_scope` /
/// `pop_scope` or the RAII `scope()`), and `reset()` to start a new peak. Thread-safe (one
/// mutex); equal only to itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Figures for one scope. `current_*` may be negative inside a scope that frees memory
/// allocated before it.
struct allocation_statistics {
  std::int64_t current_bytes = 0;  ///< bytes allocated and not yet freed
  std::int64_t peak_bytes = 0;     ///< the highest `current_bytes` seen
  std::int64_t total_bytes = 0;    ///< bytes ever allocated
  std::int64_t current_count = 0;  ///< allocations not yet freed
  std::int64_t peak_count = 0;     ///< the highest `current_count` seen
  std::int64_t total_count = 0;    ///< allocations ever made

  friend bool operator==(const allocation_statistics&, const allocation_statistics&) = default;
};

/// Counts what passes through to `Upstream`.
/// @tparam Upstream the wrapped resource (use `resource_ref` to borrow one).
template <memory_resource Upstream>
class statistics_adaptor : public forward_properties<statistics_adaptor<Upstream>, Upstream> {
 public:
  explicit statistics_adaptor(Upstream upstream) : upstream_(std::move(upstream)), stack_(1) {}
  statistics_adaptor(const statistics_adaptor&) = delete;
  statistics_adaptor& operator=(const statistics_adaptor&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    void* p = upstream_.allocate(bytes, alignment);
    record(static_cast<std::int64_t>(bytes), 1);
    return p;
  }

  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    auto r = xlamem::try_allocate(upstream_, bytes, alignment);
    if (r.has_value()) record(static_cast<std::int64_t>(bytes), 1);
    return r;
  }

  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    upstream_.deallocate(p, bytes, alignment);
    record(-static_cast<std::int64_t>(bytes), -1);
  }

  /// The figures of the innermost scope (the whole lifetime when no scope was pushed).
  [[nodiscard]] allocation_statistics statistics() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stack_.back();
  }

  /// Starts a scope with zero figures; later allocations count there.
  void push_scope() {
    std::lock_guard<std::mutex> lock(mutex_);
    stack_.emplace_back();
  }

  /// Ends the innermost scope and returns its figures; they are folded into the enclosing
  /// scope (its peak becomes at least its current plus the inner peak).
  /// @throws exception (failed_precondition) when no scope was pushed.
  allocation_statistics pop_scope() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stack_.size() == 1) {
      throw_error(
          error(errc::failed_precondition, "statistics_adaptor: pop_scope without push_scope"));
    }
    const allocation_statistics inner = stack_.back();
    stack_.pop_back();
    auto& outer = stack_.back();
    outer.peak_bytes = std::max(outer.peak_bytes, outer.current_bytes + inner.peak_bytes);
    outer.peak_count = std::max(outer.peak_count, outer.current_count + inner.peak_count);
    outer.current_bytes += inner.current_bytes;
    outer.current_count += inner.current_count;
    outer.total_bytes += inner.total_bytes;
    outer.total_count += inner.total_count;
    return inner;
  }

  /// RAII scope: pushes on construction, pops on destruction (or on `pop()`).
  class scope {
   public:
    explicit scope(statistics_adaptor& adaptor) : adaptor_(&adaptor) { adaptor_->push_scope(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() {
      if (adaptor_ != nullptr) (void)adaptor_->pop_scope();
    }
    /// The scope's figures so far.
    [[nodiscard]] allocation_statistics statistics() const { return adaptor_->statistics(); }
    /// Ends the scope now and returns its figures.
    allocation_statistics pop() { return std::exchange(adaptor_, nullptr)->pop_scope(); }

   private:
    statistics_adaptor* adaptor_;
  };

  /// `scope(*this)`.
  [[nodiscard]] scope make_scope() { return scope(*this); }

  /// Starts a new measurement in the innermost scope: peaks drop to the current figures and
  /// totals to zero; current figures are kept (the memory is still allocated).
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& s = stack_.back();
    s.peak_bytes = s.current_bytes;
    s.peak_count = s.current_count;
    s.total_bytes = 0;
    s.total_count = 0;
  }

  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }

  friend bool operator==(const statistics_adaptor& a, const statistics_adaptor& b) noexcept {
    return &a == &b;
  }

 private:
  void record(std::int64_t bytes, std::int64_t count) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& s = stack_.back();
    s.current_bytes += bytes;
    s.current_count += count;
    if (count > 0) {
      s.total_bytes += bytes;
      s.total_count += count;
      s.peak_bytes = std::max(s.peak_bytes, s.current_bytes);
      s.peak_count = std::max(s.peak_count, s.current_count);
    }
  }

  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_;
  mutable std::mutex mutex_;
  std::vector<allocation_statistics> stack_;
};

static_assert(memory_resource<statistics_adaptor<detail::archetype_resource>>);
static_assert(try_allocating_resource<statistics_adaptor<detail::archetype_resource>>);
static_assert(has_property<statistics_adaptor<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
