// SPDX-License-Identifier: Apache-2.0
// HLO text generators for scale tests and benchmarks (shared by test/ and bench/hlo/).
#pragma once

#include <cstddef>
#include <string>

namespace xlamem::test {

/// A call chain of `depth` computations: the entry calls c1 with its parameter, c_k negates its
/// parameter and passes the parameter itself on to c_{k+1}, the last one returns a copy of its
/// negate. The entry parameter's value flows down through every parameter and the copy back up
/// through every call output; printed callee-first, as XLA prints modules, a round-robin fixed
/// point needs one sweep per level for the downward flow (quadratic), a worklist does not.
inline std::string call_chain_module(std::size_t depth) {
  std::string out = "HloModule call_chain, is_scheduled=true\n\n";
  out.reserve(depth * 150 + 200);
  for (std::size_t k = depth; k >= 1; --k) {
    const std::string c = "c" + std::to_string(k);
    out += c + " {\n  p = f32[8]{0} parameter(0)\n  n = f32[8]{0} negate(p)\n";
    if (k == depth) {
      out += "  ROOT r = f32[8]{0} copy(n)\n}\n\n";
    } else {
      out += "  ROOT r = f32[8]{0} call(p), to_apply=c" + std::to_string(k + 1) + "\n}\n\n";
    }
  }
  out += "ENTRY main {\n  p0 = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} call(p0), to_apply=c1\n}\n";
  return out;
}

}  // namespace xlamem::test
