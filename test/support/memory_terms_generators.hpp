// SPDX-License-Identifier: Apache-2.0
/// @file
/// Synthetic primitive lifetimes for testing and benchmarking memory-term reduction: uniformly
/// random intervals, and the "training step" family with staircase and nested lifetimes
/// described in docs/memory-terms.md. Generation is deterministic across platforms (an in-house
/// splitmix64 generator; no std distributions, whose output is implementation-defined).
/// Test and benchmark support, not part of the installed library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "xlamem/memory_terms/reduction.hpp"

namespace xlamem {

/// A small deterministic random generator (splitmix64).
class term_rng {
 public:
  explicit constexpr term_rng(std::uint64_t seed) noexcept : state_(seed) {}

  /// The next 64 random bits.
  constexpr std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in `[lo, hi]` (slightly biased for huge ranges, which is fine for test data).
  /// @pre lo <= hi
  constexpr std::int64_t uniform(std::int64_t lo, std::int64_t hi) noexcept {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return span == 0 ? static_cast<std::int64_t>(next()) : lo + static_cast<std::int64_t>(next() % span);
  }

 private:
  std::uint64_t state_;
};

/// An input of the reducer: the number of time steps and one interval per primitive.
struct term_problem {
  std::int64_t num_lives = 0;
  std::vector<term_interval> intervals;
};

/// `num_primitives` intervals of length 1..`max_length` placed uniformly over `num_lives` steps;
/// about one in `invalid_every` (0: none) has no interval.
/// @pre num_lives >= 1, max_length >= 1
[[nodiscard]] inline term_problem random_term_problem(std::uint64_t seed, std::int64_t num_primitives,
                                                      std::int64_t num_lives, std::int64_t max_length,
                                                      std::int64_t invalid_every = 0) {
  term_rng rng(seed);
  term_problem p;
  p.num_lives = num_lives;
  p.intervals.reserve(static_cast<std::size_t>(num_primitives));
  for (std::int64_t i = 0; i < num_primitives; ++i) {
    if (invalid_every > 0 && rng.uniform(0, invalid_every - 1) == 0) {
      p.intervals.push_back({num_lives, 0});
      continue;
    }
    const std::int64_t first = rng.uniform(0, num_lives - 1);
    const std::int64_t len = rng.uniform(1, max_length);
    p.intervals.push_back({first, std::min(num_lives - 1, first + len - 1)});
  }
  return p;
}

/// One instance of the staircase/nested family: a training step of a model with `layers`
/// layers (4..24 when 0: drawn from the seed) and `steps` time steps per program step (1..4 when
/// 0). Forward program steps 0..d-1, backward d..2d-1, then one optimizer step. Lifetimes:
/// - activations (nested): 1..3 per layer, from the layer's forward step to its backward step;
/// - parameters (staircase with a common start): from time 0 to the layer's backward step;
/// - gradients (staircase with a common end): from the layer's backward step to the end;
/// - temporaries: 0..2 per program step, 1..`steps` time steps long.
/// Primitive order is shuffled so ids carry no structure.
[[nodiscard]] inline term_problem training_step_problem(std::uint64_t seed, std::int64_t layers = 0,
                                                        std::int64_t steps = 0) {
  term_rng rng(seed);
  const std::int64_t d = layers > 0 ? layers : rng.uniform(4, 24);
  const std::int64_t k = steps > 0 ? steps : rng.uniform(1, 4);
  const std::int64_t program_steps = 2 * d + 1;
  term_problem p;
  p.num_lives = program_steps * k;
  const std::int64_t end = p.num_lives - 1;
  auto forward = [&](std::int64_t i) { return i * k; };
  auto backward = [&](std::int64_t i) { return (2 * d - 1 - i) * k; };
  for (std::int64_t i = 0; i < d; ++i) {
    const std::int64_t activations = rng.uniform(1, 3);
    for (std::int64_t a = 0; a < activations; ++a) {
      p.intervals.push_back({forward(i) + rng.uniform(0, k - 1), backward(i) + rng.uniform(0, k - 1)});
    }
    p.intervals.push_back({0, backward(i) + k - 1});
    p.intervals.push_back({backward(i) + rng.uniform(0, k - 1), end});
  }
  for (std::int64_t s = 0; s < program_steps; ++s) {
    const std::int64_t temps = rng.uniform(0, 2);
    for (std::int64_t j = 0; j < temps; ++j) {
      const std::int64_t first = s * k + rng.uniform(0, k - 1);
      p.intervals.push_back({first, std::min(end, first + rng.uniform(0, k - 1))});
    }
  }
  for (std::size_t i = p.intervals.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i) - 1));
    std::swap(p.intervals[i - 1], p.intervals[j]);
  }
  return p;
}

}  // namespace xlamem
