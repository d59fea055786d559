// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory-term reduction for ILP memory constraints (after XLA auto-sharding's
/// `MemoryTermReducer`): the reducers and policies (`reduction.hpp`), the exactness check
/// (`verify.hpp`) and the constraint rows (`constraints.hpp`). See docs/memory-terms.md.
#pragma once

#include "xlamem/memory_terms/constraints.hpp"
#include "xlamem/memory_terms/reduction.hpp"
#include "xlamem/memory_terms/verify.hpp"
