// SPDX-License-Identifier: Apache-2.0
/// @file
/// `jit_memory_mapper_registry`: one LLVM `SectionMemoryManager::MemoryMapper` per allocation
/// region name, in an object the user owns (XLA keeps the same map in a process-global registry).
/// `find(name)` answers null for a name nobody registered, so the caller falls back to LLVM's
/// default mapper exactly as XLA's `GetJitMemoryMapper` does:
///
///     xlamem::jit_memory_mapper_registry mappers;
///     (void)mappers.register_factory("xla_cpu_jit", xlamem::memory_mapper_factory<xlamem::posix_page_mapper>());
///     auto mm = std::make_unique<xlamem::contiguous_section_memory_manager>(mappers.find("xla_cpu_jit"));
///
/// See `named_mapper_registry` for thread safety and ownership.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>

#include "xlamem/jit/mapper_registry.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace xlamem {

/// A user-owned registry of LLVM memory mappers by region name.
using jit_memory_mapper_registry =
    named_mapper_registry<llvm::SectionMemoryManager::MemoryMapper>;

/// A factory for `jit_memory_mapper_registry` that makes a `memory_mapper_adaptor<PageMapper>`
/// from a copy of `prototype` for each region.
/// @tparam PageMapper a copyable `page_mapper`.
template <page_mapper PageMapper>
[[nodiscard]] jit_memory_mapper_registry::factory_type memory_mapper_factory(
    PageMapper prototype = PageMapper()) {
  return [prototype = std::move(prototype)](std::string_view)
             -> std::unique_ptr<llvm::SectionMemoryManager::MemoryMapper> {
    return std::make_unique<memory_mapper_adaptor<PageMapper>>(prototype);
  };
}

}  // namespace xlamem
