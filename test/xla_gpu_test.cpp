// SPDX-License-Identifier: Apache-2.0
// XLA's in-place pairs (AliasInfo::GetInPlaceInputOutputPairs), XLA:GPU's buffer-sharing rules
// (hlo/gpu_aliasing.hpp, a module with backend == xla_backend::gpu) and async computations (the
// async-start `calls=` binding XLA:GPU's modules are full of), each on a hand-written module;
// the cases follow the situations XLA's own tests name, and the expected answers are XLA's.
// Then what the rules change in a plan. test/xla_aot.py checks the whole on XLA:GPU's own
// buffer assignments.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/liveness.hpp"

namespace {

using namespace xlamem;

// The scalar reductions the modules below apply.
constexpr const char* kS32Add = "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n";
constexpr const char* kF32Sum = "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";

hlo::module parse_ok(std::string_view text, hlo::xla_backend backend = hlo::xla_backend::gpu) {
  auto m = hlo::parse_module(text, "<gpu test>");
  if (!m) FAIL(m.error().to_string());
  m->backend = backend;
  return std::move(*m);
}

hlo::instruction_id find(const hlo::module& m, std::string_view comp, std::string_view name) {
  auto i = m.find_instruction(comp, name);
  REQUIRE_MESSAGE(i.has_value(), "no instruction " << name << " in " << comp);
  return *i;
}

/// May `user` (in the entry `e`) write output `user_index` over its operand number `k`?
bool may_share(const hlo::module& m, std::string_view user, std::size_t k, const shape_index& user_index) {
  const auto u = find(m, "e", user);
  return graph_traits<hlo::module>::can_share_operand_buffer(m, m[u].operands.at(k), {}, u, user_index);
}

bool has_pair(const std::vector<in_place_pair>& pairs, std::size_t operand, const shape_index& operand_index,
              const shape_index& output_index) {
  return std::any_of(pairs.begin(), pairs.end(), [&](const in_place_pair& p) {
    return p.operand == operand && p.operand_index == operand_index && p.output_index == output_index;
  });
}

}  // namespace

TEST_SUITE("XLA:GPU buffer rules") {
  TEST_CASE("GPU fusions share an operand's buffer over elementwise paths, also across bitcasts and converts of one width") {
    const char* text = R"(HloModule f
same {
  a = f32[2,3]{1,0} parameter(0)
  n = f32[2,3]{1,0} negate(a)
  ROOT m = f32[2,3]{1,0} multiply(a, n)
}
flat {
  a = f32[2,3]{1,0} parameter(0)
  n = f32[2,3]{1,0} negate(a)
  ROOT b = f32[6]{0} bitcast(n)
}
to_int {
  a = f32[2,3]{1,0} parameter(0)
  ROOT c = s32[2,3]{1,0} convert(a)
}
to_half {
  a = f32[2,3]{1,0} parameter(0)
  ROOT c = f16[2,3]{1,0} convert(a)
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  f1 = f32[2,3]{1,0} fusion(p), kind=kLoop, calls=same
  f2 = f32[6]{0} fusion(p), kind=kLoop, calls=flat
  f3 = s32[2,3]{1,0} fusion(p), kind=kLoop, calls=to_int
  f4 = f16[2,3]{1,0} fusion(p), kind=kLoop, calls=to_half
  ROOT t = (f32[2,3]{1,0}, f32[6]{0}, s32[2,3]{1,0}, f16[2,3]{1,0}) tuple(f1, f2, f3, f4)
})";
    const auto gpu = parse_ok(text);
    CHECK(may_share(gpu, "f1", 0, {}));
    CHECK(may_share(gpu, "f2", 0, {}));  // same elements, same width: a bitcast of the iteration space
    CHECK(may_share(gpu, "f3", 0, {}));  // f32 -> s32: 32 bits each
    CHECK_FALSE(may_share(gpu, "f4", 0, {}));  // f32 -> f16: different widths
    // XLA:CPU's generic rule needs equal shapes.
    const auto cpu = parse_ok(text, hlo::xla_backend::cpu);
    CHECK(may_share(cpu, "f1", 0, {}));
    CHECK_FALSE(may_share(cpu, "f2", 0, {}));
    CHECK_FALSE(may_share(cpu, "f3", 0, {}));
  }

  TEST_CASE("GPU fusions: a copy, a transpose or a reduce-and-broadcast on the path forbids the sharing") {
    const auto m = parse_ok(std::string("HloModule f\n") + kS32Add + R"(copying {
  a = s32[2,3]{0,1} parameter(0)
  c = s32[2,3]{1,0} copy(a)
  ROOT n = s32[2,3]{1,0} negate(c)
}
transposing {
  a = s32[2,3]{1,0} parameter(0)
  t = s32[3,2]{1,0} transpose(a), dimensions={1,0}
  ROOT n = s32[3,2]{1,0} negate(t)
}
reducing {
  a = s32[3]{0} parameter(0)
  b = s32[3,2]{1,0} broadcast(a), dimensions={0}
  z = s32[] constant(0)
  ROOT r = s32[3]{0} reduce(b, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = s32[2,3]{0,1} parameter(0)
  q = s32[2,3]{1,0} parameter(1)
  v = s32[3]{0} parameter(2)
  f1 = s32[2,3]{1,0} fusion(p), kind=kLoop, calls=copying
  f2 = s32[3,2]{1,0} fusion(q), kind=kLoop, calls=transposing
  f3 = s32[3]{0} fusion(v), kind=kInput, calls=reducing
  ROOT t = (s32[2,3]{1,0}, s32[3,2]{1,0}, s32[3]{0}) tuple(f1, f2, f3)
})");
    CHECK_FALSE(may_share(m, "f1", 0, {}));
    CHECK_FALSE(may_share(m, "f2", 0, {}));
    CHECK_FALSE(may_share(m, "f3", 0, {}));
  }

  TEST_CASE("GPU multi-output fusions: only the output a path reaches, and never past a transposed output") {
    const auto m = parse_ok(R"(HloModule f
three {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  n = f32[2,3]{1,0} negate(b)
  m = f32[2,3]{1,0} multiply(a, n)
  t = f32[3,2]{1,0} transpose(n), dimensions={1,0}
  ROOT r = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) tuple(m, n, t)
}
two {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  n = f32[2,3]{1,0} negate(b)
  m = f32[2,3]{1,0} multiply(a, n)
  ROOT r = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(m, n)
}
transposed_sibling {
  a = f32[4,2]{1,0} parameter(0)
  b = f32[2,4]{1,0} parameter(1)
  z = f32[] constant(0)
  zb = f32[2,4]{1,0} broadcast(z), dimensions={}
  mx = f32[2,4]{1,0} maximum(zb, b)
  t = f32[2,4]{1,0} transpose(a), dimensions={1,0}
  s = f32[2,4]{1,0} add(t, mx)
  ROOT r = (f32[2,4]{1,0}, f32[2,4]{1,0}) tuple(s, mx)
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  q = f32[2,3]{1,0} parameter(1)
  x = f32[4,2]{1,0} parameter(2)
  y = f32[2,4]{1,0} parameter(3)
  f3 = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) fusion(p, q), kind=kLoop, calls=three
  f2 = (f32[2,3]{1,0}, f32[2,3]{1,0}) fusion(p, q), kind=kLoop, calls=two
  ft = (f32[2,4]{1,0}, f32[2,4]{1,0}) fusion(x, y), kind=kLoop, calls=transposed_sibling
  ROOT t = ((f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}), (f32[2,3]{1,0}, f32[2,3]{1,0}), (f32[2,4]{1,0}, f32[2,4]{1,0})) tuple(f3, f2, ft)
})");
    CHECK(may_share(m, "f3", 0, {0}));
    CHECK_FALSE(may_share(m, "f3", 1, {1}));  // n also feeds the transpose
    CHECK_FALSE(may_share(m, "f3", 0, {1}));  // no path from a to n
    CHECK(may_share(m, "f2", 0, {0}));
    CHECK_FALSE(may_share(m, "f2", 0, {1}));
    CHECK(may_share(m, "f2", 1, {0}));  // b reaches both outputs, both elementwise
    CHECK(may_share(m, "f2", 1, {1}));
    CHECK_FALSE(may_share(m, "ft", 1, {0}));  // s, reached from b, is written in the transpose's order
    CHECK_FALSE(may_share(m, "ft", 1, {1}));
    CHECK_FALSE(may_share(m, "ft", 0, {0}));
  }

  TEST_CASE("GPU reduction fusions: the reduce is computed first, so an input may become another output") {
    const auto m = parse_ok(R"(HloModule f
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] maximum(x, y)
}
fused {
  a = f32[3,40]{1,0} parameter(0)
  b = f32[3,40]{1,0} parameter(1)
  s = f32[3,40]{1,0} add(a, b)
  flat = f32[120]{0} bitcast(s)
  init = f32[] constant(-inf)
  mx = f32[] reduce(flat, init), dimensions={0}, to_apply=max
  ROOT r = (f32[], f32[3,40]{1,0}) tuple(mx, s)
}
ENTRY e {
  p = f32[3,40]{1,0} parameter(0)
  q = f32[3,40]{1,0} parameter(1)
  ROOT f = (f32[], f32[3,40]{1,0}) fusion(p, q), kind=kLoop, calls=fused
})");
    CHECK(may_share(m, "f", 0, {1}));
    CHECK(may_share(m, "f", 1, {1}));
  }

  TEST_CASE("GPU scatter and sort fusions share through their own inputs only, each operand used once") {
    const auto m = parse_ok(std::string("HloModule f\n") + kS32Add + R"(less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  g = s32[] parameter(4)
  h = s32[] parameter(5)
  ROOT lt = pred[] compare(a, b), direction=LT
}
scattering {
  p0 = s32[3,3]{1,0} parameter(0)
  p1 = s32[3]{0} parameter(1)
  idx = s32[3]{0} add(p1, p1)
  p2 = s32[3,3]{1,0} parameter(2)
  upd = s32[3,3]{1,0} add(p2, p2)
  ROOT sc = s32[3,3]{1,0} scatter(p0, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
self_scatter {
  p0 = s32[3,3]{1,0} parameter(0)
  p1 = s32[3]{0} parameter(1)
  idx = s32[3]{0} add(p1, p1)
  ROOT sc = s32[3,3]{1,0} scatter(p0, idx, p0), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
sorting {
  k = s32[64]{0} parameter(0)
  i = s32[64]{0} iota(), iota_dimension=0
  ROOT s = (s32[64]{0}, s32[64]{0}, s32[64]{0}) sort(k, i, i), dimensions={0}, is_stable=true, to_apply=less
}
sorting_twice {
  k = s32[64]{0} parameter(0)
  i = s32[64]{0} iota(), iota_dimension=0
  ROOT s = (s32[64]{0}, s32[64]{0}, s32[64]{0}) sort(k, i, k), dimensions={0}, is_stable=true, to_apply=less
}
ENTRY e {
  a = s32[3,3]{1,0} parameter(0)
  b = s32[3]{0} parameter(1)
  c = s32[3,3]{1,0} parameter(2)
  k = s32[64]{0} parameter(3)
  sf = s32[3,3]{1,0} fusion(a, b, c), kind=kInput, calls=scattering
  ss = s32[3,3]{1,0} fusion(a, b), kind=kInput, calls=self_scatter
  so = (s32[64]{0}, s32[64]{0}, s32[64]{0}) fusion(k), kind=kInput, calls=sorting
  s2 = (s32[64]{0}, s32[64]{0}, s32[64]{0}) fusion(k), kind=kInput, calls=sorting_twice
  ROOT t = (s32[3,3]{1,0}, s32[3,3]{1,0}, (s32[64]{0}, s32[64]{0}, s32[64]{0}), (s32[64]{0}, s32[64]{0}, s32[64]{0})) tuple(sf, ss, so, s2)
})");
    CHECK(may_share(m, "sf", 0, {}));
    CHECK_FALSE(may_share(m, "sf", 1, {}));
    CHECK_FALSE(may_share(m, "sf", 2, {}));
    CHECK_FALSE(may_share(m, "ss", 0, {}));  // the input is also the update
    CHECK(may_share(m, "so", 0, {0}));
    CHECK_FALSE(may_share(m, "so", 0, {1}));
    CHECK_FALSE(may_share(m, "so", 0, {2}));
    CHECK_FALSE(may_share(m, "s2", 0, {0}));
  }

  TEST_CASE("GPU dynamic-update-slice fusions: reading the very slice being written is safe, another slice is not") {
    // Each fusion reads a slice of its parameter and writes it back, updated, at (i, 0).
    auto read_write = [](const char* name, const char* slice_at) {
      return std::string(name) + R"( {
  a = s32[6]{0} parameter(0)
  b = s32[2,3]{1,0} bitcast(a)
  z = s32[] constant(0)
  i = s32[] parameter(1)
  ds = s32[1,2]{1,0} dynamic-slice(b, )" + slice_at + R"(), dynamic_slice_sizes={1,2}
  one = s32[] constant(1)
  ones = s32[1,2]{1,0} broadcast(one), dimensions={}
  s = s32[1,2]{1,0} add(ds, ones)
  dus = s32[2,3]{1,0} dynamic-update-slice(b, s, i, z)
  ROOT r = s32[6]{0} bitcast(dus)
}
)";
    };
    const std::string module_text = "HloModule f\n" + read_write("same_slice", "i, z") + read_write("other_slice", "z, i") + R"(ENTRY e {
  p = s32[6]{0} parameter(0)
  i = s32[] parameter(1)
  f1 = s32[6]{0} fusion(p, i), kind=kInput, calls=same_slice
  f2 = s32[6]{0} fusion(p, i), kind=kInput, calls=other_slice
  ROOT t = (s32[6]{0}, s32[6]{0}) tuple(f1, f2)
})";
    const auto m = parse_ok(module_text);
    CHECK(may_share(m, "f1", 0, {}));
    CHECK_FALSE(may_share(m, "f2", 0, {}));
    // Both fusions update operand 0 in place: the trace passes the bitcasts on both sides.
    for (const char* f : {"f1", "f2"}) {
      CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", f)), 0, {}, {}));
      const auto cpu = parse_ok(module_text, hlo::xla_backend::cpu);
      CHECK(has_pair(hlo::detail::in_place_pairs(cpu, find(cpu, "e", f)), 0, {}, {}));
    }
  }

  TEST_CASE("GPU: a reshape is a no-op when in-place pairs are traced through a fusion; on CPU only a bitcast is") {
    const char* text = R"(HloModule f
fused {
  a = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  d = f32[8]{0} dynamic-update-slice(a, u, i)
  ROOT r = f32[2,4]{1,0} reshape(d)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  q = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[2,4]{1,0} fusion(p, q, i), kind=kLoop, calls=fused
})";
    const auto gpu = parse_ok(text);
    const auto cpu = parse_ok(text, hlo::xla_backend::cpu);
    CHECK(has_pair(hlo::detail::in_place_pairs(gpu, find(gpu, "e", "f")), 0, {}, {}));
    CHECK(hlo::detail::in_place_pairs(cpu, find(cpu, "e", "f")).empty());
    CHECK(hlo::semantics_of(gpu, find(gpu, "e", "f")).in_place.size() == 1);
  }

  TEST_CASE("GPU: all-reduce and collective-broadcast work in place (not with NVSHMEM); on CPU they do not") {
    const std::string text = std::string("HloModule c\n") + kF32Sum + R"(ENTRY e {
  p = f32[16]{0} parameter(0)
  q = f32[8]{0} parameter(1)
  a = f32[16]{0} negate(p)
  b = f32[8]{0} negate(q)
  one = f32[16]{0} all-reduce(a), replica_groups={}, to_apply=sum
  two = (f32[16]{0}, f32[8]{0}) all-reduce(a, b), replica_groups={}, to_apply=sum
  nv = f32[16]{0} all-reduce(a), replica_groups={}, to_apply=sum, backend_config={"collective_backend_config":{"backend":"NVSHMEM"}}
  cb = f32[16]{0} collective-broadcast(a), replica_groups={{0,1}}
  ROOT t = (f32[16]{0}, (f32[16]{0}, f32[8]{0}), f32[16]{0}, f32[16]{0}) tuple(one, two, nv, cb)
})";
    const auto gpu = parse_ok(text);
    CHECK(may_share(gpu, "one", 0, {}));
    CHECK(may_share(gpu, "two", 0, {0}));
    CHECK(may_share(gpu, "two", 1, {1}));
    CHECK_FALSE(may_share(gpu, "two", 0, {1}));
    CHECK_FALSE(may_share(gpu, "nv", 0, {}));
    CHECK(may_share(gpu, "cb", 0, {}));
    const auto cpu = parse_ok(text, hlo::xla_backend::cpu);
    CHECK_FALSE(may_share(cpu, "one", 0, {}));
    CHECK_FALSE(may_share(cpu, "cb", 0, {}));
  }

  TEST_CASE("GPU: cublasLt may write its result over the bias C (operand 2) when beta != 0; never the workspace") {
    const auto m = parse_ok(R"(HloModule g
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  b = f32[4,4]{1,0} parameter(1)
  c = f32[4,4]{1,0} parameter(2)
  cc = f32[4,4]{1,0} negate(c)
  lt = (f32[4,4]{1,0}, s8[4194304]{0}) custom-call(a, b, cc), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":1,"alpha_imag":0}}
  lt0 = (f32[4,4]{1,0}, s8[4194304]{0}) custom-call(a, b, cc), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"alpha_imag":0}}
  twice = (f32[4,4]{1,0}, s8[4194304]{0}) custom-call(a, cc, cc), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":1}}
  other = f32[4,4]{1,0} custom-call(cc), custom_call_target="my_kernel"
  ROOT t = ((f32[4,4]{1,0}, s8[4194304]{0}), (f32[4,4]{1,0}, s8[4194304]{0}), (f32[4,4]{1,0}, s8[4194304]{0}), f32[4,4]{1,0}) tuple(lt, lt0, twice, other)
})");
    CHECK(may_share(m, "lt", 2, {0}));
    CHECK_FALSE(may_share(m, "lt", 2, {1}));  // the workspace
    CHECK_FALSE(may_share(m, "lt", 0, {0}));  // A is read while D is written
    CHECK_FALSE(may_share(m, "lt0", 2, {0}));  // beta 0: C is not read at all
    CHECK_FALSE(may_share(m, "twice", 2, {0}));  // C is also B
    CHECK_FALSE(may_share(m, "other", 0, {}));
  }

  TEST_CASE("GPU: only arrays share; an element of a tuple operand or a tuple table never does (fuzz finding)") {
    // The fusion rule compared the whole operand's shape with the output's: a fusion whose
    // output repeats its tuple operand's shape would let its table take over an element.
    const auto m = parse_ok(R"(HloModule t
passthrough {
  ROOT a = (f32[4]{0}, f32[4]{0}) parameter(0)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  t = (f32[4]{0}, f32[4]{0}) tuple(p, p)
  ROOT f = (f32[4]{0}, f32[4]{0}) fusion(t), kind=kLoop, calls=passthrough
})");
    const auto f = find(m, "e", "f"), t = find(m, "e", "t");
    CHECK_FALSE(graph_traits<hlo::module>::can_share_operand_buffer(m, t, {0}, f, {}));
    CHECK_FALSE(graph_traits<hlo::module>::can_share_operand_buffer(m, t, {}, f, {}));
  }

  TEST_CASE("GPU: a constant operand never shares its buffer") {
    const auto m = parse_ok(std::string("HloModule k\n") + kF32Sum + R"(ENTRY e {
  c = f32[4]{0} constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} all-reduce(c), replica_groups={}, to_apply=sum
})");
    CHECK_FALSE(may_share(m, "n", 0, {}));
  }
}

TEST_SUITE("XLA in-place pairs") {
  TEST_CASE("in-place pairs: collective-permute's in-place form, set-dimension-size and ragged-all-to-all") {
    const auto m = parse_ok(R"(HloModule ip
ENTRY e {
  in = f32[8]{0} parameter(0)
  out = f32[8]{0} parameter(1)
  s0 = s32[1]{0} parameter(2)
  s1 = s32[1]{0} parameter(3)
  cp = f32[8]{0} collective-permute(in, out, s0, s1), source_target_pairs={{0,1}}, slice_sizes={{4}}
  n = s32[] parameter(4)
  sd = f32[<=8]{0} set-dimension-size(in, n), dimensions={0}
  o = s32[4]{0} parameter(5)
  ra = f32[8]{0} ragged-all-to-all(in, out, o, o, o, o), replica_groups={{0,1}}
  ROOT t = (f32[8]{0}, f32[<=8]{0}, f32[8]{0}) tuple(cp, sd, ra)
})",
                            hlo::xla_backend::cpu);
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "cp")), 1, {}, {}));
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "sd")), 0, {}, {}));
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "ra")), 1, {}, {}));
  }

  TEST_CASE("in-place pairs are traced through a fusion's tuples, get-tuple-elements and nested fusions") {
    const auto m = parse_ok(R"(HloModule nest
inner {
  x = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8]{0} dynamic-update-slice(x, u, i)
}
outer {
  a = (f32[8]{0}, f32[2]{0}) parameter(0)
  i = s32[] parameter(1)
  a0 = f32[8]{0} get-tuple-element(a), index=0
  a1 = f32[2]{0} get-tuple-element(a), index=1
  f = f32[8]{0} fusion(a0, a1, i), kind=kLoop, calls=inner
  n = f32[2]{0} negate(a1)
  ROOT r = (f32[2]{0}, f32[8]{0}) tuple(n, f)
}
ENTRY e {
  p = (f32[8]{0}, f32[2]{0}) parameter(0)
  i = s32[] parameter(1)
  ROOT o = (f32[2]{0}, f32[8]{0}) fusion(p, i), kind=kLoop, calls=outer
})",
                            hlo::xla_backend::cpu);
    const auto pairs = hlo::detail::in_place_pairs(m, find(m, "e", "o"));
    // Output {1} comes from the nested fusion, which updates its operand 0, which is {0} of
    // the outer fusion's parameter 0.
    CHECK(has_pair(pairs, 0, {0}, {1}));
    CHECK(pairs.size() == 1);
  }
}

TEST_SUITE("XLA in-place pairs") {
  TEST_CASE("in-place pairs: the trace through nested fusions stops at 16 fusions deep") {
    // level0 updates its parameter in place; level k wraps level k-1. A fusion of level k is
    // k + 1 fusions deep: a fusion of level 15 (16 deep) still gets its pair, of 16 not, nor the
    // top one of 40.
    std::string text = "HloModule deep\nlevel0 {\n  a = f32[8]{0} parameter(0)\n  u = f32[2]{0} parameter(1)\n"
                       "  i = s32[] parameter(2)\n  ROOT d = f32[8]{0} dynamic-update-slice(a, u, i)\n}\n";
    for (int k = 1; k <= 40; ++k) {
      text += "level" + std::to_string(k) + " {\n  a = f32[8]{0} parameter(0)\n  u = f32[2]{0} parameter(1)\n"
              "  i = s32[] parameter(2)\n  ROOT f = f32[8]{0} fusion(a, u, i), kind=kLoop, calls=level" +
              std::to_string(k - 1) + "\n}\n";
    }
    text += "ENTRY e {\n  p = f32[8]{0} parameter(0)\n  q = f32[2]{0} parameter(1)\n  i = s32[] parameter(2)\n"
            "  top = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level40\n"
            "  deep = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level15\n"
            "  deeper = f32[8]{0} fusion(p, q, i), kind=kLoop, calls=level16\n"
            "  ROOT t = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(top, deep, deeper)\n}\n";
    const auto m = parse_ok(text, hlo::xla_backend::cpu);
    CHECK(hlo::detail::in_place_pairs(m, find(m, "e", "top")).empty());
    CHECK(has_pair(hlo::detail::in_place_pairs(m, find(m, "e", "deep")), 0, {}, {}));
    CHECK(hlo::detail::in_place_pairs(m, find(m, "e", "deeper")).empty());
  }
}

TEST_SUITE("XLA:GPU planning") {
  TEST_CASE("GPU planning: a converting fusion reuses its operand's buffer, offsets are 256-aligned") {
    // p -> n (negate, dies at c) -> c = convert fusion f32 -> s32 -> r. On GPU c may take over
    // n's buffer (same elements, same width); on CPU it may not.
    const char* text = R"(HloModule plan, is_scheduled=true
conv {
  a = f32[64]{0} parameter(0)
  ROOT c = s32[64]{0} convert(a)
}
ENTRY e {
  p = f32[64]{0} parameter(0)
  n = f32[64]{0} negate(p)
  c = s32[64]{0} fusion(n), kind=kLoop, calls=conv
  s = s32[16]{0} slice(c), slice={[0:16]}
  x = s32[16]{0} negate(s)
  ROOT r = s32[16]{0} add(x, s)
})";
    buffer_assignment_options o;
    o.solver = solver_kind::xla;
    o.alignment = 256;
    const auto gpu = parse_ok(text);
    auto g = buffer_assignment<hlo::module>::run(gpu, o);
    REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
    REQUIRE(g->validate(gpu).has_value());
    const auto cpu = parse_ok(text, hlo::xla_backend::cpu);
    auto c = buffer_assignment<hlo::module>::run(cpu, o);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    // n (256 B) and c (256 B) share on GPU; on CPU both live at c's definition.
    CHECK(g->stats().temp_size_in_bytes < c->stats().temp_size_in_bytes);
    for (const auto& a : g->allocations()) {
      for (const auto& v : a.values) CHECK(v.offset % 256 == 0);
    }
  }
}

TEST_SUITE("XLA async computations") {
  TEST_CASE("an async computation is scheduled before its async-start, shares its buffers, and lives until async-done") {
    const auto m = parse_ok(R"(HloModule a, is_scheduled=true
wrapped {
  w = f32[64]{0} parameter(0)
  ROOT wn = f32[64]{0} negate(w)
}
ENTRY e {
  p = f32[64]{0} parameter(0)
  x = f32[64]{0} exponential(p)
  s = ((f32[64]{0}), f32[64]{0}, s32[]) async-start(x), calls=wrapped
  y = f32[64]{0} negate(p)
  z = f32[64]{0} add(y, y)
  d = f32[64]{0} async-done(s)
  ROOT r = f32[64]{0} add(d, z)
})",
                            hlo::xla_backend::cpu);
    buffer_assignment_options o;
    o.solver = solver_kind::xla;
    auto a = buffer_assignment<hlo::module>::run(m, o);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    REQUIRE(a->validate(m).has_value());
    const auto& la = a->liveness();
    const auto& df = a->dataflow();
    const auto wn = df.value_defined_at(find(m, "wrapped", "wn"), {});
    REQUIRE(wn.has_value());
    // Flattened just before the async-start, like a call's callee.
    CHECK(la.time_of(df.number(find(m, "wrapped", "wn"))) < la.time_of(df.number(find(m, "e", "s"))));
    // The root's value is the async-start's {1} and the async-done's result, and it lives
    // through the async window, past y and z, until d.
    CHECK(df.value_set(find(m, "e", "s"), {1}) == std::vector<std::uint32_t>{*wn});
    CHECK(df.value_set(find(m, "e", "d"), {}) == std::vector<std::uint32_t>{*wn});
    CHECK(la.range(*wn).end >= la.time_of(df.number(find(m, "e", "d"))));
    // Nothing of it is thread-local: the wrapped computation is part of the program.
    for (const auto& al : a->allocations()) CHECK_FALSE(al.flags().is_thread_local);
    // x (the operand) is the wrapped parameter's value too: it is read inside until wn.
    const auto x = df.value_defined_at(find(m, "e", "x"), {});
    REQUIRE(x.has_value());
    CHECK(df.value_set(find(m, "wrapped", "w"), {}) == std::vector<std::uint32_t>{*x});
  }
}
