// SPDX-License-Identifier: Apache-2.0
/// @file
/// `available_cpus()`: how many CPUs this process may use, the default of every thread count in
/// the library and the command-line tool. It is the count of CPUs in the calling thread's
/// affinity mask (`sched_getaffinity`; taskset, numactl and container runtimes set it), capped by
/// the CPU quota of the process's control group, rounded up (cgroup v2 `cpu.max`, or v1
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us`, on the cgroup and each of its ancestors).
/// `std::thread::hardware_concurrency()` counts the machine's CPUs instead: in a container held to
/// two CPUs on a 64-core host it says 64, and 64 busy threads there each get a thirty-second of
/// a core. Elsewhere than Linux it falls back to `hardware_concurrency()`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#if defined(__linux__)
#include <sched.h>  // sched_getaffinity, CPU_COUNT (glibc and musl; C++ compilers define _GNU_SOURCE)
#endif

namespace xlamem {

namespace detail {

/// A nonnegative decimal integer, or nothing (also on overflow or any other character).
[[nodiscard]] inline std::optional<double> cpu_quota_number(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty() || s.size() > 18) return std::nullopt;
  double v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// The CPUs a quota of `quota` microseconds per `period` allows, or nothing when there is no
/// quota ("max" in v2, -1 in v1) or the text is not a quota.
[[nodiscard]] inline std::optional<double> cpu_quota(std::string_view quota, std::string_view period) {
  const auto q = cpu_quota_number(quota);
  const auto p = cpu_quota_number(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return *q / *p;
}

/// The CPUs a cgroup v2 `cpu.max` text ("QUOTA PERIOD" or "max PERIOD") allows.
[[nodiscard]] inline std::optional<double> cpu_max_quota(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return cpu_quota(text.substr(0, space), text.substr(space + 1));
}

/// The first line of `path`, or nothing when it cannot be read.
[[nodiscard]] inline std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

/// The smallest quota on the cgroup `path` (as /proc/self/cgroup names it, "/a/b") and its
/// ancestors under the mount `mount`, read by `read(directory)`; nothing when none has one.
/// The mount itself is read last: inside a container it is the container's own cgroup.
template <class Read>
std::optional<double> smallest_quota_along(const std::string& mount, std::string path, Read read) {
  std::optional<double> least;
  if (path.empty() || path.front() != '/') path = "/";
  for (;;) {
    if (const auto q = read(mount + (path == "/" ? std::string() : path)); q && (!least || *q < *least)) least = q;
    if (path == "/") return least;
    path.erase(std::max<std::size_t>(path.rfind('/'), 1));  // "/a/b" -> "/a" -> "/"
  }
}

/// The CPU quota of this process's control group, in CPUs, or nothing when it has none (or
/// the control group files cannot be read). `root` is where the cgroup file systems are
/// mounted and `self` the process's cgroup list (parameters for the tests).
[[nodiscard]] inline std::optional<double> cgroup_cpu_quota(const std::string& root = "/sys/fs/cgroup",
                                                            const std::string& self = "/proc/self/cgroup") {
  std::ifstream in(self);
  std::string line;
  std::optional<double> least;
  const auto keep = [&](std::optional<double> q) {
    if (q && (!least || *q < *least)) least = q;
  };
  while (std::getline(in, line)) {  // "ID:CONTROLLERS:PATH"; v2 is "0::PATH"
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      keep(smallest_quota_along(root, path, [](const std::string& dir) -> std::optional<double> {
        const auto text = first_line(dir + "/cpu.max");
        return text ? cpu_max_quota(*text) : std::nullopt;
      }));
      continue;
    }
    if (("," + controllers + ",").find(",cpu,") == std::string::npos) continue;
    for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"}) {
      keep(smallest_quota_along(root + mount, path, [](const std::string& dir) -> std::optional<double> {
        const auto quota = first_line(dir + "/cpu.cfs_quota_us");
        const auto period = first_line(dir + "/cpu.cfs_period_us");
        return quota && period ? cpu_quota(*quota, *period) : std::nullopt;
      }));
    }
  }
  return least;
}

/// The CPUs in the calling thread's affinity mask, or nothing when the platform cannot say.
[[nodiscard]] inline std::optional<unsigned> affinity_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  // More CPUs than a cpu_set_t holds: a larger set, doubled until the kernel's mask fits.
  for (int n = 2 * CPU_SETSIZE; n <= (1 << 20); n *= 2) {
    cpu_set_t* big = CPU_ALLOC(n);
    if (big == nullptr) return std::nullopt;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, big);
    const bool ok = ::sched_getaffinity(0, size, big) == 0;
    const int count = ok ? CPU_COUNT_S(size, big) : 0;
    CPU_FREE(big);
    if (ok) return static_cast<unsigned>(count);
  }
#endif
  return std::nullopt;
}

}  // namespace detail

/// How many CPUs this process may use (at least 1): see the file comment.
[[nodiscard]] inline unsigned available_cpus() {
  unsigned cpus = detail::affinity_cpus().value_or(std::thread::hardware_concurrency());
  cpus = std::max(cpus, 1u);
#if defined(__linux__)
  if (const auto quota = detail::cgroup_cpu_quota()) {
    const double whole = std::ceil(*quota);
    if (whole < static_cast<double>(cpus)) cpus = std::max(1u, static_cast<unsigned>(whole));
  }
#endif
  return cpus;
}

}  // namespace xlamem
