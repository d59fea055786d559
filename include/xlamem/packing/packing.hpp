// SPDX-License-Identifier: Apache-2.0
/// @file
/// Umbrella header for static buffer packing: problems and validation, the interval graph,
/// greedy heuristics (XLA best fit, first fit, skyline, portfolio) and the exact / anytime
/// search, the window lower bound (`strong_lower_bound`), and the named solvers with `solve`
/// (`packing/solvers.hpp`). The CSV and SVG front ends live in `xlamem/io/`.
#pragma once

#include "xlamem/packing/aligned_lower_bound.hpp"
#include "xlamem/deadline.hpp"
#include "xlamem/packing/heuristics.hpp"
#include "xlamem/packing/interval_graph.hpp"
#include "xlamem/packing/interval_index.hpp"
#include "xlamem/packing/problem.hpp"
#include "xlamem/packing/search.hpp"
#include "xlamem/packing/solvers.hpp"
#include "xlamem/packing/strong_lower_bound.hpp"
#include "xlamem/packing/xla_best_fit.hpp"
