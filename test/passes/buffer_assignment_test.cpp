// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/buffer_assignment.hpp.
#include <doctest/doctest.h>

#include "support/hlo_generators.hpp"
#include "support/planning_helpers.hpp"

TEST_SUITE("planning/buffer_assignment") {
  using namespace xlamem::test::planning_helpers;

  TEST_CASE("hand-computed arguments, outputs, aliases, tuple tables and host memory") {
    const module m = parse(R"(HloModule hand, is_scheduled=true, input_output_alias={ {0}: (1, {}, must-alias) }
ENTRY %main (a: f32[10], b: f32[20], h: f32[16]) -> (f32[20], f32[10], f32[16]) {
  %a = f32[10]{0} parameter(0)
  %b = f32[20]{0} parameter(1)
  %h = f32[16]{0:S(5)} parameter(2)
  %n = f32[10]{0} negate(%a)
  %e = f32[10]{0} exponential(%n)
  %u = f32[20]{0} add(%b, %b)
  %g = f32[16]{0:S(5)} negate(%h)
  ROOT %t = (f32[20]{0}, f32[10]{0}, f32[16]{0:S(5)}) tuple(%u, %e, %g)
}
)");
    const auto a = plan(m);
    const auto& s = a.stats();
    CHECK(s.argument_size_in_bytes == 40 + 80);    // a, b
    CHECK(s.alias_size_in_bytes == 80);            // b is aliased with output {0}
    CHECK(s.output_size_in_bytes == 80 + 40 + 24); // b/u, e, the 3-element tuple table
    CHECK(s.host_argument_size_in_bytes == 64);    // h in S(5)
    CHECK(s.host_output_size_in_bytes == 64);      // g in S(5)
    CHECK(s.temp_size_in_bytes == 0);              // n reuses e's allocation (elementwise, same size)
    CHECK(allocation_of(m, a, "u") == allocation_of(m, a, "b"));
    CHECK(allocation_of(m, a, "n") == allocation_of(m, a, "e"));
    CHECK(s.device_footprint() == 120 + 144 - 80);
  }

  TEST_CASE("temporaries: one heap per colour, offsets aligned, exact heap size") {
    const module m = parse(R"(HloModule temps, is_scheduled=true
ENTRY %main (a: f32[100]) -> f32[100] {
  %a = f32[100]{0} parameter(0)
  %x = f32[100]{0} negate(%a)
  %y = f32[100]{0} exponential(%a)
  %c = f32[100]{0} copy(%a)
  %s = f32[100]{0} add(%x, %y)
  %z = f32[100]{0} add(%s, %c)
  ROOT %r = f32[100]{0} reduce-precision(%z), exponent_bits=8, mantissa_bits=23
}
)");
    for (const std::int64_t align : {64, 256}) {
      CAPTURE(align);
      buffer_assignment_options o;
      o.alignment = align;
      o.reuse_allocations = false;  // every non-output buffer goes to the heap
      o.solver = *xlamem::find_solver("xla");
      const auto a = plan(m, o);
      REQUIRE(a.heaps().size() == 1);
      const auto& h = a.heaps()[0];
      CHECK(h.problem.buffers.size() == 5);  // x, y, c, s, z
      for (auto off : h.solution.offsets) CHECK(off % align == 0);
      // x, y, c and s live together at time 4 (400 B each, padded to the alignment between):
      // the alignment-aware lower bound is reached.
      CHECK(h.size == (align == 64 ? 3 * 448 + 400 : 3 * 512 + 400));
      CHECK(h.lower_bound == h.size);
      CHECK(xlamem::lower_bound(h.problem) == 1600);
      CHECK(a.stats().temp_size_in_bytes == h.size);
    }
    buffer_assignment_options bad;
    bad.alignment = 48;
    auto r = buffer_assignment<module>::run(m, bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("power of two") != std::string::npos);
    buffer_assignment_options late;
    late.time_limit = -1;  // refused, not read as "heuristics only"
    auto refused = buffer_assignment<module>::run(m, late);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message() == xlamem::time_limit_error(-1.0));
  }

  TEST_CASE("a loop fusion shares its operand's buffer only when elementwise on it (XLA's rule)") {
    // %e's fused parameter reaches the root through elementwise ops only: %e may write over
    // %x. %b reads its parameter through a bitcast: XLA forbids the sharing, so %y and %b
    // live in different chunks at the moment %b is computed.
    const module m = parse(R"(HloModule share, is_scheduled=true
%elementwise (p: f32[64,64]) -> f32[64,64] {
  %p = f32[64,64]{1,0} parameter(0)
  %n = f32[64,64]{1,0} negate(%p)
  ROOT %m = f32[64,64]{1,0} multiply(%n, %p)
}
%through_bitcast (q: f32[64,64]) -> f32[64,64] {
  %q = f32[64,64]{1,0} parameter(0)
  %t = f32[4096]{0} bitcast(%q)
  %u = f32[4096]{0} negate(%t)
  ROOT %v = f32[64,64]{1,0} bitcast(%u)
}
ENTRY %main (a: f32[64,64]) -> f32[64,64] {
  %a = f32[64,64]{1,0} parameter(0)
  %x = f32[64,64]{1,0} exponential(%a)
  %e = f32[64,64]{1,0} fusion(%x), kind=kLoop, calls=%elementwise
  %y = f32[64,64]{1,0} exponential(%e)
  %b = f32[64,64]{1,0} fusion(%y), kind=kLoop, calls=%through_bitcast
  ROOT %r = f32[64,64]{1,0} exponential(%b)
}
)");
    buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    const auto a = plan(m, o);
    auto slice = [&](const char* name) { return entry_slice(a, m, name); };
    CHECK(slice("e").allocation == slice("x").allocation);
    CHECK(slice("e").offset == slice("x").offset);
    CHECK_FALSE((slice("b").allocation == slice("y").allocation && slice("b").offset == slice("y").offset));
  }

  TEST_CASE("a sort runs in place: each array shares its operand's buffer when the sort is its only user") {
    // XLA's CanShareOperandBufferWithUser for kSort: a one-operand sort writes over
    // its keys; a multi-operand sort writes array i over operand i, output {i}; an operand with
    // another user keeps its buffer.
    const module m = parse(R"(HloModule sorts, is_scheduled=true
%less (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
%less1 (p: f32[], q: f32[]) -> pred[] {
  %p = f32[] parameter(0)
  %q = f32[] parameter(1)
  ROOT %lt1 = pred[] compare(%p, %q), direction=LT
}
ENTRY %main (x: f32[1024], i: s32[1024]) -> (f32[1024], s32[1024], f32[1024], f32[1024]) {
  %x = f32[1024]{0} parameter(0)
  %i = s32[1024]{0} parameter(1)
  %k = f32[1024]{0} negate(%x)
  %v = s32[1024]{0} negate(%i)
  %s = (f32[1024]{0}, s32[1024]{0}) sort(%k, %v), dimensions={0}, to_apply=%less
  %s0 = f32[1024]{0} get-tuple-element(%s), index=0
  %s1 = s32[1024]{0} get-tuple-element(%s), index=1
  %e0 = f32[1024]{0} exponential(%s0)
  %e1 = s32[1024]{0} negate(%s1)
  %k1 = f32[1024]{0} exponential(%x)
  %one = f32[1024]{0} sort(%k1), dimensions={0}, to_apply=%less1
  %e2 = f32[1024]{0} exponential(%one)
  %k2 = f32[1024]{0} sine(%x)
  %two = f32[1024]{0} sort(%k2), dimensions={0}, to_apply=%less1
  %e3 = f32[1024]{0} add(%two, %k2)
  ROOT %t = (f32[1024]{0}, s32[1024]{0}, f32[1024]{0}, f32[1024]{0}) tuple(%e0, %e1, %e2, %e3)
}
)");
    buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    const auto a = plan(m, o);
    auto slice = [&](const char* name, xlamem::shape_index index = {}) {
      const auto& df = a.dataflow();
      const auto v = df.unique_value_at(df.number(*m.find_instruction("main", name)), index);
      REQUIRE(v.has_value());
      const auto sl = a.slice_of(*v);
      REQUIRE(sl.has_value());
      return *sl;
    };
    auto same = [&](xlamem::value_slice p, xlamem::value_slice q) { return p.allocation == q.allocation && p.offset == q.offset; };
    CHECK(same(slice("s", {0}), slice("k")));
    CHECK(same(slice("s", {1}), slice("v")));
    CHECK(same(slice("one"), slice("k1")));
    CHECK_FALSE(same(slice("two"), slice("k2")));  // %k2 is read again after the sort
  }

  TEST_CASE("a three-operand sort takes over its three operands' chunks in the heap: temp as XLA's") {
    // The corpus program sharing_sort_multi (JAX 0.10.2 - 0.12): XLA's heap simulator lets
    // every array output {k} of the sort take over operand k's chunk (it dies at the sort),
    // so the heap holds three arrays at the sort, not six.
    const module m = parse(R"(HloModule sort3, is_scheduled=true
%less (a: f32[], b: f32[], c: f32[], d: f32[], e: f32[], f: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %e = f32[] parameter(4)
  %f = f32[] parameter(5)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
ENTRY %main (x: f32[4096]) -> f32[4096] {
  %x = f32[4096]{0} parameter(0)
  %k = f32[4096]{0} negate(%x)
  %v = f32[4096]{0} exponential(%x)
  %w = f32[4096]{0} sine(%x)
  %s = (f32[4096]{0}, f32[4096]{0}, f32[4096]{0}) sort(%k, %v, %w), dimensions={0}, to_apply=%less
  %s0 = f32[4096]{0} get-tuple-element(%s), index=0
  %s1 = f32[4096]{0} get-tuple-element(%s), index=1
  %s2 = f32[4096]{0} get-tuple-element(%s), index=2
  %a1 = f32[4096]{0} add(%s0, %s1)
  ROOT %a2 = f32[4096]{0} add(%a1, %s2)
}
)");
    buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    const auto a = plan(m, o);
    const auto& df = a.dataflow();
    for (const auto& [operand, k] : {std::pair{"k", 0}, std::pair{"v", 1}, std::pair{"w", 2}}) {
      CAPTURE(operand);
      const auto out = df.unique_value_at(df.number(*m.find_instruction("main", "s")), {k});
      const auto in = df.unique_value_at(df.number(*m.find_instruction("main", operand)), {});
      REQUIRE((out.has_value() && in.has_value()));
      const auto so = a.slice_of(*out), si = a.slice_of(*in);
      REQUIRE((so.has_value() && si.has_value()));
      CHECK(so->allocation == si->allocation);
      CHECK(so->offset == si->offset);
    }
    // The last array becomes the output; two 16 KiB arrays stay in the heap beside the sort's
    // 24-byte tuple table (without the take-overs: four arrays, 65,560 bytes).
    CHECK(a.stats().temp_size_in_bytes == 2 * 16384 + 24);
  }

  TEST_CASE("triangular-solve writes over b, used once; dynamic-update-slice and scatter over operand 0 (XLA's rows)") {
    // XLA's CanShareOperandBufferWithUser: kTriangularSolve may reuse operand 1 (b), never a;
    // kDynamicUpdateSlice and kScatter operand 0; each only when the user takes it once.
    const module m = parse(R"(HloModule rows, is_scheduled=true
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main (p: f32[16,16], q: f32[16,16], i: s32[], idx: s32[4,1], up: f32[4,16]) -> (f32[16,16], f32[16,16], f32[16,16], f32[16,16]) {
  %p = f32[16,16]{1,0} parameter(0)
  %q = f32[16,16]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %idx = s32[4,1]{1,0} parameter(3)
  %up = f32[4,16]{1,0} parameter(4)
  %a = f32[16,16]{1,0} negate(%p)
  %b = f32[16,16]{1,0} negate(%q)
  %ts = f32[16,16]{1,0} triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  %c = f32[16,16]{1,0} exponential(%p)
  %tt = f32[16,16]{1,0} triangular-solve(%c, %c), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  %u = f32[4,16]{1,0} negate(%up)
  %d = f32[16,16]{1,0} sine(%q)
  %dus = f32[16,16]{1,0} dynamic-update-slice(%d, %u, %i, %i)
  %e = f32[16,16]{1,0} cosine(%q)
  %sc = f32[16,16]{1,0} scatter(%e, %idx, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
  ROOT %t = (f32[16,16]{1,0}, f32[16,16]{1,0}, f32[16,16]{1,0}, f32[16,16]{1,0}) tuple(%ts, %tt, %dus, %sc)
}
)");
    using traits = xlamem::graph_traits<module>;
    const auto at = [&](const char* name) { return *m.find_instruction("main", name); };
    CHECK(traits::can_share_operand_buffer(m, at("b"), {}, at("ts"), {}));
    CHECK_FALSE(traits::can_share_operand_buffer(m, at("a"), {}, at("ts"), {}));
    CHECK_FALSE(traits::can_share_operand_buffer(m, at("c"), {}, at("tt"), {}));  // a and b at once
    CHECK(traits::can_share_operand_buffer(m, at("d"), {}, at("dus"), {}));
    CHECK_FALSE(traits::can_share_operand_buffer(m, at("u"), {}, at("dus"), {}));
    CHECK(traits::can_share_operand_buffer(m, at("e"), {}, at("sc"), {}));
    CHECK_FALSE(traits::can_share_operand_buffer(m, at("u"), {}, at("sc"), {}));
  }

  TEST_CASE("an operand's buffer is shared only with a user of the same layout (XLA's rule)") {
    // XLA's CanShareOperandBufferWithUser asks ShapeUtil::Equal, layouts included: %t, a
    // column-major result of row-major %x (LAPACK's results, a transposing fusion), gets its
    // own bytes; %s, of %t's layout, writes over %t.
    const module m = parse(R"(HloModule layouts, is_scheduled=true
ENTRY %main (a: f32[64,64]) -> f32[64,64] {
  %a = f32[64,64]{1,0} parameter(0)
  %x = f32[64,64]{1,0} exponential(%a)
  %t = f32[64,64]{0,1} negate(%x)
  %s = f32[64,64]{0,1} negate(%t)
  ROOT %r = f32[64,64]{1,0} copy(%s)
}
)");
    buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    const auto a = plan(m, o);
    auto slice = [&](const char* name) { return entry_slice(a, m, name); };
    CHECK_FALSE((slice("t").allocation == slice("x").allocation && slice("t").offset == slice("x").offset));
    CHECK(slice("s").allocation == slice("t").allocation);
    CHECK(slice("s").offset == slice("t").offset);
  }

  TEST_CASE("a buffer of two values never takes over an operand's chunk (XLA's heap simulator)") {
    // Temporaries (the heap). %m's buffer also holds %d, the in-place dynamic-update-slice
    // over it. XLA's heap simulator shares only between buffers of one value each, so %m gets
    // its own chunk although %x dies where %m is defined, and %n does not take over %d's.
    const module m = parse(R"(HloModule take_over, is_scheduled=true
ENTRY %main (a: f32[64], u: f32[8], i: s32[]) -> f32[8] {
  %a = f32[64]{0} parameter(0)
  %u = f32[8]{0} parameter(1)
  %i = s32[] parameter(2)
  %x = f32[64]{0} exponential(%a)
  %m = f32[64]{0} negate(%x)
  %d = f32[64]{0} dynamic-update-slice(%m, %u, %i)
  %n = f32[64]{0} negate(%d)
  ROOT %r = f32[8]{0} slice(%n), slice={[0:8]}
}
)");
    buffer_assignment_options o;
    o.solver = *xlamem::find_solver("xla");
    const auto a = plan(m, o);
    auto slice = [&](const char* name) { return entry_slice(a, m, name); };
    CHECK(slice("d").allocation == slice("m").allocation);
    CHECK(slice("d").offset == slice("m").offset);
    CHECK_FALSE((slice("m").allocation == slice("x").allocation && slice("m").offset == slice("x").offset));
    CHECK_FALSE((slice("n").allocation == slice("d").allocation && slice("n").offset == slice("d").offset));
  }

  TEST_CASE("a conditional's result is a phi: each branch result ends with its branch") {
    const module m = parse(R"(HloModule cond, is_scheduled=true
%first (p0: f32[256]) -> f32[256] {
  %p0 = f32[256]{0} parameter(0)
  ROOT %n0 = f32[256]{0} negate(%p0)
}
%second (p1: f32[256]) -> f32[256] {
  %p1 = f32[256]{0} parameter(0)
  %big = f32[256]{0} exponential(%p1)
  ROOT %n1 = f32[256]{0} negate(%big)
}
ENTRY %main (k: s32[], a: f32[256]) -> f32[256] {
  %k = s32[] parameter(0)
  %a = f32[256]{0} parameter(1)
  %c = f32[256]{0} conditional(%k, %a, %a), branch_computations={%first, %second}
  ROOT %r = f32[256]{0} exponential(%c)
}
)");
    auto la = live_range_analysis<module>::run(m);
    REQUIRE(la.has_value());
    const auto& df = la->dataflow();
    const auto c = df.unique_value_at(df.number(*m.find_instruction("main", "c")), {});
    REQUIRE(c.has_value());
    CHECK(df.get(*c).is_phi);
    CHECK(df.phi_inputs(*c).size() == 2);
    // Schedule: k a | p0 n0 | p1 big n1 | c r. n0 ends where its branch ends (time 4), so it
    // no longer overlaps the second branch, whose values may take its place.
    CHECK(la->range(df.phi_inputs(*c)[0]) == live_range{3, 4});
    CHECK(la->range(*c) == live_range{7, 8});
    CHECK(la->colocation().buffer_of(*c) == la->colocation().buffer_of(df.phi_inputs(*c)[1]));
  }

  TEST_CASE("an input_output_alias naming a missing parameter is an error") {
    const module m = parse(R"(HloModule bad, input_output_alias={ {}: (3, {}, may-alias) }
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%a)
}
)");
    auto r = buffer_assignment<module>::run(m);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("parameter 3") != std::string::npos);
  }

  TEST_CASE("XLA's buffer_assignment_test modules behave as named") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const auto tests = dir / "hlo" / "xla-tests";
    auto load = [&](const char* name) { return read(tests / (std::string("buffer_assignment_test.") + name + ".hlo")); };

    SUBCASE("AliasedParamCanBeReused: p0, neg1, neg2 share one allocation") {
      const module m = load("AliasedParamCanBeReused");
      const auto a = plan(m);
      const auto p0 = allocation_of(m, a, "p0");
      CHECK(allocation_of(m, a, "neg1") == p0);
      CHECK(allocation_of(m, a, "neg2") == p0);
      CHECK(a.allocations()[p0].flags().is_parameter_aliased_with_output);
      CHECK(a.allocations().size() == 1);
      CHECK(a.stats().alias_size_in_bytes == 400);
    }
    SUBCASE("CanUseAllocationDoesNotMixInputOutputColors: the S(1) input/output keeps colour 1") {
      const module m = load("CanUseAllocationDoesNotMixInputOutputColors");
      const auto a = plan(m);
      const auto p0 = allocation_of(m, a, "p0");
      CHECK(a.allocations()[p0].color() == 1);
      CHECK(allocation_of(m, a, "neg2") == p0);
      const auto neg1 = allocation_of(m, a, "neg1");
      CHECK(neg1 != p0);
      CHECK(a.allocations()[neg1].color() == 0);
    }
    SUBCASE("CanUseAllocationReusesCrossColorTempAllocation: S(0) temps reuse the S(1) temp heap") {
      const module m = load("CanUseAllocationReusesCrossColorTempAllocation");
      // Without a compatibility rule, one heap per colour.
      const auto separate = plan(m);
      CHECK(separate.allocations()[allocation_of(m, separate, "neg0")].color() == 1);
      CHECK(separate.allocations()[allocation_of(m, separate, "neg1")].color() == 0);
      CHECK(separate.heaps().size() == 2);
      // The reducer's scalars are thread-local.
      CHECK(separate.allocations()[allocation_of(m, separate, "lhs")].flags().is_thread_local);
      // With "colour 0 may use colour 1": neg1 (S(0)) lands in the S(1) temp allocation,
      // which keeps its colour and size, and no colour-0 heap is made.
      buffer_assignment_options o;
      o.can_use_allocation = {{0, 1}};
      const auto a = plan(m, o);
      const auto neg0 = allocation_of(m, a, "neg0");
      CHECK(allocation_of(m, a, "neg1") == neg0);
      CHECK(a.allocations()[neg0].color() == 1);
      CHECK(a.allocations()[neg0].size() == 8192);
      CHECK(a.allocations()[neg0].flags().is_preallocated_temp());
      CHECK(a.heaps().size() == 1);
      CHECK(a.stats().temp_size_in_bytes == 8192);
    }
    SUBCASE("IntermediateValueWithMultiplePositionsCanBeReused: x_intermediate and x_final share") {
      const module m = load("IntermediateValueWithMultiplePositionsCanBeReused");
      const auto a = plan(m);
      CHECK(allocation_of(m, a, "x_intermediate") == allocation_of(m, a, "x_final"));
    }
    SUBCASE("AliasedBuffersShouldntCoexistInPeakBuffers: one array buffer at the peak") {
      const module m = load("AliasedBuffersShouldntCoexistInPeakBuffers");
      const auto a = plan(m);
      const auto& la = a.liveness();
      int arrays_of_the_while = 0;
      for (auto b : a.peak_buffers()) {
        bool while_buffer = false;
        for (auto v : la.colocation().values(b)) {
          const auto& n = m[a.dataflow().get(v).defining.instruction].name;
          while_buffer = while_buffer || n == "copy" || n == "add";
        }
        arrays_of_the_while += while_buffer ? 1 : 0;
      }
      CHECK(arrays_of_the_while <= 1);
      // copy, the body's add and the while's elements are one buffer.
      CHECK(allocation_of(m, a, "copy") == allocation_of(m, a, "add"));
    }
    SUBCASE("InPlaceBuffer: the parameter and both dynamic-update-slices share one allocation") {
      const module m = load("InPlaceBuffer");
      const auto a = plan(m);
      const auto p = allocation_of(m, a, "state", {1});
      CHECK(allocation_of(m, a, "dynamic-update-slice.5") == p);
      CHECK(allocation_of(m, a, "dynamic-update-slice.9") == p);
      CHECK(a.allocations()[p].flags().is_entry_parameter);
    }
    SUBCASE("ConstantBuffersAreNotReused: each constant alone in a constant allocation") {
      const module m = load("ConstantBuffersAreNotReused");
      const auto a = plan(m);
      for (const char* c : {"constant.1.1", "constant.1.2"}) {
        CAPTURE(c);
        const auto& al = a.allocations()[allocation_of(m, a, c)];
        CHECK(al.flags().is_constant);
        CHECK(al.values.size() == 1);
      }
      CHECK(a.stats().temp_size_in_bytes == 0);
      CHECK(a.stats().total_allocation_bytes >= 8);
    }
    SUBCASE("ColocatedBufferWithEntryParameter: the parameter shares with while.0, not with while.1") {
      const module m = load("ColocatedBufferWithEntryParameter");
      const auto a = plan(m);
      const auto& df = a.dataflow();
      const auto param = *df.value_defined_at(*m.find_instruction("test_module", "param.3"), {});
      const auto w0 = df.value_set(*m.find_instruction("test_module", "while.0"), {});
      const auto w1 = df.value_set(*m.find_instruction("test_module", "while.1"), {});
      REQUIRE(w0.size() == 1);
      CHECK(a.slice_of(w0[0]) == a.slice_of(param));
      for (auto v : w1) CHECK(a.slice_of(v)->allocation != a.slice_of(param)->allocation);
    }
    SUBCASE("WhileWithDynamicUpdateSliceShare: the DUS inside and the broadcast outside share a slice") {
      const module m = load("WhileWithDynamicUpdateSliceShare");
      const auto a = plan(m);
      const auto& df = a.dataflow();
      const auto bcast = *df.value_defined_at(*m.find_instruction("entry_computation", "broadcast.6"), {});
      const auto dus = *df.value_defined_at(*m.find_instruction("while_body", "dynamic-update-slice.9"), {});
      CHECK(a.slice_of(bcast) == a.slice_of(dus));
    }
  }

  TEST_CASE("XLA GetCompiledMemoryStatsCountTupleTable: output 384, peak 388 (copy insertion emulated)") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    const module m = read(dir / "hlo" / "xla-tests" / "se_gpu_pjrt_client_test.GetCompiledMemoryStatsCountTupleTable.hlo");
    buffer_assignment_options o;
    o.alignment = 256;
    const auto a = plan(m, o);
    CHECK(a.stats().output_size_in_bytes == 384);
    CHECK(a.stats().peak_memory_in_bytes == 388);
    CHECK(a.stats().argument_size_in_bytes == 4);
  }

  TEST_CASE("every real model is planned, validated, and the default never packs above XLA best fit") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    int planned = 0;
    for (const auto& entry : fs::directory_iterator(dir / "hlo" / "xla-models")) {
      if (entry.path().extension() != ".hlo") continue;
      CAPTURE(entry.path().filename().string());
      const module m = read(entry.path());
      buffer_assignment_options xo;
      xo.solver = *xlamem::find_solver("xla");
      const auto x = plan(m, xo);
      const auto d = plan(m);
      CHECK(d.stats().temp_size_in_bytes <= x.stats().temp_size_in_bytes);
      CHECK(d.stats().argument_size_in_bytes == x.stats().argument_size_in_bytes);
      CHECK(d.stats().output_size_in_bytes == x.stats().output_size_in_bytes);
      for (const auto& h : d.heaps()) CHECK(h.size >= h.lower_bound);
      // Every entry parameter leaf has its own allocation.
      std::size_t leaves = 0;
      for (auto p : m[m.entry].parameters) {
        xlamem::hlo::for_each_subshape(m[p].shape, [&](const xlamem::shape_index&, const xlamem::hlo::shape& s) {
          if (!s.is_tuple()) ++leaves;
        });
      }
      std::size_t param_allocs = 0;
      for (const auto& al : d.allocations()) param_allocs += al.flags().is_entry_parameter && !al.values.empty() ? 1 : 0;
      CHECK(param_allocs >= leaves);
      ++planned;
    }
    CHECK(planned == 9);
  }
}

TEST_SUITE("reliability/planning") {
  using namespace xlamem::test::planning_helpers;

  TEST_CASE("3x10^4 temporaries live at once plan with the default solver and validate") {
    // Every negate lives until the last concatenate reads them all: XLA's best fit (a sort per
    // buffer over every placed conflicting one), unbudgeted skyline runs and a validation that
    // scanned every live value made this quadratic (10^5: 501 s).
    constexpr std::size_t n = 30000;
    auto m = xlamem::hlo::parse_module(xlamem::test::fan_in_fan_out_module(n), "fan.hlo");
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    auto a = buffer_assignment<module>::run(*m, buffer_assignment_options{});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    CHECK(a->validate(*m).has_value());
    REQUIRE(a->heaps().size() == 1);
    const auto& h = a->heaps().front();
    CHECK(h.problem.buffers.size() >= n);
    CHECK(h.size <= h.lower_bound + 64);  // one 64-byte slot per live f32[1]: within one slot of the bound
  }
}
