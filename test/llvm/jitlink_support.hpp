// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the JITLink test and benchmark (LLVM 19 and later): modules written as LLVM
// IR text, an LLJIT that links with JITLink through a given ObjectLinkingLayer creator, and
// /proc/self/maps parsing.
#pragma once

#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/proc_maps.hpp"  // maps_in, rwx_maps: /proc/self/maps

namespace xlamem::test {

inline void init_native_jit() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
}

/// Module k's constant table entry i and its data bias.
constexpr std::int64_t jl_table_entry(int k, int i) { return std::int64_t{k} * 1000 + i * i + 3; }
constexpr std::int64_t jl_bias(int k) { return std::int64_t{k} + 100; }

/// `text` with every `{key}` replaced by its value.
inline std::string fill(std::string text,
                        const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    const std::string mark = "{" + key + "}";
    for (auto at = text.find(mark); at != std::string::npos;
         at = text.find(mark, at + value.size())) {
      text.replace(at, mark.size(), value);
    }
  }
  return text;
}

/// IR text of module k: a constant table `@table_k` ([8 x i64], .rodata), a zero counter
/// `@counter_k` (.bss), a bias `@bias_k` (.data) and
///   i64 @lookup_k(i64 i) = table_k[i & 7]
///   i64 @bump_k(i64 by)  = (counter_k += by) + bias_k
/// With `calls >= 0` also i64 @cross_k(i64 i) = @lookup_<calls>(i) + @lookup_k(i), a call into
/// another module.
inline std::string module_ir(int k, int calls = -1) {
  std::string table;
  for (int i = 0; i < 8; ++i) {
    table += (i != 0 ? ", i64 " : "i64 ") + std::to_string(jl_table_entry(k, i));
  }
  std::string ir = R"(
@table_{k} = internal constant [8 x i64] [{table}]
@counter_{k} = global i64 0
@bias_{k} = internal global i64 {bias}

define i64 @lookup_{k}(i64 %i) {
  %m = and i64 %i, 7
  %p = getelementptr inbounds [8 x i64], ptr @table_{k}, i64 0, i64 %m
  %v = load i64, ptr %p
  ret i64 %v
}

define i64 @bump_{k}(i64 %by) {
  %c = load i64, ptr @counter_{k}
  %s = add i64 %c, %by
  store i64 %s, ptr @counter_{k}
  %b = load i64, ptr @bias_{k}
  %r = add i64 %s, %b
  ret i64 %r
}
)";
  if (calls >= 0) {
    ir += R"(
declare i64 @lookup_{other}(i64)

define i64 @cross_{k}(i64 %i) {
  %a = call i64 @lookup_{other}(i64 %i)
  %b = call i64 @lookup_{k}(i64 %i)
  %r = add i64 %a, %b
  ret i64 %r
}
)";
  }
  return fill(std::move(ir), {{"k", std::to_string(k)},
                              {"table", table},
                              {"bias", std::to_string(jl_bias(k))},
                              {"other", std::to_string(calls)}});
}

/// Parses `ir` into a module of its own context; the parser's message in the error.
inline llvm::Expected<llvm::orc::ThreadSafeModule> parse_module(const std::string& ir,
                                                                const std::string& name) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  auto m = llvm::parseAssemblyString(ir, diag, *ctx);
  if (!m) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print(name.c_str(), os);
    return llvm::make_error<llvm::StringError>(os.str(), llvm::inconvertibleErrorCode());
  }
  m->setModuleIdentifier(name);
  return llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx));
}

/// An LLJIT whose object layer comes from `creator` (an ObjectLinkingLayerCreator).
template <class Creator>
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> make_jitlink_jit(Creator creator) {
  init_native_jit();
  return llvm::orc::LLJITBuilder().setObjectLinkingLayerCreator(std::move(creator)).create();
}

/// The address of a looked-up symbol as an `i64(i64)` function.
inline std::int64_t (*as_function(llvm::orc::ExecutorAddr a))(std::int64_t) {
  return a.toPtr<std::int64_t (*)(std::int64_t)>();
}

}  // namespace xlamem::test
