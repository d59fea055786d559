// SPDX-License-Identifier: Apache-2.0
// Tests of xlamem/llvm/compat.hpp on the LLVM it is built with: reserveAllocationSpace's alignment
// type and byte count, and rtdyld_memory_manager_factory as RTDyldObjectLinkingLayer's factory.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/RuntimeDyld.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Support/Alignment.h>
#include <llvm/Support/MemoryBuffer.h>

#include "jit_support.hpp"
#include "xlamem/llvm/compat.hpp"

namespace {

using xlamem::detail::alignment_bytes;
using xlamem::detail::rtdyld_reserve_alignment;

// ---- rtdyld_reserve_alignment and alignment_bytes ----------------------------------------------

// The shim names exactly the parameter type of this LLVM's reserveAllocationSpace (an override
// spelled with it below compiles too).
static_assert(
    std::is_same_v<decltype(&llvm::RuntimeDyld::MemoryManager::reserveAllocationSpace),
                   void (llvm::RuntimeDyld::MemoryManager::*)(
                       std::uintptr_t, rtdyld_reserve_alignment, std::uintptr_t,
                       rtdyld_reserve_alignment, std::uintptr_t, rtdyld_reserve_alignment)>);
// uint32_t up to LLVM 15, llvm::Align from 16, as the table in compat.hpp says.
static_assert(
    std::is_same_v<rtdyld_reserve_alignment,
                   std::conditional_t<(LLVM_VERSION_MAJOR >= 16), llvm::Align, std::uint32_t>>);
static_assert(std::is_same_v<decltype(alignment_bytes(rtdyld_reserve_alignment{})), std::uint64_t>);
static_assert(noexcept(alignment_bytes(rtdyld_reserve_alignment{})));

// What RuntimeDyld announced to reserveAllocationSpace for one object, in bytes.
struct announced_space {
  std::uint64_t code_size = 0;
  std::uint64_t code_alignment = 0;
  std::uint64_t read_only_size = 0;
  std::uint64_t read_only_alignment = 0;
  std::uint64_t read_write_size = 0;
  std::uint64_t read_write_alignment = 0;
};

// LLVM's SectionMemoryManager, asking RuntimeDyld for the sizes up front and recording them.
class announcing_memory_manager final : public llvm::SectionMemoryManager {
 public:
  explicit announcing_memory_manager(std::vector<announced_space>& log) : log_(&log) {}
  bool needsToReserveAllocationSpace() override { return true; }
  void reserveAllocationSpace(std::uintptr_t code_size, rtdyld_reserve_alignment code_alignment,
                              std::uintptr_t read_only_size,
                              rtdyld_reserve_alignment read_only_alignment,
                              std::uintptr_t read_write_size,
                              rtdyld_reserve_alignment read_write_alignment) override {
    log_->push_back({code_size, alignment_bytes(code_alignment), read_only_size,
                     alignment_bytes(read_only_alignment), read_write_size,
                     alignment_bytes(read_write_alignment)});
  }

 private:
  std::vector<announced_space>* log_;
};

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// ---- rtdyld_memory_manager_factory -------------------------------------------------------------

using get_memory_manager = llvm::orc::RTDyldObjectLinkingLayer::GetMemoryManagerFunction;

const auto make_section_memory_manager = [] {
  return std::make_unique<llvm::SectionMemoryManager>();
};
using wrapped_factory =
    decltype(xlamem::rtdyld_memory_manager_factory(make_section_memory_manager));

// The wrapped factory is the layer's factory on every supported LLVM, and can be called with or
// without the object's buffer.
static_assert(std::is_convertible_v<wrapped_factory, get_memory_manager>);
static_assert(std::is_invocable_v<wrapped_factory&>);
static_assert(std::is_invocable_v<wrapped_factory&, const llvm::MemoryBuffer&>);
// The reason for the wrapper: from LLVM 21 the layer passes the object's buffer, so a factory
// taking no argument no longer converts.
static_assert(std::is_convertible_v<decltype(make_section_memory_manager), get_memory_manager> ==
              (LLVM_VERSION_MAJOR < 21));

}  // namespace

TEST_SUITE("llvm/compat") {
  TEST_CASE("alignment_bytes: the byte count of each alignment, and 1 for the default") {
    CHECK(alignment_bytes(rtdyld_reserve_alignment{}) == 1);  // uint32_t 0 or llvm::Align()
    for (std::uint32_t bytes : {1u, 2u, 8u, 16u, 4096u, 1u << 16}) {
      CAPTURE(bytes);
      CHECK(alignment_bytes(rtdyld_reserve_alignment(bytes)) == bytes);
    }
#if LLVM_VERSION_MAJOR < 16
    CHECK(alignment_bytes(0u) == 1);  // RuntimeDyld's "no alignment"
#else
    CHECK(alignment_bytes(llvm::Align::Of<std::uint64_t>()) == alignof(std::uint64_t));
#endif
  }

  TEST_CASE("RuntimeDyld announces each object's sizes and alignments through the shim's type") {
    std::vector<announced_space> announced;
    int made = 0;
    auto jit = xlamem::test::make_rtdyld_jit([&] {
      ++made;
      return std::make_unique<announcing_memory_manager>(announced);
    });
    REQUIRE_MESSAGE(static_cast<bool>(jit), llvm::toString(jit.takeError()));
    llvm::orc::ThreadSafeContext tsc(std::make_unique<llvm::LLVMContext>());
    constexpr int modules = 2;
    for (int k = 0; k < modules; ++k) {
      auto err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(
          xlamem::test::make_module(xlamem::test::context_of(tsc), k), tsc));
      REQUIRE_MESSAGE(!err, llvm::toString(std::move(err)));
    }
    for (int k = 0; k < modules; ++k) {
      CAPTURE(k);
      std::string why;
      auto lookup = xlamem::test::lookup_function(**jit, "lookup_" + std::to_string(k), why);
      REQUIRE_MESSAGE((lookup != nullptr), why);
      CHECK(lookup(5) == xlamem::test::table_entry(k, 5));
    }
    // One manager per object file, each told its sizes once before loading.
    CHECK(made == modules);
    REQUIRE(announced.size() == static_cast<std::size_t>(modules));
    for (const auto& a : announced) {
      CHECK(a.code_size > 0);
      CHECK(a.read_only_size >= 64);   // table_k: 8 x i64
      CHECK(a.read_write_size >= 16);  // counter_k and bias_k
      CHECK(is_power_of_two(a.code_alignment));
      CHECK(is_power_of_two(a.read_only_alignment));
      CHECK(is_power_of_two(a.read_write_alignment));
      CHECK(a.read_only_alignment >= alignof(std::int64_t));
      CHECK(a.read_write_alignment >= alignof(std::int64_t));
    }
  }

  TEST_CASE("rtdyld_memory_manager_factory calls make once per call, ignoring its arguments") {
    int calls = 0;
    auto factory = xlamem::rtdyld_memory_manager_factory([&calls] {
      ++calls;
      return std::make_unique<llvm::SectionMemoryManager>();
    });
    auto first = factory();
    auto buffer = llvm::MemoryBuffer::getMemBuffer("not an object file", "object.o");
    auto second = factory(*buffer);
    CHECK(calls == 2);
    REQUIRE(first != nullptr);
    REQUIRE(second != nullptr);
    CHECK(first.get() != second.get());  // a fresh manager each time
    // Converted to the layer's own function type, it still makes managers.
    get_memory_manager as_layer_sees_it = std::move(factory);
#if LLVM_VERSION_MAJOR >= 21
    auto third = as_layer_sees_it(*buffer);
#else
    auto third = as_layer_sees_it();
#endif
    CHECK(third != nullptr);
    CHECK(calls == 3);
  }

  TEST_CASE("rtdyld_memory_manager_factory takes a move-only, mutable make and keeps its state") {
    auto factory = xlamem::rtdyld_memory_manager_factory(
        [next = std::make_unique<int>(0)]() mutable { return std::make_unique<int>(++*next); });
    static_assert(!std::is_copy_constructible_v<decltype(factory)>);
    CHECK(*factory() == 1);
    CHECK(*factory(42, std::string("ignored")) == 2);
    auto moved = std::move(factory);
    CHECK(*moved() == 3);
  }
}
