// SPDX-License-Identifier: Apache-2.0
// JIT-compiles a small module through ORC with xlamem's contiguous section memory manager, pages
// from a named mapper registry, then calls it and prints where each section went.
//   build/examples/llvm/jit_memory
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>

#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/llvm/compat.hpp"
#include "xlamem/llvm/contiguous_section_memory_manager.hpp"
#include "xlamem/llvm/jit_memory_mapper_registry.hpp"

// A constant table (read-only data), a counter (read-write data) and two functions (code).
// Typed-pointer syntax reads on LLVM 14 and, as opaque pointers, on LLVM 15 and 16.
constexpr const char* ir = R"(
@table = internal constant [4 x i64] [i64 2, i64 3, i64 5, i64 7]
@counter = global i64 0

define i64 @prime(i64 %i) {
  %slot = getelementptr inbounds [4 x i64], [4 x i64]* @table, i64 0, i64 %i
  %v = load i64, i64* %slot
  ret i64 %v
}

define i64 @count(i64 %by) {
  %old = load i64, i64* @counter
  %new = add i64 %old, %by
  store i64 %new, i64* @counter
  ret i64 %new
}
)";

template <class Symbol>
std::uint64_t address_of(const Symbol& s) {  // LLVM 14: JITEvaluatedSymbol; 15+: ExecutorAddr
  if constexpr (requires { s.getAddress(); }) {
    return s.getAddress();
  } else {
    return s.getValue();
  }
}

int main() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  // The registry is ours, not global: it owns the mappers and outlives the JIT below.
  xlamem::jit_memory_mapper_registry mappers;
  if (auto r = mappers.register_factory("example_jit",
                                        xlamem::memory_mapper_factory<xlamem::posix_page_mapper>());
      !r) {
    std::fprintf(stderr, "%s\n", r.error().to_string().c_str());
    return 1;
  }
  llvm::SectionMemoryManager::MemoryMapper* mapper = mappers.find("example_jit");  // null: LLVM's

  std::vector<xlamem::contiguous_section_memory_manager*> managers;
  auto jit =
      llvm::orc::LLJITBuilder()
          .setObjectLinkingLayerCreator([&](llvm::orc::ExecutionSession& es, const llvm::Triple&)
                                            -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                es, xlamem::rtdyld_memory_manager_factory([&] {
                  auto mm = std::make_unique<xlamem::contiguous_section_memory_manager>(mapper);
                  managers.push_back(mm.get());
                  return mm;
                }));
          })
          .create();
  if (!jit) {
    std::fprintf(stderr, "%s\n", llvm::toString(jit.takeError()).c_str());
    return 1;
  }

  auto ctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  auto module = llvm::parseAssemblyString(ir, diag, *ctx);
  if (!module) {
    std::fprintf(stderr, "IR line %d: %s\n", diag.getLineNo(), diag.getMessage().str().c_str());
    return 1;
  }
  if (auto err = (*jit)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx)))) {
    std::fprintf(stderr, "%s\n", llvm::toString(std::move(err)).c_str());
    return 1;
  }
  auto prime = (*jit)->lookup("prime");
  auto count = (*jit)->lookup("count");
  if (!prime || !count) {
    std::fprintf(stderr, "lookup failed\n");
    llvm::consumeError(prime.takeError());
    llvm::consumeError(count.takeError());
    return 1;
  }
  auto* prime_fn = reinterpret_cast<std::int64_t (*)(std::int64_t)>(address_of(*prime));
  auto* count_fn = reinterpret_cast<std::int64_t (*)(std::int64_t)>(address_of(*count));
  const long long p3 = prime_fn(3);
  const long long c2 = count_fn(2);
  const long long c5 = count_fn(5);
  std::printf("prime(3) = %lld, count(2) = %lld, then count(5) = %lld\n", p3, c2, c5);

  for (const auto* mm : managers) {
    const auto s = mm->stats();
    std::printf("one mapping of %llu bytes at %p (%llu mapping)\n",
                static_cast<unsigned long long>(s.mapped_bytes), mm->reservation().base,
                static_cast<unsigned long long>(s.mappings));
    for (const auto& sec : mm->sections()) {
      std::printf("  %-16s %-15s %6llu bytes at +%llu\n", sec.name.c_str(),
                  xlamem::to_string(sec.purpose), static_cast<unsigned long long>(sec.size),
                  static_cast<unsigned long long>(sec.offset));
    }
    const std::pair<const char*, xlamem::section_part_stats> parts[] = {
        {"code", s.code}, {"read-only", s.read_only}, {"read-write", s.read_write}};
    for (const auto& [name, p] : parts) {
      std::printf("  %-10s capacity %6llu, sections %llu bytes, padding %llu, unused %llu\n", name,
                  static_cast<unsigned long long>(p.capacity),
                  static_cast<unsigned long long>(p.bytes),
                  static_cast<unsigned long long>(p.padding),
                  static_cast<unsigned long long>(p.unused()));
    }
  }
  return 0;
}
