// SPDX-License-Identifier: Apache-2.0
/// @file
/// The portable arithmetic of a contiguous JIT section reservation: `plan_contiguous_sections`
/// lays out one mapping as code < read-only data < read-write data, each part page-aligned and
/// padded; `section_bump_allocator` hands out the sections of one part; and
/// `check_code_distance` proves that every section lies within reach (±2 GiB by default) of the
/// code. Everything works in byte offsets from the start of the mapping, so it is testable
/// without a JIT; `xlamem/llvm/contiguous_section_memory_manager.hpp` applies it to real pages.
///
/// Why the padding makes every later request fit: a part starts on a page boundary, so on a
/// boundary of every alignment up to the page size. If RuntimeDyld reports size S at alignment A
/// (the sum of its sections' sizes each rounded up to A), bump allocation of those sections in
/// any order, each at an alignment of at most A, ends at or before S: before each section the
/// cursor is at most the sum of the previous rounded sizes, a multiple of A, so aligning it never
/// passes that sum. Each part also gets A spare bytes (a section announced at a smaller alignment
/// than it later asks for) and the rest of its last page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "xlamem/align.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// What RuntimeDyld announces for one part: its total size and the largest alignment in it.
/// An alignment of 0 means 1.
struct section_request {
  std::uint64_t size = 0;
  std::uint64_t alignment = 1;
};

/// Where one part lies in the mapping.
struct section_part_extent {
  std::uint64_t offset = 0;    ///< from the start of the mapping; a multiple of the page size
  std::uint64_t capacity = 0;  ///< bytes, a multiple of the page size (0 for an empty part)

  [[nodiscard]] std::uint64_t end() const noexcept { return offset + capacity; }
  friend bool operator==(const section_part_extent&, const section_part_extent&) = default;
};

/// One mapping split into three consecutive parts: code, then read-only, then read-write data.
struct contiguous_section_layout {
  std::uint64_t page_size = 0;
  std::uint64_t total_size = 0;  ///< bytes to reserve: the three capacities
  section_part_extent code;
  section_part_extent read_only;
  section_part_extent read_write;

  /// The part that holds sections of `purpose`.
  [[nodiscard]] const section_part_extent& part(allocation_purpose purpose) const noexcept {
    switch (purpose) {
      case allocation_purpose::code: return code;
      case allocation_purpose::read_only_data: return read_only;
      case allocation_purpose::read_write_data: break;
    }
    return read_write;
  }
};

namespace detail {

inline result<std::uint64_t> plan_part_capacity(const char* what, section_request r,
                                                std::uint64_t page_size) {
  const std::uint64_t alignment = r.alignment == 0 ? 1 : r.alignment;
  if (!is_power_of_two(alignment)) {
    return make_error(errc::invalid_argument, std::string("the ") + what + " alignment " +
                                                  std::to_string(alignment) +
                                                  " is not a power of two");
  }
  if (alignment > page_size) {
    return make_error(errc::invalid_argument,
                      std::string("the ") + what + " alignment " + std::to_string(alignment) +
                          " exceeds the page size " + std::to_string(page_size) +
                          ": parts start on page boundaries, so a larger alignment cannot be "
                          "honoured inside one mapping");
  }
  if (r.size == 0) return std::uint64_t{0};
  const auto padded = r.size <= std::numeric_limits<std::uint64_t>::max() - alignment
                          ? checked_align_up(r.size + alignment, page_size)
                          : std::nullopt;
  if (!padded) {
    return make_error(errc::invalid_argument, std::string("the ") + what + " size " +
                                                  std::to_string(r.size) +
                                                  " overflows when padded to whole pages");
  }
  return *padded;
}

}  // namespace detail

/// Lays out one reservation for three parts in the order code < read-only < read-write.
/// Each non-empty part gets `align_up(size + alignment, page_size)` bytes; an empty part gets none.
/// @returns the layout, or `invalid_argument` naming the part when an alignment is not a power of
///          two or exceeds the page size, the page size is not a power of two, or a size overflows.
[[nodiscard]] inline result<contiguous_section_layout> plan_contiguous_sections(
    section_request code, section_request read_only, section_request read_write,
    std::uint64_t page_size) {
  if (!is_power_of_two(page_size)) {
    return make_error(errc::invalid_argument,
                      "the page size " + std::to_string(page_size) + " is not a power of two");
  }
  contiguous_section_layout layout;
  layout.page_size = page_size;
  std::uint64_t offset = 0;
  const struct {
    const char* what;
    section_request request;
    section_part_extent* extent;
  } parts[] = {{"code", code, &layout.code},
               {"read-only data", read_only, &layout.read_only},
               {"read-write data", read_write, &layout.read_write}};
  for (const auto& p : parts) {
    auto capacity = detail::plan_part_capacity(p.what, p.request, page_size);
    if (!capacity) return capacity.error();
    if (*capacity > std::numeric_limits<std::uint64_t>::max() - offset) {
      return make_error(errc::invalid_argument, "the total reservation overflows 64 bits");
    }
    *p.extent = section_part_extent{offset, *capacity};
    offset += *capacity;
  }
  layout.total_size = offset;
  return layout;
}

/// Bump allocation inside one part: round the cursor up to the request's alignment, take the
/// bytes, never free. Offsets are from the start of the mapping, which is page-aligned, so an
/// offset aligned here is an address aligned in memory. Not thread-safe (RuntimeDyld loads one
/// object on one thread).
class section_bump_allocator {
 public:
  section_bump_allocator() = default;
  /// @param purpose names the part in messages.
  /// @param extent where the part lies.
  /// @param max_alignment the page size: the largest alignment the mapping's start guarantees.
  section_bump_allocator(allocation_purpose purpose, section_part_extent extent,
                         std::uint64_t max_alignment) noexcept
      : purpose_(purpose), extent_(extent), cursor_(extent.offset), max_alignment_(max_alignment) {}

  /// Takes `size` bytes at `alignment` (0 means 1).
  /// @returns the offset of the bytes, or `invalid_argument` (alignment not a power of two or
  ///          above the page size) / `resource_exhausted` (does not fit what is left).
  [[nodiscard]] result<std::uint64_t> try_allocate(std::uint64_t size,
                                                   std::uint64_t alignment) noexcept {
    try {
      if (alignment == 0) alignment = 1;
      if (!is_power_of_two(alignment)) {
        return make_error(errc::invalid_argument, "suballocation of " + std::to_string(size) +
                                                      " bytes in the " + to_string(purpose_) +
                                                      " part: alignment " +
                                                      std::to_string(alignment) +
                                                      " is not a power of two");
      }
      if (alignment > max_alignment_) {
        return make_error(errc::invalid_argument,
                          "suballocation of " + std::to_string(size) + " bytes in the " +
                              to_string(purpose_) + " part: alignment " +
                              std::to_string(alignment) + " exceeds the page size " +
                              std::to_string(max_alignment_));
      }
      const std::uint64_t start = align_up(cursor_, alignment);
      if (start > extent_.end() || size > extent_.end() - start) {
        return make_error(errc::resource_exhausted,
                          "suballocation of " + std::to_string(size) + " bytes at alignment " +
                              std::to_string(alignment) + " does not fit the " +
                              to_string(purpose_) + " part: " + std::to_string(used()) + " of " +
                              std::to_string(extent_.capacity) + " reserved bytes are used");
      }
      padding_ += start - cursor_;
      bytes_ += size;
      cursor_ = start + size;
      ++count_;
      return start;
    } catch (...) {
      return make_error(errc::out_of_memory, "out of memory while reporting a suballocation");
    }
  }

  [[nodiscard]] allocation_purpose purpose() const noexcept { return purpose_; }
  [[nodiscard]] const section_part_extent& extent() const noexcept { return extent_; }
  /// Bytes from the part's start to the cursor: sections plus alignment padding.
  [[nodiscard]] std::uint64_t used() const noexcept { return cursor_ - extent_.offset; }
  /// Bytes handed out in sections.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  /// Bytes skipped to align sections.
  [[nodiscard]] std::uint64_t padding() const noexcept { return padding_; }
  /// Bytes still free at the end of the part.
  [[nodiscard]] std::uint64_t remaining() const noexcept { return extent_.end() - cursor_; }
  /// Sections handed out.
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

 private:
  allocation_purpose purpose_ = allocation_purpose::code;
  section_part_extent extent_{};
  std::uint64_t cursor_ = 0;
  std::uint64_t max_alignment_ = 1;
  std::uint64_t bytes_ = 0;
  std::uint64_t padding_ = 0;
  std::uint64_t count_ = 0;
};

/// A section as placed in the mapping, for introspection and the distance check.
struct placed_section {
  allocation_purpose purpose = allocation_purpose::code;
  std::uint64_t offset = 0;  ///< from the start of the mapping
  std::uint64_t size = 0;
  unsigned id = 0;           ///< RuntimeDyld's section id
  std::string name;          ///< ".text", ".rodata.cst16", ...

  [[nodiscard]] std::uint64_t end() const noexcept { return offset + size; }
};

/// 2 GiB: the reach of a signed 32-bit PC-relative relocation.
inline constexpr std::uint64_t default_code_reach = std::uint64_t{1} << 31;

/// Checks that every section lies within `reach` bytes of the code: for each section, the span
/// from the lower of its start and the code's start to the higher of its end and the code's end
/// is at most `reach`. The code is the span of all code sections; with no code there is nothing
/// to reach and the check passes.
/// @returns success, or `out_of_range` naming the first section out of reach.
[[nodiscard]] inline result<void> check_code_distance(std::span<const placed_section> sections,
                                                      std::uint64_t reach = default_code_reach) {
  std::uint64_t code_begin = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t code_end = 0;
  for (const auto& s : sections) {
    if (s.purpose != allocation_purpose::code) continue;
    code_begin = s.offset < code_begin ? s.offset : code_begin;
    code_end = s.end() > code_end ? s.end() : code_end;
  }
  if (code_end == 0 && code_begin == std::numeric_limits<std::uint64_t>::max()) return {};
  for (const auto& s : sections) {
    const std::uint64_t lo = s.offset < code_begin ? s.offset : code_begin;
    const std::uint64_t hi = s.end() > code_end ? s.end() : code_end;
    if (hi - lo > reach) {
      return result<void>(
          errc::out_of_range,
          "section '" + s.name + "' (id " + std::to_string(s.id) + ", " + to_string(s.purpose) +
              ", " + std::to_string(s.size) + " bytes at offset " + std::to_string(s.offset) +
              ") and the code at offsets [" + std::to_string(code_begin) + ", " +
              std::to_string(code_end) + ") span " + std::to_string(hi - lo) +
              " bytes, more than the " + std::to_string(reach) +
              "-byte reach of 32-bit PC-relative relocations");
    }
  }
  return {};
}

}  // namespace xlamem
