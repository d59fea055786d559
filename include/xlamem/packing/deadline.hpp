// SPDX-License-Identifier: Apache-2.0
/// @file
/// The wall-clock deadline every packing solver keeps (`solve` in packing/solvers.hpp turns
/// `--time-limit` into one): an optional point on the steady clock, and the checks the long
/// phases make. A phase checks every few thousand steps of work, so that a check costs
/// nothing next to the work and the deadline is overrun by at most one stride.
///
/// A deadline may also carry a cancellation flag (`packing_deadline::cancel`): a
/// `std::atomic<bool>` that another thread sets to stop the solve (the Python package sets it
/// on Ctrl-C). Every check of the clock reads it too (a relaxed load), with or without a time
/// limit, so a set flag ends the work as a passed deadline does, within one stride: each
/// solver returns its best placement so far (or `solve`'s fallback), and `solve_result::cancelled`
/// says so. Without a flag nothing changes.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <optional>

namespace xlamem {

using packing_clock = std::chrono::steady_clock;

/// A flag that, once set (by any thread), stops the solvers that watch it.
using cancellation_flag = std::atomic<bool>;

/// Whether `flag` is given and set.
[[nodiscard]] inline bool cancel_requested(const cancellation_flag* flag) noexcept {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

/// A point in time after which a solver stops and returns what it has (`time`; none: no
/// limit), and the cancellation flag that stops it earlier (`cancel`; null: none). It reads
/// as the optional time point it was before the flag (`if (d)`, `*d`, `value_or`), so code
/// that keeps only the time needs no change; what copies the time alone drops the flag.
struct packing_deadline {
  std::optional<packing_clock::time_point> time;
  const cancellation_flag* cancel = nullptr;

  packing_deadline() noexcept = default;
  packing_deadline(std::nullopt_t) noexcept {}                                  // NOLINT: implicit, as optional's
  packing_deadline(packing_clock::time_point t) noexcept : time(t) {}             // NOLINT
  packing_deadline(std::optional<packing_clock::time_point> t) noexcept : time(t) {}  // NOLINT

  /// Whether there is a time limit (the flag aside).
  [[nodiscard]] explicit operator bool() const noexcept { return time.has_value(); }
  [[nodiscard]] bool has_value() const noexcept { return time.has_value(); }
  [[nodiscard]] const packing_clock::time_point& operator*() const noexcept { return *time; }
  [[nodiscard]] packing_clock::time_point value_or(packing_clock::time_point t) const noexcept {
    return time.value_or(t);
  }
  /// No time limit and no flag.
  void reset() noexcept { *this = packing_deadline{}; }
  /// Whether the cancellation flag is set.
  [[nodiscard]] bool cancelled() const noexcept { return cancel_requested(cancel); }
  /// Whether anything can stop the work: a time limit or a flag.
  [[nodiscard]] bool watched() const noexcept { return time.has_value() || cancel != nullptr; }
};

/// Whether `d` has passed or its cancellation flag is set.
[[nodiscard]] inline bool deadline_passed(const packing_deadline& d) noexcept {
  return d.cancelled() || (d && packing_clock::now() >= *d);
}

/// `seconds` after `start`; none when `seconds` <= 0, is not a number, or lies beyond the
/// clock's range (infinity: no limit).
[[nodiscard]] inline packing_deadline deadline_after(packing_clock::time_point start, double seconds) noexcept {
  if (!(seconds > 0) || !std::isfinite(seconds)) return std::nullopt;
  if (seconds >= std::chrono::duration<double>(packing_clock::time_point::max() - start).count()) return std::nullopt;
  return start + std::chrono::duration_cast<packing_clock::duration>(std::chrono::duration<double>(seconds));
}

/// The deadline a solver keeps: `given`'s time when it has one, else `seconds` after `start`
/// (`deadline_after`); `given`'s cancellation flag either way.
[[nodiscard]] inline packing_deadline deadline_or_after(const packing_deadline& given, packing_clock::time_point start,
                                                        double seconds) noexcept {
  packing_deadline d = given ? given : deadline_after(start, seconds);
  d.cancel = given.cancel;
  return d;
}

/// `d` moved `reserve` earlier, to leave time for a later phase; none stays none. The flag
/// stays.
[[nodiscard]] inline packing_deadline deadline_before(const packing_deadline& d, packing_clock::duration reserve) noexcept {
  packing_deadline out = d;
  if (d) out.time = *d - reserve;
  return out;
}

/// A deadline check for a loop whose steps cost unequal work: `due(work)` adds a step's work
/// and reads the clock (and the cancellation flag) only when `stride` units have gone by
/// since the last reading.
class deadline_checker {
 public:
  explicit deadline_checker(const packing_deadline& d, std::size_t stride = 1 << 14) noexcept
      : deadline_(d), stride_(stride) {}

  /// Whether the deadline has passed or the work was cancelled (read at most once every
  /// `stride` units of work).
  [[nodiscard]] bool due(std::size_t work = 1) noexcept {
    if (!deadline_.watched()) return false;
    pending_ += work;
    if (pending_ < stride_) return false;
    pending_ = 0;
    return deadline_passed(deadline_);
  }

 private:
  packing_deadline deadline_;
  std::size_t stride_;
  std::size_t pending_ = 0;
};

}  // namespace xlamem
