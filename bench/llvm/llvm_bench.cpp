// SPDX-License-Identifier: Apache-2.0
// JIT memory: load 1,000 small object files (a constant table, a counter, two functions each)
// through ORC's RTDyldObjectLinkingLayer with xlamem's contiguous section memory manager and with
// llvm::SectionMemoryManager, in the same run. Objects are compiled once up front, so the time is
// what the memory manager and RuntimeDyld spend: reserve, allocate, relocate, protect, call each
// module once, and release the memory when the JIT is torn down.
// Counters (per module): time, mappings made, bytes mapped, protection calls.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>

#include "jit_support.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/llvm/contiguous_section_memory_manager.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace {

constexpr int modules = 1000;

// The 1,000 object files, compiled once for the host.
const std::vector<std::unique_ptr<llvm::MemoryBuffer>>& objects() {
  static const std::vector<std::unique_ptr<llvm::MemoryBuffer>> objs = [] {
    xlamem::test::init_native_target();
    std::vector<std::unique_ptr<llvm::MemoryBuffer>> out;
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) return out;
    auto tm = jtmb->createTargetMachine();
    if (!tm) return out;
    llvm::orc::SimpleCompiler compile(**tm);
    llvm::LLVMContext ctx;
    for (int k = 0; k < modules; ++k) {
      auto m = xlamem::test::make_module(ctx, k);
      m->setDataLayout((*tm)->createDataLayout());
      xlamem::test::set_target_triple(*m, (*tm)->getTargetTriple());
      auto obj = compile(*m);
      if (!obj) {
        llvm::consumeError(obj.takeError());
        return decltype(out){};
      }
      out.push_back(std::move(*obj));
    }
    return out;
  }();
  return objs;
}

using counted_llvm_memory = xlamem::counting_page_mapper_adaptor<xlamem::llvm_page_mapper>;
using counted_ref = xlamem::page_mapper_ref<counted_llvm_memory>;

// Loads every object into a fresh JIT whose memory managers come from `make`, calls bump_k(1) in
// each, and tears the JIT down. The JIT's own construction is not timed.
template <class Make>
void load_modules(benchmark::State& state, Make make, const counted_llvm_memory* counts) {
  const auto& objs = objects();
  if (objs.size() != static_cast<std::size_t>(modules)) {
    state.SkipWithError("could not compile the modules for the host");
    return;
  }
  const auto before = counts != nullptr ? counts->counts() : xlamem::page_mapper_counts{};
  for (auto _ : state) {
    state.PauseTiming();
    auto jit = xlamem::test::make_rtdyld_jit(make);
    if (!jit) {
      state.SkipWithError(llvm::toString(jit.takeError()).c_str());
      return;
    }
    // Interned names must die before the JIT (its string pool) does.
    auto names = std::make_unique<llvm::orc::SymbolLookupSet>();
    for (int k = 0; k < modules; ++k) {
      names->add((*jit)->mangleAndIntern("bump_" + std::to_string(k)));
    }
    state.ResumeTiming();

    for (const auto& o : objs) {
      if (auto err = (*jit)->addObjectFile(
              llvm::MemoryBuffer::getMemBuffer(o->getMemBufferRef(), false))) {
        state.SkipWithError(llvm::toString(std::move(err)).c_str());
        return;
      }
    }
    auto& es = (*jit)->getExecutionSession();
    std::int64_t sum = 0;
    {
      auto found =
          es.lookup(llvm::orc::makeJITDylibSearchOrder(&(*jit)->getMainJITDylib()), *names);
      if (!found) {
        state.SkipWithError(llvm::toString(found.takeError()).c_str());
        return;
      }
      for (const auto& [name, sym] : *found) {
        auto* bump = reinterpret_cast<std::int64_t (*)(std::int64_t)>(
            static_cast<std::uintptr_t>(xlamem::test::address_value(sym)));
        sum += bump(1);
      }
    }
    names.reset();
    benchmark::DoNotOptimize(sum);
    // bump_k(1) = 1 + bias_k = 1 + k + 100.
    if (sum != std::int64_t{modules} * 101 + std::int64_t{modules} * (modules - 1) / 2) {
      state.SkipWithError("a JIT-compiled function returned a wrong value");
      return;
    }
    jit->reset();
  }
  const double loaded = static_cast<double>(state.iterations()) * modules;
  state.counters["time/module"] =
      benchmark::Counter(loaded, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (counts != nullptr) {
    const auto after = counts->counts();
    state.counters["mappings/module"] =
        static_cast<double>(after.reservations - before.reservations) / loaded;
    state.counters["bytes_mapped/module"] =
        static_cast<double>(after.bytes_reserved - before.bytes_reserved) / loaded;
    state.counters["protects/module"] =
        static_cast<double>(after.protections - before.protections) / loaded;
    state.counters["wx_requests"] = static_cast<double>(after.write_execute_requests);
  }
}

void section_memory_manager(benchmark::State& state) {
  load_modules(state, [] { return std::make_unique<llvm::SectionMemoryManager>(); }, nullptr);
}

void section_memory_manager_counted(benchmark::State& state) {
  counted_llvm_memory counted;
  xlamem::memory_mapper_adaptor<counted_ref> mapper{counted_ref(counted)};
  load_modules(state, [&] { return std::make_unique<llvm::SectionMemoryManager>(&mapper); },
               &counted);
}

void contiguous(benchmark::State& state) {
  load_modules(state, [] { return std::make_unique<xlamem::contiguous_section_memory_manager>(); },
               nullptr);
}

void contiguous_counted(benchmark::State& state) {
  counted_llvm_memory counted;
  load_modules(
      state,
      [&] {
        return std::make_unique<xlamem::basic_contiguous_section_memory_manager<counted_ref>>(
            counted_ref(counted));
      },
      &counted);
}

void contiguous_posix(benchmark::State& state) {
  load_modules(
      state,
      [] {
        return std::make_unique<
            xlamem::basic_contiguous_section_memory_manager<xlamem::posix_page_mapper>>();
      },
      nullptr);
}

}  // namespace

BENCHMARK(section_memory_manager)->Name("jit_load_1000/llvm_SectionMemoryManager")->Unit(benchmark::kMillisecond);
BENCHMARK(contiguous)->Name("jit_load_1000/xlamem_contiguous")->Unit(benchmark::kMillisecond);
BENCHMARK(contiguous_posix)->Name("jit_load_1000/xlamem_contiguous_posix")->Unit(benchmark::kMillisecond);
BENCHMARK(section_memory_manager_counted)->Name("jit_load_1000/llvm_SectionMemoryManager_counted")->Unit(benchmark::kMillisecond);
BENCHMARK(contiguous_counted)->Name("jit_load_1000/xlamem_contiguous_counted")->Unit(benchmark::kMillisecond);

namespace {

// The console reporter, plus one line per xlamem variant at the end: its time per module over
// llvm::SectionMemoryManager's in this run (plain against plain, counted against counted).
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  ratio_reporter()
      : ConsoleReporter(isatty(fileno(stdout)) != 0 ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      auto it = r.counters.find("time/module");
      if (it != r.counters.end()) per_module_[r.run_name.function_name] = it->second.value;
      wall_[r.run_name.function_name] = r.GetAdjustedRealTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const std::pair<const char*, const char*> pairs[] = {
        {"jit_load_1000/xlamem_contiguous", "jit_load_1000/llvm_SectionMemoryManager"},
        {"jit_load_1000/xlamem_contiguous_posix", "jit_load_1000/llvm_SectionMemoryManager"},
        {"jit_load_1000/xlamem_contiguous_counted",
         "jit_load_1000/llvm_SectionMemoryManager_counted"}};
    for (const auto& [ours, theirs] : pairs) {
      auto a = per_module_.find(ours);
      auto b = per_module_.find(theirs);
      if (a == per_module_.end() || b == per_module_.end() || b->second <= 0) continue;
      const double wall = wall_[theirs] > 0 ? wall_[ours] / wall_[theirs] : 0;
      std::printf("ratio %s / %s: cpu time/module %.3f, wall time %.3f\n", ours, theirs,
                  a->second / b->second, wall);
    }
  }

 private:
  std::map<std::string, double> per_module_;  // CPU seconds per module
  std::map<std::string, double> wall_;        // wall time per iteration (1,000 modules)
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Compile the objects and warm LLVM up once, so the first benchmark pays no one-time costs.
  if (objects().size() == static_cast<std::size_t>(modules)) {
    for (int warm = 0; warm < 2; ++warm) {
      auto jit = xlamem::test::make_rtdyld_jit(
          [] { return std::make_unique<llvm::SectionMemoryManager>(); });
      if (!jit) {
        llvm::consumeError(jit.takeError());
        break;
      }
      for (int k = 0; k < 50; ++k) {
        llvm::consumeError((*jit)->addObjectFile(
            llvm::MemoryBuffer::getMemBuffer(objects()[k]->getMemBufferRef(), false)));
        auto sym = (*jit)->lookup("bump_" + std::to_string(k));
        if (!sym) llvm::consumeError(sym.takeError());
      }
    }
  }
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
