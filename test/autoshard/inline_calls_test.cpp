// SPDX-License-Identifier: Apache-2.0
// Tests for autoshard/inline_calls.hpp: calls as JAX lowers them (a nested jit per library
// function, the same body called twice, a body calling another, a body returning a tuple) are
// replaced by their bodies with unique names and the operands wired through; the auto-sharding
// of such a module splits the values inside the calls (they were held whole before).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "xlamem/autoshard/autoshard.hpp"
#include "xlamem/autoshard/inline_calls.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"

using namespace xlamem;

namespace {

// relu is called twice (from the entry and from `block`), `block` returns a tuple.
constexpr const char* with_calls = R"(HloModule with_calls

relu.1 {
  Arg_0.2 = f32[1024,512]{1,0} parameter(0)
  constant.3 = f32[] constant(0)
  broadcast.4 = f32[1024,512]{1,0} broadcast(constant.3), dimensions={}
  ROOT max.5 = f32[1024,512]{1,0} maximum(Arg_0.2, broadcast.4)
}

block.6 {
  Arg_0.7 = f32[1024,512]{1,0} parameter(0)
  Arg_1.8 = f32[512,512]{1,0} parameter(1)
  dot.9 = f32[1024,512]{1,0} dot(Arg_0.7, Arg_1.8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  call.10 = f32[1024,512]{1,0} call(dot.9), to_apply=relu.1
  ROOT tuple.11 = (f32[1024,512]{1,0}, f32[1024,512]{1,0}) tuple(call.10, dot.9)
}

ENTRY main.12 {
  x.13 = f32[1024,512]{1,0} parameter(0)
  w.14 = f32[512,512]{1,0} parameter(1)
  call.15 = f32[1024,512]{1,0} call(x.13), to_apply=relu.1
  call.16 = (f32[1024,512]{1,0}, f32[1024,512]{1,0}) call(call.15, w.14), to_apply=block.6
  get-tuple-element.17 = f32[1024,512]{1,0} get-tuple-element(call.16), index=0
  get-tuple-element.18 = f32[1024,512]{1,0} get-tuple-element(call.16), index=1
  ROOT add.19 = f32[1024,512]{1,0} add(get-tuple-element.17, get-tuple-element.18)
}
)";

hlo::module parsed(const char* text) {
  auto m = hlo::parse_module(text, "with_calls.hlo");
  REQUIRE_MESSAGE(m, m.error().to_string());
  return std::move(*m);
}

const hlo::instruction& named(const hlo::module& m, const std::string& name) {
  const auto id = m.find_instruction(m.entry, name);
  REQUIRE_MESSAGE(id, "no instruction '", name, "' in the entry of\n", hlo::to_string(m));
  return m[*id];
}

}  // namespace

TEST_SUITE("autoshard/inline_calls") {
  TEST_CASE("calls become their bodies: operands wired through, names unique, tuples forwarded") {
    const auto m = parsed(with_calls);
    CHECK(autoshard::has_inlinable_calls(m));
    auto inlined = autoshard::inline_calls(m);
    REQUIRE_MESSAGE(inlined, inlined.error().to_string());
    const auto& e = *inlined;
    CHECK_FALSE(autoshard::has_inlinable_calls(e));
    // Only the entry is left: both bodies are inlined wherever they were called.
    CHECK(e.computations.size() == 1);
    std::set<std::string> names;
    for (const auto id : e[e.entry].instructions) {
      CHECK(e[id].opcode != hlo::opcodes::call);
      CHECK(e[id].opcode != hlo::opcodes::get_tuple_element);
      CHECK(e[id].opcode != hlo::opcodes::tuple);
      CHECK_MESSAGE(names.insert(e[id].name).second, "name '", e[id].name, "' twice");
    }
    // x, w; relu (constant, broadcast, max); block (dot, relu again: constant, broadcast, max); add.
    CHECK(e[e.entry].instructions.size() == 10);
    // The first copy of relu keeps its names; the second takes a suffix.
    const auto& first = named(e, "max.5");
    CHECK(e[first.operands[0]].name == "x.13");
    const auto& second = named(e, "max.5.1");
    CHECK(e[second.operands[0]].name == "dot.9");
    const auto& dot = named(e, "dot.9");
    CHECK(e[dot.operands[0]].name == "max.5");
    CHECK(e[dot.operands[1]].name == "w.14");
    // The root adds the tuple's elements themselves.
    const auto& root = e[e[e.entry].root];
    CHECK(root.name == "add.19");
    CHECK(root.is_root);
    CHECK(e[root.operands[0]].name == "max.5.1");
    CHECK(e[root.operands[1]].name == "dot.9");
    // Users were linked by the reader.
    CHECK(e[root.operands[1]].users.size() == 2);  // max.5.1 and add.19
  }

  TEST_CASE("a module without calls has none to inline") {
    const auto plain = parsed(R"(HloModule plain
ENTRY main {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
})");
    CHECK_FALSE(autoshard::has_inlinable_calls(plain));
  }

  TEST_CASE("values inside calls split like the entry's once inlined") {
    auto m = parsed(with_calls);
    auto mesh = sharding::parse_mesh("8");
    REQUIRE(mesh);
    auto machine = sharding::machine_for("cpu-host-8", *mesh);
    REQUIRE(machine);
    autoshard::module_options o;
    o.shard.solve.time_limit = 2;
    o.shard.solve.threads = 1;
    // Whole, the module holds 2 MiB arrays; split 8 ways a quarter of a MiB each. A floor of
    // at most 2 MiB per device is only possible with the relu values split.
    o.shard.memory_limit = std::int64_t{3} << 20;
    auto a = autoshard::auto_shard_module(m, *mesh, *machine, o, false);
    REQUIRE_MESSAGE(a, a.error().to_string());
    CHECK(a->least_peak <= (std::int64_t{2} << 20));
    CHECK(a->result.solve.feasible);
    CHECK(a->result.peak_bytes <= o.shard.memory_limit);
    // `m` is now the inlined module the answer names.
    CHECK_FALSE(autoshard::has_inlinable_calls(m));
    CHECK(m.find_instruction(m.entry, "max.5.1"));
  }
}
