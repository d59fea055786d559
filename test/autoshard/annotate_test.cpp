// SPDX-License-Identifier: Apache-2.0
// Tests of autoshard/annotate.hpp: an answer written back onto its module as `sharding=`
// attributes (replacing one there, keeping the rest; tuples untouched; errors named) that parse
// again onto the mesh, and as the PartitionSpecs of the entry's parameters and outputs.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/autoshard_helpers.hpp"
#include "xlamem/autoshard/annotate.hpp"
#include "xlamem/autoshard/hlo_program.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/sharding/program_problem.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::autoshard;

namespace {

using namespace xlamem::test::autoshard_helpers;

/// A parameter carrying a sharding and metadata, a tuple parameter, a scalar, an elementwise
/// operation, and a tuple returned.
constexpr const char* small_text = R"(HloModule m

ENTRY e {
  x = f32[8,4]{1,0} parameter(0), sharding={replicated}, metadata={op_name="jit(f)/x"}
  q = (f32[4]{0}, s32[]) parameter(1)
  s = f32[] constant(2)
  y = f32[8,4]{1,0} negate(x)
  ROOT t = (f32[8,4]{1,0}, f32[8,4]{1,0}, f32[]) tuple(x, y, s)
}
)";

/// Every operation of `p` with its first dimension on mesh axis 0 (scalars and tuples replicated).
std::vector<tensor_sharding> first_dimension_on_axis_0(const hlo_program& p) {
  std::vector<tensor_sharding> out;
  for (const auto& op : p.program.ops) {
    auto s = tensor_sharding::replicated(op.shape.dims.size());
    if (!s.dims.empty()) s.dims[0] = {0};
    out.push_back(s);
  }
  return out;
}

const hlo::instruction& instruction(const hlo::module& m, const char* name) {
  const auto id = m.find_instruction(m.entry, name);
  REQUIRE(id.has_value());
  return m[*id];
}

/// The keys of an instruction's attributes, in order.
std::vector<std::string> keys_of(const hlo::instruction& in) {
  std::vector<std::string> out;
  for (const auto a : in.attributes) out.emplace_back(a.key);
  return out;
}

}  // namespace

TEST_SUITE("autoshard/hlo_program") {
  TEST_CASE("weights that do not fit replicated are sharded; the answer is written back") {
    auto m = parse(perceptron_text);
    const auto mesh = mesh_of("8");
    const auto p = program_of(m, mesh);
    auto machine = machine_for("cpu-host-8", mesh);
    REQUIRE(machine);
    auto_shard_options o;
    o.memory_limit = 96 * 1024;  // w1 alone is 128 KiB replicated
    o.solve.time_limit = 5;
    auto r = auto_shard(p.program, mesh, *machine, o);
    REQUIRE_MESSAGE(r, r.error().to_string());
    REQUIRE(r->solve.feasible);
    CHECK(r->peak_bytes <= o.memory_limit);
    CHECK(shard_bytes(r->shardings[1], op_named(p, "w1").shape, mesh) < 128 * 256 * 4);

    REQUIRE(annotate(m, p, r->shardings, mesh));
    const std::string text = hlo::to_string(m);
    auto again = hlo::parse_module(text);
    REQUIRE_MESSAGE(again, again.error().to_string());
    // Every array instruction of the entry carries its layout, and it reads back the same.
    const auto back = program_of(*again, mesh);
    for (std::size_t i = 0; i < p.entry_ops; ++i) {
      if (back.program.ops[i].shape.dims.empty() && r->shardings[i].rank() == 0) continue;
      REQUIRE(back.program.ops[i].fixed.has_value());
      CHECK(*back.program.ops[i].fixed == r->shardings[i]);
    }
    // Re-solving the annotated module keeps the layouts; its cost is no higher.
    auto fixed = auto_shard(back.program, mesh, *machine, o);
    REQUIRE(fixed);
    CHECK(fixed->solve.cost <= r->solve.cost);  // the layouts kept; a strategy may be found cheaper

    const auto specs = partition_specs(m, p, r->shardings, mesh);
    REQUIRE(specs.parameters.size() == 3);
    CHECK(specs.parameters[1].name == "w1");
    CHECK(specs.parameters[1].spec == partition_spec(r->shardings[1], mesh));
    REQUIRE(specs.outputs.size() == 1);
    CHECK(specs.outputs[0].name == "sum");
  }
}

TEST_SUITE("autoshard/annotate") {
  TEST_CASE("every array instruction of the entry gets its layout, replacing one there; other attributes and tuples kept") {
    auto m = parse(small_text);
    const auto mesh = mesh_of("data=2,model=2");
    const auto p = program_of(m, mesh);
    REQUIRE(p.program.op_count() == 5);
    REQUIRE(annotate(m, p, first_dimension_on_axis_0(p), mesh));
    const std::string split = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}";
    CHECK(keys_of(instruction(m, "x")) == std::vector<std::string>{"metadata", "sharding"});
    CHECK(*instruction(m, "x").find_attribute("sharding") == split);
    CHECK(*instruction(m, "x").find_attribute("metadata") == "{op_name=\"jit(f)/x\"}");
    CHECK(*instruction(m, "y").find_attribute("sharding") == split);
    CHECK(*instruction(m, "s").find_attribute("sharding") == "{replicated}");
    CHECK_FALSE(instruction(m, "q").find_attribute("sharding").has_value());
    CHECK_FALSE(instruction(m, "t").find_attribute("sharding").has_value());
    // Written again: the same text, one attribute each.
    const std::string once = hlo::to_string(m);
    REQUIRE(annotate(m, p, first_dimension_on_axis_0(p), mesh));
    CHECK(hlo::to_string(m) == once);
    // And it reads back as fixed layouts of the same operations.
    const auto back = program_of(parse(once.c_str()), mesh);
    const auto& x = op_named(back, "x");
    REQUIRE(x.fixed.has_value());
    CHECK(partition_spec(*x.fixed, mesh) == "P('data', None)");
  }

  TEST_CASE("a count of layouts other than the operations' is invalid_argument, and nothing is written") {
    auto m = parse(small_text);
    const auto mesh = mesh_of("data=2,model=2");
    const auto p = program_of(m, mesh);
    const std::string before = hlo::to_string(m);
    auto shardings = first_dimension_on_axis_0(p);
    shardings.pop_back();
    auto r = annotate(m, p, shardings, mesh);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(r.error().message() == "annotate: 4 shardings for 5 operations");
    CHECK(hlo::to_string(m) == before);
  }

  TEST_CASE("a layout without an HLO form is an error naming its instruction") {
    const auto mesh = mesh_of("data=2,model=2");
    for (const bool partial : {true, false}) {
      CAPTURE(partial);
      auto m = parse(small_text);
      const auto p = program_of(m, mesh);
      auto shardings = first_dimension_on_axis_0(p);
      auto& y = shardings[p.op_of_instruction[hlo::index_of(*m.find_instruction(m.entry, "y"))]];
      if (partial) {
        y.partial = {1};  // pending partial sums
      } else {
        y.dims[1] = {0};  // axis 0 twice
      }
      auto r = annotate(m, p, shardings, mesh);
      REQUIRE_FALSE(r);
      CHECK(r.error().code() == (partial ? errc::failed_precondition : errc::invalid_argument));
      CHECK(r.error().to_string().find("instruction 'y'") != std::string::npos);
      if (partial) CHECK(r.error().to_string().find("partial sums") != std::string::npos);
      // Nothing half written: the instructions before 'y' keep the attributes they had.
      CHECK(hlo::to_string(m) == hlo::to_string(parse(small_text)));
    }
  }

  TEST_CASE("partition_specs: parameters by number, a returned tuple's arrays, P() for what has no array layout") {
    const auto mesh = mesh_of("data=2,model=2");
    const auto m = parse(small_text);
    const auto p = program_of(m, mesh);
    const auto specs = partition_specs(m, p, first_dimension_on_axis_0(p), mesh);
    REQUIRE(specs.parameters.size() == 2);
    CHECK(specs.parameters[0].name == "x");
    CHECK(specs.parameters[0].spec == "P('data', None)");
    CHECK(specs.parameters[1].name == "q");
    CHECK(specs.parameters[1].spec == "P()");
    REQUIRE(specs.outputs.size() == 3);
    CHECK(specs.outputs[0].name == "x");
    CHECK(specs.outputs[1].name == "y");
    CHECK(specs.outputs[1].spec == "P('data', None)");
    CHECK(specs.outputs[2].name == "s");
    CHECK(specs.outputs[2].spec == "P()");
    // A root that is not a tuple is the one output.
    const auto single = parse(perceptron_text);
    const auto sp = program_of(single, mesh);
    auto shardings = std::vector<tensor_sharding>(sp.program.op_count());
    for (std::size_t i = 0; i < shardings.size(); ++i) shardings[i] = tensor_sharding::replicated(sp.program.ops[i].shape.dims.size());
    shardings[sp.op_of_instruction[hlo::index_of(*single.find_instruction(single.entry, "sum"))]].dims[0] = {0, 1};
    const auto one = partition_specs(single, sp, shardings, mesh);
    REQUIRE(one.outputs.size() == 1);
    CHECK(one.outputs[0].name == "sum");
    CHECK(one.outputs[0].spec == "P(('data', 'model'))");
    CHECK(one.parameters.size() == 3);
    CHECK(one.parameters[2].spec == "P(None, None)");
    // Fewer layouts than operations: what has none reads P(), never past the end.
    const auto few = partition_specs(m, p, {}, mesh);
    REQUIRE(few.parameters.size() == 2);
    CHECK(few.parameters[0].spec == "P()");
  }
}
