// SPDX-License-Identifier: Apache-2.0
/// @file
/// `fault_injection_adaptor<Upstream>`: makes chosen allocations fail with `out_of_memory`, so
/// users can test their out-of-memory paths deterministically: the Nth allocation, every
/// allocation once a byte budget is spent, or each allocation with probability p from a seeded
/// generator (the same seed gives the same failures). Thread-safe (one mutex); equal only to
/// itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// When a `fault_injection_adaptor` fails an allocation. Triggers combine: any one that fires
/// fails the allocation.
struct fault_injection_options {
  /// Fail the allocation with this 1-based number (the first allocation is 1); 0: never.
  std::uint64_t fail_nth = 0;
  /// Fail every allocation from this 1-based number on, not only that one.
  bool keep_failing = false;
  /// Fail an allocation when the bytes handed out so far (a running total, frees not
  /// subtracted) plus the request would exceed this; SIZE_MAX: never.
  std::size_t fail_after_bytes = SIZE_MAX;
  /// Fail each allocation with this probability (0 never, 1 always).
  double probability = 0.0;
  /// Seed of the generator behind `probability` (splitmix64).
  std::uint64_t seed = 0;
};

/// Fails allocations of `Upstream` on purpose.
template <memory_resource Upstream>
class fault_injection_adaptor
    : public forward_properties<fault_injection_adaptor<Upstream>, Upstream> {
 public:
  fault_injection_adaptor(Upstream upstream, fault_injection_options options)
      : upstream_(std::move(upstream)), options_(options), state_(options.seed) {}
  fault_injection_adaptor(const fault_injection_adaptor&) = delete;
  fault_injection_adaptor& operator=(const fault_injection_adaptor&) = delete;

  /// @throws out_of_memory for an injected failure (the message says so) or an upstream one.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const std::uint64_t n = ++attempts_;
      const char* why = nullptr;
      if (options_.fail_nth != 0 &&
          (n == options_.fail_nth || (options_.keep_failing && n > options_.fail_nth))) {
        why = "its number";
      } else if (bytes > options_.fail_after_bytes ||
                 handed_out_ > options_.fail_after_bytes - bytes) {
        why = "the byte budget";
      } else if (options_.probability > 0.0 && uniform() < options_.probability) {
        why = "the probability";
      }
      if (why != nullptr) {
        ++injected_;
        return error(errc::out_of_memory,
                     "fault_injection_adaptor: injected failure of allocation #" +
                         std::to_string(n) + " (" + std::to_string(bytes) + " bytes, by " + why +
                         ")");
      }
      handed_out_ += bytes;
    }
    auto r = xlamem::try_allocate(upstream_, bytes, alignment);
    if (!r.has_value()) {
      std::lock_guard<std::mutex> lock(mutex_);
      handed_out_ -= bytes;
    }
    return r;
  }

  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    upstream_.deallocate(p, bytes, alignment);
  }

  /// Allocations attempted so far (failed ones included).
  [[nodiscard]] std::uint64_t attempts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return attempts_;
  }
  /// Failures injected so far.
  [[nodiscard]] std::uint64_t injected() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return injected_;
  }
  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }

  friend bool operator==(const fault_injection_adaptor& a,
                         const fault_injection_adaptor& b) noexcept {
    return &a == &b;
  }

 private:
  // splitmix64 -> [0, 1) with 53 random bits.
  double uniform() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_;
  fault_injection_options options_;
  mutable std::mutex mutex_;
  std::uint64_t state_;
  std::uint64_t attempts_ = 0;
  std::uint64_t injected_ = 0;
  std::size_t handed_out_ = 0;
};

static_assert(memory_resource<fault_injection_adaptor<detail::archetype_resource>>);
static_assert(try_allocating_resource<fault_injection_adaptor<detail::archetype_resource>>);
static_assert(has_property<fault_injection_adaptor<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
