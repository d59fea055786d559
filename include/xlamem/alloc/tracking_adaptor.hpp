// SPDX-License-Identifier: Apache-2.0
/// @file
/// `tracking_adaptor<Upstream>`: remembers every outstanding allocation (size, alignment,
/// sequence number) so a test or a runtime can list them, and reports leaks when it is
/// destroyed: the report names a caller-given tag and each leaked allocation's size. A
/// deallocation of a pointer it did not hand out, or with a different size, is reported as
/// misuse and not forwarded. Costs a hash-map insert and erase under a mutex per allocation;
/// thread-safe; equal only to itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// A report sink: `fn(context, text)`; a plain function pointer + context.
struct report_handler {
  void (*fn)(void* context, const char* text) = nullptr;
  void* context = nullptr;
};

/// Options of `tracking_adaptor`.
struct tracking_options {
  /// Names the adaptor in reports ("staging buffers", "test_foo").
  std::string tag = "tracking_adaptor";
  /// Receives the leak report at destruction; unset prints it to stderr.
  report_handler on_leak{};
  /// Receives misuse reports (untracked or mis-sized deallocation); unset means XLAMEM_MISUSE.
  report_handler on_misuse{};
};

/// One outstanding allocation.
struct tracked_allocation {
  void* pointer;
  std::size_t bytes;
  std::size_t alignment;
  std::uint64_t serial;  ///< 1 for the first allocation through the adaptor, then 2, ...
};

/// Tracks the allocations outstanding through `Upstream`.
template <memory_resource Upstream>
class tracking_adaptor : public forward_properties<tracking_adaptor<Upstream>, Upstream> {
 public:
  explicit tracking_adaptor(Upstream upstream, tracking_options options = {})
      : upstream_(std::move(upstream)), options_(std::move(options)) {}
  tracking_adaptor(const tracking_adaptor&) = delete;
  tracking_adaptor& operator=(const tracking_adaptor&) = delete;

  /// Reports outstanding allocations (the leak report) to `on_leak`.
  ~tracking_adaptor() {
    std::string report;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (live_.empty()) return;
    }
    report = leak_report();
    if (options_.on_leak.fn != nullptr) {
      options_.on_leak.fn(options_.on_leak.context, report.c_str());
    } else {
      std::fputs(report.c_str(), stderr);
    }
  }

  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    void* p = upstream_.allocate(bytes, alignment);
    remember(p, bytes, alignment);
    return p;
  }

  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    auto r = xlamem::try_allocate(upstream_, bytes, alignment);
    if (r.has_value()) remember(*r, bytes, alignment);
    return r;
  }

  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(p);
      if (it == live_.end()) {
        misuse("deallocate of a pointer it did not hand out (" + std::to_string(bytes) + " bytes)");
        return;
      }
      if (it->second.bytes != bytes || it->second.alignment != alignment) {
        misuse("deallocate of allocation #" + std::to_string(it->second.serial) + " with " +
               std::to_string(bytes) + " bytes at alignment " + std::to_string(alignment) +
               "; it was allocated with " + std::to_string(it->second.bytes) +
               " bytes at alignment " + std::to_string(it->second.alignment));
        return;
      }
      live_.erase(it);
    }
    upstream_.deallocate(p, bytes, alignment);
  }

  /// The outstanding allocations, oldest first.
  [[nodiscard]] std::vector<tracked_allocation> outstanding() const {
    std::vector<tracked_allocation> out;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      out.reserve(live_.size());
      for (const auto& [p, a] : live_) out.push_back(a);
    }
    std::sort(out.begin(), out.end(), [](const tracked_allocation& a, const tracked_allocation& b) {
      return a.serial < b.serial;
    });
    return out;
  }

  /// Bytes outstanding.
  [[nodiscard]] std::size_t outstanding_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (const auto& [p, a] : live_) n += a.bytes;
    return n;
  }

  /// The text the destructor reports: a header line with the tag, the count and the bytes,
  /// then one line per allocation, oldest first:
  /// "tracking_adaptor 'tag': 2 allocation(s) leaked, 96 bytes\n  #1: 64 bytes at alignment
  /// 16\n  #3: 32 bytes at alignment 8\n". Empty when nothing is outstanding.
  [[nodiscard]] std::string leak_report() const {
    const auto all = outstanding();
    if (all.empty()) return {};
    std::size_t bytes = 0;
    for (const auto& a : all) bytes += a.bytes;
    std::string s = "tracking_adaptor '" + options_.tag + "': " + std::to_string(all.size()) +
                    " allocation(s) leaked, " + std::to_string(bytes) + " bytes\n";
    for (const auto& a : all) {
      s += "  #" + std::to_string(a.serial) + ": " + std::to_string(a.bytes) +
           " bytes at alignment " + std::to_string(a.alignment) + "\n";
    }
    return s;
  }

  /// The tag given in the options.
  [[nodiscard]] const std::string& tag() const noexcept { return options_.tag; }
  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }

  friend bool operator==(const tracking_adaptor& a, const tracking_adaptor& b) noexcept {
    return &a == &b;
  }

 private:
  void remember(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t serial = ++serial_;
    live_.insert_or_assign(p, tracked_allocation{p, bytes, alignment, serial});
  }

  void misuse(const std::string& what) const noexcept {
    const std::string message = "tracking_adaptor '" + options_.tag + "': " + what;
    if (options_.on_misuse.fn != nullptr) {
      options_.on_misuse.fn(options_.on_misuse.context, message.c_str());
    } else {
      XLAMEM_MISUSE(message.c_str());
    }
  }

  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_;
  tracking_options options_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, tracked_allocation> live_;
  std::uint64_t serial_ = 0;
};

static_assert(memory_resource<tracking_adaptor<detail::archetype_resource>>);
static_assert(try_allocating_resource<tracking_adaptor<detail::archetype_resource>>);
static_assert(has_property<tracking_adaptor<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
