// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the LLVM test and benchmark: small IR modules built with IRBuilder (so the
// same code reads under typed and opaque pointers, LLVM 14-16), an LLJIT whose object layer is a
// RTDyldObjectLinkingLayer with a given memory-manager factory, and symbol addresses across the
// LLVM 14 (JITEvaluatedSymbol) / 15+ (ExecutorAddr) lookup change.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>

#include "xlamem/llvm/compat.hpp"

namespace xlamem::test {

/// Registers the host target with LLVM (idempotent).
inline void init_native_target() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
}

/// The k-th constant table entry i that module k bakes in.
constexpr std::int64_t table_entry(int k, int i) { return std::int64_t{k} * 1000 + i * i + 3; }
/// The initial value of module k's `bias_k` (read-write .data).
constexpr std::int64_t bias_of(int k) { return std::int64_t{k} + 100; }

/// Module k: a read-only table `table_k` ([8 x i64]), a zero counter `counter_k` (.bss) and a
/// bias `bias_k` (.data), and
///   i64 lookup_k(i64 i) = table_k[i & 7]
///   i64 bump_k(i64 by)  = (counter_k += by) + bias_k
/// With `call_module >= 0`, also i64 cross_k(i64 i) = lookup_<call_module>(i) + lookup_k(i).
inline std::unique_ptr<llvm::Module> make_module(llvm::LLVMContext& ctx, int k,
                                                 int call_module = -1) {
  auto m = std::make_unique<llvm::Module>("module_" + std::to_string(k), ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* table_type = llvm::ArrayType::get(i64, 8);
  std::vector<llvm::Constant*> entries;
  for (int i = 0; i < 8; ++i) {
    entries.push_back(llvm::ConstantInt::get(i64, static_cast<std::uint64_t>(table_entry(k, i))));
  }
  // Module::getOrInsertGlobal rather than `new GlobalVariable`: g++ 12 misreads LLVM's
  // placement operator new/delete pair (-Wmismatched-new-delete).
  const auto global = [&](const std::string& name, llvm::Type* type, bool constant,
                          llvm::GlobalValue::LinkageTypes linkage, llvm::Constant* init) {
    auto* g = llvm::cast<llvm::GlobalVariable>(m->getOrInsertGlobal(name, type));
    g->setConstant(constant);
    g->setLinkage(linkage);
    g->setInitializer(init);
    return g;
  };
  auto* table = global("table_" + std::to_string(k), table_type, true,
                       llvm::GlobalValue::InternalLinkage,
                       llvm::ConstantArray::get(table_type, entries));
  auto* counter = global("counter_" + std::to_string(k), i64, false,
                         llvm::GlobalValue::ExternalLinkage, llvm::ConstantInt::get(i64, 0));
  auto* bias = global("bias_" + std::to_string(k), i64, false, llvm::GlobalValue::InternalLinkage,
                      llvm::ConstantInt::get(i64, static_cast<std::uint64_t>(bias_of(k))));
  auto* unary = llvm::FunctionType::get(i64, {i64}, false);
  llvm::IRBuilder<> b(ctx);

  auto* lookup = llvm::Function::Create(unary, llvm::Function::ExternalLinkage,
                                        "lookup_" + std::to_string(k), *m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", lookup));
  auto* index = b.CreateAnd(lookup->getArg(0), llvm::ConstantInt::get(i64, 7));
  auto* slot = b.CreateInBoundsGEP(table_type, table, {llvm::ConstantInt::get(i64, 0), index});
  b.CreateRet(b.CreateLoad(i64, slot));

  auto* bump = llvm::Function::Create(unary, llvm::Function::ExternalLinkage,
                                      "bump_" + std::to_string(k), *m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", bump));
  auto* now = b.CreateAdd(b.CreateLoad(i64, counter), bump->getArg(0));
  b.CreateStore(now, counter);
  b.CreateRet(b.CreateAdd(now, b.CreateLoad(i64, bias)));

  if (call_module >= 0) {
    auto* other = llvm::Function::Create(unary, llvm::Function::ExternalLinkage,
                                         "lookup_" + std::to_string(call_module), *m);
    auto* cross = llvm::Function::Create(unary, llvm::Function::ExternalLinkage,
                                         "cross_" + std::to_string(k), *m);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", cross));
    auto* a = b.CreateCall(unary, other, {cross->getArg(0)});
    auto* c = b.CreateCall(unary, lookup, {cross->getArg(0)});
    b.CreateRet(b.CreateAdd(a, c));
  }
  return m;
}

/// An LLJIT whose object layer is a RTDyldObjectLinkingLayer calling `make()` once per object.
template <class Make>
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> make_rtdyld_jit(Make make) {
  init_native_target();
  return llvm::orc::LLJITBuilder()
      .setObjectLinkingLayerCreator(
          // (ExecutionSession&, const Triple&) up to LLVM 19, (ExecutionSession&) in LLVM 22.
          [make](llvm::orc::ExecutionSession& es, const auto&...)
              -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                es, xlamem::rtdyld_memory_manager_factory(make));
          })
      .create();
}

/// The context of `tsc`: `getContext()` up to LLVM 19; LLVM 22 only lends it through
/// `withContextDo` (the tests use it on one thread).
template <class Context>
llvm::LLVMContext& context_of(Context& tsc) {
  if constexpr (requires { tsc.getContext(); }) {
    return *tsc.getContext();
  } else {
    return *tsc.withContextDo([](llvm::LLVMContext* c) { return c; });
  }
}

/// Sets `m`'s target triple: LLVM 22 takes an `llvm::Triple`, earlier versions its text.
template <class Module>
void set_target_triple(Module& m, const llvm::Triple& triple) {
  if constexpr (requires { m.setTargetTriple(triple); }) {
    m.setTargetTriple(triple);
  } else {
    m.setTargetTriple(triple.str());
  }
}

/// The address of a looked-up symbol, whatever the LLVM version returns: a
/// `JITEvaluatedSymbol` (14), an `ExecutorAddr`, or an `ExecutorSymbolDef` whose address is one
/// (19, 22).
template <class Symbol>
std::uint64_t address_value(const Symbol& s) {
  if constexpr (requires { s.getAddress().getValue(); }) {
    return static_cast<std::uint64_t>(s.getAddress().getValue());
  } else if constexpr (requires { s.getAddress(); }) {
    return static_cast<std::uint64_t>(s.getAddress());
  } else {
    return static_cast<std::uint64_t>(s.getValue());
  }
}

/// Looks `name` up in `jit` and returns it as an `i64(i64)` function, or null (with the LLVM
/// error message in `why`).
inline std::int64_t (*lookup_function(llvm::orc::LLJIT& jit, const std::string& name,
                                      std::string& why))(std::int64_t) {
  auto sym = jit.lookup(name);
  if (!sym) {
    why = llvm::toString(sym.takeError());
    return nullptr;
  }
  return reinterpret_cast<std::int64_t (*)(std::int64_t)>(
      static_cast<std::uintptr_t>(address_value(*sym)));
}

}  // namespace xlamem::test
