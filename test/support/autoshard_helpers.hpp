// SPDX-License-Identifier: Apache-2.0
// Helpers of the auto-sharding tests (test/autoshard/): a two-layer perceptron as JAX lowers it,
// and reading modules, meshes and programs that must read.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "xlamem/autoshard/hlo_program.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/sharding/mesh.hpp"

namespace xlamem::test::autoshard_helpers {

/// A two-layer perceptron's training-free forward pass in HLO as JAX lowers it.
inline constexpr const char* perceptron_text = R"(HloModule jit_mlp, entry_computation_layout={(f32[64,128]{1,0}, f32[128,256]{1,0}, f32[256,32]{1,0})->f32[32]{0}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[64,128]{1,0} parameter(0)
  w1 = f32[128,256]{1,0} parameter(1)
  w2 = f32[256,32]{1,0} parameter(2)
  h = f32[64,256]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[64,256]{1,0} broadcast(zero), dimensions={}
  r = f32[64,256]{1,0} maximum(h, zeros)
  y = f32[64,32]{1,0} dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[32,64]{1,0} transpose(y), dimensions={1,0}
  f = f32[32,8,8]{2,1,0} reshape(t)
  ROOT sum = f32[32]{0} reduce(f, zero), dimensions={1,2}, to_apply=add
}
)";

inline hlo::module parse(const char* text) {
  auto m = hlo::parse_module(text);
  REQUIRE_MESSAGE(m, m.error().to_string());
  return std::move(*m);
}

inline sharding::device_mesh mesh_of(const char* text) {
  auto m = sharding::parse_mesh(text);
  REQUIRE(m);
  return *m;
}

inline autoshard::hlo_program program_of(const hlo::module& m, const sharding::device_mesh& mesh) {
  auto p = autoshard::read_hlo_program(m, mesh);
  REQUIRE_MESSAGE(p, p.error().to_string());
  return std::move(*p);
}

inline const sharding::program_op& op_named(const autoshard::hlo_program& p, const std::string& name) {
  for (const auto& op : p.program.ops) {
    if (op.name == name) return op;
  }
  FAIL("no operation " << name);
  return p.program.ops.front();
}

}  // namespace xlamem::test::autoshard_helpers
