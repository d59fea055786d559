// SPDX-License-Identifier: Apache-2.0
// Page mappers shared by the RuntimeDyld-side LLVM tests: one that checks /proc/self/maps for rwx
// pages at every step, one whose every reservation fails; the host page size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../support/proc_maps.hpp"  // perms_of: /proc/self/maps
#include "xlamem/error.hpp"
#include "xlamem/jit/page_mapper.hpp"

namespace xlamem::test {

/// The host's page size.
inline const std::uint64_t page = xlamem::posix_page_mapper().page_size();

/// Whether any page of [base, base + size) is readable, writable and executable at once.
inline bool any_rwx(const void* base, std::size_t size) {
  for (const auto& p : perms_of(base, size).perms) {
    if (p == "rwx") return true;
  }
  return false;
}

// What an inspecting mapper saw.
struct inspection_log {
  std::uint64_t reservations = 0;
  std::uint64_t protections = 0;
  std::uint64_t releases = 0;
  std::uint64_t write_execute_requests = 0;  // asked for W and X at once
  std::uint64_t rwx_seen = 0;                // /proc/self/maps showed rwx in a mapping
  std::vector<page_block> live;
};

// A page mapper over POSIX that, after every reserve and protect, reads /proc/self/maps and
// counts any rwx page of the mapping, so "never rwx" is checked at every step LLVM drives.
class inspecting_page_mapper {
 public:
  explicit inspecting_page_mapper(inspection_log& log) : log_(&log) {}
  [[nodiscard]] std::size_t page_size() const noexcept { return upstream_.page_size(); }
  [[nodiscard]] xlamem::result<page_block> try_reserve(allocation_purpose p, std::size_t n,
                                                       const void* hint, page_access a) noexcept {
    if (xlamem::is_write_and_execute(a)) ++log_->write_execute_requests;
    auto r = upstream_.try_reserve(p, n, hint, a);
    if (r) {
      ++log_->reservations;
      log_->live.push_back(*r);
      if (any_rwx(r->base, r->size)) ++log_->rwx_seen;
    }
    return r;
  }
  [[nodiscard]] xlamem::result<void> try_protect(page_block b, page_access a) noexcept {
    if (xlamem::is_write_and_execute(a)) ++log_->write_execute_requests;
    auto r = upstream_.try_protect(b, a);
    if (r) ++log_->protections;
    for (const auto& m : log_->live) {
      if (any_rwx(m.base, m.size)) ++log_->rwx_seen;
    }
    return r;
  }
  [[nodiscard]] xlamem::result<void> try_release(page_block b) noexcept {
    auto r = upstream_.try_release(b);
    if (r && !b.empty()) {
      ++log_->releases;
      std::erase(log_->live, b);
    }
    return r;
  }

 private:
  xlamem::posix_page_mapper upstream_;
  inspection_log* log_;
};
static_assert(xlamem::page_mapper<inspecting_page_mapper>);

// A page mapper whose reservations always fail, as a kernel out of address space would.
class failing_page_mapper {
 public:
  [[nodiscard]] std::size_t page_size() const noexcept { return 4096; }
  [[nodiscard]] xlamem::result<page_block> try_reserve(allocation_purpose p, std::size_t n,
                                                       const void*, page_access) noexcept {
    return xlamem::make_error(errc::out_of_memory,
                              "injected failure: " + xlamem::detail::describe_reserve(p, n));
  }
  [[nodiscard]] xlamem::result<void> try_protect(page_block, page_access) noexcept {
    return xlamem::result<void>(errc::failed_precondition, "injected failure: protect");
  }
  [[nodiscard]] xlamem::result<void> try_release(page_block) noexcept { return {}; }
};
static_assert(xlamem::page_mapper<failing_page_mapper>);

}  // namespace xlamem::test
