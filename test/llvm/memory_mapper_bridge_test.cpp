// SPDX-License-Identifier: Apache-2.0
// Tests of xlamem/llvm/memory_mapper_bridge.hpp: llvm_page_mapper over llvm::sys::Memory and
// over an LLVM MemoryMapper (protections checked in /proc/self/maps), memory_mapper_adaptor errors.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <system_error>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>

#include "../support/proc_maps.hpp"
#include "mapper_support.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace {

using xlamem::allocation_purpose;
using xlamem::page_access;
using xlamem::page_block;
using xlamem::test::failing_page_mapper;
using xlamem::test::page;
using xlamem::test::perms_of;

// A negative model: no noexcept, so it is not a page mapper.
struct throwing_page_mapper {
  std::size_t page_size() const { return 4096; }
  xlamem::result<page_block> try_reserve(allocation_purpose, std::size_t, const void*, page_access);
  xlamem::result<void> try_protect(page_block, page_access);
  xlamem::result<void> try_release(page_block);
};
static_assert(!xlamem::page_mapper<throwing_page_mapper>);

// memory_mapper_adaptor takes page mappers only.
template <class M>
concept adaptable = requires { typename xlamem::memory_mapper_adaptor<M>; };
static_assert(adaptable<failing_page_mapper>);
static_assert(!adaptable<throwing_page_mapper>);

}  // namespace

TEST_SUITE("llvm/memory_mapper_bridge") {
  TEST_CASE("llvm_page_mapper over llvm::sys::Memory and over an LLVM mapper") {
    xlamem::memory_mapper_adaptor<xlamem::posix_page_mapper> llvm_side;
    for (llvm::SectionMemoryManager::MemoryMapper* upstream :
         {static_cast<llvm::SectionMemoryManager::MemoryMapper*>(nullptr),
          static_cast<llvm::SectionMemoryManager::MemoryMapper*>(&llvm_side)}) {
      CAPTURE(upstream != nullptr);
      xlamem::llvm_page_mapper m(upstream);
      CHECK(m.page_size() == page);
      auto r = m.try_reserve(allocation_purpose::read_write_data, 100, nullptr,
                             page_access::read_write);
      REQUIRE(r.has_value());
      CHECK(r->size >= 100);
      static_cast<char*>(r->base)[0] = 1;
      REQUIRE(m.try_protect(*r, page_access::read).has_value());
      CHECK(perms_of(r->base, r->size).perms == std::set<std::string>{"r--"});
      REQUIRE(m.try_release(*r).has_value());
    }
  }

  TEST_CASE("memory_mapper_adaptor turns errors into error codes and keeps the message") {
    xlamem::memory_mapper_adaptor<failing_page_mapper> m;
    std::error_code ec;
    auto b = m.allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose::ROData, 10,
                                    nullptr, llvm::sys::Memory::MF_READ, ec);
    CHECK(b.base() == nullptr);
    CHECK(ec == std::errc::not_enough_memory);
    CHECK(m.last_error_message() ==
          "out_of_memory: injected failure: reserve of 10 bytes for read_only_data");
  }
}
