// SPDX-License-Identifier: Apache-2.0
/// @file
/// The wall-clock deadline every phase of the sharding solver keeps (reading, presolve, the
/// search model, relaxation steps, search, mapping the answer back): an optional point on the
/// steady clock, and `deadline_watch`, the check a long loop makes. A loop reports its work and
/// the watch reads the clock once every `stride` units, so a check costs nothing next to the
/// work and the deadline is overrun by at most one stride. Once passed, a watch stays passed,
/// so nested loops can all stop on it.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace xlamem::sharding {

using solver_clock = std::chrono::steady_clock;

/// When a phase must stop and hand back what it has; none: no limit.
using solver_deadline = std::optional<solver_clock::time_point>;

/// The check of one long loop against a deadline.
class deadline_watch {
 public:
  explicit deadline_watch(solver_deadline d, std::size_t stride = std::size_t{1} << 12) noexcept
      : deadline_(d), stride_(stride), left_(stride) {}

  /// Adds `work` units; true when the deadline has passed (the clock is read at most once
  /// every `stride` units of work).
  [[nodiscard]] bool passed(std::size_t work = 1) noexcept {
    if (passed_ || !deadline_) return passed_;
    if (work < left_) {
      left_ -= work;
      return false;
    }
    left_ = stride_;
    passed_ = solver_clock::now() >= *deadline_;
    return passed_;
  }
  /// Whether an earlier call saw the deadline pass.
  [[nodiscard]] bool seen_passed() const noexcept { return passed_; }

 private:
  solver_deadline deadline_;
  std::size_t stride_;
  std::size_t left_;
  bool passed_ = false;
};

}  // namespace xlamem::sharding
