// SPDX-License-Identifier: Apache-2.0
/// @file
/// `mapped_memory`: host memory mapped straight from the kernel with anonymous `mmap`, returned
/// with `munmap`, with an optional transparent-huge-page hint (`madvise(MADV_HUGEPAGE)`).
/// Requests are rounded up to whole pages; alignments above the page size are honoured by
/// over-mapping and trimming. Thread-safe; all instances are equal.
/// POSIX only: on other systems every request fails with `unimplemented`.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

#include "xlamem/align.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace xlamem {

/// Options of `mapped_memory`.
struct mapped_memory_options {
  /// Ask the kernel to back the mapping with transparent huge pages (a hint; ignored where
  /// unsupported).
  bool huge_page_hint = false;
};

/// Anonymous private page mappings (read + write).
class mapped_memory {
 public:
  mapped_memory() = default;
  explicit mapped_memory(mapped_memory_options options) noexcept : options_(options) {}

  /// The system page size in bytes.
  [[nodiscard]] static std::size_t page_size() noexcept {
#if defined(__unix__) || defined(__APPLE__)
    const long n = ::sysconf(_SC_PAGESIZE);
    return n > 0 ? static_cast<std::size_t>(n) : 4096;
#else
    return 4096;
#endif
  }

  /// Maps at least `bytes` (rounded up to pages) at `alignment`.
  /// @throws out_of_memory when the kernel refuses; `exception` for a bad alignment.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    auto r = try_allocate(bytes, alignment);
    if (!r) throw_error(r.error());
    return *r;
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment)) return bad_alignment_error("mapped_memory", alignment);
#if defined(__unix__) || defined(__APPLE__)
    const std::size_t page = page_size();
    const auto length = checked_align_up(bytes == 0 ? 1 : bytes, page);
    const std::size_t extra = alignment > page ? alignment - page : 0;
    if (!length || *length > SIZE_MAX - extra) {
      return error(errc::out_of_memory,
                   "mapped_memory: request of " + std::to_string(bytes) + " bytes is too large");
    }
    const std::size_t total = static_cast<std::size_t>(*length) + extra;
    void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      const int err = errno;
      return error(errc::out_of_memory, "mapped_memory: mmap of " + std::to_string(total) +
                                            " bytes failed: " + std::error_code(err, std::generic_category()).message());  // strerror is not thread-safe
    }
    char* p = static_cast<char*>(base);
    if (extra != 0) {  // trim the unaligned head and the tail
      char* aligned = static_cast<char*>(align_pointer_up(base, alignment));
      const std::size_t head = static_cast<std::size_t>(aligned - p);
      if (head != 0) ::munmap(p, head);
      const std::size_t tail = extra - head;
      if (tail != 0) ::munmap(aligned + *length, tail);
      p = aligned;
    }
#ifdef MADV_HUGEPAGE
    if (options_.huge_page_hint) ::madvise(p, static_cast<std::size_t>(*length), MADV_HUGEPAGE);
#endif
    return static_cast<void*>(p);
#else
    (void)bytes;
    return error(errc::unimplemented, "mapped_memory: no mmap on this system");
#endif
  }

  void deallocate(void* p, std::size_t bytes,
                  std::size_t /*alignment*/ = default_alignment) noexcept {
#if defined(__unix__) || defined(__APPLE__)
    if (p == nullptr) return;
    ::munmap(p, static_cast<std::size_t>(align_up(bytes == 0 ? 1 : bytes, page_size())));
#else
    (void)p;
    (void)bytes;
#endif
  }

  /// The options this resource maps with.
  [[nodiscard]] const mapped_memory_options& options() const noexcept { return options_; }

  /// Any instance may unmap what another mapped, so all are equal.
  friend constexpr bool operator==(const mapped_memory&, const mapped_memory&) noexcept {
    return true;
  }
  friend constexpr void get_property(const mapped_memory&, host_accessible) noexcept {}

 private:
  mapped_memory_options options_{};
};

static_assert(memory_resource<mapped_memory>);
static_assert(try_allocating_resource<mapped_memory>);
static_assert(has_property<mapped_memory, host_accessible>);

}  // namespace xlamem
