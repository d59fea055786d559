// SPDX-License-Identifier: Apache-2.0
// Thread counts: `available_cpus()` counts the CPUs the affinity mask allows, capped by a
// cgroup CPU quota (v2 cpu.max, v1 cfs quota and period, on the cgroup and its ancestors); the
// solver runs with more threads than CPUs; one thread and a fixed seed give the same answer,
// where the search finishes, and with a work limit also where it does not, however slowly it runs.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/sharding_generators.hpp"
#include "xlamem/available_cpus.hpp"
#include "xlamem/sharding/evaluate.hpp"
#include "xlamem/sharding/solver.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace sh = xlamem::sharding;

namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A problem of a few hundred nodes: too many variables for the solver's exact search.
xlamem::test::sharding_shape medium_shape() {
  xlamem::test::sharding_shape shape;
  shape.nodes = 300;
  shape.max_strategies = 5;
  shape.time_steps = 100;
  shape.follow_share = 0.05;
  return shape;
}
sh::problem medium_problem() { return xlamem::test::random_sharding_problem(11, medium_shape()); }

}  // namespace

TEST_SUITE("sharding/threads") {
  TEST_CASE("cgroup CPU quotas are read as CPUs") {
    using xlamem::detail::cpu_max_quota;
    CHECK(cpu_max_quota("200000 100000") == 2.0);
    CHECK(cpu_max_quota("150000 100000\n") == 1.5);
    CHECK_FALSE(cpu_max_quota("max 100000"));
    CHECK_FALSE(cpu_max_quota("0 100000"));
    CHECK_FALSE(cpu_max_quota("-1 100000"));
    CHECK_FALSE(cpu_max_quota("200000"));
    CHECK_FALSE(cpu_max_quota(""));
    CHECK(xlamem::detail::cpu_quota("-1", "100000") == std::nullopt);  // v1: no quota
    CHECK(xlamem::detail::cpu_quota("50000", "100000") == 0.5);
  }

  TEST_CASE("the smallest quota along the cgroup's path counts, v2 and v1") {
    const auto root = std::filesystem::temp_directory_path() /
                      ("xlamem-cgroup-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::remove_all(root);
    write(root / "fs/cpu.max", "400000 100000\n");
    write(root / "fs/a/cpu.max", "150000 100000\n");
    write(root / "fs/a/b/cpu.max", "max 100000\n");
    write(root / "self", "0::/a/b\n");
    CHECK(xlamem::detail::cgroup_cpu_quota((root / "fs").string(), (root / "self").string()) == 1.5);
    write(root / "self", "0::/elsewhere/c\n");  // a path the mount does not show: the mount's own quota
    CHECK(xlamem::detail::cgroup_cpu_quota((root / "fs").string(), (root / "self").string()) == 4.0);
    write(root / "fs/cpu.max", "max 100000\n");
    CHECK_FALSE(xlamem::detail::cgroup_cpu_quota((root / "fs").string(), (root / "self").string()));
    // cgroup v1: the cpu controller's mount, quota -1 meaning none.
    write(root / "v1/cpu,cpuacct/cpu.cfs_quota_us", "300000\n");
    write(root / "v1/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    write(root / "v1/cpu,cpuacct/x/cpu.cfs_quota_us", "-1\n");
    write(root / "v1/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n");
    write(root / "self", "5:memory:/x\n4:cpu,cpuacct:/x\n");
    CHECK(xlamem::detail::cgroup_cpu_quota((root / "v1").string(), (root / "self").string()) == 3.0);
    CHECK_FALSE(xlamem::detail::cgroup_cpu_quota((root / "v1").string(), (root / "missing").string()));
    std::filesystem::remove_all(root);
  }

  TEST_CASE("available_cpus follows the affinity mask") {
    const unsigned all = xlamem::available_cpus();
    CHECK(all >= 1);
    if (std::thread::hardware_concurrency() > 0) CHECK(all <= std::thread::hardware_concurrency());
#if defined(__linux__)
    unsigned pinned = 0;
    std::thread([&] {  // affinity is per thread: pin this one to its first allowed CPU
      cpu_set_t set;
      CPU_ZERO(&set);
      REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
      int first = 0;
      while (!CPU_ISSET(first, &set)) ++first;
      CPU_ZERO(&set);
      CPU_SET(first, &set);
      REQUIRE(::sched_setaffinity(0, sizeof set, &set) == 0);
      pinned = xlamem::available_cpus();
    }).join();
    CHECK(pinned == 1);
    CHECK(xlamem::available_cpus() == all);  // the calling thread's mask is untouched
#endif
  }

  TEST_CASE("one thread and a fixed seed give the same answer where the search finishes") {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      xlamem::test::sharding_shape shape;
      shape.nodes = 6 + seed % 20;
      const auto p = xlamem::test::random_sharding_problem(seed, shape);
      sh::solve_options o;
      o.time_limit = 1.0;
      o.seed = seed;
      const auto a = sh::solve(p, o);
      const auto b = sh::solve(p, o);
      REQUIRE(a);
      REQUIRE(b);
      CHECK_MESSAGE(a->strategies == b->strategies, "seed ", seed);
      CHECK(a->cost == b->cost);
      CHECK(a->status == b->status);
    }
  }

  TEST_CASE("one thread, a fixed seed and a work limit give the same answer at any pace") {
    // Past the exact search's size, so the relaxation, the neighbourhood search, its patience
    // and its kicks all run; a progress callback that sleeps slows the search down tenfold, as a
    // loaded machine would, and must not change a single choice.
    auto shape = medium_shape();
    shape.forbidden_share = 0;  // an allowed answer exists, so the status says what stopped the search
    const auto p = xlamem::test::random_sharding_problem(12, shape);
    for (const std::uint64_t work : {0u, 40u, 400u, 3000u}) {
      for (const std::uint64_t seed : {1u, 2u}) {
        sh::solve_options o;
        o.time_limit = 600;  // never reached: the work limit ends each run
        o.seed = seed;
        o.work_limit = work;
        const auto quick = sh::solve(p, o);
        int slowed = 0;
        o.progress_interval = 0;
        o.progress = [&](const sh::solve_progress&) {
          ++slowed;
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        };
        const auto slow = sh::solve(p, o);
        REQUIRE(quick);
        REQUIRE(slow);
        INFO("work limit ", work, ", seed ", seed);
        CHECK((work == 0 || slowed > 0));
        CHECK(quick->strategies == slow->strategies);
        CHECK(quick->cost == slow->cost);
        CHECK(quick->relaxation_steps == slow->relaxation_steps);
        CHECK(quick->search.steps == slow->search.steps);
        CHECK(quick->relaxation_steps + quick->search.steps == work);
        CHECK(quick->status == xlamem::solve_status::work_limit);
        CHECK(quick->lower_bound == slow->lower_bound);
      }
    }
  }

  TEST_CASE("more threads than CPUs work") {
    const auto p = medium_problem();
    sh::solve_options o;
    o.time_limit = 0.5;
    o.threads = 4 * xlamem::available_cpus() + 1;
    const auto start = std::chrono::steady_clock::now();
    const auto r = sh::solve(p, o);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(r);
    CHECK(took < 2.0);  // generous: the contract is measured in bench/
    CHECK(r->feasible);
    CHECK(r->internal_error.empty());
    const auto scored = sh::evaluate(p, r->strategies);
    REQUIRE(scored);
    CHECK(scored->cost == r->cost);
  }
}
