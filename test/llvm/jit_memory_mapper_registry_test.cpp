// SPDX-License-Identifier: Apache-2.0
// Tests of xlamem/llvm/jit_memory_mapper_registry.hpp: one LLVM MemoryMapper per region name under
// 4 threads, clear errors for missing names and bad factories, memory_mapper_factory's mappers.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>

#include "mapper_support.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/llvm/jit_memory_mapper_registry.hpp"

namespace {

using xlamem::errc;
using xlamem::test::page;

// A mapper that remembers which region it was made for.
class named_test_mapper final : public llvm::SectionMemoryManager::MemoryMapper {
 public:
  explicit named_test_mapper(std::string region) : region(std::move(region)) {}
  llvm::sys::MemoryBlock allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose,
                                              std::size_t, const llvm::sys::MemoryBlock*,
                                              unsigned, std::error_code& ec) override {
    ec = std::make_error_code(std::errc::not_supported);
    return {};
  }
  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock&, unsigned) override {
    return std::make_error_code(std::errc::not_supported);
  }
  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock&) override { return {}; }
  std::string region;
};

}  // namespace

TEST_SUITE("llvm/jit_memory_mapper_registry") {
  TEST_CASE("4 threads asking for the same and different names get one mapper per name") {
    xlamem::jit_memory_mapper_registry registry;
    std::mutex calls_mutex;
    std::map<std::string, int> calls;
    auto factory = [&](std::string_view region) {
      {
        std::lock_guard<std::mutex> lock(calls_mutex);
        ++calls[std::string(region)];
      }
      std::this_thread::yield();  // widen the race window
      return std::make_unique<named_test_mapper>(std::string(region));
    };
    REQUIRE(registry.register_factory("shared", factory).has_value());
    REQUIRE(registry.register_fallback_factory(factory).has_value());

    constexpr int threads = 4;
    constexpr int rounds = 200;
    std::vector<std::map<std::string, llvm::SectionMemoryManager::MemoryMapper*>> seen(threads);
    std::atomic<int> mismatches{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        const std::string names[] = {"shared", "own_" + std::to_string(t),
                                     "own_" + std::to_string((t + 1) % threads)};
        for (int i = 0; i < rounds; ++i) {
          for (const auto& n : names) {
            auto r = registry.try_get(n);
            if (!r || *r == nullptr) {
              ++mismatches;
              continue;
            }
            auto [it, inserted] = seen[t].try_emplace(n, *r);
            if (!inserted && it->second != *r) ++mismatches;
            if (static_cast<named_test_mapper*>(*r)->region != n) ++mismatches;
          }
        }
      });
    }
    go = true;
    for (auto& th : pool) th.join();

    CHECK(mismatches.load() == 0);
    for (int t = 1; t < threads; ++t) {
      for (const auto& [name, mapper] : seen[t]) {
        if (seen[0].count(name) != 0) CHECK(seen[0][name] == mapper);
      }
    }
    CHECK(seen[0]["shared"] == seen[3]["shared"]);
    CHECK(seen[0]["own_1"] == seen[1]["own_1"]);
    CHECK(registry.size() == 5);
    for (const auto& [name, n] : calls) {
      CAPTURE(name);
      CHECK(n == 1);
    }
    CHECK(calls.size() == 5);
    CHECK(registry.created_names() ==
          std::vector<std::string>{"own_0", "own_1", "own_2", "own_3", "shared"});
    CHECK(registry.registered_names() == std::vector<std::string>{"shared"});
    CHECK(registry.has_fallback());
  }

  TEST_CASE("missing names, duplicates and bad factories answer clearly") {
    xlamem::jit_memory_mapper_registry registry;
    auto missing = registry.try_get("xla_cpu_jit");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code() == errc::not_found);
    CHECK(missing.error().message() ==
          "mapper registry: no factory for region 'xla_cpu_jit' and no fallback (registered: none)");
    CHECK(registry.find("xla_cpu_jit") == nullptr);

    REQUIRE(registry.register_factory("a", xlamem::memory_mapper_factory<xlamem::posix_page_mapper>())
                .has_value());
    auto dup = registry.register_factory("a", xlamem::memory_mapper_factory<xlamem::posix_page_mapper>());
    REQUIRE_FALSE(dup.has_value());
    CHECK(dup.error().code() == errc::already_exists);
    CHECK_FALSE(registry.register_factory("", [](std::string_view) { return nullptr; }).has_value());
    CHECK_FALSE(registry.register_factory("b", nullptr).has_value());
    CHECK(registry.try_get("zzz").error().message().find("(registered: 'a')") != std::string::npos);

    REQUIRE(registry
                .register_factory("null",
                                  [](std::string_view)
                                      -> std::unique_ptr<llvm::SectionMemoryManager::MemoryMapper> {
                                    return nullptr;
                                  })
                .has_value());
    auto null = registry.try_get("null");
    REQUIRE_FALSE(null.has_value());
    CHECK(null.error().code() == errc::internal);
    CHECK(null.error().message().find("returned null") != std::string::npos);
    REQUIRE(registry
                .register_factory("throws",
                                  [](std::string_view)
                                      -> std::unique_ptr<llvm::SectionMemoryManager::MemoryMapper> {
                                    throw std::runtime_error("no pages today");
                                  })
                .has_value());
    CHECK(registry.try_get("throws").error().message().find("threw: no pages today") !=
          std::string::npos);
    CHECK(registry.find("throws") == nullptr);

    // A mapper made by memory_mapper_factory works as an LLVM mapper.
    auto* m = registry.find("a");
    REQUIRE(m != nullptr);
    CHECK(registry.find("a") == m);
    std::error_code ec;
    auto block = m->allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose::Code, 10,
                                         nullptr,
                                         llvm::sys::Memory::MF_READ | llvm::sys::Memory::MF_WRITE,
                                         ec);
    REQUIRE_FALSE(ec);
    CHECK(block.allocatedSize() == page);
    CHECK_FALSE(m->releaseMappedMemory(block));
    CHECK(registry.created_names() == std::vector<std::string>{"a"});
  }
}
