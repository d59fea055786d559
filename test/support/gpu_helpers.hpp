// SPDX-License-Identifier: Apache-2.0
// Helpers of the tests that came from test/xla_gpu_test.cpp: shared by the test files
// that use them, in one namespace (inline, so a test file that uses none of them compiles
// without warnings).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/liveness.hpp"

namespace xlamem::test::gpu_helpers {
using namespace xlamem;

// The scalar reductions the modules below apply.
constexpr const char* kS32Add = "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n";
constexpr const char* kF32Sum = "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";

inline hlo::module parse_ok(std::string_view text, hlo::xla_backend backend = hlo::xla_backend::gpu) {
  auto m = hlo::parse_module(text, "<gpu test>");
  if (!m) FAIL(m.error().to_string());
  m->backend = backend;
  return std::move(*m);
}

inline hlo::instruction_id find(const hlo::module& m, std::string_view comp, std::string_view name) {
  auto i = m.find_instruction(comp, name);
  REQUIRE_MESSAGE(i.has_value(), "no instruction " << name << " in " << comp);
  return *i;
}

/// May `user` (in the entry `e`) write output `user_index` over its operand number `k`?
inline bool may_share(const hlo::module& m, std::string_view user, std::size_t k, const shape_index& user_index) {
  const auto u = find(m, "e", user);
  return graph_traits<hlo::module>::can_share_operand_buffer(m, m[u].operands.at(k), {}, u, user_index);
}

inline bool has_pair(const std::vector<in_place_pair>& pairs, std::size_t operand, const shape_index& operand_index,
              const shape_index& output_index) {
  return std::any_of(pairs.begin(), pairs.end(), [&](const in_place_pair& p) {
    return p.operand == operand && p.operand_index == operand_index && p.output_index == output_index;
  });
}

}  // namespace xlamem::test::gpu_helpers
