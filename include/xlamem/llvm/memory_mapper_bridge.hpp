// SPDX-License-Identifier: Apache-2.0
/// @file
/// Bridges between xlamem's `page_mapper` policy and LLVM's
/// `llvm::SectionMemoryManager::MemoryMapper`, in both directions:
/// - `llvm_page_mapper` is a `page_mapper` over any LLVM `MemoryMapper` (not owned), or over
///   `llvm::sys::Memory` (LLVM's default) when given null;
/// - `memory_mapper_adaptor<PageMapper>` is an LLVM `MemoryMapper` backed by a `page_mapper`, for
///   `llvm::SectionMemoryManager` and for a `jit_memory_mapper_registry`.
/// LLVM's `std::error_code`s become `xlamem::error`s here and never leak further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Support/Memory.h>
#include <llvm/Support/Process.h>

#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

namespace detail {

[[nodiscard]] inline llvm::SectionMemoryManager::AllocationPurpose to_llvm(
    allocation_purpose p) noexcept {
  switch (p) {
    case allocation_purpose::code: return llvm::SectionMemoryManager::AllocationPurpose::Code;
    case allocation_purpose::read_only_data:
      return llvm::SectionMemoryManager::AllocationPurpose::ROData;
    case allocation_purpose::read_write_data: break;
  }
  return llvm::SectionMemoryManager::AllocationPurpose::RWData;
}

[[nodiscard]] inline allocation_purpose from_llvm(
    llvm::SectionMemoryManager::AllocationPurpose p) noexcept {
  switch (p) {
    case llvm::SectionMemoryManager::AllocationPurpose::Code: return allocation_purpose::code;
    case llvm::SectionMemoryManager::AllocationPurpose::ROData:
      return allocation_purpose::read_only_data;
    case llvm::SectionMemoryManager::AllocationPurpose::RWData: break;
  }
  return allocation_purpose::read_write_data;
}

[[nodiscard]] inline unsigned to_llvm_flags(page_access a) noexcept {
  unsigned flags = 0;
  if (has_access(a, page_access::read)) flags |= llvm::sys::Memory::MF_READ;
  if (has_access(a, page_access::write)) flags |= llvm::sys::Memory::MF_WRITE;
  if (has_access(a, page_access::execute)) flags |= llvm::sys::Memory::MF_EXEC;
  return flags;
}

[[nodiscard]] inline page_access from_llvm_flags(unsigned flags) noexcept {
  page_access a = page_access::none;
  if ((flags & llvm::sys::Memory::MF_READ) != 0) a = a | page_access::read;
  if ((flags & llvm::sys::Memory::MF_WRITE) != 0) a = a | page_access::write;
  if ((flags & llvm::sys::Memory::MF_EXEC) != 0) a = a | page_access::execute;
  return a;
}

/// The nearest `std::errc` for an xlamem error, for LLVM's `std::error_code` interfaces.
[[nodiscard]] inline std::error_code to_error_code(const error& e) noexcept {
  switch (e.code()) {
    case errc::out_of_memory:
    case errc::resource_exhausted: return std::make_error_code(std::errc::not_enough_memory);
    case errc::invalid_argument:
    case errc::out_of_range: return std::make_error_code(std::errc::invalid_argument);
    case errc::unimplemented: return std::make_error_code(std::errc::function_not_supported);
    default: break;
  }
  return std::make_error_code(std::errc::operation_not_permitted);
}

}  // namespace detail

/// A `page_mapper` over an LLVM `SectionMemoryManager::MemoryMapper` (not owned; it must outlive
/// this object), or over `llvm::sys::Memory` when constructed with null, which is what LLVM's
/// own `SectionMemoryManager` uses by default. Thread-safe exactly when the LLVM mapper is.
class llvm_page_mapper {
 public:
  /// @param mapper the LLVM mapper to forward to, or null for `llvm::sys::Memory`.
  explicit llvm_page_mapper(llvm::SectionMemoryManager::MemoryMapper* mapper = nullptr) noexcept
      : mapper_(mapper) {}

  /// `llvm::sys::Process::getPageSizeEstimate()`.
  [[nodiscard]] std::size_t page_size() const noexcept {
    return llvm::sys::Process::getPageSizeEstimate();
  }

  [[nodiscard]] result<page_block> try_reserve(allocation_purpose purpose, std::size_t bytes,
                                               const void* near_hint,
                                               page_access access) noexcept {
    try {
      std::error_code ec;
      const llvm::sys::MemoryBlock near(const_cast<void*>(near_hint), 0);
      const llvm::sys::MemoryBlock* near_ptr = near_hint != nullptr ? &near : nullptr;
      const unsigned flags = detail::to_llvm_flags(access);
      llvm::sys::MemoryBlock block =
          mapper_ != nullptr
              ? mapper_->allocateMappedMemory(detail::to_llvm(purpose), bytes, near_ptr, flags, ec)
              : llvm::sys::Memory::allocateMappedMemory(bytes, near_ptr, flags, ec);
      if (ec || block.base() == nullptr) {
        return make_error(errc::out_of_memory,
                          std::string(mapper_ != nullptr ? "LLVM memory mapper"
                                                         : "llvm::sys::Memory") +
                              ": " + detail::describe_reserve(purpose, bytes) + " failed: " +
                              (ec ? ec.message() : std::string("no memory returned")));
      }
      return page_block{block.base(), block.allocatedSize()};
    } catch (...) {
      return make_error(errc::out_of_memory, "llvm_page_mapper: out of memory for a message");
    }
  }

  [[nodiscard]] result<void> try_protect(page_block block, page_access access) noexcept {
    try {
      const llvm::sys::MemoryBlock b(block.base, block.size);
      const unsigned flags = detail::to_llvm_flags(access);
      const std::error_code ec = mapper_ != nullptr
                                     ? mapper_->protectMappedMemory(b, flags)
                                     : llvm::sys::Memory::protectMappedMemory(b, flags);
      if (ec) {
        return result<void>(errc::failed_precondition,
                            "llvm_page_mapper: protect(" + to_string(access) + ") of " +
                                detail::describe_block(block) + " failed: " + ec.message());
      }
      return {};
    } catch (...) {
      return result<void>(errc::out_of_memory, "llvm_page_mapper: out of memory for a message");
    }
  }

  [[nodiscard]] result<void> try_release(page_block block) noexcept {
    try {
      if (block.empty()) return {};
      llvm::sys::MemoryBlock b(block.base, block.size);
      const std::error_code ec = mapper_ != nullptr ? mapper_->releaseMappedMemory(b)
                                                    : llvm::sys::Memory::releaseMappedMemory(b);
      if (ec) {
        return result<void>(errc::invalid_argument, "llvm_page_mapper: release of " +
                                                        detail::describe_block(block) +
                                                        " failed: " + ec.message());
      }
      return {};
    } catch (...) {
      return result<void>(errc::out_of_memory, "llvm_page_mapper: out of memory for a message");
    }
  }

  /// The LLVM mapper forwarded to; null means `llvm::sys::Memory`.
  [[nodiscard]] llvm::SectionMemoryManager::MemoryMapper* get() const noexcept { return mapper_; }

 private:
  llvm::SectionMemoryManager::MemoryMapper* mapper_;
};
static_assert(page_mapper<llvm_page_mapper>);

/// An LLVM `SectionMemoryManager::MemoryMapper` backed by a `page_mapper`, so xlamem mappers plug
/// into `llvm::SectionMemoryManager` and into a `jit_memory_mapper_registry`. Errors become
/// `std::error_code`s (LLVM's convention); the last message is kept for `last_error_message()`.
/// Thread-safe when `PageMapper` is.
/// @tparam PageMapper a `page_mapper`, held by value (use `page_mapper_ref` to share one).
template <page_mapper PageMapper>
class memory_mapper_adaptor final : public llvm::SectionMemoryManager::MemoryMapper {
 public:
  memory_mapper_adaptor() = default;
  explicit memory_mapper_adaptor(PageMapper mapper) : mapper_(std::move(mapper)) {}

  llvm::sys::MemoryBlock allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose purpose,
                                              std::size_t bytes,
                                              const llvm::sys::MemoryBlock* const near_block,
                                              unsigned flags, std::error_code& ec) override {
    ec = std::error_code();
    const void* hint = nullptr;
    if (near_block != nullptr && near_block->base() != nullptr) {
      hint = static_cast<const char*>(near_block->base()) + near_block->allocatedSize();
    }
    auto r = mapper_.try_reserve(detail::from_llvm(purpose), bytes, hint,
                                 detail::from_llvm_flags(flags));
    if (!r) {
      remember(r.error());
      ec = detail::to_error_code(r.error());
      return {};
    }
    return llvm::sys::MemoryBlock(r->base, r->size);
  }

  /// Like `llvm::sys::Memory::protectMappedMemory`, protects every page that `block` touches
  /// (`SectionMemoryManager` passes sub-page blocks).
  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock& block,
                                      unsigned flags) override {
    const auto page = static_cast<std::uintptr_t>(mapper_.page_size());
    const auto begin = reinterpret_cast<std::uintptr_t>(block.base()) & ~(page - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(block.base()) + block.allocatedSize() +
                      page - 1) & ~(page - 1);
    auto r = mapper_.try_protect(page_block{reinterpret_cast<void*>(begin),
                                            static_cast<std::size_t>(end - begin)},
                                 detail::from_llvm_flags(flags));
    if (!r) {
      remember(r.error());
      return detail::to_error_code(r.error());
    }
    return {};
  }

  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock& block) override {
    auto r = mapper_.try_release(page_block{block.base(), block.allocatedSize()});
    if (!r) {
      remember(r.error());
      return detail::to_error_code(r.error());
    }
    block = llvm::sys::MemoryBlock();
    return {};
  }

  /// The page mapper behind this adaptor.
  [[nodiscard]] PageMapper& mapper() noexcept { return mapper_; }
  [[nodiscard]] const PageMapper& mapper() const noexcept { return mapper_; }

  /// The message of the last failure ("code: message"), empty when none failed.
  [[nodiscard]] std::string last_error_message() const {
    std::lock_guard<std::mutex> lock(error_mutex_);
    return last_error_;
  }

 private:
  void remember(const error& e) noexcept {
    try {
      std::string m = e.to_string();
      std::lock_guard<std::mutex> lock(error_mutex_);
      last_error_ = std::move(m);
    } catch (...) {
    }
  }

  XLAMEM_NO_UNIQUE_ADDRESS PageMapper mapper_{};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace xlamem
