// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/jit/mapper_registry.hpp (no LLVM needed): one mapper per region name,
// made once by its factory (also when threads ask at once), the fallback, and clear errors.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "xlamem/jit/mapper_registry.hpp"

namespace mapper_registry_test {
struct region_mapper {
  std::string region;
};
using registry = xlamem::named_mapper_registry<region_mapper>;
}  // namespace mapper_registry_test

TEST_SUITE("jit/mapper_registry") {
  using namespace xlamem;
  using namespace mapper_registry_test;

  TEST_CASE("4 threads asking for shared and own names get one mapper per name, made once") {
    registry r;
    std::mutex calls_mutex;
    std::map<std::string, int> calls;
    auto factory = [&](std::string_view region) {
      {
        std::lock_guard<std::mutex> lock(calls_mutex);
        ++calls[std::string(region)];
      }
      std::this_thread::yield();  // widen the race window
      return std::make_unique<region_mapper>(region_mapper{std::string(region)});
    };
    REQUIRE(r.register_factory("shared", factory).has_value());
    REQUIRE(r.register_fallback_factory(factory).has_value());
    constexpr int threads = 4;
    std::vector<std::map<std::string, region_mapper*>> seen(threads);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::string names[] = {"shared", "own_" + std::to_string(t), "own_" + std::to_string((t + 1) % threads)};
        for (int round = 0; round < 100; ++round) {
          for (const auto& n : names) {
            auto m = r.try_get(n);
            if (!m || *m == nullptr || (*m)->region != n) {
              ++mismatches;
              continue;
            }
            auto [it, fresh] = seen[t].try_emplace(n, *m);
            if (!fresh && it->second != *m) ++mismatches;
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    CHECK(mismatches.load() == 0);
    CHECK(seen[0]["shared"] == seen[3]["shared"]);
    CHECK(seen[0]["own_1"] == seen[1]["own_1"]);
    CHECK(r.size() == 5);
    for (const auto& [name, n] : calls) {
      CAPTURE(name);
      CHECK(n == 1);
    }
    CHECK(r.created_names() == std::vector<std::string>{"own_0", "own_1", "own_2", "own_3", "shared"});
    CHECK(r.registered_names() == std::vector<std::string>{"shared"});
    CHECK(r.has_factory("shared"));
    CHECK_FALSE(r.has_factory("own_0"));
    CHECK(r.has_fallback());
  }

  TEST_CASE("missing names, duplicates, empty and failing factories answer clearly") {
    registry r;
    auto missing = r.try_get("xla_cpu_jit");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code() == errc::not_found);
    CHECK(missing.error().message() ==
          "mapper registry: no factory for region 'xla_cpu_jit' and no fallback (registered: none)");
    CHECK(r.find("xla_cpu_jit") == nullptr);
    auto make = [](std::string_view region) { return std::make_unique<region_mapper>(region_mapper{std::string(region)}); };
    REQUIRE(r.register_factory("a", make).has_value());
    CHECK(r.register_factory("a", make).error().code() == errc::already_exists);
    CHECK(r.register_factory("", make).error().code() == errc::invalid_argument);
    CHECK(r.register_factory("b", nullptr).error().code() == errc::invalid_argument);
    CHECK(r.try_get("c").error().message().find("(registered: 'a')") != std::string::npos);
    REQUIRE(r.register_factory("null", [](std::string_view) { return std::unique_ptr<region_mapper>(); }).has_value());
    auto null = r.try_get("null");
    REQUIRE_FALSE(null.has_value());
    CHECK(null.error().code() == errc::internal);
    CHECK(null.error().message().find("returned null") != std::string::npos);
    REQUIRE(r.register_factory("throws", [](std::string_view) -> std::unique_ptr<region_mapper> {
                 throw std::runtime_error("no pages");
               }).has_value());
    CHECK(r.try_get("throws").error().message().find("threw: no pages") != std::string::npos);
    CHECK(r.find("throws") == nullptr);
    CHECK(r.size() == 0);
    REQUIRE(r.try_get("a").has_value());
    CHECK(r.find("a") == *r.try_get("a"));
    CHECK(r.register_fallback_factory(nullptr).error().code() == errc::invalid_argument);
    REQUIRE(r.register_fallback_factory(make).has_value());
    CHECK(r.register_fallback_factory(make).error().code() == errc::already_exists);
  }
}
