// SPDX-License-Identifier: Apache-2.0
// JIT-compiles two modules with LLJIT (JITLink, LLVM 19 and later) into xlamem's slab JITLink
// memory manager, calls across them, removes one and loads it again into the freed memory, and
// prints the manager's statistics.
//   build-llvm19/examples/llvm/jitlink_memory
#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "xlamem/llvm/slab_jitlink_memory_manager.hpp"

// A constant table (read-only data), a counter (read-write data) and a function (code) ...
constexpr const char* library_ir = R"(
@table = internal constant [4 x i64] [i64 2, i64 3, i64 5, i64 7]
@counter = global i64 0

define i64 @prime(i64 %i) {
  %slot = getelementptr inbounds [4 x i64], ptr @table, i64 0, i64 %i
  %v = load i64, ptr %slot
  %old = load i64, ptr @counter
  %new = add i64 %old, 1
  store i64 %new, ptr @counter
  ret i64 %v
}
)";

// ... and a second module calling into the first.
constexpr const char* caller_ir = R"(
declare i64 @prime(i64)

define i64 @prime_sum() {
  %a = call i64 @prime(i64 0)
  %b = call i64 @prime(i64 3)
  %s = add i64 %a, %b
  ret i64 %s
}
)";

static llvm::Expected<llvm::orc::ThreadSafeModule> parse(const char* ir) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  auto m = llvm::parseAssemblyString(ir, diag, *ctx);
  if (!m)
    return llvm::make_error<llvm::StringError>(diag.getMessage(), llvm::inconvertibleErrorCode());
  return llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx));
}

static void print(const char* when, const xlamem::slab_jitlink_statistics& s) {
  std::printf(
      "%-22s reserved %llu MiB, committed %llu KiB, live %llu KiB, reused %llu KiB, "
      "%llu live allocations, %llu mappings\n",
      when, static_cast<unsigned long long>(s.reserved_bytes >> 20),
      static_cast<unsigned long long>(s.committed_bytes >> 10),
      static_cast<unsigned long long>(s.live_bytes >> 10),
      static_cast<unsigned long long>(s.reused_bytes >> 10),
      static_cast<unsigned long long>(s.live_allocations),
      static_cast<unsigned long long>(s.mappings));
}

static int run() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::ExitOnError check("jitlink_memory: ");

  // One slab: 256 MiB per stripe (code, read-only, read-write), all within +-2 GiB.
  auto mm = check(xlamem::slab_jitlink_memory_manager::create());
  // The one line that plugs it in; the manager must outlive the JIT.
  auto jit = check(llvm::orc::LLJITBuilder()
                       .setObjectLinkingLayerCreator(xlamem::object_linking_layer_creator(*mm))
                       .create());

  // Both modules under one tracker: the caller holds the library's address, so they go together.
  auto tracker = jit->getMainJITDylib().createResourceTracker();
  check(jit->addIRModule(tracker, check(parse(library_ir))));
  check(jit->addIRModule(tracker, check(parse(caller_ir))));
  auto prime_sum = check(jit->lookup("prime_sum")).toPtr<std::int64_t (*)()>();
  std::printf("prime_sum() = %lld (2 + 7)\n", static_cast<long long>(prime_sum()));
  print("after two modules:", mm->stats());

  check(tracker->remove());  // their memory goes back to the slab's free lists
  print("after removing them:", mm->stats());
  check(jit->addIRModule(check(parse(library_ir))));  // reloaded into the freed pages
  auto prime = check(jit->lookup("prime")).toPtr<std::int64_t (*)(std::int64_t)>();
  auto counter = check(jit->lookup("counter")).toPtr<std::int64_t*>();
  const long long before = static_cast<long long>(*counter);
  const long long value = static_cast<long long>(prime(2));
  std::printf("reloaded: prime(2) = %lld, counter %lld -> %lld (cleared on reuse)\n", value, before,
              static_cast<long long>(*counter));
  print("after reloading one:", mm->stats());
  return 0;
}

int main() { return run(); }
