// SPDX-License-Identifier: Apache-2.0
/// @file
/// The page-mapper policy: reserve whole pages, change their protection, release them. It is
/// what a JIT memory manager asks of the operating system, after LLVM's
/// `SectionMemoryManager::MemoryMapper` but with `result` errors. Defines the `page_mapper`
/// concept, its vocabulary (`allocation_purpose`, `page_access`, `page_block`), the POSIX model
/// `posix_page_mapper` (mmap/mprotect/munmap), `page_mapper_ref` (a non-owning handle) and
/// `counting_page_mapper_adaptor` (counts mappings and bytes).
///
/// What the compiler cannot check:
/// - `try_reserve`, `try_protect` and `try_release` are `noexcept` and report failure as an error
///   value naming the request; `page_size()` is constant for the mapper's lifetime.
/// - A block returned by `try_reserve` starts on a page boundary and its `size` is the requested
///   size rounded up to whole pages; `try_protect` and `try_release` accept only blocks (or
///   page-aligned sub-blocks for `try_protect`) that came from the same mapper.
/// - Thread safety is the model's: `posix_page_mapper` and `counting_page_mapper_adaptor` may be
///   called from any number of threads at once.
/// `posix_page_mapper` needs a POSIX system (`<sys/mman.h>`); elsewhere only the concept, the
/// vocabulary and the adaptors are defined.
#pragma once

#include <atomic>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"

#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace xlamem {

/// What a reservation will hold; a mapper may place or label pages by purpose.
enum class allocation_purpose : std::uint8_t {
  code,             ///< machine code, executable once finalized
  read_only_data,   ///< constants, read-only once finalized
  read_write_data,  ///< globals, stays readable and writable
};

/// The lowercase name of a purpose as it appears in messages: "read_only_data".
[[nodiscard]] constexpr const char* to_string(allocation_purpose p) noexcept {
  switch (p) {
    case allocation_purpose::code: return "code";
    case allocation_purpose::read_only_data: return "read_only_data";
    case allocation_purpose::read_write_data: return "read_write_data";
  }
  return "unknown";
}

/// Page protection as a bit set: combine with `|`, test with `has_access`.
enum class page_access : std::uint8_t {
  none = 0,
  read = 1,
  write = 2,
  execute = 4,
  read_write = read | write,
  read_execute = read | execute,
};

[[nodiscard]] constexpr page_access operator|(page_access a, page_access b) noexcept {
  return static_cast<page_access>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
[[nodiscard]] constexpr page_access operator&(page_access a, page_access b) noexcept {
  return static_cast<page_access>(static_cast<std::uint8_t>(a) & static_cast<std::uint8_t>(b));
}

/// True when every bit of `wanted` is set in `a`.
[[nodiscard]] constexpr bool has_access(page_access a, page_access wanted) noexcept {
  return (a & wanted) == wanted;
}

/// True for protections that are writable and executable at once, which a JIT must never ask for.
[[nodiscard]] constexpr bool is_write_and_execute(page_access a) noexcept {
  return has_access(a, page_access::write | page_access::execute);
}

/// "r-x"-style text of a protection, as /proc/self/maps prints it.
[[nodiscard]] inline std::string to_string(page_access a) {
  std::string s = "---";
  if (has_access(a, page_access::read)) s[0] = 'r';
  if (has_access(a, page_access::write)) s[1] = 'w';
  if (has_access(a, page_access::execute)) s[2] = 'x';
  return s;
}

/// A run of whole pages: start and size in bytes. Empty when `base` is null.
struct page_block {
  void* base = nullptr;
  std::size_t size = 0;

  [[nodiscard]] bool empty() const noexcept { return base == nullptr; }
  [[nodiscard]] std::byte* begin() const noexcept { return static_cast<std::byte*>(base); }
  [[nodiscard]] std::byte* end() const noexcept { return begin() + size; }
  /// True when `[p, p + n)` lies inside this block.
  [[nodiscard]] bool contains(const void* p, std::size_t n = 1) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    return base != nullptr && a >= b && n <= size && a - b <= size - n;
  }
  friend bool operator==(const page_block&, const page_block&) = default;
};

/// A source of whole pages with changeable protection (see the file comment for the contract).
template <class M>
concept page_mapper = requires(M& m, const M& cm, allocation_purpose purpose, std::size_t bytes,
                               const void* near_hint, page_block block, page_access access) {
  { cm.page_size() } noexcept -> std::same_as<std::size_t>;
  { m.try_reserve(purpose, bytes, near_hint, access) } noexcept -> std::same_as<result<page_block>>;
  { m.try_protect(block, access) } noexcept -> std::same_as<result<void>>;
  { m.try_release(block) } noexcept -> std::same_as<result<void>>;
};

namespace detail {

/// "reserve of 8192 bytes for code" — the request part of every mapper message.
inline std::string describe_reserve(allocation_purpose purpose, std::size_t bytes) {
  return "reserve of " + std::to_string(bytes) + " bytes for " + to_string(purpose);
}

inline std::string describe_block(const page_block& b) {
  char buf[2 + 2 * sizeof(void*) + 1];
  const auto addr = reinterpret_cast<std::uintptr_t>(b.base);
  constexpr char digits[] = "0123456789abcdef";
  std::size_t n = 0;
  buf[n++] = '0';
  buf[n++] = 'x';
  for (int shift = static_cast<int>(sizeof(void*) * 8) - 4; shift >= 0; shift -= 4) {
    buf[n++] = digits[(addr >> shift) & 0xf];
  }
  buf[n] = '\0';
  return std::to_string(b.size) + " bytes at " + buf;
}

}  // namespace detail

#if defined(__unix__) || defined(__APPLE__)

/// Pages straight from the kernel: anonymous private `mmap`, `mprotect`, `munmap`. Stateless and
/// thread-safe. The near hint is passed to `mmap` as a hint only.
class posix_page_mapper {
 public:
  /// The system page size (`sysconf(_SC_PAGESIZE)`).
  [[nodiscard]] std::size_t page_size() const noexcept {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }

  /// Maps `bytes` rounded up to whole pages with protection `access`.
  /// @returns the block, or `out_of_memory` (kernel refused) / `invalid_argument` (size 0 or
  ///          overflowing) naming the request.
  [[nodiscard]] result<page_block> try_reserve(allocation_purpose purpose, std::size_t bytes,
                                               const void* near_hint,
                                               page_access access) noexcept {
    try {
      const auto rounded = checked_align_up(bytes, page_size());
      if (bytes == 0 || !rounded || *rounded > static_cast<std::uint64_t>(SIZE_MAX)) {
        return make_error(errc::invalid_argument,
                          "posix_page_mapper: " + detail::describe_reserve(purpose, bytes) +
                              ": the size must be positive and fit the address space");
      }
      void* p = ::mmap(const_cast<void*>(near_hint), static_cast<std::size_t>(*rounded),
                       native(access), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        const int e = errno;
        return make_error(errc::out_of_memory, "posix_page_mapper: " +
                                                   detail::describe_reserve(purpose, bytes) +
                                                   ": mmap failed: " + message(e));
      }
      return page_block{p, static_cast<std::size_t>(*rounded)};
    } catch (...) {
      return make_error(errc::out_of_memory, "posix_page_mapper: out of memory for a message");
    }
  }

  /// Sets the protection of `block` (whole pages) to `access`.
  [[nodiscard]] result<void> try_protect(page_block block, page_access access) noexcept {
    try {
      if (block.empty() || block.size == 0) {
        return result<void>(errc::invalid_argument, "posix_page_mapper: protect of an empty block");
      }
      if (::mprotect(block.base, block.size, native(access)) != 0) {
        const int e = errno;
        return result<void>(errc::failed_precondition,
                            "posix_page_mapper: mprotect(" + to_string(access) + ") of " +
                                detail::describe_block(block) + " failed: " + message(e));
      }
      return {};
    } catch (...) {
      return result<void>(errc::out_of_memory, "posix_page_mapper: out of memory for a message");
    }
  }

  /// Unmaps `block`. Releasing an empty block succeeds and does nothing.
  [[nodiscard]] result<void> try_release(page_block block) noexcept {
    try {
      if (block.empty()) return {};
      if (::munmap(block.base, block.size) != 0) {
        const int e = errno;
        return result<void>(errc::invalid_argument, "posix_page_mapper: munmap of " +
                                                        detail::describe_block(block) +
                                                        " failed: " + message(e));
      }
      return {};
    } catch (...) {
      return result<void>(errc::out_of_memory, "posix_page_mapper: out of memory for a message");
    }
  }

 private:
  static int native(page_access a) noexcept {
    int prot = PROT_NONE;
    if (has_access(a, page_access::read)) prot |= PROT_READ;
    if (has_access(a, page_access::write)) prot |= PROT_WRITE;
    if (has_access(a, page_access::execute)) prot |= PROT_EXEC;
    return prot;
  }
  static std::string message(int e) { return std::generic_category().message(e); }
};
static_assert(page_mapper<posix_page_mapper>);

#endif  // POSIX

/// A non-owning handle to a page mapper that lives elsewhere (for example one shared by many
/// JIT memory managers). The mapper must outlive every handle.
/// @tparam Mapper a `page_mapper`.
template <page_mapper Mapper>
class page_mapper_ref {
 public:
  explicit page_mapper_ref(Mapper& mapper) noexcept : mapper_(&mapper) {}

  [[nodiscard]] std::size_t page_size() const noexcept { return mapper_->page_size(); }
  [[nodiscard]] result<page_block> try_reserve(allocation_purpose purpose, std::size_t bytes,
                                               const void* near_hint,
                                               page_access access) noexcept {
    return mapper_->try_reserve(purpose, bytes, near_hint, access);
  }
  [[nodiscard]] result<void> try_protect(page_block block, page_access access) noexcept {
    return mapper_->try_protect(block, access);
  }
  [[nodiscard]] result<void> try_release(page_block block) noexcept {
    return mapper_->try_release(block);
  }
  [[nodiscard]] Mapper& get() const noexcept { return *mapper_; }

 private:
  Mapper* mapper_;
};

/// What a `counting_page_mapper_adaptor` has seen (a consistent-enough snapshot: each field is
/// read atomically, the set is not).
struct page_mapper_counts {
  std::uint64_t reservations = 0;     ///< successful `try_reserve` calls (mappings made)
  std::uint64_t failed_reservations = 0;
  std::uint64_t releases = 0;         ///< successful `try_release` calls of non-empty blocks
  std::uint64_t protections = 0;      ///< successful `try_protect` calls
  std::uint64_t bytes_reserved = 0;   ///< total bytes ever mapped
  std::uint64_t bytes_live = 0;       ///< bytes mapped now
  std::uint64_t peak_bytes_live = 0;  ///< the most bytes mapped at once
  std::uint64_t write_execute_requests = 0;  ///< reserve/protect calls asking for W and X at once
};

/// Forwards to `Upstream` and counts mappings, protections and bytes; thread-safe (relaxed
/// atomics). Asking for writable+executable pages is forwarded but counted, so a test or a
/// benchmark can assert W^X.
/// @tparam Upstream a `page_mapper`, held by value (use `page_mapper_ref` to share one).
template <page_mapper Upstream>
class counting_page_mapper_adaptor {
 public:
  counting_page_mapper_adaptor() = default;
  explicit counting_page_mapper_adaptor(Upstream upstream) : upstream_(std::move(upstream)) {}
  counting_page_mapper_adaptor(const counting_page_mapper_adaptor&) = delete;
  counting_page_mapper_adaptor& operator=(const counting_page_mapper_adaptor&) = delete;

  [[nodiscard]] std::size_t page_size() const noexcept { return upstream_.page_size(); }

  [[nodiscard]] result<page_block> try_reserve(allocation_purpose purpose, std::size_t bytes,
                                               const void* near_hint,
                                               page_access access) noexcept {
    if (is_write_and_execute(access)) bump(write_execute_requests_);
    auto r = upstream_.try_reserve(purpose, bytes, near_hint, access);
    if (r) {
      bump(reservations_);
      bytes_reserved_.fetch_add(r->size, std::memory_order_relaxed);
      const auto live = bytes_live_.fetch_add(r->size, std::memory_order_relaxed) + r->size;
      auto peak = peak_bytes_live_.load(std::memory_order_relaxed);
      while (live > peak &&
             !peak_bytes_live_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
      }
    } else {
      bump(failed_reservations_);
    }
    return r;
  }

  [[nodiscard]] result<void> try_protect(page_block block, page_access access) noexcept {
    if (is_write_and_execute(access)) bump(write_execute_requests_);
    auto r = upstream_.try_protect(block, access);
    if (r) bump(protections_);
    return r;
  }

  [[nodiscard]] result<void> try_release(page_block block) noexcept {
    auto r = upstream_.try_release(block);
    if (r && !block.empty()) {
      bump(releases_);
      bytes_live_.fetch_sub(block.size, std::memory_order_relaxed);
    }
    return r;
  }

  /// The counts so far.
  [[nodiscard]] page_mapper_counts counts() const noexcept {
    page_mapper_counts c;
    c.reservations = reservations_.load(std::memory_order_relaxed);
    c.failed_reservations = failed_reservations_.load(std::memory_order_relaxed);
    c.releases = releases_.load(std::memory_order_relaxed);
    c.protections = protections_.load(std::memory_order_relaxed);
    c.bytes_reserved = bytes_reserved_.load(std::memory_order_relaxed);
    c.bytes_live = bytes_live_.load(std::memory_order_relaxed);
    c.peak_bytes_live = peak_bytes_live_.load(std::memory_order_relaxed);
    c.write_execute_requests = write_execute_requests_.load(std::memory_order_relaxed);
    return c;
  }

  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }
  [[nodiscard]] const Upstream& upstream() const noexcept { return upstream_; }

 private:
  static void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.fetch_add(1, std::memory_order_relaxed);
  }

  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_{};
  std::atomic<std::uint64_t> reservations_{0};
  std::atomic<std::uint64_t> failed_reservations_{0};
  std::atomic<std::uint64_t> releases_{0};
  std::atomic<std::uint64_t> protections_{0};
  std::atomic<std::uint64_t> bytes_reserved_{0};
  std::atomic<std::uint64_t> bytes_live_{0};
  std::atomic<std::uint64_t> peak_bytes_live_{0};
  std::atomic<std::uint64_t> write_execute_requests_{0};
};

#if defined(__unix__) || defined(__APPLE__)
static_assert(page_mapper<counting_page_mapper_adaptor<posix_page_mapper>>);
static_assert(page_mapper<page_mapper_ref<posix_page_mapper>>);
#endif

}  // namespace xlamem
