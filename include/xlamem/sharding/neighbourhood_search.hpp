// SPDX-License-Identifier: Apache-2.0
/// @file
/// Large-neighbourhood search: choose a few variables, relabel them optimally with the rest
/// fixed (`subproblem_search`, memory exact), keep the result when it is cheaper, repeat.
///
/// Four kinds of neighbourhood, taken in turn:
///  - a ball of the edge graph around a random variable (neighbours in random order), for
///    groups of variables whose edges make them change together;
///  - the variables whose usage depends on their label at a heavily loaded memory row (the
///    most loaded of a few random rows), grown by their graph neighbours: the choices that
///    compete for memory;
///  - a ball plus memory partners: the variables whose usage depends on their label at the
///    most loaded row the ball covers, wherever they are in the graph (a group that needs more
///    memory and the distant choices that can give it up);
///  - where the assignment disagrees with a guide (the labelling of the Lagrangian relaxation at
///    its best bound, when the solver has one): a disagreeing variable, its graph neighbours and
///    other disagreeing variables, after the relaxation-induced neighbourhoods of MIP solvers.
/// Each kind keeps its own size, grown while its subproblems finish within the node limit and
/// shrunk when they do not.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "xlamem/sharding/subproblem.hpp"

namespace xlamem::sharding {

class neighbourhood_search {
 public:
  struct statistics {
    std::uint64_t steps = 0;
    std::uint64_t improvements = 0;
    std::uint64_t nodes = 0;
  };

  neighbourhood_search(const search_model& m, std::uint64_t seed)
      : model_(&m), sub_(m), rng_(seed), in_(m.var_count(), 0) {}

  /// One neighbourhood relabelled (one step in four also accepts other labels of the same
  /// cost, to move along plateaus). @returns how much cheaper `state` became.
  cost_type step(assignment_state& state,
                 std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    const std::size_t kind = stats_.steps % kinds;
    ++stats_.steps;
    if (model_->var_count() == 0) return 0;
    auto& size = size_[kind];
    chosen_.clear();
    if (kind == 0) {
      ball(random_var(), size);
    } else if (kind == 1) {
      if (!memory_seeds(state, size / 2, pick_loaded_row(state))) ball(random_var(), size);
    } else if (kind == 2 || !disagreement(state, size)) {
      ball(random_var(), size - size / 3);
      memory_seeds(state, size / 3, tightest_row_of_chosen(state));
    }
    grow(size);
    for (auto v : chosen_) in_[v] = 0;
    const bool sideways = rng_() % 4 == 0;
    const auto out = sub_.improve(state, chosen_, node_limit, deadline, sideways);
    stats_.nodes += out.nodes;
    if (out.improved) ++stats_.improvements;
    if (out.complete) {
      if (++complete_streak_[kind] >= 3 && size < max_size) {
        ++size;
        complete_streak_[kind] = 0;
      }
    } else {
      complete_streak_[kind] = 0;
      if (size > min_size) --size;
    }
    return out.gain;
  }

  [[nodiscard]] const statistics& stats() const noexcept { return stats_; }

  /// Sets the labelling the fourth kind of neighbourhood compares with (one label per variable).
  void set_guide(std::vector<std::uint32_t> labels) { guide_ = std::move(labels); }

 private:
  static constexpr std::size_t kinds = 4;
  static constexpr std::size_t min_size = 2, max_size = 64;
  static constexpr std::uint64_t node_limit = 20000;

  const search_model* model_;
  subproblem_search sub_;
  std::mt19937_64 rng_;
  std::vector<char> in_;
  std::vector<std::uint32_t> chosen_, candidates_;
  std::array<std::size_t, kinds> size_{6, 6, 6, 6};
  std::array<int, kinds> complete_streak_{0, 0, 0, 0};
  std::vector<std::uint32_t> guide_;
  statistics stats_;

  std::uint32_t random_var() { return static_cast<std::uint32_t>(rng_() % model_->var_count()); }

  void take(std::uint32_t v) {
    if (in_[v]) return;
    in_[v] = 1;
    chosen_.push_back(v);
  }

  /// Breadth-first from `seed`, each variable's neighbours in a random rotation.
  void ball(std::uint32_t seed, std::size_t size) {
    take(seed);
    grow(size);
  }

  /// Extends the chosen set breadth-first to `size` variables.
  void grow(std::size_t size) {
    const auto& m = *model_;
    for (std::size_t h = 0; h < chosen_.size() && chosen_.size() < size; ++h) {
      const auto arcs = m.arcs(chosen_[h]);
      if (arcs.empty()) continue;
      const std::size_t start = rng_() % arcs.size();
      for (std::size_t q = 0; q < arcs.size() && chosen_.size() < size; ++q) take(arcs[(start + q) % arcs.size()].other);
    }
    while (chosen_.size() < size && chosen_.size() < m.var_count()) take(random_var());  // disconnected parts
  }

  /// A variable that disagrees with the guide, with its ball and other disagreeing variables.
  bool disagreement(const assignment_state& state, std::size_t size) {
    const std::size_t n = model_->var_count();
    if (guide_.size() != n) return false;
    for (int tries = 0; tries < 32; ++tries) {
      const std::uint32_t v = random_var();
      if (state.label(v) == guide_[v]) continue;
      ball(v, size - size / 3);
      for (int k = 0; k < 64 && chosen_.size() < size; ++k) {
        const std::uint32_t w = random_var();
        if (state.label(w) != guide_[w]) take(w);
      }
      return true;
    }
    return false;
  }

  /// The most loaded of a few random rows.
  std::size_t pick_loaded_row(const assignment_state& state) {
    const auto& rows = model_->rows();
    if (rows.row_count() == 0) return 0;
    std::size_t row = rng_() % rows.row_count();
    usage_type load = state.load().at(row);
    for (int k = 0; k < 7; ++k) {
      const std::size_t r = rng_() % rows.row_count();
      const usage_type l = state.load().at(r);
      if (l > load) {
        load = l;
        row = r;
      }
    }
    return row;
  }

  /// The most loaded row that the chosen variables' usage depends on.
  std::size_t tightest_row_of_chosen(const assignment_state& state) {
    const auto& rows = model_->rows();
    usage_type most = std::numeric_limits<usage_type>::min();
    std::size_t row = 0;
    for (const auto v : chosen_) {
      for (const auto& r : rows.runs(v)) {
        const usage_type l = state.load().max(r.begin, r.end);
        if (l <= most) continue;
        most = l;
        // The loaded row inside the run: bisect on the range maximum.
        std::size_t b = r.begin, e = r.end;
        while (e - b > 1) {
          const std::size_t mid = (b + e) / 2;
          if (state.load().max(b, mid) == l) e = mid;
          else b = mid;
        }
        row = b;
      }
    }
    return row;
  }

  /// Adds up to `count` variables whose usage depends on their label at `row`.
  bool memory_seeds(const assignment_state& state, std::size_t count, std::size_t row) {
    const auto& m = *model_;
    const auto& rows = m.rows();
    (void)state;
    if (rows.row_count() == 0 || count == 0) return false;
    candidates_.clear();
    for (std::uint32_t v = 0; v < m.var_count(); ++v) {
      if (in_[v]) continue;
      const auto* run = rows.run_at(v, row);
      if (run == nullptr) continue;
      const usage_type u0 = rows.usage(*run, 0);
      for (std::size_t s = 1; s < m.labels(v); ++s) {
        if (rows.usage(*run, s) != u0) {
          candidates_.push_back(v);
          break;
        }
      }
    }
    if (candidates_.empty()) return false;
    std::shuffle(candidates_.begin(), candidates_.end(), rng_);
    for (std::size_t i = 0; i < candidates_.size() && i < count; ++i) take(candidates_[i]);
    return true;
  }
};

}  // namespace xlamem::sharding
