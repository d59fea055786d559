// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/hlo/gpu_aliasing.hpp.
#include <doctest/doctest.h>

#include "support/gpu_helpers.hpp"

TEST_SUITE("XLA:GPU buffer rules") {
  using namespace xlamem::test::gpu_helpers;

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

  TEST_CASE("GPU: two elements of one multi-output fusion never take over the same dying operand (fuzz finding)") {
    // XLA:GPU lets a loop fusion's elements {0} and {1} each share the operand they copy; the
    // heap's take-over gave both the chunk of `b`, which dies at the fusion (the fusion's
    // result is unused, so its elements die there too), and the plan failed its own
    // validation ("f{0} and f{1} are live together and share bytes").
    const auto m = parse_ok(R"(HloModule t, is_scheduled=true
twice {
  x = bf16[] parameter(0)
  y = f32[8]{0} parameter(1)
  ROOT r = (bf16[], bf16[], f32[8]{0}) tuple(x, x, y)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  b = bf16[] convert(p)
  f = (bf16[], bf16[], f32[8]{0}) fusion(b, p), kind=kLoop, calls=twice
  ROOT n = f32[8]{0} negate(p)
})");
    for (const char* solver : {"xla", "heuristic"}) {
      CAPTURE(solver);
      xlamem::buffer_assignment_options o;
      o.solver = *xlamem::find_solver(solver);
      auto a = xlamem::buffer_assignment<hlo::module>::run(m, o);
      REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
      const auto ok = a->validate(m);
      CHECK_MESSAGE(ok.has_value(), (ok ? std::string() : ok.error().message()));
    }
  }

  TEST_CASE("GPU: a constant operand never shares its buffer") {
    const auto m = parse_ok(std::string("HloModule k\n") + kF32Sum + R"(ENTRY e {
  c = f32[4]{0} constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} all-reduce(c), replica_groups={}, to_apply=sum
})");
    CHECK_FALSE(may_share(m, "n", 0, {}));
  }
}
