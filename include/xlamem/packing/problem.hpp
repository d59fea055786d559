// SPDX-License-Identifier: Apache-2.0
/// @file
/// The static buffer packing problem (dynamic storage allocation): buffers with a half-open live
/// interval `[lower, upper)`, a size, an alignment and an optional fixed offset; a placement
/// (one offset per buffer); `validate` (names the first two conflicting buffers); the peak; and
/// lower bounds on the smallest possible peak.
///
/// Two buffers conflict when their live intervals overlap (`a.lower < b.upper && b.lower <
/// a.upper`) and both have a nonzero size; conflicting buffers need disjoint byte ranges.
/// All functions here are O(n log n) in the number of buffers and allocate only their results.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// One buffer of a packing problem: live on `[lower, upper)`, `size` bytes, placed at a multiple
/// of `alignment` (a power of two), or exactly at `fixed_offset` when that is set.
struct interval_buffer {
  std::string id;                           ///< a name for messages and files (CSV `id`)
  std::int64_t lower = 0;                   ///< first time step the buffer is live
  std::int64_t upper = 0;                   ///< end of the live interval (exclusive)
  std::int64_t size = 0;                    ///< bytes; 0 is allowed and never conflicts
  std::int64_t alignment = 1;               ///< a power of two
  std::optional<std::int64_t> fixed_offset; ///< preassigned offset, respected by every solver
};

/// A packing problem: the buffers to place. Solvers take the capacity as an option.
struct packing_problem {
  std::vector<interval_buffer> buffers;
};

/// A placement: `offsets[i]` is where buffer i starts.
struct placement {
  std::vector<std::int64_t> offsets;
};

/// Largest value any offset, size or time may take, so that `offset + size` and sums of sizes
/// never overflow `int64_t` (2^60 bytes, an exabyte).
inline constexpr std::int64_t max_packing_value = std::int64_t{1} << 60;

namespace detail {
inline std::string buffer_name(const packing_problem& p, std::size_t i) {
  const auto& id = p.buffers[i].id;
  std::string out;
  if (!id.empty()) {
    out += '\'';
    out += id;
    out += "' (";
  }
  out += '#';
  out += std::to_string(i);
  if (!id.empty()) out += ')';
  return out;
}
}  // namespace detail

/// Checks that a problem is well formed: nonempty intervals, nonnegative sizes, power-of-two
/// alignments, aligned nonnegative fixed offsets, values below `max_packing_value`.
[[nodiscard]] inline result<void> validate_problem(const packing_problem& p) {
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    auto bad = [&](const std::string& what) {
      return result<void>(errc::invalid_argument, "buffer " + detail::buffer_name(p, i) + ": " + what);
    };
    if (b.lower >= b.upper) {
      return bad("empty or negative live interval [" + std::to_string(b.lower) + ", " +
                 std::to_string(b.upper) + ")");
    }
    if (b.lower < -max_packing_value || b.upper > max_packing_value) return bad("time out of range");
    if (b.size < 0) return bad("negative size " + std::to_string(b.size));
    if (b.size > max_packing_value) return bad("size " + std::to_string(b.size) + " too large");
    if (b.alignment <= 0 || !is_power_of_two(static_cast<std::uint64_t>(b.alignment)) ||
        b.alignment > max_packing_value) {
      return bad("alignment " + std::to_string(b.alignment) + " is not a power of two");
    }
    if (b.fixed_offset) {
      const auto o = *b.fixed_offset;
      if (o < 0 || o > max_packing_value) return bad("fixed offset out of range");
      if (o % b.alignment != 0) return bad("fixed offset " + std::to_string(o) + " is not aligned");
    }
  }
  return {};
}

/// The peak of a placement: the largest `offset + size` (0 for no buffers).
[[nodiscard]] inline std::int64_t peak_of(const packing_problem& p, const placement& s) noexcept {
  std::int64_t peak = 0;
  const std::size_t n = std::min(p.buffers.size(), s.offsets.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].size > 0) peak = std::max(peak, s.offsets[i] + p.buffers[i].size);
  }
  return peak;
}

/// Checks a placement against its problem: one offset per buffer, nonnegative and aligned,
/// fixed offsets kept, and no two conflicting buffers overlapping in memory. The error names
/// the first two conflicting buffers found by a sweep over time. O(n log n).
[[nodiscard]] inline result<void> validate(const packing_problem& p, const placement& s) {
  const std::size_t n = p.buffers.size();
  if (s.offsets.size() != n) {
    return result<void>(errc::invalid_argument,
                        "placement has " + std::to_string(s.offsets.size()) + " offsets for " +
                            std::to_string(n) + " buffers");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& b = p.buffers[i];
    const auto o = s.offsets[i];
    auto bad = [&](const std::string& what) {
      return result<void>(errc::invalid_argument, "buffer " + detail::buffer_name(p, i) + ": " + what);
    };
    if (o < 0 || o > max_packing_value) return bad("offset " + std::to_string(o) + " out of range");
    if (b.alignment > 0 && o % b.alignment != 0) {
      return bad("offset " + std::to_string(o) + " is not a multiple of its alignment " +
                 std::to_string(b.alignment));
    }
    if (b.fixed_offset && *b.fixed_offset != o) {
      return bad("offset " + std::to_string(o) + " differs from its fixed offset " +
                 std::to_string(*b.fixed_offset));
    }
  }
  // Sweep over time; at equal times ends come before starts (intervals are half-open). The
  // live set, ordered by offset, is disjoint while the placement is valid, so a new buffer can
  // only collide with its neighbours in that order.
  struct event {
    std::int64_t time;
    int kind;  // 0 = end, 1 = start
    std::size_t index;
  };
  std::vector<event> events;
  events.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.buffers[i].size <= 0) continue;
    events.push_back({p.buffers[i].lower, 1, i});
    events.push_back({p.buffers[i].upper, 0, i});
  }
  std::sort(events.begin(), events.end(), [](const event& a, const event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.index < b.index;
  });
  std::set<std::pair<std::int64_t, std::size_t>> live;  // (offset, index)
  for (const auto& e : events) {
    const std::pair<std::int64_t, std::size_t> key{s.offsets[e.index], e.index};
    if (e.kind == 0) {
      live.erase(key);
      continue;
    }
    const auto it = live.lower_bound(key);
    const auto top = key.first + p.buffers[e.index].size;
    std::optional<std::size_t> other;
    if (it != live.end() && it->first < top) other = it->second;
    if (!other && it != live.begin()) {
      const auto prev = std::prev(it);
      if (prev->first + p.buffers[prev->second].size > key.first) other = prev->second;
    }
    if (other) {
      const auto a = std::min(*other, e.index);
      const auto b = std::max(*other, e.index);
      const auto& ba = p.buffers[a];
      const auto& bb = p.buffers[b];
      return result<void>(
          errc::invalid_argument,
          "buffers " + detail::buffer_name(p, a) + " and " + detail::buffer_name(p, b) +
              " conflict: both live at time " + std::to_string(std::max(ba.lower, bb.lower)) +
              ", bytes [" + std::to_string(s.offsets[a]) + ", " +
              std::to_string(s.offsets[a] + ba.size) + ") and [" + std::to_string(s.offsets[b]) +
              ", " + std::to_string(s.offsets[b] + bb.size) + ") overlap");
    }
    live.insert(key);
  }
  return {};
}

/// The classic lower bound on the peak: the largest sum of sizes of buffers live at one time,
/// also at least the top of every fixed buffer. O(n log n).
[[nodiscard]] inline std::int64_t max_live_bytes(const packing_problem& p) {
  std::vector<std::pair<std::int64_t, std::int64_t>> events;  // (time, +size / -size)
  events.reserve(2 * p.buffers.size());
  std::int64_t fixed_top = 0;
  for (const auto& b : p.buffers) {
    if (b.size <= 0) continue;
    events.emplace_back(b.lower, b.size);
    events.emplace_back(b.upper, -b.size);
    if (b.fixed_offset) fixed_top = std::max(fixed_top, *b.fixed_offset + b.size);
  }
  std::sort(events.begin(), events.end());  // at equal times the negative deltas come first
  std::int64_t live = 0, best = 0;
  for (const auto& [t, d] : events) {
    live += d;
    best = std::max(best, live);
  }
  return std::max(best, fixed_top);
}

/// The granularity of every canonical peak: the gcd of all sizes, alignments above 1 and fixed
/// offsets. Every peak the solvers report, and so the optimum, is a multiple of it, which lets
/// lower bounds round up. 1 when nothing better is known.
[[nodiscard]] inline std::int64_t packing_granule(const packing_problem& p) noexcept {
  std::int64_t g = 0;
  for (const auto& b : p.buffers) {
    if (b.size > 0) g = std::gcd(g, b.size);
    if (b.alignment > 1) g = std::gcd(g, b.alignment);
    if (b.fixed_offset && *b.fixed_offset > 0) g = std::gcd(g, *b.fixed_offset);
  }
  return g > 0 ? g : 1;
}

/// The best lower bound this header proves cheaply: max live bytes, rounded up to the
/// granularity of canonical placements (see `packing_granule`). The search can prove more
/// (`minimize_peak` reports its own bound).
[[nodiscard]] inline std::int64_t lower_bound(const packing_problem& p) {
  const auto g = packing_granule(p);
  const auto lb = max_live_bytes(p);
  return (lb + g - 1) / g * g;
}

}  // namespace xlamem
