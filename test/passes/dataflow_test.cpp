// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/dataflow.hpp.
#include <doctest/doctest.h>

#include "support/hlo_helpers.hpp"
#include "support/reliability_helpers.hpp"

// The analysis compiles every member against archetypes that offer only what the traits declare.
template class xlamem::dataflow_analysis<xlamem::test::archetype::graph>;
template class xlamem::dataflow_analysis<xlamem::test::archetype::mutable_graph>;

TEST_SUITE("hlo/dataflow") {
  using namespace xlamem::test::hlo_helpers;

  using analysis = dataflow_analysis<hlo::module>;

  TEST_CASE("tuple and get-tuple-element forward values; the tuple table is its own value") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  t = (f32[4]{0}, f32[4]{0}) tuple(a, b)
  g = f32[4]{0} get-tuple-element(t), index=1
  ROOT n = f32[4]{0} negate(g)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto A = find(m, "e", "a"), B = find(m, "e", "b"), T = find(m, "e", "t"), G = find(m, "e", "g"), N = find(m, "e", "n");
    const auto vb = a->value_defined_at(B, {});
    REQUIRE(vb.has_value());
    CHECK(a->value_set(G, {}) == std::vector<analysis::value_id>{*vb});
    CHECK(a->value_set(T, {1}) == std::vector<analysis::value_id>{*vb});
    CHECK(a->value_defined_at(T, {}).has_value());
    CHECK_FALSE(a->value_defined_at(T, {0}).has_value());
    CHECK_FALSE(a->value_defined_at(G, {}).has_value());
    CHECK(a->values().size() == 4);  // a, b, the tuple table, n
    CHECK(a->positions(*vb).size() == 3);
    CHECK(a->positions(*vb)[0] == analysis::position{B, {}});
    // The tuple does not use b (it forwards it); negate does, through the gte.
    REQUIRE(a->uses(*vb).size() == 1);
    CHECK(a->uses(*vb)[0].instruction == N);
    // The gte reads the tuple table.
    const auto& table = a->get(*a->value_defined_at(T, {}));
    REQUIRE(a->uses(table.id).size() == 1);
    CHECK(a->uses(table.id)[0].instruction == G);
    CHECK(table.is_tuple);
    CHECK(table.bytes == 16);
    CHECK(a->get(*a->value_defined_at(A, {})).bytes == 16);
  }

  TEST_CASE("bitcast forwards, or defines a value with bitcast_defines_value") {
    const auto m = parse_ok("HloModule m\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  ROOT b = f32[2,2]{1,0} bitcast(a)\n}\n");
    const auto A = find(m, "e", "a"), B = find(m, "e", "b");
    auto fwd = analysis::run(m);
    REQUIRE(fwd.has_value());
    CHECK(fwd->value_set(B, {}) == fwd->value_set(A, {}));
    CHECK(fwd->values().size() == 1);
    auto def = analysis::run(m, dataflow_options{true});
    REQUIRE(def.has_value());
    CHECK(def->value_defined_at(B, {}).has_value());
    CHECK(def->values().size() == 2);
  }

  TEST_CASE("while: init, body parameter, body root, condition parameter and result share values") {
    const auto m = parse_ok(R"(HloModule m
cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} negate(v)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(zero, p)
  ROOT w = (s32[], f32[4]{0}) while(init), condition=cond, body=body
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto P = find(m, "e", "p"), W = find(m, "e", "w"), V2 = find(m, "body", "v2");
    const auto BP = find(m, "body", "bp"), CP = find(m, "cond", "cp"), V = find(m, "body", "v");
    std::vector<analysis::value_id> expect{*a->value_defined_at(P, {}), *a->value_defined_at(V2, {})};
    std::sort(expect.begin(), expect.end());
    CHECK(a->value_set(W, {1}) == expect);
    CHECK(a->value_set(BP, {1}) == expect);
    CHECK(a->value_set(CP, {1}) == expect);
    CHECK(a->value_set(V, {}) == expect);
    CHECK_FALSE(a->value_defined_at(W, {}).has_value());
    CHECK_FALSE(a->value_defined_at(BP, {}).has_value());
    CHECK(a->value_set(W, {}).size() == 2);  // init's table and the body root's table
    const auto body = a->computation_number(m.find_computation("body").value());
    REQUIRE(a->callers(body).size() == 1);
    CHECK(a->callers(body)[0].binding == call_binding::while_body);
  }

  TEST_CASE("SSA form: phis where a loop changes a value, none for invariants, nested loops end") {
    // The outer loop carries a counter (changed), a vector (changed by an inner loop that
    // negates it) and a constant vector nobody writes (invariant).
    const auto m = parse_ok(R"(HloModule m
icond {
  icp = (s32[], f32[4]{0}) parameter(0)
  ici = s32[] get-tuple-element(icp), index=0
  ilim = s32[] constant(3)
  ROOT ilt = pred[] compare(ici, ilim), direction=LT
}
ibody {
  ibp = (s32[], f32[4]{0}) parameter(0)
  ii = s32[] get-tuple-element(ibp), index=0
  iv = f32[4]{0} get-tuple-element(ibp), index=1
  ione = s32[] constant(1)
  ii2 = s32[] add(ii, ione)
  iv2 = f32[4]{0} negate(iv)
  ROOT ibt = (s32[], f32[4]{0}) tuple(ii2, iv2)
}
cond {
  cp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  k = f32[4]{0} get-tuple-element(bp), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  izero = s32[] constant(0)
  iinit = (s32[], f32[4]{0}) tuple(izero, v)
  inner = (s32[], f32[4]{0}) while(iinit), condition=icond, body=ibody
  v2 = f32[4]{0} get-tuple-element(inner), index=1
  ROOT bt = (s32[], f32[4]{0}, f32[4]{0}) tuple(i2, v2, k)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  q = f32[4]{0} parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}, f32[4]{0}) tuple(zero, p, q)
  ROOT w = (s32[], f32[4]{0}, f32[4]{0}) while(init), condition=cond, body=body
})");
    dataflow_options ssa;
    ssa.ssa_form = true;
    auto a = analysis::run(m, ssa);
    REQUIRE(a.has_value());
    const auto W = find(m, "e", "w"), BP = find(m, "body", "bp"), CP = find(m, "cond", "cp");
    const auto IBP = find(m, "ibody", "ibp"), INNER = find(m, "body", "inner");
    const auto vq = *a->value_defined_at(find(m, "e", "q"), {});
    // The invariant {2} is q itself everywhere: no phi.
    for (const auto n : {W, BP, CP}) CHECK(a->value_set(n, {2}) == std::vector<analysis::value_id>{vq});
    // The counter and the vector are phis at the while, the body and condition parameters.
    for (const auto n : {W, BP, CP}) {
      for (const std::int64_t k : {0, 1}) {
        const auto v = a->value_defined_at(n, {k});
        REQUIRE(v.has_value());
        CHECK(a->get(*v).is_phi);
        CHECK(a->value_set(n, {k}) == std::vector<analysis::value_id>{*v});
      }
    }
    // The body parameter's vector phi flows from p (the init) and from the inner loop's result.
    const auto& bp1 = a->get(*a->value_defined_at(BP, {1}));
    const auto inner1 = a->value_defined_at(INNER, {1});
    REQUIRE(inner1.has_value());
    CHECK(a->get(*inner1).is_phi);
    std::vector<analysis::value_id> expect{*a->value_defined_at(find(m, "e", "p"), {}), *inner1};
    std::sort(expect.begin(), expect.end());
    CHECK(a->phi_inputs(bp1.id) == expect);
    // The inner loop's parameter phi takes the outer body's vector (the outer phi) and its own
    // root's negate.
    const auto& ibp1 = a->get(*a->value_defined_at(IBP, {1}));
    const auto ibp1_inputs = a->phi_inputs(ibp1.id);
    CHECK(std::find(ibp1_inputs.begin(), ibp1_inputs.end(), *a->value_defined_at(BP, {1})) != ibp1_inputs.end());
    // Without SSA form the same positions hold value sets, and no phis exist.
    auto plain = analysis::run(m);
    REQUIRE(plain.has_value());
    for (const auto& v : plain->values()) CHECK_FALSE(v.is_phi);
    std::vector<analysis::value_id> both{*plain->value_defined_at(find(m, "e", "p"), {}),
                                         *plain->value_defined_at(find(m, "ibody", "iv2"), {})};
    std::sort(both.begin(), both.end());
    CHECK(plain->value_set(W, {1}) == both);  // the init and the inner negate, side by side
  }

  TEST_CASE("SSA form: an inner loop passing the outer loop's element through makes no phi (diffrax's shape)") {
    // The outer loop changes {1}; the inner loop, nested in its body, passes {1} through.
    // Once the outer phi exists only it reaches the inner loop's element (XLA: no phi there),
    // but the outer body's parameter held `p` for a moment before the phi was made: a phi
    // made from that stale pair must be taken out again, not kept because the rounds ended.
    const auto m = parse_ok(R"(HloModule m
ci {
  cp = (s32[], f32[4]{0}) parameter(0)
  cj = s32[] get-tuple-element(cp), index=0
  clim = s32[] constant(3)
  ROOT clt = pred[] compare(cj, clim), direction=LT
}
bi {
  ip = (s32[], f32[4]{0}) parameter(0)
  j = s32[] get-tuple-element(ip), index=0
  u = f32[4]{0} get-tuple-element(ip), index=1
  ione = s32[] constant(1)
  j2 = s32[] add(j, ione)
  ROOT it = (s32[], f32[4]{0}) tuple(j2, u)
}
co {
  op = (s32[], f32[4]{0}) parameter(0)
  oi = s32[] get-tuple-element(op), index=0
  olim = s32[] constant(10)
  ROOT olt = pred[] compare(oi, olim), direction=LT
}
bo {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  zero = s32[] constant(0)
  inner_init = (s32[], f32[4]{0}) tuple(zero, v)
  w = (s32[], f32[4]{0}) while(inner_init), condition=ci, body=bi
  wv = f32[4]{0} get-tuple-element(w), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} negate(wv)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(z, p)
  ROOT wo = (s32[], f32[4]{0}) while(init), condition=co, body=bo
})");
    dataflow_options ssa;
    ssa.ssa_form = true;
    auto a = analysis::run(m, ssa);
    REQUIRE(a.has_value());
    const auto outer = a->value_defined_at(find(m, "bo", "bp"), {1});
    REQUIRE(outer.has_value());
    CHECK(a->get(*outer).is_phi);
    for (const auto n : {find(m, "bo", "w"), find(m, "bi", "ip"), find(m, "ci", "cp")}) {
      CHECK_FALSE(a->value_defined_at(n, {1}).has_value());
      CHECK(a->value_set(n, {1}) == std::vector<analysis::value_id>{*outer});
    }
    // The inner counter does change: a phi.
    const auto counter = a->value_defined_at(find(m, "bo", "w"), {0});
    REQUIRE(counter.has_value());
    CHECK(a->get(*counter).is_phi);
    // Phis: {}, {0} and {1} at the outer while and its body's and condition's parameters; {}
    // and {0} only at the inner loop's three positions.
    std::size_t phis = 0;
    for (const auto& v : a->values()) phis += v.is_phi ? 1 : 0;
    CHECK(phis == 3 * 3 + 3 * 2);
  }

  TEST_CASE("SSA form: a loop passing a loop-carried value through makes no phi of its own") {
    // The shape of reverse_scan_grad: w2 passes w1's loop-carried vector
    // through unchanged. Before phis exist, two values (p and v2) reach w2's element {1}, but
    // once w1 has its phi, only that phi does (the other input is w2's own element): XLA's
    // Phi() makes none there, and w1's phi lives until w2 ends.
    const auto m = parse_ok(R"(HloModule m
c1 {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
b1 {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} negate(v)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}
c2 {
  dp = (s32[], f32[4]{0}) parameter(0)
  di = s32[] get-tuple-element(dp), index=0
  dlim = s32[] constant(5)
  ROOT dlt = pred[] compare(di, dlim), direction=LT
}
b2 {
  ep = (s32[], f32[4]{0}) parameter(0)
  j = s32[] get-tuple-element(ep), index=0
  u = f32[4]{0} get-tuple-element(ep), index=1
  eone = s32[] constant(1)
  j2 = s32[] add(j, eone)
  ROOT et = (s32[], f32[4]{0}) tuple(j2, u)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(zero, p)
  w1 = (s32[], f32[4]{0}) while(init), condition=c1, body=b1
  x = f32[4]{0} get-tuple-element(w1), index=1
  zero2 = s32[] constant(0)
  init2 = (s32[], f32[4]{0}) tuple(zero2, x)
  ROOT w2 = (s32[], f32[4]{0}) while(init2), condition=c2, body=b2
})");
    dataflow_options ssa;
    ssa.ssa_form = true;
    auto a = analysis::run(m, ssa);
    REQUIRE(a.has_value());
    const auto W1 = find(m, "e", "w1"), W2 = find(m, "e", "w2");
    const auto phi = a->value_defined_at(W1, {1});
    REQUIRE(phi.has_value());
    CHECK(a->get(*phi).is_phi);
    for (const auto n : {W2, find(m, "b2", "ep"), find(m, "c2", "dp"), find(m, "b2", "u")}) {
      CHECK_FALSE(a->value_defined_at(n, n == find(m, "b2", "u") ? shape_index{} : shape_index{1}).has_value());
    }
    CHECK(a->value_set(W2, {1}) == std::vector<analysis::value_id>{*phi});
    CHECK(a->value_set(find(m, "b2", "ep"), {1}) == std::vector<analysis::value_id>{*phi});
    // w2's counter does change: a phi, as before. Value ids have no gaps.
    const auto counter = a->value_defined_at(W2, {0});
    REQUIRE(counter.has_value());
    CHECK(a->get(*counter).is_phi);
    for (std::size_t v = 0; v < a->values().size(); ++v) CHECK(a->values()[v].id == v);
    // No value is the removed phi: every position of w2{1} holds w1's phi, and it is used by w2.
    bool used_by_w2 = false;
    for (const auto& u : a->uses(*phi)) used_by_w2 = used_by_w2 || u.instruction == W2;
    CHECK(used_by_w2);
  }

  TEST_CASE("recv-done forwards the recv's data; send forwards its operand to {0}") {
    // HloDataflowAnalysis::UpdateRecvDoneValueSet and UpdateSendValueSet.
    const auto m = parse_ok(R"(HloModule sr
ENTRY e {
  p = f32[4]{0} parameter(0)
  tok = token[] after-all()
  s = (f32[4]{0}, u32[], token[]) send(p, tok), channel_id=2
  sd = token[] send-done(s), channel_id=2
  r = (f32[4]{0}, u32[], token[]) recv(tok), channel_id=1
  rd = (f32[4]{0}, token[]) recv-done(r), channel_id=1
  d = f32[4]{0} get-tuple-element(rd), index=0
  ROOT a = f32[4]{0} add(d, p)
})");
    auto a = analysis::run(m);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    const auto R = find(m, "e", "r"), RD = find(m, "e", "rd"), S = find(m, "e", "s"), P = find(m, "e", "p");
    const auto data = a->value_defined_at(R, {0});
    REQUIRE(data.has_value());
    CHECK_FALSE(a->value_defined_at(RD, {0}).has_value());
    CHECK(a->value_set(RD, {0}) == std::vector<analysis::value_id>{*data});
    CHECK(a->value_defined_at(RD, {1}).has_value());  // its own token
    CHECK(a->value_set(S, {0}) == a->value_set(P, {}));
    CHECK(a->value_defined_at(S, {1}).has_value());  // the context
  }

  TEST_CASE("forwarding opcodes: barriers, domain, add-dependency, async and collective start/done; scatter in place") {
    // One module with a row of docs/hlo.md's opcode table each (HloDataflowAnalysis's
    // Update*ValueSet for the forwarding ones, GetInPlaceInputOutputPairs for scatter).
    const auto m = parse_ok(R"(HloModule fw
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
wrapped {
  w = f32[4]{0} parameter(0)
  ROOT wn = f32[4]{0} negate(w)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  q = f32[4]{0} parameter(1)
  u = f32[1]{0} parameter(2)
  t = (f32[4]{0}, f32[4]{0}) tuple(p, q)
  b = (f32[4]{0}, f32[4]{0}) opt-barrier(t)
  b2 = (f32[4]{0}, f32[4]{0}) optimization-barrier(b)
  dm = f32[4]{0} domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  tok = token[] after-all()
  ad = f32[4]{0} add-dependency(q, tok)
  ars = f32[4]{0} all-reduce-start(p), to_apply=sum
  ard = f32[4]{0} all-reduce-done(ars)
  cps = (f32[4]{0}, f32[4]{0}, u32[], u32[]) collective-permute-start(q), source_target_pairs={{0,1}}
  cpd = f32[4]{0} collective-permute-done(cps)
  as = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(p), calls=wrapped
  au = ((f32[4]{0}), f32[4]{0}, s32[]) async-update(as), calls=wrapped
  adn = f32[4]{0} async-done(au), calls=wrapped
  idx = s32[1,1]{1,0} constant({{0}})
  sc = f32[4]{0} scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
  ROOT r = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(dm, ad, ard, cpd, adn, sc, b2#1)
})");
    auto a = analysis::run(m);
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    auto set = [&](const char* name, shape_index index) { return a->value_set(find(m, "e", name), index); };
    auto defines = [&](const char* name, shape_index index) {
      return a->value_defined_at(find(m, "e", name), index).has_value();
    };
    CHECK(set("b", {0}) == set("p", {}));
    CHECK(set("b", {}) == set("t", {}));  // the barrier forwards the whole tree, table included
    CHECK(set("b2", {1}) == set("q", {}));
    CHECK_FALSE(defines("b2", {}));
    CHECK(set("dm", {}) == set("p", {}));
    CHECK(set("ad", {}) == set("q", {}));
    CHECK(defines("ars", {}));
    CHECK(set("ard", {}) == set("ars", {}));
    CHECK(set("cps", {0}) == set("q", {}));
    CHECK(defines("cps", {1}));
    CHECK(set("cpd", {}) == set("cps", {1}));
    // async-start: its tuple tables and context are its own; element {0, k} is operand k, {1}
    // the wrapped computation's root, whose parameter k is operand k (UpdateAsyncStartValueSet).
    CHECK(set("as", {0, 0}) == set("p", {}));
    CHECK(defines("as", {}));
    CHECK(defines("as", {0}));
    CHECK(defines("as", {2}));
    CHECK_FALSE(defines("as", {1}));
    CHECK(set("as", {1}) == a->value_set(find(m, "wrapped", "wn"), {}));
    CHECK(a->value_set(find(m, "wrapped", "w"), {}) == set("p", {}));
    CHECK_FALSE(a->value_defined_at(find(m, "wrapped", "w"), {}).has_value());
    // async-update and async-done pass the arrays on and define the tuple tables.
    CHECK(set("au", {1}) == set("as", {1}));
    CHECK(defines("au", {}));
    CHECK(set("adn", {}) == set("as", {1}));
    CHECK(defines("sc", {}));
    const auto& pairs = a->semantics(a->number(find(m, "e", "sc"))).in_place;
    REQUIRE(pairs.size() == 1);
    CHECK(pairs[0].operand == 0);
    CHECK(pairs[0].output_index.empty());
    // all-reduce-start is one of XLA's default in-place operations.
    const auto& ar = a->semantics(a->number(find(m, "e", "ars"))).in_place;
    REQUIRE(ar.size() == 1);
    CHECK(ar[0].operand == 0);
    CHECK(ar[0].output_index.empty());
  }

  TEST_CASE("call and conditional bind parameters to operands and outputs to roots") {
    const auto m = parse_ok(R"(HloModule m
callee {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
t {
  tp = f32[] parameter(0)
  ROOT tr = f32[] negate(tp)
}
f {
  ROOT fp = f32[] parameter(0)
}
ENTRY e {
  a = f32[] parameter(0)
  c = f32[] call(a), to_apply=callee
  k = pred[] parameter(1)
  b = f32[] parameter(2)
  ROOT cond = f32[] conditional(k, c, b), true_computation=t, false_computation=f
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto va = *a->value_defined_at(find(m, "e", "a"), {});
    const auto vy = *a->value_defined_at(find(m, "callee", "y"), {});
    const auto vb = *a->value_defined_at(find(m, "e", "b"), {});
    const auto vtr = *a->value_defined_at(find(m, "t", "tr"), {});
    CHECK(a->value_set(find(m, "callee", "x"), {}) == std::vector<analysis::value_id>{va});
    CHECK(a->value_set(find(m, "e", "c"), {}) == std::vector<analysis::value_id>{vy});
    CHECK(a->value_set(find(m, "t", "tp"), {}) == std::vector<analysis::value_id>{vy});
    CHECK(a->value_set(find(m, "f", "fp"), {}) == std::vector<analysis::value_id>{vb});
    std::vector<analysis::value_id> out{vb, vtr};
    std::sort(out.begin(), out.end());
    CHECK(a->value_set(find(m, "e", "cond"), {}) == out);
  }

  TEST_CASE("fusions keep separate values and expose their binding; in-place dynamic-update-slice") {
    const auto m = parse_ok(R"(HloModule m
fused {
  base = f32[8]{0} parameter(0)
  upd = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT dus = f32[8]{0} dynamic-update-slice(base, upd, i)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  j = s32[] parameter(2)
  f = f32[8]{0} fusion(p, u, j), kind=kLoop, calls=fused
  ROOT d = f32[8]{0} dynamic-update-slice(f, u, j)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto F = find(m, "e", "f"), D = find(m, "e", "d"), BASE = find(m, "fused", "base");
    CHECK(a->value_defined_at(F, {}).has_value());
    CHECK(a->value_defined_at(BASE, {}).has_value());
    CHECK(a->value_defined_at(D, {}).has_value());
    const auto fc = a->computation_number(m.find_computation("fused").value());
    CHECK(a->is_fusion_computation(fc));
    CHECK(a->fusion_instruction(fc) == F);
    const auto& sd = a->semantics(a->number(D));
    REQUIRE(sd.in_place.size() == 1);
    CHECK(sd.in_place[0].operand == 0);
    CHECK(sd.in_place[0].propagates_memory_space);
    const auto& sf = a->semantics(a->number(F));
    REQUIRE(sf.in_place.size() == 1);  // the fused root updates parameter 0 in place
    CHECK(sf.in_place[0].operand == 0);
    CHECK_FALSE(sf.in_place[0].propagates_memory_space);
    REQUIRE(sf.calls.size() == 1);
    CHECK(sf.calls[0].binding == call_binding::fusion);
    // The fusion uses p; the fused parameter's value is used by the dus.
    const auto& vp = a->get(*a->value_defined_at(find(m, "e", "p"), {}));
    REQUIRE(a->uses(vp.id).size() == 1);
    CHECK(a->uses(vp.id)[0].instruction == F);
  }

  TEST_CASE("copy-start / copy-done and copy of a tuple forward what XLA forwards") {
    const auto m = parse_ok(R"(HloModule m
ENTRY e {
  v = f32[2,3]{1,0:S(1)} parameter(0)
  cs = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}, u32[]) copy-start(v)
  cd = f32[2,3]{1,0:S(2)} copy-done(cs)
  t = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}) tuple(cd, v)
  ROOT c = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}) copy(t)
})");
    auto a = analysis::run(m);
    REQUIRE(a.has_value());
    const auto V = find(m, "e", "v"), CS = find(m, "e", "cs"), CD = find(m, "e", "cd"), C = find(m, "e", "c");
    CHECK(a->value_set(CS, {1}) == a->value_set(V, {}));
    CHECK(a->value_defined_at(CS, {0}).has_value());
    CHECK(a->value_set(CD, {}) == a->value_set(CS, {0}));
    CHECK(a->value_defined_at(C, {}).has_value());
    CHECK(a->value_set(C, {1}) == a->value_set(V, {}));
    CHECK(a->subshape(a->number(CD), 0).memory_space == 2);
    // copy-done reads the buffer it forwards; the tuple and the copy of a tuple do not. The
    // source stays in use until copy-done (as in XLA, which keeps it alive until then).
    const auto& dest = a->get(*a->value_defined_at(CS, {0}));
    REQUIRE(a->uses(dest.id).size() == 1);
    CHECK(a->uses(dest.id)[0].instruction == CD);
    const auto& src = a->get(*a->value_defined_at(V, {}));
    const auto src_uses = a->uses(src.id);
    REQUIRE(src_uses.size() == 2);
    CHECK(src_uses[0].instruction == CS);
    CHECK(src_uses[1].instruction == CD);
    CHECK(src_uses[1].operand_index == shape_index{1});
  }

  TEST_CASE("every real module analyses; instruction numbers are dense and in order") {
    XLAMEM_REQUIRE_SHARED_DATA(dir);
    for (const auto& f : hlo_files(dir)) {
      CAPTURE(f.filename().string());
      auto m = hlo::read_module_file(f.string());
      REQUIRE(m.has_value());
      auto a = analysis::run(*m);
      REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
      CHECK(a->instruction_count() == m->instructions.size());
      for (std::size_t n = 0; n < a->instruction_count(); ++n) {
        CHECK(a->number(a->instruction(n)) == n);
        for (std::size_t k = 0; k < a->subshapes(n).size(); ++k) {
          CHECK_FALSE(a->value_set(n, a->subshapes(n)[k]).empty());
        }
      }
      for (const auto& v : a->values()) {
        REQUIRE_FALSE(a->positions(v.id).empty());
        CHECK(a->positions(v.id)[0] == v.defining);
      }
    }
  }
}

TEST_SUITE("hlo/dataflow/combined") {
  using namespace xlamem::test::hlo_helpers;

  TEST_CASE("XLA:GPU combined all-gather-start: element {0, k} is operand k, {1, k} new values") {
    const auto m = parse_ok(R"(HloModule combined

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[8]{0} parameter(1)
  ags = ((f32[4]{0}, f32[8]{0}), (f32[16]{0}, f32[32]{0})) all-gather-start(a, b), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT agd = (f32[16]{0}, f32[32]{0}) all-gather-done(ags)
}
)");
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    const auto ags = find(m, "e", "ags");
    const auto pa = find(m, "e", "a");
    const auto pb = find(m, "e", "b");
    CHECK(a->value_set(ags, {0, 0}) == a->value_set(pa, {}));
    CHECK(a->value_set(ags, {0, 1}) == a->value_set(pb, {}));
    CHECK(a->value_defined_at(ags, {1, 0}).has_value());
    CHECK(a->value_defined_at(ags, {1, 1}).has_value());
    const auto agd = find(m, "e", "agd");
    CHECK(a->value_set(agd, {1}) == a->value_set(ags, {1, 1}));
    CHECK(!a->value_defined_at(agd, {0}).has_value());
  }

  TEST_CASE("a combined all-gather-done defines its tuple table; one of a single output forwards all") {
    // XLA's UpdateAllGatherDoneValueSet: a tuple output is the done's own value (a buffer in
    // XLA's assignment, 128 B on a real XLA:GPU dump); its arrays are the start's {1, k}. The
    // same for collective-permute-done.
    const auto m = parse_ok(R"(HloModule combined

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[8]{0} parameter(1)
  ags = ((f32[4]{0}, f32[8]{0}), (f32[16]{0}, f32[32]{0})) all-gather-start(a, b), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
  agd = (f32[16]{0}, f32[32]{0}) all-gather-done(ags)
  one = (f32[4]{0}, f32[16]{0}) all-gather-start(a), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}
  single = f32[16]{0} all-gather-done(one)
  ROOT t = ((f32[16]{0}, f32[32]{0}), f32[16]{0}) tuple(agd, single)
}
)");
    auto a = dataflow_analysis<hlo::module>::run(m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    const auto ags = find(m, "e", "ags");
    const auto agd = find(m, "e", "agd");
    CHECK(a->value_defined_at(agd, {}).has_value());
    CHECK(a->value_set(agd, {0}) == a->value_set(ags, {1, 0}));
    CHECK(a->value_set(agd, {1}) == a->value_set(ags, {1, 1}));
    const auto single = find(m, "e", "single");
    CHECK(!a->value_defined_at(single, {}).has_value());
    CHECK(a->value_set(single, {}) == a->value_set(find(m, "e", "one"), {1}));
  }
}

TEST_SUITE("reliability/dataflow") {
  using namespace xlamem::test::reliability_helpers;

  TEST_CASE("nested whiles 10^4 deep: phis at every level, found in near-linear time") {
    // A fixed point that adds phis a level per round, or lets a join collect the values of
    // every loop around it, is quadratic or cubic in the depth: depth 1,000 took 20 s.
    constexpr std::size_t depth = 10000;
    auto m = hlo::parse_module(test::nested_while_module(depth), "nested.hlo");
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    auto a = dataflow_analysis<hlo::module>::run(*m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    for (const std::size_t k : {std::size_t{1}, depth / 2, depth}) {
      const auto param = *m->find_instruction("body" + std::to_string(k), "p");
      for (const shape_index& i : {shape_index{0}, shape_index{1}}) {
        const auto v = a->value_defined_at(param, i);
        REQUIRE(v.has_value());
        CHECK(a->get(*v).is_phi);
        CHECK(a->value_set(param, i).size() == 1);
      }
    }
    buffer_assignment_options o;
    o.solver = *find_solver("xla");
    auto plan = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().to_string());
    CHECK(plan->validate(*m).has_value());
  }

  TEST_CASE("a call chain of 2x10^4 computations propagates down and back up, and plans (no recursion)") {
    constexpr std::size_t depth = 20000;
    auto m = hlo::parse_module(test::call_chain_module(depth), "chain.hlo");
    REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
    auto a = dataflow_analysis<hlo::module>::run(*m, dataflow_options{false, true});
    REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
    // Values: the entry parameter, one negate per computation, the last one's copy.
    CHECK(a->values().size() == depth + 2);
    const auto entry_root = (*m)[m->entry].root;
    const auto last = *m->find_instruction("c" + std::to_string(depth), "r");
    const auto& set = a->value_set(entry_root, {});
    REQUIRE(set.size() == 1);
    CHECK(a->get(set[0]).defining.instruction == last);
    // The deepest parameter holds the entry's parameter, passed down through every level.
    const auto deep_param = *m->find_instruction("c" + std::to_string(depth), "p");
    const auto entry_param = (*m)[m->entry].parameters[0];
    REQUIRE(a->value_set(deep_param, {}).size() == 1);
    CHECK(a->get(a->value_set(deep_param, {})[0]).defining.instruction == entry_param);
    buffer_assignment_options o;
    o.solver = *find_solver("xla");
    auto plan = buffer_assignment<hlo::module>::run(*m, o);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().to_string());
    CHECK(plan->validate(*m).has_value());
  }
}
