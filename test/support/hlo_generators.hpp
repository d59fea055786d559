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

/// Nested while loops `depth` deep: body k runs a while over body k+1 and adds its result to
/// the element it carries; every level's carry is a (counter, f32[8]) tuple whose parameter is
/// a join (a phi in SSA form). The entry's argument reaches the deepest body through every
/// level's parameter, and each level's result flows back up: a fixed point that adds phis one
/// level per round is quadratic in the depth.
inline std::string nested_while_module(std::size_t depth) {
  std::string out = "HloModule nested_whiles\n\n";
  out.reserve(depth * 700 + 400);
  const std::string carry = "(s32[], f32[8]{0})";
  for (std::size_t k = depth; k >= 1; --k) {
    const std::string s = std::to_string(k);
    out += "cond" + s + " {\n  p = " + carry + " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
           "  n = s32[] constant(2)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n";
    out += "body" + s + " {\n  p = " + carry + " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
           "  x = f32[8]{0} get-tuple-element(p), index=1\n  one = s32[] constant(1)\n"
           "  i1 = s32[] add(i, one)\n";
    if (k == depth) {
      out += "  y = f32[8]{0} negate(x)\n";
    } else {
      const std::string t = std::to_string(k + 1);
      out += "  zero = s32[] constant(0)\n  in = " + carry + " tuple(zero, x)\n  w = " + carry +
             " while(in), condition=cond" + t + ", body=body" + t +
             "\n  wx = f32[8]{0} get-tuple-element(w), index=1\n  y = f32[8]{0} add(wx, x)\n";
    }
    out += "  ROOT r = " + carry + " tuple(i1, y)\n}\n\n";
  }
  out += "ENTRY main {\n  a = f32[8]{0} parameter(0)\n  zero = s32[] constant(0)\n  in = " + carry +
         " tuple(zero, a)\n  w = " + carry + " while(in), condition=cond1, body=body1\n"
         "  ROOT r = f32[8]{0} get-tuple-element(w), index=1\n}\n";
  return out;
}

/// One instruction with `operands` operands (a concatenate of one parameter repeated) and a
/// parameter with as many users (negates), summed by a second wide concatenate.
inline std::string fan_in_fan_out_module(std::size_t operands) {
  std::string out = "HloModule fan\n\nENTRY main {\n  p = f32[1]{0} parameter(0)\n";
  out.reserve(operands * 40 + 200);
  const std::string n = std::to_string(operands);
  for (std::size_t k = 0; k < operands; ++k) out += "  n" + std::to_string(k) + " = f32[1]{0} negate(p)\n";
  out += "  c1 = f32[" + n + "]{0} concatenate(";
  for (std::size_t k = 0; k < operands; ++k) out += (k ? ", p" : "p");
  out += "), dimensions={0}\n  c2 = f32[" + n + "]{0} concatenate(";
  for (std::size_t k = 0; k < operands; ++k) out += (k ? ", n" : "n") + std::to_string(k);
  out += "), dimensions={0}\n  ROOT r = f32[" + n + "]{0} add(c1, c2)\n}\n";
  return out;
}

/// A straight line of `length` instructions: a chain of negates of f32[16], each named and
/// carrying op_name metadata, as XLA prints a long unrolled program.
inline std::string straight_line_module(std::size_t length) {
  std::string out = "HloModule straight\n\nENTRY main {\n  v0 = f32[16]{0} parameter(0)\n";
  out.reserve(length * 90 + 100);
  for (std::size_t k = 1; k <= length; ++k) {
    const std::string s = std::to_string(k);
    out += (k == length ? "  ROOT v" : "  v") + s + " = f32[16]{0} negate(v" + std::to_string(k - 1) +
           "), metadata={op_name=\"jit(f)/neg\"}\n";
  }
  out += "}\n";
  return out;
}

/// One computation of `big` instructions (a straight line), then `small` computations of two
/// instructions each, all called from the entry in turn: a reader that pays the big
/// computation's name table again for every small one is quadratic here.
inline std::string big_then_small_module(std::size_t big, std::size_t small) {
  std::string out = "HloModule big_then_small\n\nbig {\n  v0 = f32[16]{0} parameter(0)\n";
  out.reserve(big * 40 + small * 120 + 200);
  for (std::size_t k = 1; k <= big; ++k) {
    out += (k == big ? "  ROOT v" : "  v") + std::to_string(k) + " = f32[16]{0} negate(v" + std::to_string(k - 1) + ")\n";
  }
  out += "}\n\n";
  for (std::size_t k = 0; k < small; ++k) {
    out += "s" + std::to_string(k) + " {\n  p = f32[16]{0} parameter(0)\n  ROOT n = f32[16]{0} negate(p)\n}\n\n";
  }
  out += "ENTRY main {\n  a0 = f32[16]{0} parameter(0)\n  c0 = f32[16]{0} call(a0), to_apply=big\n";
  for (std::size_t k = 0; k < small; ++k) {
    out += (k + 1 == small ? "  ROOT c" : "  c") + std::to_string(k + 1) + " = f32[16]{0} call(c" + std::to_string(k) +
           "), to_apply=s" + std::to_string(k) + "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace xlamem::test
