// SPDX-License-Identifier: Apache-2.0
// JITLink memory (LLVM 19 and later): xlamem's slab manager against JITLink's
// InProcessMemoryManager and ORC's MapperJITLinkMemoryManager, in one run, each under an LLJIT
// whose ObjectLinkingLayer owns the manager.
//
// jitlink_load_1000/*: 1,000 precompiled objects (a constant table, a counter, a bias, two
//   functions each) are added, every bump_k is looked up in one bulk lookup and called, then the
//   JIT is torn down. Counters: time/module; mappings (lines of /proc/self/maps added while the
//   modules are loaded); resident bytes added (/proc/self/statm); rwx mappings seen.
// jitlink_small_modules/*: one small object loaded again and again, each copy in its own
//   JITDylib and looked up at once, 20,000 times (XLAMEM_SMALL_MODULES=N to change; JITLink's
//   managers reach vm.max_map_count, 65,530, near 21,800 modules); counters say the mappings
//   after the first 1,000 and at the end (flat for the slab, growing for the others).
//   jitlink_small_modules_100k/xlamem_slab does the same 100,000 times with the slab alone.
// The objects are compiled before timing; the JIT's construction is not timed.
#include <benchmark/benchmark.h>
#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/MapperJITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/MemoryMapper.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit_support.hpp"
#include "jitlink_support.hpp"
#include "xlamem/llvm/slab_jitlink_memory_manager.hpp"

namespace {

namespace t = xlamem::test;
constexpr int modules = 1000;

// Objects for modules 0..count-1, compiled once for the host (PIC, small code model: what
// LLJIT uses with JITLink).
std::vector<std::unique_ptr<llvm::MemoryBuffer>> compile(int count) {
  t::init_native_jit();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> out;
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    llvm::consumeError(jtmb.takeError());
    return out;
  }
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return out;
  }
  llvm::orc::SimpleCompiler compiler(**tm);
  for (int k = 0; k < count; ++k) {
    auto m = t::parse_module(t::module_ir(k), "module_" + std::to_string(k));
    if (!m) {
      llvm::consumeError(m.takeError());
      return {};
    }
    auto obj = m->withModuleDo([&](auto& mod) {
      mod.setDataLayout((*tm)->createDataLayout());
      t::set_target_triple(mod, (*tm)->getTargetTriple());
      return compiler(mod);
    });
    if (!obj) {
      llvm::consumeError(obj.takeError());
      return {};
    }
    out.push_back(std::move(*obj));
  }
  return out;
}

const std::vector<std::unique_ptr<llvm::MemoryBuffer>>& objects() {
  static const auto objs = compile(modules);
  return objs;
}

std::size_t maps_count() { return t::read_proc_maps().size(); }

std::uint64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Each kind of manager, made fresh for each JIT and owned by its ObjectLinkingLayer.
enum class kind { in_process, mapper, slab, slab_dual };

auto creator(kind k) {
  return xlamem::owning_object_linking_layer_creator(
      [k]() -> llvm::Expected<std::unique_ptr<llvm::jitlink::JITLinkMemoryManager>> {
        switch (k) {
          case kind::in_process: {
            auto m = llvm::jitlink::InProcessMemoryManager::Create();
            if (!m) return m.takeError();
            return std::move(*m);
          }
          case kind::mapper: {
            auto m = llvm::orc::MapperJITLinkMemoryManager::CreateWithMapper<
                llvm::orc::InProcessMemoryMapper>(std::size_t{256} << 20);
            if (!m) return m.takeError();
            return std::move(*m);
          }
          case kind::slab:
          case kind::slab_dual:
            break;
        }
        xlamem::slab_jitlink_options options;  // 512 MiB per stripe: room for 100,000 modules
        options.code_bytes = options.read_only_bytes = options.read_write_bytes = 512u << 20;
        options.dual_mapping = k == kind::slab_dual;
        auto m = xlamem::slab_jitlink_memory_manager::create({}, options);
        if (!m) return m.takeError();
        return std::move(*m);
      });
}

void load_1000(benchmark::State& state, kind k) {
  const auto& objs = objects();
  if (objs.size() != static_cast<std::size_t>(modules)) {
    state.SkipWithError("could not compile the modules for the host");
    return;
  }
  double maps = 0, resident = 0, rwx = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::size_t maps_before = maps_count();
    const std::uint64_t resident_before = resident_bytes();
    auto jit = t::make_jitlink_jit(creator(k));
    if (!jit) {
      state.SkipWithError(llvm::toString(jit.takeError()).c_str());
      return;
    }
    auto names = std::make_unique<llvm::orc::SymbolLookupSet>();
    for (int i = 0; i < modules; ++i)
      names->add((*jit)->mangleAndIntern("bump_" + std::to_string(i)));
    state.ResumeTiming();

    for (const auto& o : objs) {
      if (auto err = (*jit)->addObjectFile(
              llvm::MemoryBuffer::getMemBuffer(o->getMemBufferRef(), false))) {
        state.SkipWithError(llvm::toString(std::move(err)).c_str());
        return;
      }
    }
    std::int64_t sum = 0;
    {
      auto found = (*jit)->getExecutionSession().lookup(
          llvm::orc::makeJITDylibSearchOrder(&(*jit)->getMainJITDylib()), *names);
      if (!found) {
        state.SkipWithError(llvm::toString(found.takeError()).c_str());
        return;
      }
      for (const auto& [name, sym] : *found) sum += t::as_function(sym.getAddress())(1);
    }
    state.PauseTiming();
    maps = static_cast<double>(maps_count()) - static_cast<double>(maps_before);
    resident = static_cast<double>(resident_bytes()) - static_cast<double>(resident_before);
    rwx = static_cast<double>(t::rwx_maps().size());
    names.reset();
    benchmark::DoNotOptimize(sum);
    if (sum != std::int64_t{modules} * 101 + std::int64_t{modules} * (modules - 1) / 2) {
      state.SkipWithError("a JIT-compiled function returned a wrong value");
      return;
    }
    jit->reset();
    state.ResumeTiming();
  }
  state.counters["time/module"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * modules,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["mappings"] = maps;
  state.counters["resident_bytes"] = resident;
  state.counters["rwx"] = rwx;
}

struct small_result {
  int loaded = 0;
  double maps_1000 = 0, maps_end = 0, resident = 0, rwx = 0;
  std::string failure;
};

// Loads the small object `count` times, each copy in its own JITDylib; times only the loading
// when `state` is given (the warm-up in main passes none).
small_result load_small(kind k, int count, benchmark::State* state) {
  const auto pause = [&] {
    if (state != nullptr) state->PauseTiming();
  };
  const auto resume = [&] {
    if (state != nullptr) state->ResumeTiming();
  };
  small_result out;
  pause();
  const std::size_t maps_before = maps_count();
  const std::uint64_t resident_before = resident_bytes();
  auto jit = t::make_jitlink_jit(creator(k));
  if (!jit) {
    out.failure = llvm::toString(jit.takeError());
    resume();
    return out;
  }
  auto& es = (*jit)->getExecutionSession();
  es.setErrorReporter([&](llvm::Error e) {
    if (out.failure.empty())
      out.failure = llvm::toString(std::move(e));
    else
      llvm::consumeError(std::move(e));
  });
  const auto& obj = *objects()[0];
  resume();
  int i = 0;
  for (; i < count; ++i) {
    char dylib[24];  // not "m" + std::to_string(i): g++ 12 -O3 misreads it (-Wrestrict)
    std::snprintf(dylib, sizeof dylib, "m%d", i);
    auto jd = es.createJITDylib(dylib);
    if (!jd) {
      out.failure = llvm::toString(jd.takeError());
      break;
    }
    if (auto err = (*jit)->addObjectFile(
            *jd, llvm::MemoryBuffer::getMemBuffer(obj.getMemBufferRef(), false))) {
      out.failure = llvm::toString(std::move(err));
      break;
    }
    auto sym = (*jit)->lookup(*jd, "bump_0");
    if (!sym) {
      if (out.failure.empty())
        out.failure = llvm::toString(sym.takeError());
      else
        llvm::consumeError(sym.takeError());
      break;
    }
    if (i + 1 == 1000) out.maps_1000 = static_cast<double>(maps_count() - maps_before);
  }
  pause();
  out.loaded = i;
  out.maps_end = static_cast<double>(maps_count()) - static_cast<double>(maps_before);
  out.resident = static_cast<double>(resident_bytes()) - static_cast<double>(resident_before);
  out.rwx = static_cast<double>(t::rwx_maps().size());
  jit->reset();
  resume();
  if (i == count) out.failure.clear();
  return out;
}

void small_modules(benchmark::State& state, kind k) {
  if (objects().empty()) {
    state.SkipWithError("could not compile the modules for the host");
    return;
  }
  small_result r;
  for (auto _ : state) {
    r = load_small(k, static_cast<int>(state.range(0)), &state);
    if (!r.failure.empty()) {
      std::fprintf(stderr, "jitlink_small_modules: stopped after %d modules: %s\n", r.loaded,
                   r.failure.c_str());
    }
  }
  state.counters["modules"] = r.loaded;
  state.counters["mappings_at_1000"] = r.maps_1000;
  state.counters["mappings_at_end"] = r.maps_end;
  state.counters["resident_bytes"] = r.resident;
  state.counters["rwx"] = r.rwx;
  state.counters["time/module"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * r.loaded,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const char* name_of(kind k) {
  switch (k) {
    case kind::in_process:
      return "llvm_InProcessMemoryManager";
    case kind::mapper:
      return "llvm_MapperJITLinkMemoryManager";
    case kind::slab:
      return "xlamem_slab";
    case kind::slab_dual:
      break;
  }
  return "xlamem_slab_dual";
}

// The console reporter, plus ratio lines at the end: each manager's time per module over
// InProcessMemoryManager's in this run.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  ratio_reporter() : ConsoleReporter(isatty(fileno(stdout)) != 0 ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      auto it = r.counters.find("time/module");
      if (it != r.counters.end()) per_module_[r.run_name.function_name] = it->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const char* group : {"jitlink_load_1000/", "jitlink_small_modules/"}) {
      auto base = per_module_.find(std::string(group) + name_of(kind::in_process));
      if (base == per_module_.end() || base->second <= 0) continue;
      for (const auto& [name, value] : per_module_) {
        if (name.rfind(group, 0) != 0 || name == base->first) continue;
        std::printf("ratio %s / %s: cpu time/module %.3f\n", name.c_str(), base->first.c_str(),
                    value / base->second);
      }
    }
  }

 private:
  std::map<std::string, double> per_module_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // XLAMEM_SMALL_MODULES=N: N small modules for every manager and no 100,000 run.
  long small = 0;
  if (const char* s = std::getenv("XLAMEM_SMALL_MODULES")) small = std::strtol(s, nullptr, 10);
  for (kind k : {kind::in_process, kind::mapper, kind::slab, kind::slab_dual}) {
    benchmark::RegisterBenchmark((std::string("jitlink_load_1000/") + name_of(k)).c_str(),
                                 [k](benchmark::State& s) { load_1000(s, k); })
        ->Unit(benchmark::kMillisecond);
  }
  // The same count for all three (time/module compares), then the slab alone at 100,000.
  for (kind k : {kind::in_process, kind::mapper, kind::slab}) {
    benchmark::RegisterBenchmark((std::string("jitlink_small_modules/") + name_of(k)).c_str(),
                                 [k](benchmark::State& s) { small_modules(s, k); })
        ->Arg(small > 0 ? small : 20000)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  if (small == 0) {
    benchmark::RegisterBenchmark("jitlink_small_modules_100k/xlamem_slab",
                                 [](benchmark::State& s) { small_modules(s, kind::slab); })
        ->Arg(100000)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  // Warm LLVM and the heap up once, so that no measured run pays one-time costs: the first
  // run of 20,000 JITDylibs would otherwise also grow the heap that later runs reuse.
  if (objects().size() == static_cast<std::size_t>(modules)) {
    (void)load_small(kind::slab, small > 0 ? static_cast<int>(small) : 20000, nullptr);
  }
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
