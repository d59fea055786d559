// SPDX-License-Identifier: Apache-2.0
// Reads an HLO module (inline here, or the file named on the command line), lists the values
// the dataflow analysis finds, runs memory-space propagation and prints the module again.
#include <cstdio>
#include <string>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/dataflow.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace {

// A fusion whose caller keeps operand 0 in memory space 1 with a split on dimension 0.
constexpr const char* example_module = R"(HloModule example
%fused {
  %a = f32[6]{0} parameter(0)
  %b = f32[6]{0} parameter(1)
  %t = (f32[6]{0}, f32[6]{0}) tuple(%a, %b)
  %g = f32[6]{0} get-tuple-element(%t), index=0
  ROOT %s = f32[6]{0} add(%g, %b)
}
ENTRY %main {
  %x = f32[6]{0} parameter(0)
  %y = f32[6]{0} parameter(1)
  %moved = f32[6]{0:S(1)SC(0:3)} copy(%x)
  ROOT %f = f32[6]{0:S(1)} fusion(%moved, %y), kind=kLoop, calls=%fused
}
)";

}  // namespace

int main(int argc, char** argv) {
  auto m = argc > 1 ? xlamem::hlo::read_module_file(argv[1]) : xlamem::hlo::parse_module(example_module, "example.hlo");
  if (!m) {
    std::fprintf(stderr, "%s\n", m.error().to_string().c_str());
    return 3;
  }

  // Values: the tuple and get-tuple-element only forward %a's buffer.
  auto analysis = xlamem::dataflow_analysis<xlamem::hlo::module>::run(*m, {.bitcast_defines_value = true});
  if (!analysis) {
    std::fprintf(stderr, "%s\n", analysis.error().to_string().c_str());
    return 3;
  }
  std::printf("%zu instructions, %zu values\n", analysis->instruction_count(), analysis->values().size());
  for (const auto& v : analysis->values()) {
    const auto positions = analysis->positions(v.id);
    if (positions.size() < 2) continue;
    std::printf("value %u defined by %%%s is also seen at:", v.id, (*m)[v.defining.instruction].name.c_str());
    for (std::size_t k = 1; k < positions.size(); ++k) {
      std::string index;
      xlamem::hlo::append_shape_index(index, positions[k].index);
      std::printf(" %%%s%s", (*m)[positions[k].instruction].name.c_str(), index.c_str());
    }
    std::printf("\n");
  }

  auto changed = xlamem::propagate_memory_spaces(*m);
  if (!changed) {
    std::fprintf(stderr, "%s\n", changed.error().to_string().c_str());
    return 3;
  }
  std::printf("propagation %s the module:\n\n%s", *changed ? "changed" : "did not change",
              xlamem::hlo::to_string(*m, xlamem::hlo::short_form()).c_str());
  return 0;
}
