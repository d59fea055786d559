// SPDX-License-Identifier: Apache-2.0
// Helpers of the memory report's tests (test/report/, test/io/): a small timeline with a
// parameter, an output, a heap and a constant; a two-layer MLP module of any batch.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/common.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/report/dump_report.hpp"
#include "xlamem/io/report/views.hpp"
#include "xlamem/report/diff.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/op_source.hpp"
#include "xlamem/report/plan_timeline.hpp"

namespace xlamem::test::report_helpers {
namespace fs = std::filesystem;
using namespace xlamem::report;

inline memory_timeline small_timeline() {
  // A parameter over the whole program, an output from 2, and a heap of 256 bytes holding
  // three temporaries: at time 2, bytes [0,64) and [128,192) are in use.
  memory_timeline t;
  t.schedule = {"p", "a", "b", "c", "root"};
  t.allocations = {{0, 100, buffer_kind::parameter, 0, false},
                   {1, 50, buffer_kind::output, 0, false},
                   {2, 256, buffer_kind::temp, 0, true},
                   {3, 8, buffer_kind::constant, 0, false}};
  t.buffers = {{"p", "f32[25]", 100, buffer_kind::parameter, 0, 4, 0, 0, 0, {}},
               {"root", "f32[12]", 48, buffer_kind::output, 2, 4, 1, 0, 0, {}},
               {"a", "f32[16]", 64, buffer_kind::temp, 1, 2, 2, 0, 0, {"jit(f)/dot", "/src/model.py", 12}},
               {"b", "f32[16]", 64, buffer_kind::temp, 2, 3, 2, 128, 0, {}},
               {"c", "f32[64]", 256, buffer_kind::temp, 4, 4, 2, 0, 0, {}},
               {"k", "f32[2]", 8, buffer_kind::constant, 0, 4, 3, 0, 0, {}}};
  return t;
}

// A two-layer MLP with metadata as JAX writes it; `batch` rows.
inline std::string mlp(int batch) {
  const std::string b = std::to_string(batch);
  const std::string md = " source_file=\"/home/u/model.py\" source_line=";
  return "HloModule jit_mlp, is_scheduled=true\n\nENTRY %main (x: f32[" + b + ",64], w: f32[64,128]) -> f32[" + b + ",128] {\n" +
         "  %x = f32[" + b + ",64]{1,0} parameter(0)\n  %w = f32[64,128]{1,0} parameter(1)\n" +
         "  %dot = f32[" + b + ",128]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name=\"jit(mlp)/jit(main)/dot_general\"" + md + "12}\n" +
         "  %t = f32[" + b + ",128]{1,0} tanh(%dot), metadata={op_name=\"jit(mlp)/jit(main)/tanh\"" + md + "13}\n" +
         "  ROOT %n = f32[" + b + ",128]{1,0} negate(%t), metadata={op_name=\"jit(mlp)/jit(main)/neg\"" + md + "14}\n}\n";
}

}  // namespace xlamem::test::report_helpers
