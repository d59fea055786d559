// SPDX-License-Identifier: Apache-2.0
/// @file
/// `page_run_arena`: first-fit allocation of whole-page runs inside one fixed range of a
/// reservation, with freed runs coalesced and handed out again before the range grows. It is
/// the bookkeeping of one protection stripe of a JIT slab (all code, all read-only data, or all
/// read-write data of many modules), kept in byte offsets so it is testable without a JIT or
/// pages; `xlamem/llvm/slab_jitlink_memory_manager.hpp` applies it to real memory.
///
/// Why it grows from one end: pages past the high-water mark were never handed out, so they are
/// still untouched (inaccessible, zero, not resident). A run that comes from the free list was
/// used before; `page_run::reused` says so, and the caller must clear it before reuse.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// Whole pages handed out by a `page_run_arena`.
struct page_run {
  std::uint64_t offset = 0;  ///< from the start of the reservation; a multiple of the page size
  std::uint64_t size = 0;    ///< bytes, a multiple of the page size
  bool reused = false;       ///< true when the pages came from the free list (not zero)

  [[nodiscard]] std::uint64_t end() const noexcept { return offset + size; }
};

/// First-fit page runs in `[begin, begin + capacity)`: freed runs first (lowest offset that
/// fits), then fresh pages from the high-water mark. Not thread-safe; the owner locks.
class page_run_arena {
 public:
  page_run_arena() = default;
  /// @param begin where the range starts in the reservation (a multiple of `page_size`).
  /// @param capacity bytes in the range (a multiple of `page_size`).
  /// @param page_size a power of two.
  page_run_arena(std::uint64_t begin, std::uint64_t capacity, std::uint64_t page_size) noexcept
      : begin_(begin), capacity_(capacity), page_size_(page_size), high_water_(begin) {}

  /// Takes `bytes` rounded up to whole pages.
  /// @returns the run, or `invalid_argument` (0 bytes or overflow) / `resource_exhausted` (no
  ///          freed run fits and the fresh pages left are too few), naming the sizes.
  [[nodiscard]] result<page_run> try_allocate(std::uint64_t bytes) noexcept {
    try {
      const auto rounded = checked_align_up(bytes, page_size_);
      if (bytes == 0 || !rounded) {
        return make_error(errc::invalid_argument, "page run of " + std::to_string(bytes) +
                                                      " bytes: the size must be positive and "
                                                      "fit 64 bits when rounded to pages");
      }
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < *rounded) continue;
        const page_run run{it->first, *rounded, true};
        const std::uint64_t rest = it->second - *rounded;
        free_.erase(it);
        if (rest != 0) free_.emplace(run.end(), rest);
        free_bytes_ -= run.size;
        live_ += run.size;
        reused_ += run.size;
        return run;
      }
      const std::uint64_t fresh = begin_ + capacity_ - high_water_;
      if (*rounded > fresh) {
        return make_error(errc::resource_exhausted,
                          "page run of " + std::to_string(*rounded) + " bytes does not fit: " +
                              std::to_string(live_) + " of " + std::to_string(capacity_) +
                              " bytes are live, " + std::to_string(free_bytes_) + " freed in " +
                              std::to_string(free_.size()) + " runs, " + std::to_string(fresh) +
                              " never used");
      }
      const page_run run{high_water_, *rounded, false};
      high_water_ += run.size;
      live_ += run.size;
      return run;
    } catch (...) {
      return make_error(errc::out_of_memory, "page_run_arena: out of memory for bookkeeping");
    }
  }

  /// Gives `run` back, merging it with freed neighbours.
  /// @returns `invalid_argument` when the run lies outside the used part of the range, is not
  ///          page-aligned, or overlaps a freed run (a double release); nothing changes then.
  [[nodiscard]] result<void> release(page_run run) noexcept {
    try {
      if (run.size == 0 || !is_aligned(run.offset, page_size_) ||
          !is_aligned(run.size, page_size_) || run.offset < begin_ || run.offset > high_water_ ||
          run.size > high_water_ - run.offset) {
        return result<void>(errc::invalid_argument,
                            "release of the page run " + describe(run) +
                                ": not a run of this arena (used part " +
                                describe(page_run{begin_, high_water_ - begin_}) + ")");
      }
      auto next = free_.lower_bound(run.offset);
      if (next != free_.end() && next->first < run.end()) return overlap(run);
      if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second > run.offset) return overlap(run);
      }
      std::uint64_t offset = run.offset;
      std::uint64_t size = run.size;
      if (next != free_.end() && next->first == run.end()) {
        size += next->second;
        next = free_.erase(next);
      }
      if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
          offset = prev->first;
          size += prev->second;
          free_.erase(prev);
        }
      }
      free_.emplace(offset, size);
      free_bytes_ += run.size;
      live_ -= run.size;
      return {};
    } catch (...) {
      return result<void>(errc::out_of_memory, "page_run_arena: out of memory for bookkeeping");
    }
  }

  [[nodiscard]] std::uint64_t begin() const noexcept { return begin_; }
  [[nodiscard]] std::uint64_t capacity() const noexcept { return capacity_; }
  /// Bytes ever handed out from fresh pages: the high-water mark from `begin()`.
  [[nodiscard]] std::uint64_t used_bytes() const noexcept { return high_water_ - begin_; }
  /// Bytes in runs handed out and not released.
  [[nodiscard]] std::uint64_t live_bytes() const noexcept { return live_; }
  /// Bytes released and waiting for reuse.
  [[nodiscard]] std::uint64_t free_bytes() const noexcept { return free_bytes_; }
  /// Freed runs after merging neighbours.
  [[nodiscard]] std::uint64_t free_runs() const noexcept { return free_.size(); }
  /// Bytes ever served from the free list.
  [[nodiscard]] std::uint64_t reused_bytes() const noexcept { return reused_; }

 private:
  static std::string describe(const page_run& r) {
    return "[" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.size) + ")";
  }
  static result<void> overlap(const page_run& r) {
    return result<void>(errc::invalid_argument, "release of the page run " + describe(r) +
                                                    ": it overlaps a run already released");
  }

  std::uint64_t begin_ = 0;
  std::uint64_t capacity_ = 0;
  std::uint64_t page_size_ = 4096;
  std::uint64_t high_water_ = 0;
  std::uint64_t live_ = 0;
  std::uint64_t free_bytes_ = 0;
  std::uint64_t reused_ = 0;
  std::map<std::uint64_t, std::uint64_t> free_;  ///< offset -> size, never adjacent
};

}  // namespace xlamem
