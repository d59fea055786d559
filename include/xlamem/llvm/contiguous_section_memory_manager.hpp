// SPDX-License-Identifier: Apache-2.0
/// @file
/// `contiguous_section_memory_manager`: a RuntimeDyld memory manager that puts all sections of
/// one object file into one mapping, laid out code < read-only data < read-write data (XLA's
/// ContiguousSectionMemoryManager). One mapping keeps every PC-relative relocation in reach,
/// which LLVM's `SectionMemoryManager` cannot promise (AArch64 llvm/llvm-project#71963, Windows
/// x64 #55386).
///
/// Life of one manager (one object file; `RTDyldObjectLinkingLayer` makes one per object):
/// 1. `reserveAllocationSpace` maps the pages of all three parts read+write at once
///    (`plan_contiguous_sections`: each part page-aligned and padded so every announced section
///    fits whatever its order and alignment);
/// 2. `allocateCodeSection` / `allocateDataSection` bump-allocate inside the matching part;
/// 3. `finalizeMemory` checks that every section lies within ±2 GiB of the code, makes the code
///    pages read+execute and the read-only pages read-only (pages are never writable and
///    executable at once), and invalidates the instruction cache over the code;
/// 4. the destructor deregisters EH frames and releases the mapping.
/// Where XLA aborts (alignment above the page size, a second reservation, a failed reservation,
/// a section that does not fit) this manager keeps LLVM's conventions: allocation returns null
/// and `finalizeMemory` returns true with the message; `last_error()` holds the first error and,
/// unless `contiguous_section_options::log_errors` is off, it is printed to `llvm::errs()`
/// because RuntimeDyld stops with a generic "Unable to allocate section memory!" right after a
/// null section. Not thread-safe: one object is loaded by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <llvm/ADT/StringRef.h>
#include <llvm/ExecutionEngine/RTDyldMemoryManager.h>
#include <llvm/Support/Memory.h>
#include <llvm/Support/raw_ostream.h>

#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/jit/section_layout.hpp"
#include "xlamem/error.hpp"
#include "xlamem/llvm/compat.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace xlamem {

/// Knobs of a contiguous section memory manager.
struct contiguous_section_options {
  /// The most bytes a section and the code may span together (see `check_code_distance`);
  /// 2 GiB, the reach of 32-bit PC-relative relocations.
  std::uint64_t code_reach = default_code_reach;
  /// Print each error to `llvm::errs()` when it happens (RuntimeDyld's own message after a null
  /// section does not say why).
  bool log_errors = true;
};

/// Accounting of one part of the mapping.
struct section_part_stats {
  std::uint64_t requested = 0;  ///< size announced by `reserveAllocationSpace`
  std::uint64_t alignment = 0;  ///< alignment announced by `reserveAllocationSpace`
  std::uint64_t capacity = 0;   ///< bytes of the mapping given to the part (whole pages)
  std::uint64_t bytes = 0;      ///< bytes handed out in sections
  std::uint64_t padding = 0;    ///< bytes skipped to align sections
  std::uint64_t sections = 0;   ///< sections handed out

  /// Bytes of the part never handed out: page rounding, reserve padding, unused announcement.
  [[nodiscard]] std::uint64_t unused() const noexcept { return capacity - bytes - padding; }
};

/// Accounting of one manager.
struct contiguous_section_stats {
  section_part_stats code;
  section_part_stats read_only;
  section_part_stats read_write;
  std::uint64_t mapped_bytes = 0;  ///< size of the mapping (0 before the reservation)
  std::uint64_t mappings = 0;      ///< mappings made: 0 or 1
  bool finalized = false;
};

/// A RuntimeDyld memory manager over one contiguous reservation (see the file comment).
/// @tparam PageMapper the `page_mapper` that reserves, protects and releases the pages, held by
///         value; `contiguous_section_memory_manager` uses an LLVM `MemoryMapper`.
template <page_mapper PageMapper>
class basic_contiguous_section_memory_manager : public llvm::RTDyldMemoryManager {
 public:
  /// @param mapper where pages come from.
  /// @param options reach and logging.
  explicit basic_contiguous_section_memory_manager(PageMapper mapper = PageMapper(),
                                                   contiguous_section_options options = {})
      : mapper_(std::move(mapper)), options_(options) {}

  basic_contiguous_section_memory_manager(const basic_contiguous_section_memory_manager&) = delete;
  basic_contiguous_section_memory_manager& operator=(
      const basic_contiguous_section_memory_manager&) = delete;

  /// Deregisters EH frames, then releases the mapping (a failure is logged, never thrown).
  ~basic_contiguous_section_memory_manager() override {
    deregisterEHFrames();
    if (!mapping_.empty()) {
      auto r = mapper_.try_release(mapping_);
      if (!r) log(r.error().with_context("releasing the mapping"));
    }
  }

  // ---- RuntimeDyld::MemoryManager -------------------------------------------------------------

  /// True: RuntimeDyld must announce all sizes before the first section.
  bool needsToReserveAllocationSpace() override { return true; }

  /// Reserves the one mapping; errors are kept (see `try_reserve`).
  void reserveAllocationSpace(std::uintptr_t code_size,
                              detail::rtdyld_reserve_alignment code_alignment,
                              std::uintptr_t read_only_size,
                              detail::rtdyld_reserve_alignment read_only_alignment,
                              std::uintptr_t read_write_size,
                              detail::rtdyld_reserve_alignment read_write_alignment) override {
    (void)try_reserve({code_size, detail::alignment_bytes(code_alignment)},
                      {read_only_size, detail::alignment_bytes(read_only_alignment)},
                      {read_write_size, detail::alignment_bytes(read_write_alignment)});
  }

  /// A code section from the code part, or null on an error (kept in `last_error()`).
  std::uint8_t* allocateCodeSection(std::uintptr_t size, unsigned alignment, unsigned section_id,
                                    llvm::StringRef section_name) override {
    return as_llvm(try_allocate(allocation_purpose::code, size, alignment, section_id,
                                section_name));
  }

  /// A data section from the read-only or read-write part, or null on an error.
  std::uint8_t* allocateDataSection(std::uintptr_t size, unsigned alignment, unsigned section_id,
                                    llvm::StringRef section_name, bool is_read_only) override {
    return as_llvm(try_allocate(is_read_only ? allocation_purpose::read_only_data
                                             : allocation_purpose::read_write_data,
                                size, alignment, section_id, section_name));
  }

  /// Applies the final protections (see `try_finalize`). @returns false on success, true with
  /// `*error_message` set on an error (LLVM's convention); an earlier error is reported here too.
  bool finalizeMemory(std::string* error_message = nullptr) override {
    auto r = try_finalize();
    if (r) return false;
    if (error_message != nullptr) {
      try {
        *error_message = r.error().to_string();
      } catch (...) {
        error_message->clear();
      }
    }
    return true;
  }

  // ---- the same steps as result-returning calls -----------------------------------------------

  /// Lays out and maps the one reservation, read+write.
  /// @returns `failed_precondition` for a second reservation (the first stays),
  ///          `invalid_argument` for an alignment above the page size or not a power of two,
  ///          or the mapper's error (usually `out_of_memory`), each naming the request.
  [[nodiscard]] result<void> try_reserve(section_request code, section_request read_only,
                                         section_request read_write) noexcept {
    try {
      const std::string request = "reservation for code " + describe(code) + ", read-only " +
                                  describe(read_only) + ", read-write " + describe(read_write);
      if (reserved_) {
        return fail(make_error(errc::failed_precondition,
                               "a second " + request +
                                   ": a manager holds one object file's sections in one mapping; "
                                   "make a new manager per object"));
      }
      auto layout = plan_contiguous_sections(code, read_only, read_write, mapper_.page_size());
      if (!layout) return fail(layout.error().with_context(request));
      requests_[0] = code;
      requests_[1] = read_only;
      requests_[2] = read_write;
      if (layout->total_size > 0) {
        if (layout->total_size > static_cast<std::uint64_t>(SIZE_MAX)) {
          return fail(make_error(errc::invalid_argument, request + ": too large for this system"));
        }
        auto block = mapper_.try_reserve(allocation_purpose::code,
                                         static_cast<std::size_t>(layout->total_size), nullptr,
                                         page_access::read_write);
        if (!block) return fail(block.error().with_context(request));
        if (block->size < layout->total_size ||
            !is_aligned(block->base, static_cast<std::size_t>(layout->page_size))) {
          (void)mapper_.try_release(*block);
          return fail(make_error(errc::internal, request + ": the mapper returned " +
                                                     std::to_string(block->size) +
                                                     " bytes, not whole pages of the size asked"));
        }
        mapping_ = *block;
        ++mappings_;
      }
      layout_ = *layout;
      reserved_ = true;
      parts_[0] = section_bump_allocator(allocation_purpose::code, layout_.code, layout_.page_size);
      parts_[1] = section_bump_allocator(allocation_purpose::read_only_data, layout_.read_only,
                                         layout_.page_size);
      parts_[2] = section_bump_allocator(allocation_purpose::read_write_data, layout_.read_write,
                                         layout_.page_size);
      return {};
    } catch (...) {
      return fail_oom();
    }
  }

  /// Bump-allocates a section in the part for `purpose`. An alignment of 0 means 16 (LLVM's
  /// `SectionMemoryManager` convention).
  /// @returns the section's address, or `failed_precondition` (no reservation yet, or already
  ///          finalized), `invalid_argument` (alignment), `resource_exhausted` (does not fit).
  [[nodiscard]] result<std::byte*> try_allocate(allocation_purpose purpose, std::uint64_t size,
                                                std::uint64_t alignment, unsigned section_id,
                                                std::string_view section_name) noexcept {
    try {
      const auto what = [&] {
        return "section '" + std::string(section_name) + "' (id " + std::to_string(section_id) +
               ")";
      };
      if (!reserved_) {
        if (first_error_) {
          std::string why = first_error_->message();
          constexpr std::string_view prefix = "contiguous_section_memory_manager: ";
          if (why.starts_with(prefix)) why.erase(0, prefix.size());
          return fail(make_error(errc::failed_precondition,
                                 what() + ": there is no mapping because the reservation failed (" +
                                     why + ")"));
        }
        return fail(make_error(errc::failed_precondition,
                               what() + ": no reservation yet; reserveAllocationSpace "
                                        "(try_reserve) must come first"));
      }
      if (finalized_) {
        return fail(make_error(errc::failed_precondition,
                               what() + ": the memory is already finalized; make a new manager "
                                        "per object"));
      }
      auto offset = part(purpose).try_allocate(size, alignment == 0 ? 16 : alignment);
      if (!offset) return fail(offset.error().with_context(what()));
      sections_.push_back(placed_section{purpose, *offset, size, section_id,
                                         std::string(section_name)});
      return mapping_.begin() + *offset;
    } catch (...) {
      return fail_oom();
    }
  }

  /// Checks reach, protects code read+execute and read-only data read-only, then invalidates the
  /// instruction cache. A second call does nothing.
  /// @returns the first earlier error if there was one, `out_of_range` when a section is out of
  ///          reach of the code, or the mapper's protection error.
  [[nodiscard]] result<void> try_finalize() noexcept {
    try {
      if (first_error_) return *first_error_;
      if (finalized_) return {};
      if (auto r = check_code_distance(sections_, options_.code_reach); !r) {
        return fail(r.error().with_context("finalize"));
      }
      if (!mapping_.empty()) {
        if (auto r = protect(layout_.code, page_access::read_execute); !r) return fail(r.error());
        if (auto r = protect(layout_.read_only, page_access::read); !r) return fail(r.error());
        if (layout_.code.capacity > 0) {
          llvm::sys::Memory::InvalidateInstructionCache(
              mapping_.begin() + layout_.code.offset,
              static_cast<std::size_t>(layout_.code.capacity));
        }
      }
      finalized_ = true;
      return {};
    } catch (...) {
      return fail_oom();
    }
  }

  // ---- introspection --------------------------------------------------------------------------

  /// The one mapping (empty before the reservation or when nothing was asked for).
  [[nodiscard]] page_block reservation() const noexcept { return mapping_; }
  /// The pages of one part (empty when the part is).
  [[nodiscard]] page_block part_pages(allocation_purpose purpose) const noexcept {
    const auto& e = layout_.part(purpose);
    if (mapping_.empty() || e.capacity == 0) return {};
    return page_block{mapping_.begin() + e.offset, static_cast<std::size_t>(e.capacity)};
  }
  /// The layout of the mapping.
  [[nodiscard]] const contiguous_section_layout& layout() const noexcept { return layout_; }
  /// Every section handed out, in order.
  [[nodiscard]] std::span<const placed_section> sections() const noexcept { return sections_; }
  /// The first error, if any.
  [[nodiscard]] const std::optional<error>& last_error() const noexcept { return first_error_; }
  [[nodiscard]] bool finalized() const noexcept { return finalized_; }
  [[nodiscard]] const contiguous_section_options& options() const noexcept { return options_; }
  [[nodiscard]] PageMapper& mapper() noexcept { return mapper_; }

  /// Bytes per part, padding and mappings.
  [[nodiscard]] contiguous_section_stats stats() const noexcept {
    contiguous_section_stats s;
    section_part_stats* out[] = {&s.code, &s.read_only, &s.read_write};
    for (int i = 0; i < 3; ++i) {
      out[i]->requested = requests_[i].size;
      out[i]->alignment = requests_[i].alignment;
      out[i]->capacity = parts_[i].extent().capacity;
      out[i]->bytes = parts_[i].bytes();
      out[i]->padding = parts_[i].padding();
      out[i]->sections = parts_[i].count();
    }
    s.mapped_bytes = mapping_.size;
    s.mappings = mappings_;
    s.finalized = finalized_;
    return s;
  }

 private:
  section_bump_allocator& part(allocation_purpose p) noexcept {
    return parts_[static_cast<int>(p)];
  }

  result<void> protect(const section_part_extent& e, page_access access) noexcept {
    if (e.capacity == 0) return {};
    return mapper_.try_protect(
        page_block{mapping_.begin() + e.offset, static_cast<std::size_t>(e.capacity)}, access);
  }

  static std::string describe(section_request r) {
    return std::to_string(r.size) + " bytes at alignment " + std::to_string(r.alignment);
  }

  static std::uint8_t* as_llvm(const result<std::byte*>& r) noexcept {
    return r ? reinterpret_cast<std::uint8_t*>(*r) : nullptr;
  }

  error fail(error e) noexcept {
    e = e.with_context("contiguous_section_memory_manager");
    log(e);
    if (!first_error_) first_error_ = e;
    return e;
  }
  error fail_oom() noexcept {
    return fail(make_error(errc::out_of_memory, "out of memory for the manager's bookkeeping"));
  }
  void log(const error& e) const noexcept {
    if (options_.log_errors) llvm::errs() << "xlamem: " << e.to_string() << "\n";
  }

  XLAMEM_NO_UNIQUE_ADDRESS PageMapper mapper_;
  contiguous_section_options options_;
  contiguous_section_layout layout_{};
  section_request requests_[3] = {};
  section_bump_allocator parts_[3] = {};
  page_block mapping_{};
  std::vector<placed_section> sections_;
  std::optional<error> first_error_;
  std::uint64_t mappings_ = 0;
  bool reserved_ = false;
  bool finalized_ = false;
};

/// The manager XLA's CPU backend uses: pages from an LLVM `SectionMemoryManager::MemoryMapper`
/// (for example one from a `jit_memory_mapper_registry`), or from `llvm::sys::Memory` when null.
class contiguous_section_memory_manager final
    : public basic_contiguous_section_memory_manager<llvm_page_mapper> {
 public:
  /// @param mapper not owned, must outlive the manager; null means `llvm::sys::Memory`.
  /// @param options reach and logging.
  explicit contiguous_section_memory_manager(
      llvm::SectionMemoryManager::MemoryMapper* mapper = nullptr,
      contiguous_section_options options = {})
      : basic_contiguous_section_memory_manager<llvm_page_mapper>(llvm_page_mapper(mapper),
                                                                  options) {}
};

}  // namespace xlamem
