// SPDX-License-Identifier: Apache-2.0
/// @file
/// `dual_mapping`: one memory object (a Linux memfd) seen through two views at different
/// addresses: a writable view where a linker writes, and an executable view whose parts carry
/// fixed protections (code read+execute, constants read-only, data read+write). No page is ever
/// writable and executable at one address, and no protection ever changes after creation, so it
/// works where the system refuses `mprotect` to executable (SELinux `execmem`, PaX MPROTECT)
/// while still allowing a shared file mapping to be mapped executable.
///
/// Each part of the executable view is mapped with its protection by `mmap` itself (over a
/// reserved, inaccessible range), so the executable view is exactly one mapping per part; the
/// writable view is one mapping. Pages cost memory only once written (tmpfs).
/// Linux only (`memfd_create`); elsewhere `try_create` answers `unimplemented`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"
#include "xlamem/jit/page_mapper.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace xlamem {

/// One part of the executable view: `[offset, offset + size)` of the object, mapped `access`.
struct dual_mapping_part {
  std::uint64_t offset = 0;  ///< a multiple of the page size
  std::uint64_t size = 0;    ///< a multiple of the page size
  page_access access = page_access::none;
};

/// A memfd of `size()` bytes mapped twice (see the file comment). Move-only; the destructor
/// unmaps both views and closes the descriptor.
class dual_mapping {
 public:
  dual_mapping() = default;
  dual_mapping(const dual_mapping&) = delete;
  dual_mapping& operator=(const dual_mapping&) = delete;
  dual_mapping(dual_mapping&& other) noexcept { swap(other); }
  dual_mapping& operator=(dual_mapping&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  ~dual_mapping() { reset(); }

  /// Creates a memfd of `size` bytes, maps it read+write once, and maps each of `parts` with its
  /// protection into a second range; bytes outside every part are inaccessible there.
  /// @param name the memfd's name, shown in /proc/self/maps as "/memfd:NAME".
  /// @returns the mapping, or `invalid_argument` (size 0 or not whole pages, a part outside the
  ///          object, unaligned, or asking for write+execute), `out_of_memory` (a system call
  ///          failed, naming it and errno's text), `unimplemented` (not Linux).
  [[nodiscard]] static result<dual_mapping> try_create(const char* name, std::uint64_t size,
                                                       std::span<const dual_mapping_part> parts,
                                                       std::uint64_t page_size) noexcept {
    try {
      const std::string what = "dual_mapping of " + std::to_string(size) + " bytes";
      if (size == 0 || !is_power_of_two(page_size) || !is_aligned(size, page_size) ||
          size > static_cast<std::uint64_t>(SIZE_MAX)) {
        return make_error(errc::invalid_argument,
                          what + ": the size must be a positive multiple of the page size " +
                              std::to_string(page_size));
      }
      for (const auto& p : parts) {
        if (!is_aligned(p.offset, page_size) || !is_aligned(p.size, page_size) || p.offset > size ||
            p.size > size - p.offset) {
          return make_error(errc::invalid_argument,
                            what + ": the part [" + std::to_string(p.offset) + ", +" +
                                std::to_string(p.size) + ") is not whole pages inside the object");
        }
        if (is_write_and_execute(p.access)) {
          return make_error(errc::invalid_argument,
                            what + ": a part asks for writable and executable pages (" +
                                to_string(p.access) + "), which a dual mapping exists to avoid");
        }
      }
#if defined(__linux__)
      dual_mapping m;
      m.size_ = static_cast<std::size_t>(size);
      m.fd_ = ::memfd_create(name, MFD_CLOEXEC);
      if (m.fd_ < 0) return system_failure(what, "memfd_create");
      if (::ftruncate(m.fd_, static_cast<off_t>(size)) != 0) {
        return system_failure(what, "ftruncate");
      }
      void* w = ::mmap(nullptr, m.size_, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd_, 0);
      if (w == MAP_FAILED) return system_failure(what, "mmap of the writable view");
      m.write_ = static_cast<std::byte*>(w);
      void* x =
          ::mmap(nullptr, m.size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (x == MAP_FAILED) return system_failure(what, "mmap of the executable view's range");
      m.exec_ = static_cast<std::byte*>(x);
      for (const auto& p : parts) {
        if (p.size == 0 || p.access == page_access::none) continue;
        void* at = ::mmap(m.exec_ + p.offset, static_cast<std::size_t>(p.size), native(p.access),
                          MAP_SHARED | MAP_FIXED, m.fd_, static_cast<off_t>(p.offset));
        if (at == MAP_FAILED) {
          return system_failure(what, "mmap(" + to_string(p.access) + ") of a part");
        }
      }
      return m;
#else
      (void)name;
      return make_error(errc::unimplemented, what + ": needs Linux (memfd_create)");
#endif
    } catch (...) {
      return make_error(errc::out_of_memory, "dual_mapping: out of memory for a message");
    }
  }

  [[nodiscard]] bool empty() const noexcept { return exec_ == nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The start of the writable view.
  [[nodiscard]] std::byte* write_base() const noexcept { return write_; }
  /// The start of the executable view.
  [[nodiscard]] std::byte* exec_base() const noexcept { return exec_; }
  /// The writable-view address of executable-view address `p` (which must lie in the object).
  [[nodiscard]] std::byte* writable(const void* p) const noexcept {
    return write_ + (static_cast<const std::byte*>(p) - exec_);
  }

 private:
#if defined(__linux__)
  static int native(page_access a) noexcept {
    int prot = PROT_NONE;
    if (has_access(a, page_access::read)) prot |= PROT_READ;
    if (has_access(a, page_access::write)) prot |= PROT_WRITE;
    if (has_access(a, page_access::execute)) prot |= PROT_EXEC;
    return prot;
  }
  static error system_failure(const std::string& what, const std::string& call) {
    const int e = errno;
    return make_error(errc::out_of_memory,
                      what + ": " + call + " failed: " + std::generic_category().message(e));
  }
#endif

  void reset() noexcept {
#if defined(__linux__)
    if (exec_ != nullptr) (void)::munmap(exec_, size_);
    if (write_ != nullptr) (void)::munmap(write_, size_);
    if (fd_ >= 0) (void)::close(fd_);
#endif
    exec_ = nullptr;
    write_ = nullptr;
    fd_ = -1;
    size_ = 0;
  }
  void swap(dual_mapping& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(size_, o.size_);
    std::swap(write_, o.write_);
    std::swap(exec_, o.exec_);
  }

  int fd_ = -1;
  std::size_t size_ = 0;
  std::byte* write_ = nullptr;
  std::byte* exec_ = nullptr;
};

}  // namespace xlamem
