// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/passes/colocation.hpp: a while's and a conditional's values, in-place
// updates and input_output_alias share buffers; bad aliases are named; on every module of the
// oracle corpus and on generated ones the buffers are exactly the components of those rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/common.hpp"
#include "support/hlo_generators.hpp"
#include "support/hlo_helpers.hpp"
#include "xlamem/passes/colocation.hpp"

namespace colocation_test {

using namespace xlamem;
using flow = dataflow_analysis<hlo::module>;
using colocation = colocation_analysis<hlo::module>;

struct analysed {
  flow df;
  colocation co;
};

inline result<colocation> colocate(const hlo::module& m, const flow& df) {
  return colocation::run(m, df, df.computation_number(m.entry));
}

inline analysed analyse(const hlo::module& m, bool ssa = false) {
  dataflow_options o;
  o.ssa_form = ssa;
  auto df = flow::run(m, o);
  REQUIRE_MESSAGE(df.has_value(), (df ? std::string() : df.error().to_string()));
  auto co = colocate(m, *df);
  REQUIRE_MESSAGE(co.has_value(), (co ? std::string() : co.error().to_string()));
  return {std::move(*df), std::move(*co)};
}

/// The buffer of the values at instruction `name` of computation `comp`, subshape `index`
/// (those values always share one).
inline colocation::buffer_id buffer(const hlo::module& m, const analysed& a, const char* comp, const char* name,
                                    const shape_index& index = {}) {
  const auto set = a.df.value_set(xlamem::test::hlo_helpers::find(m, comp, name), index);
  REQUIRE_MESSAGE(!set.empty(), name << " holds no value there");
  for (const auto v : set) CHECK(a.co.buffer_of(v) == a.co.buffer_of(set.front()));
  return a.co.buffer_of(set.front());
}

/// The buffers by brute force: the connected components of "must share" (values at one
/// position, a phi and its inputs, an in-place operand and output, an aliased parameter and
/// output), found by a search from each value in turn, numbered by their smallest value.
inline void check_components(const hlo::module& m, const analysed& a) {
  const auto& df = a.df;
  const std::size_t nv = df.values().size();
  std::vector<std::vector<std::uint32_t>> adjacent(nv);
  const auto join = [&](std::uint32_t v, std::uint32_t w) {
    adjacent[v].push_back(w);
    adjacent[w].push_back(v);
  };
  std::map<std::pair<std::size_t, shape_index>, std::vector<std::uint32_t>> at;  // values by position
  for (std::uint32_t v = 0; v < nv; ++v) {
    for (const auto& pos : df.positions(v)) at[{df.number(pos.instruction), pos.index}].push_back(v);
    if (df.get(v).is_phi) {
      for (const auto w : df.phi_inputs(v)) join(v, w);
    }
  }
  for (const auto& [where, values] : at) {
    for (std::size_t k = 1; k < values.size(); ++k) join(values[0], values[k]);
  }
  for (std::size_t n = 0; n < df.instruction_count(); ++n) {
    for (const auto& ip : df.semantics(n).in_place) {
      if (ip.operand >= df.operands(n).size()) continue;
      for (const auto v : df.value_set(df.operands(n)[ip.operand], ip.operand_index)) {
        for (const auto w : df.value_set(n, ip.output_index)) join(v, w);
      }
    }
  }
  const auto& entry = m[m.entry];
  for (const auto& al : m.input_output_alias) {
    const auto parameter = entry.parameters[static_cast<std::size_t>(al.parameter)];
    for (const auto v : df.value_set(parameter, al.parameter_index)) {
      for (const auto w : df.value_set(entry.root, al.output_index)) join(v, w);
    }
    CHECK(a.co.parameter_has_alias(al.parameter, al.parameter_index));
  }
  CHECK(a.co.aliases().size() == m.input_output_alias.size());
  std::vector<std::uint32_t> component(nv, UINT32_MAX);
  std::vector<std::vector<std::uint32_t>> members;
  for (std::uint32_t v = 0; v < nv; ++v) {
    if (component[v] != UINT32_MAX) continue;
    const auto id = static_cast<std::uint32_t>(members.size());
    members.emplace_back();
    std::vector<std::uint32_t> stack{v};
    component[v] = id;
    while (!stack.empty()) {
      const auto x = stack.back();
      stack.pop_back();
      members.back().push_back(x);
      for (const auto y : adjacent[x]) {
        if (component[y] == UINT32_MAX) {
          component[y] = id;
          stack.push_back(y);
        }
      }
    }
    std::sort(members.back().begin(), members.back().end());
  }
  REQUIRE(a.co.buffer_count() == members.size());
  for (std::uint32_t v = 0; v < nv; ++v) REQUIRE(a.co.buffer_of(v) == component[v]);
  for (std::uint32_t b = 0; b < members.size(); ++b) {
    const auto values = a.co.values(b);
    REQUIRE(std::vector<std::uint32_t>(values.begin(), values.end()) == members[b]);
  }
}

constexpr const char* while_text = R"(HloModule w

cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[4]{0}) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(bi, one)
  y = f32[4]{0} negate(bx)
  ROOT r = (s32[], f32[4]{0}) tuple(i1, y)
}

ENTRY e {
  a = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  in = (s32[], f32[4]{0}) tuple(zero, a)
  w = (s32[], f32[4]{0}) while(in), condition=cond, body=body
  ROOT o = f32[4]{0} get-tuple-element(w), index=1
}
)";

}  // namespace colocation_test

TEST_SUITE("passes/colocation") {
  using namespace colocation_test;

  TEST_CASE("a while's init, body parameter and root, condition parameter and result are one buffer, SSA or not") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(while_text);
    for (const bool ssa : {false, true}) {
      CAPTURE(ssa);
      const auto a = analyse(m, ssa);
      const auto carried = buffer(m, a, "e", "a");
      CHECK(buffer(m, a, "body", "y") == carried);
      CHECK(buffer(m, a, "body", "bp", {1}) == carried);
      CHECK(buffer(m, a, "cond", "cp", {1}) == carried);
      const auto counter = buffer(m, a, "e", "zero");
      CHECK(buffer(m, a, "body", "i1") == counter);
      CHECK(buffer(m, a, "cond", "cp", {0}) == counter);
      CHECK(counter != carried);
      CHECK(buffer(m, a, "body", "r") == buffer(m, a, "e", "in"));  // the tuple tables
      CHECK(buffer(m, a, "cond", "n") != buffer(m, a, "cond", "lt"));
      CHECK(buffer(m, a, "body", "one") != counter);
      check_components(m, a);
    }
  }

  TEST_CASE("a conditional's branch roots and result are one buffer; its operands are not") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(R"(HloModule c

yes {
  yp = f32[4]{0} parameter(0)
  ROOT yn = f32[4]{0} negate(yp)
}

no {
  np = f32[4]{0} parameter(0)
  ROOT ne = f32[4]{0} exponential(np)
}

ENTRY e {
  k = pred[] parameter(0)
  x = f32[4]{0} parameter(1)
  ROOT c = f32[4]{0} conditional(k, x, x), true_computation=yes, false_computation=no
}
)");
    for (const bool ssa : {false, true}) {
      CAPTURE(ssa);
      const auto a = analyse(m, ssa);
      CHECK(buffer(m, a, "yes", "yn") == buffer(m, a, "no", "ne"));
      CHECK(buffer(m, a, "yes", "yn") != buffer(m, a, "e", "x"));
      CHECK(buffer(m, a, "yes", "yp") == buffer(m, a, "e", "x"));  // a branch parameter is its operand
      check_components(m, a);
    }
  }

  TEST_CASE("an in-place update shares its operand's buffer: dynamic-update-slice's base, not its update") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(R"(HloModule d
ENTRY e {
  b = f32[8]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  i = s32[] parameter(2)
  n = f32[8]{0} negate(b)
  d = f32[8]{0} dynamic-update-slice(n, u, i)
  ROOT r = f32[8]{0} exponential(d)
}
)");
    const auto a = analyse(m);
    CHECK(buffer(m, a, "e", "n") == buffer(m, a, "e", "d"));
    CHECK(buffer(m, a, "e", "u") != buffer(m, a, "e", "d"));
    CHECK(buffer(m, a, "e", "r") != buffer(m, a, "e", "d"));
    CHECK(buffer(m, a, "e", "b") != buffer(m, a, "e", "n"));
    CHECK(a.co.buffer_count() == 5);  // b, u, i, n = d, r
    check_components(m, a);
  }

  TEST_CASE("input_output_alias joins a parameter with an output; the aliases are kept and asked about") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(
        R"(HloModule io, input_output_alias={ {0}: (1, {}, may-alias), {1}: (0, {1}, must-alias) }
ENTRY e {
  p = (f32[4]{0}, f32[2]{0}) parameter(0)
  q = f32[4]{0} parameter(1)
  x = f32[2]{0} get-tuple-element(p), index=1
  s = f32[4]{0} sine(q)
  c = f32[2]{0} cosine(x)
  ROOT t = (f32[4]{0}, f32[2]{0}) tuple(s, c)
}
)");
    const auto a = analyse(m);
    CHECK(buffer(m, a, "e", "q") == buffer(m, a, "e", "s"));
    CHECK(buffer(m, a, "e", "p", {1}) == buffer(m, a, "e", "c"));
    CHECK(buffer(m, a, "e", "p", {0}) != buffer(m, a, "e", "s"));
    REQUIRE(a.co.aliases().size() == 2);
    CHECK(a.co.aliases()[0].parameter == 1);
    CHECK(a.co.aliases()[1].must_alias);
    CHECK(a.co.parameter_has_alias(1, {}));
    CHECK(a.co.parameter_has_alias(0, {1}));
    CHECK_FALSE(a.co.parameter_has_alias(0, {0}));
    CHECK_FALSE(a.co.parameter_has_alias(0, {}));
    check_components(m, a);
  }

  TEST_CASE("an alias naming a missing parameter or subshape is invalid_argument, saying which") {
    const auto error_of = [](const char* header) {
      const auto m = xlamem::test::hlo_helpers::parse_ok(std::string(header) + R"(
ENTRY e {
  a = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(a)
}
)");
      auto df = flow::run(m);
      REQUIRE(df.has_value());
      auto co = colocate(m, *df);
      REQUIRE_FALSE(co.has_value());
      CHECK(co.error().code() == errc::invalid_argument);
      return co.error().message();
    };
    CHECK(error_of("HloModule bad, input_output_alias={ {}: (3, {}, may-alias) }") ==
          "input_output_alias names parameter 3, but the entry has 1");
    CHECK(error_of("HloModule bad, input_output_alias={ {}: (0, {2}, may-alias) }") ==
          "input_output_alias of parameter 0 names a subshape that does not exist");
    CHECK(error_of("HloModule bad, input_output_alias={ {4}: (0, {}, may-alias) }") ==
          "input_output_alias of parameter 0 names a subshape that does not exist");
  }

  TEST_CASE("buffers are numbered by their smallest value; each lists its values ascending") {
    const auto m = xlamem::test::hlo_helpers::parse_ok(while_text);
    const auto a = analyse(m);
    std::uint32_t previous_smallest = 0;
    std::size_t listed = 0;
    for (std::uint32_t b = 0; b < a.co.buffer_count(); ++b) {
      const auto values = a.co.values(b);
      REQUIRE_FALSE(values.empty());
      CHECK(std::is_sorted(values.begin(), values.end()));
      if (b > 0) CHECK(values.front() > previous_smallest);
      previous_smallest = values.front();
      for (const auto v : values) CHECK(a.co.buffer_of(v) == b);
      listed += values.size();
    }
    CHECK(listed == a.df.values().size());
    CHECK(a.co.buffer_of(0) == 0);
  }

  TEST_CASE("the buffers are exactly the components of the sharing rules: the oracle corpus and generated modules") {
    std::vector<hlo::module> modules;
    const auto dir = xlamem::test::oracle_data_dir();
    REQUIRE_FALSE(dir.empty());
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_directory()) continue;
      for (const auto& file : std::filesystem::directory_iterator(entry.path())) {
        const auto name = file.path().filename().string();
        if (name.size() < 24 || name.substr(name.size() - 24) != "_after_optimizations.txt") continue;
        auto m = hlo::read_module_file(file.path().string());
        REQUIRE_MESSAGE(m.has_value(), (m ? std::string() : m.error().to_string()));
        modules.push_back(std::move(*m));
      }
    }
    CHECK(modules.size() >= 15);
    for (const auto& text : {xlamem::test::nested_while_module(6), xlamem::test::call_chain_module(5),
                             xlamem::test::fan_in_fan_out_module(7)}) {
      modules.push_back(xlamem::test::hlo_helpers::parse_ok(text));
    }
    for (const auto& m : modules) {
      CAPTURE(m.name);
      for (const bool ssa : {false, true}) {
        CAPTURE(ssa);
        check_components(m, analyse(m, ssa));
      }
    }
  }
}
