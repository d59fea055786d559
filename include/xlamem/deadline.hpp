// SPDX-License-Identifier: Apache-2.0
/// @file
/// The deadline every anytime solver keeps (packing, sharding, the auto-sharding builder): one
/// clock, one deadline type, and `deadline_watch`, the check a long loop makes.
///
/// A deadline is an optional point on the steady clock (none: no time limit) and an optional
/// cancellation flag: a `std::atomic<bool>` another thread sets to stop the work (the Python
/// package sets it on Ctrl-C). Every check reads the flag too (a relaxed load), so a set flag
/// ends the work as a passed deadline does: each solver returns its best answer so far and
/// says it was cancelled.
///
/// A front end that counts its own reading in the limit makes the deadline once, at its start
/// (`deadline_after`), and hands it to the library; the library keeps it, moved earlier
/// (`deadline_before`) where a later phase needs time of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <optional>

namespace xlamem {

/// The one clock of every solver's deadline and timings.
using solve_clock = std::chrono::steady_clock;

/// A flag that, once set (by any thread), stops the solvers that watch it.
using cancellation_flag = std::atomic<bool>;

/// Whether `flag` is given and set.
[[nodiscard]] inline bool cancel_requested(const cancellation_flag* flag) noexcept {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

/// A point in time after which a solver stops and returns what it has (`time`; none: no
/// limit), and the cancellation flag that stops it earlier (`cancel`; null: none). It reads
/// as an optional time point (`if (d)`, `*d`, `value_or`) for the code that keeps only the
/// time; what copies the time alone drops the flag.
struct solve_deadline {
  std::optional<solve_clock::time_point> time;
  const cancellation_flag* cancel = nullptr;

  solve_deadline() noexcept = default;
  solve_deadline(std::nullopt_t) noexcept {}                                    // NOLINT: implicit, as optional's
  solve_deadline(solve_clock::time_point t) noexcept : time(t) {}               // NOLINT
  solve_deadline(std::optional<solve_clock::time_point> t) noexcept : time(t) {}  // NOLINT
  solve_deadline(std::optional<solve_clock::time_point> t, const cancellation_flag* flag) noexcept
      : time(t), cancel(flag) {}

  /// Whether there is a time limit (the flag aside).
  [[nodiscard]] explicit operator bool() const noexcept { return time.has_value(); }
  [[nodiscard]] bool has_value() const noexcept { return time.has_value(); }
  [[nodiscard]] const solve_clock::time_point& operator*() const noexcept { return *time; }
  [[nodiscard]] solve_clock::time_point value_or(solve_clock::time_point t) const noexcept { return time.value_or(t); }
  /// No time limit and no flag.
  void reset() noexcept { *this = solve_deadline{}; }
  /// Whether the cancellation flag is set.
  [[nodiscard]] bool cancelled() const noexcept { return cancel_requested(cancel); }
  /// Whether anything can stop the work: a time limit or a flag.
  [[nodiscard]] bool watched() const noexcept { return time.has_value() || cancel != nullptr; }
};

/// Whether `d` has passed or its cancellation flag is set.
[[nodiscard]] inline bool deadline_passed(const solve_deadline& d) noexcept {
  return d.cancelled() || (d && solve_clock::now() >= *d);
}

/// What a time limit means to every solver: seconds of wall-clock time; 0 asks for the
/// quickest answer (a deadline already passed), infinity for none. A negative or NaN limit is
/// refused (`time_limit_error`).
///
/// `seconds` after `start`: `start` itself for 0 (and for what `time_limit_error` refuses, so
/// that a limit never checked cannot run unbounded); none for infinity or a time beyond the
/// clock's range.
[[nodiscard]] inline solve_deadline deadline_after(solve_clock::time_point start, double seconds) noexcept {
  if (!(seconds > 0)) return start;
  if (std::isinf(seconds)) return std::nullopt;
  if (seconds >= std::chrono::duration<double>(solve_clock::time_point::max() - start).count()) return std::nullopt;
  return start + std::chrono::duration_cast<solve_clock::duration>(std::chrono::duration<double>(seconds));
}

/// Why `seconds` is no time limit (negative, or not a number), or null when it is one.
[[nodiscard]] constexpr const char* time_limit_error(double seconds) noexcept {
  if (seconds != seconds) return "the time limit is not a number; give seconds (0: at once, infinity: no limit)";
  if (seconds < 0) return "the time limit is negative; give seconds (0: at once, infinity: no limit)";
  return nullptr;
}

/// The deadline a solver keeps: `given`'s time when it has one, else `seconds` after `start`
/// (`deadline_after`); `given`'s cancellation flag either way.
[[nodiscard]] inline solve_deadline deadline_or_after(const solve_deadline& given, solve_clock::time_point start,
                                                      double seconds) noexcept {
  solve_deadline d = given ? given : deadline_after(start, seconds);
  d.cancel = given.cancel;
  return d;
}

/// `d` moved `reserve` earlier, to leave time for a later phase; none stays none. The flag
/// stays.
[[nodiscard]] inline solve_deadline deadline_before(const solve_deadline& d, solve_clock::duration reserve) noexcept {
  solve_deadline out = d;
  if (d) out.time = *d - reserve;
  return out;
}

/// The check of one long loop whose steps cost unequal work: `passed(work)` adds a step's
/// work and reads the clock (and the cancellation flag) only when `stride` units have gone by
/// since the last reading, so a check costs nothing next to the work and the deadline is
/// overrun by at most one stride. Once passed, a watch stays passed, so nested loops can all
/// stop on it.
class deadline_watch {
 public:
  explicit deadline_watch(const solve_deadline& d, std::size_t stride = std::size_t{1} << 12) noexcept
      : deadline_(d), stride_(stride), left_(stride) {}

  /// Adds `work` units; true when the deadline has passed or the work was cancelled.
  [[nodiscard]] bool passed(std::size_t work = 1) noexcept {
    if (passed_ || !deadline_.watched()) return passed_;
    if (work < left_) {
      left_ -= work;
      return false;
    }
    left_ = stride_;
    passed_ = deadline_passed(deadline_);
    return passed_;
  }
  /// Whether an earlier call saw the deadline pass.
  [[nodiscard]] bool seen_passed() const noexcept { return passed_; }

 private:
  solve_deadline deadline_;
  std::size_t stride_;
  std::size_t left_;
  bool passed_ = false;
};

}  // namespace xlamem
