// SPDX-License-Identifier: Apache-2.0
// Meshes and shardings for the tests of sharding/tensor_sharding.hpp and collectives.hpp: a mesh
// from its text, a sharding from its axis lists, and every sharding of a small array on a mesh.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::test {

/// The mesh `text` describes (the test fails when it does not parse).
inline sharding::device_mesh mesh_of(const char* text) {
  auto m = sharding::parse_mesh(text);
  REQUIRE_MESSAGE(m, m.error().to_string());
  return *m;
}

/// A sharding from its per-dimension axes and partial-sum axes.
inline sharding::tensor_sharding spec(std::vector<std::vector<std::size_t>> dims,
                                      std::vector<std::size_t> partial = {}) {
  return sharding::tensor_sharding{std::move(dims), std::move(partial)};
}

/// Every sharding of a rank-`rank` array on `mesh`: each axis unused, on one dimension in every
/// order, or (with `partial`) a partial sum.
inline std::vector<sharding::tensor_sharding> all_specs(std::size_t rank, const sharding::device_mesh& mesh,
                                                        bool partial) {
  std::vector<sharding::tensor_sharding> out{sharding::tensor_sharding::replicated(rank)};
  for (std::size_t a = 0; a < mesh.axis_count(); ++a) {
    std::vector<sharding::tensor_sharding> next = out;
    for (const auto& s : out) {
      if (partial) {
        next.push_back(s);
        next.back().partial.push_back(a);  // ascending, as axes are added in order
      }
      for (std::size_t d = 0; d < rank; ++d) {
        for (std::size_t pos = 0; pos <= s.dims[d].size(); ++pos) {
          next.push_back(s);
          next.back().dims[d].insert(next.back().dims[d].begin() + static_cast<std::ptrdiff_t>(pos), a);
        }
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace xlamem::test
