// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/available_cpus.hpp: the quota texts of cgroup v1 and v2, the walk up
// a cgroup's ancestors over a fake /sys/fs/cgroup tree, and the count under a narrowed affinity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "xlamem/available_cpus.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

TEST_SUITE("core/available_cpus") {
  namespace fs = std::filesystem;
  using namespace xlamem;

  // A scratch folder holding a fake cgroup mount and a fake /proc/self/cgroup; removed at the end.
  struct fake_cgroups {
    static inline int made = 0;
    fs::path root = fs::temp_directory_path() /
                    ("xlamem-cpus-" + std::to_string(::getpid()) + "-" + std::to_string(++made));
    fake_cgroups() {
      fs::remove_all(root);
      fs::create_directories(root / "sys");
    }
    ~fake_cgroups() {
      std::error_code ec;
      fs::remove_all(root, ec);
    }
    fake_cgroups(const fake_cgroups&) = delete;
    fake_cgroups& operator=(const fake_cgroups&) = delete;
    // Writes `text` to sys/<relative>, creating its folders.
    void write(const std::string& relative, const std::string& text) const {
      const fs::path p = root / "sys" / relative;
      fs::create_directories(p.parent_path());
      std::ofstream(p) << text;
    }
    void self(const std::string& text) const { std::ofstream(root / "self") << text; }
    [[nodiscard]] std::optional<double> quota() const {
      return detail::cgroup_cpu_quota((root / "sys").string(), (root / "self").string());
    }
  };

  TEST_CASE("cpu_quota_number: a plain decimal, trailing newline and spaces allowed, else nothing") {
    CHECK(detail::cpu_quota_number("100000") == 100000.0);
    CHECK(detail::cpu_quota_number("0") == 0.0);
    CHECK(detail::cpu_quota_number("250000\n") == 250000.0);
    CHECK(detail::cpu_quota_number("42 \n") == 42.0);
    CHECK(detail::cpu_quota_number("100000000000000000") == 1e17);  // 18 digits
    CHECK(detail::cpu_quota_number("1000000000000000000") == std::nullopt);        // 19: refused
    CHECK(detail::cpu_quota_number("") == std::nullopt);
    CHECK(detail::cpu_quota_number("\n") == std::nullopt);
    CHECK(detail::cpu_quota_number("max") == std::nullopt);
    CHECK(detail::cpu_quota_number("-1") == std::nullopt);
    CHECK(detail::cpu_quota_number("+5") == std::nullopt);
    CHECK(detail::cpu_quota_number("1.5") == std::nullopt);
    CHECK(detail::cpu_quota_number(" 5") == std::nullopt);  // only trailing blanks are trimmed
  }

  TEST_CASE("cpu_quota and cpu_max_quota: quota over period, nothing for max, -1, zero or junk") {
    CHECK(detail::cpu_quota("200000", "100000") == 2.0);
    CHECK(detail::cpu_quota("50000\n", "100000\n") == 0.5);
    CHECK(detail::cpu_quota("-1", "100000") == std::nullopt);  // v1: no quota
    CHECK(detail::cpu_quota("0", "100000") == std::nullopt);
    CHECK(detail::cpu_quota("100000", "0") == std::nullopt);
    CHECK(detail::cpu_quota("100000", "") == std::nullopt);

    CHECK(detail::cpu_max_quota("150000 100000") == 1.5);
    CHECK(detail::cpu_max_quota("150000 100000\n") == 1.5);
    CHECK(detail::cpu_max_quota("max 100000") == std::nullopt);  // v2: no quota
    CHECK(detail::cpu_max_quota("max") == std::nullopt);
    CHECK(detail::cpu_max_quota("150000") == std::nullopt);  // no period
    CHECK(detail::cpu_max_quota("") == std::nullopt);
    CHECK(detail::cpu_max_quota("1 2 3") == std::nullopt);  // "2 3" is not a number
  }

  TEST_CASE("smallest_quota_along reads the cgroup, then each ancestor, the mount last") {
    std::vector<std::string> read;
    const auto quotas = [&](std::optional<double> at_b, std::optional<double> at_a, std::optional<double> at_root) {
      read.clear();
      return detail::smallest_quota_along("/m", "/a/b", [&](const std::string& dir) -> std::optional<double> {
        read.push_back(dir);
        if (dir == "/m/a/b") return at_b;
        if (dir == "/m/a") return at_a;
        if (dir == "/m") return at_root;
        return std::nullopt;
      });
    };
    CHECK(quotas(4.0, 2.0, 8.0) == 2.0);
    CHECK(read == std::vector<std::string>{"/m/a/b", "/m/a", "/m"});
    CHECK(quotas(std::nullopt, std::nullopt, 3.0) == 3.0);
    CHECK(quotas(std::nullopt, std::nullopt, std::nullopt) == std::nullopt);
    CHECK(quotas(0.5, std::nullopt, std::nullopt) == 0.5);

    // The root cgroup, or a path that is not absolute, reads the mount alone.
    for (const char* path : {"/", "", "relative"}) {
      read.clear();
      (void)detail::smallest_quota_along("/m", path, [&](const std::string& dir) -> std::optional<double> {
        read.push_back(dir);
        return std::nullopt;
      });
      CHECK(read == std::vector<std::string>{"/m"});
    }
  }

  TEST_CASE("cgroup_cpu_quota: v2 cpu.max along the path, the smallest wins") {
    fake_cgroups t;
    t.self("0::/kubepods/pod1\n");
    t.write("kubepods/pod1/cpu.max", "max 100000\n");
    t.write("kubepods/cpu.max", "300000 100000\n");
    t.write("cpu.max", "max 100000\n");
    CHECK(t.quota() == 3.0);
    t.write("kubepods/pod1/cpu.max", "150000 100000\n");
    CHECK(t.quota() == 1.5);
    t.write("cpu.max", "100000 100000\n");  // the mount itself (a container's own cgroup)
    CHECK(t.quota() == 1.0);
  }

  TEST_CASE("cgroup_cpu_quota: v1 cpu controller under any of its mount names; other controllers ignored") {
    fake_cgroups t;
    t.self("12:memory:/job\n11:name=systemd:/job\n4:cpu,cpuacct:/job\n");
    t.write("memory/job/cpu.cfs_quota_us", "10000\n");  // not the cpu controller: never read
    t.write("memory/job/cpu.cfs_period_us", "100000\n");
    CHECK(t.quota() == std::nullopt);
    t.write("cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
    t.write("cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    CHECK(t.quota() == std::nullopt);  // -1: no quota
    t.write("cpu,cpuacct/job/cpu.cfs_quota_us", "250000\n");
    CHECK(t.quota() == 2.5);
    t.write("cpu/job/cpu.cfs_quota_us", "200000\n");  // the same controller under another name
    t.write("cpu/job/cpu.cfs_period_us", "100000\n");
    CHECK(t.quota() == 2.0);
    t.write("cpu/cpu.cfs_quota_us", "100000\n");  // quota without a period: not a quota
    CHECK(t.quota() == 2.0);

    fake_cgroups other;
    other.self("3:cpuacct,cpu:/x\n");
    other.write("cpuacct,cpu/x/cpu.cfs_quota_us", "50000");
    other.write("cpuacct,cpu/x/cpu.cfs_period_us", "100000");
    CHECK(other.quota() == 0.5);
  }

  TEST_CASE("cgroup_cpu_quota: nothing when the cgroup list is missing, empty or malformed") {
    fake_cgroups t;
    CHECK(t.quota() == std::nullopt);  // no "self" file at all
    t.self("");
    CHECK(t.quota() == std::nullopt);
    t.write("cpu.max", "100000 100000\n");
    t.self("garbage without colons\n0:/only-one-colon\n");
    CHECK(t.quota() == std::nullopt);
    t.self("0::/\n");  // now a well-formed line reaches the quota
    CHECK(t.quota() == 1.0);
  }

  TEST_CASE("available_cpus: at least one, at most the affinity mask and the rounded-up quota") {
    const unsigned n = available_cpus();
    CHECK(n >= 1);
#if defined(__linux__)
    const auto mask = detail::affinity_cpus();
    REQUIRE(mask.has_value());
    CHECK(*mask >= 1);
    unsigned expected = *mask;
    if (const auto q = detail::cgroup_cpu_quota()) {
      expected = std::min(expected, std::max(1u, static_cast<unsigned>(std::ceil(*q))));
    }
    CHECK(n == expected);
#endif
  }

#if defined(__linux__)
  TEST_CASE("available_cpus follows the calling thread's affinity mask") {
    // In a thread of its own, so the test runner's mask is left alone.
    unsigned narrowed = 0;
    int set_failed = 0;
    std::thread([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      if (::sched_getaffinity(0, sizeof one, &one) != 0) {
        set_failed = 1;
        return;
      }
      int first = 0;
      while (first < CPU_SETSIZE && !CPU_ISSET(first, &one)) ++first;
      CPU_ZERO(&one);
      CPU_SET(first, &one);
      if (::sched_setaffinity(0, sizeof one, &one) != 0) {
        set_failed = 2;
        return;
      }
      narrowed = available_cpus();
    }).join();
    REQUIRE(set_failed == 0);
    CHECK(narrowed == 1);
    CHECK(detail::affinity_cpus() >= 1u);
  }
#endif
}
