// SPDX-License-Identifier: Apache-2.0
// A tiny auto-sharding choice under a memory budget, solved as a MIP with GLPK: six tensors of a
// two-layer training step, each either replicated (more memory, no communication) or sharded
// (less memory, an all-gather's cost). Memory terms are reduced with split_aware_policy and the
// rows come from memory_constraint_rows(), exactly as XLA's solver builds them. The program
// checks the solver's answer against the true peak memory and exits non-zero if it disagrees.
#include <glpk.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "xlamem/memory_terms/memory_terms.hpp"

int main() {
  using namespace xlamem;
  // Lifetimes (closed intervals over 8 time steps) and, per strategy, memory (MiB) and cost.
  const char* names[] = {"w1", "w2", "act1", "act2", "grad2", "grad1"};
  const std::vector<term_interval> lifetimes{{0, 6}, {0, 5}, {1, 6}, {2, 5}, {5, 7}, {6, 7}};
  const std::vector<std::vector<double>> memory{{64, 16}, {64, 16}, {48, 12}, {48, 12}, {64, 16}, {64, 16}};
  const std::vector<std::vector<double>> cost{{0, 5}, {0, 5}, {0, 3}, {0, 3}, {0, 4}, {0, 4}};
  const double budget = 200;  // MiB per device

  auto reduced = reduce_memory_terms(8, lifetimes, {}, split_aware_policy{});
  if (!reduced) {
    std::fprintf(stderr, "reduce: %s\n", reduced.error().to_string().c_str());
    return 1;
  }
  std::printf("memory terms: %lld -> %lld, %zu groups, constraints at %zu time steps\n",
              static_cast<long long>(reduced->terms_before), static_cast<long long>(reduced->terms_after),
              reduced->groups.size(), reduced->reduced_times.size());
  auto rows = memory_constraint_rows(*reduced, memory, budget);
  if (!rows) {
    std::fprintf(stderr, "rows: %s\n", rows.error().to_string().c_str());
    return 1;
  }

  glp_term_out(GLP_OFF);
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  // Columns: s[p][j] (binary), then one continuous g >= 0 per group.
  std::vector<std::vector<int>> s_col(lifetimes.size());
  for (std::size_t p = 0; p < lifetimes.size(); ++p) {
    for (std::size_t j = 0; j < memory[p].size(); ++j) {
      const int c = glp_add_cols(lp, 1);
      glp_set_col_kind(lp, c, GLP_BV);
      glp_set_obj_coef(lp, c, cost[p][j]);
      s_col[p].push_back(c);
    }
  }
  std::vector<int> g_col;
  for (std::size_t g = 0; g < reduced->groups.size(); ++g) {
    const int c = glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
    g_col.push_back(c);
  }
  auto add_row = [&](const std::vector<int>& idx, const std::vector<double>& val, int type, double ub) {
    const int r = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, r, type, ub, ub);
    std::vector<int> i{0};
    std::vector<double> v{0.0};
    i.insert(i.end(), idx.begin(), idx.end());
    v.insert(v.end(), val.begin(), val.end());
    glp_set_mat_row(lp, r, static_cast<int>(idx.size()), i.data(), v.data());
  };
  for (std::size_t p = 0; p < lifetimes.size(); ++p) {  // one strategy per tensor
    add_row(s_col[p], std::vector<double>(s_col[p].size(), 1.0), GLP_FX, 1.0);
  }
  for (const auto& row : *rows) {
    std::vector<int> idx;
    std::vector<double> val;
    for (const auto& [var, coef] : row.terms) {
      idx.push_back(var.what == memory_variable::kind::group
                        ? g_col[static_cast<std::size_t>(var.index)]
                        : s_col[static_cast<std::size_t>(var.index)][static_cast<std::size_t>(var.strategy)]);
      val.push_back(coef);
    }
    add_row(idx, val, GLP_UP, row.upper_bound);
  }
  glp_iocp params;
  glp_init_iocp(&params);
  params.presolve = GLP_ON;
  params.msg_lev = GLP_MSG_OFF;
  if (glp_intopt(lp, &params) != 0 || glp_mip_status(lp) != GLP_OPT) {
    std::fprintf(stderr, "GLPK found no optimal solution\n");
    glp_delete_prob(lp);
    return 1;
  }
  const double objective = glp_mip_obj_val(lp);
  std::printf("objective (communication cost): %g\n", objective);
  std::vector<std::size_t> choice(lifetimes.size());
  for (std::size_t p = 0; p < lifetimes.size(); ++p) {
    for (std::size_t j = 0; j < s_col[p].size(); ++j) {
      if (glp_mip_col_val(lp, s_col[p][j]) > 0.5) choice[p] = j;
    }
    std::printf("  %-5s %s\n", names[p], choice[p] == 0 ? "replicated" : "sharded");
  }
  glp_delete_prob(lp);

  double peak = 0;
  for (std::int64_t t = 0; t < 8; ++t) {
    double live = 0;
    for (std::size_t p = 0; p < lifetimes.size(); ++p) {
      if (lifetimes[p].contains(t)) live += memory[p][choice[p]];
    }
    peak = std::max(peak, live);
  }
  std::printf("peak memory: %g MiB of a %g MiB budget\n", peak, budget);

  // Brute force over all 2^6 choices: the MIP optimum must be the cheapest feasible choice.
  double best = 1e300;
  for (unsigned mask = 0; mask < (1u << lifetimes.size()); ++mask) {
    double c = 0, top = 0;
    for (std::size_t p = 0; p < lifetimes.size(); ++p) c += cost[p][(mask >> p) & 1u];
    for (std::int64_t t = 0; t < 8; ++t) {
      double live = 0;
      for (std::size_t p = 0; p < lifetimes.size(); ++p) {
        if (lifetimes[p].contains(t)) live += memory[p][(mask >> p) & 1u];
      }
      top = std::max(top, live);
    }
    if (top <= budget) best = std::min(best, c);
  }
  std::printf("brute force optimum: %g\n", best);
  return peak <= budget + 1e-6 && best == objective ? 0 : 1;
}
