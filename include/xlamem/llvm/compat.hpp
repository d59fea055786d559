// SPDX-License-Identifier: Apache-2.0
/// @file
/// The differences between the LLVM versions xlamem supports (14 to 22; CI builds 14, 16, 19
/// and 22) in the RuntimeDyld interfaces, in one place. The JITLink manager
/// (`slab_jitlink_memory_manager.hpp`, LLVM 19 and later) keeps its own: where LLJIT registers
/// EH frames (LLVM 20) and how the EH-frame plugin is made (LLVM 22).
///
/// | Item | 14, 15 | 16 and later |
/// |---|---|---|
/// | `RuntimeDyld::MemoryManager::reserveAllocationSpace` alignments | `uint32_t` | `llvm::Align` |
/// | `RTDyldObjectLinkingLayer::GetMemoryManagerFunction` | `std::function<...()>` | `unique_function<...()>`; LLVM 21 passes `const MemoryBuffer&` |
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/Alignment.h>

static_assert(LLVM_VERSION_MAJOR >= 14, "xlamem/llvm needs LLVM 14 or later");

namespace xlamem::detail {

#if LLVM_VERSION_MAJOR >= 16
/// The alignment parameter type of `reserveAllocationSpace` (LLVM 16 switched to `llvm::Align`).
using rtdyld_reserve_alignment = llvm::Align;
/// The alignment in bytes.
[[nodiscard]] inline std::uint64_t alignment_bytes(llvm::Align a) noexcept { return a.value(); }
#else
/// The alignment parameter type of `reserveAllocationSpace` (`uint32_t` before LLVM 16).
using rtdyld_reserve_alignment = std::uint32_t;
/// The alignment in bytes (0 means 1).
[[nodiscard]] inline std::uint64_t alignment_bytes(std::uint32_t a) noexcept {
  return a == 0 ? 1 : a;
}
#endif

}  // namespace xlamem::detail

namespace xlamem {

/// Wraps `make`, a callable returning `std::unique_ptr<M>` for some memory manager `M`, so that it
/// converts to `RTDyldObjectLinkingLayer::GetMemoryManagerFunction` of every supported LLVM:
/// no argument before LLVM 21, the object's `const llvm::MemoryBuffer&` from LLVM 21 (ignored).
/// @param make called once per object file; it must return a fresh manager each time.
template <class Make>
[[nodiscard]] auto rtdyld_memory_manager_factory(Make make) {
  return [make = std::move(make)](const auto&...) mutable { return make(); };
}

}  // namespace xlamem
