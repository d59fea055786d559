// SPDX-License-Identifier: Apache-2.0
/// @file
/// The wall-clock deadline every packing solver keeps (`solve` in packing/solvers.hpp turns
/// `--time-limit` into one): an optional point on the steady clock, and the checks the long
/// phases make. A phase checks every few thousand steps of work, so that a check costs
/// nothing next to the work and the deadline is overrun by at most one stride.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace xlamem {

using packing_clock = std::chrono::steady_clock;

/// A point in time after which a solver stops and returns what it has; none: no limit.
using packing_deadline = std::optional<packing_clock::time_point>;

/// Whether `d` has passed.
[[nodiscard]] inline bool deadline_passed(const packing_deadline& d) noexcept {
  return d && packing_clock::now() >= *d;
}

/// `seconds` after `start`; none when `seconds` <= 0.
[[nodiscard]] inline packing_deadline deadline_after(packing_clock::time_point start, double seconds) noexcept {
  if (!(seconds > 0)) return std::nullopt;
  return start + std::chrono::duration_cast<packing_clock::duration>(std::chrono::duration<double>(seconds));
}

/// `d` moved `reserve` earlier, to leave time for a later phase; none stays none.
[[nodiscard]] inline packing_deadline deadline_before(const packing_deadline& d, packing_clock::duration reserve) noexcept {
  if (!d) return d;
  return *d - reserve;
}

/// A deadline check for a loop whose steps cost unequal work: `due(work)` adds a step's work
/// and reads the clock only when `stride` units have gone by since the last reading.
class deadline_checker {
 public:
  explicit deadline_checker(const packing_deadline& d, std::size_t stride = 1 << 14) noexcept
      : deadline_(d), stride_(stride) {}

  /// Whether the deadline has passed (read at most once every `stride` units of work).
  [[nodiscard]] bool due(std::size_t work = 1) noexcept {
    if (!deadline_) return false;
    pending_ += work;
    if (pending_ < stride_) return false;
    pending_ = 0;
    return packing_clock::now() >= *deadline_;
  }

 private:
  packing_deadline deadline_;
  std::size_t stride_;
  std::size_t pending_ = 0;
};

}  // namespace xlamem
