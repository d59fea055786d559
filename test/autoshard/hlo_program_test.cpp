// SPDX-License-Identifier: Apache-2.0
// Tests for autoshard/hlo_program.hpp: a two-layer perceptron's training-free forward pass in HLO
// as JAX lowers it read as a program (letters of parameters, dot, broadcast, elementwise, reduce,
// transpose, reshape; live intervals from the library's liveness; a `sharding=` attribute kept as
// a fixed choice); Sharding markers, open ones written back as the value they mark; bad
// attributes named; and every real model of the shared corpus read and sharded on 8 devices
// without error. Writing answers back: annotate_test.cpp.
#include <doctest/doctest.h>

#include <cstddef>
#include <filesystem>
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

using letters = std::vector<std::int32_t>;
constexpr std::int32_t whole = whole_dimension;

}  // namespace

TEST_SUITE("autoshard/hlo_program") {
  TEST_CASE("each instruction's letters, flops and live interval") {
    const auto m = parse(perceptron_text);
    const auto mesh = mesh_of("8");
    const auto p = program_of(m, mesh);
    REQUIRE(p.entry_ops == 11);
    CHECK(check_program(p.program));
    const auto& h = op_named(p, "h");
    CHECK(h.output_letters == letters{0, 1});
    CHECK(h.operand_letters == std::vector<letters>{{0, 2}, {2, 1}});
    CHECK(h.flops == 2.0 * 64 * 256 * 128);
    CHECK(op_named(p, "zeros").operand_letters[0].empty());
    CHECK(op_named(p, "r").operand_letters == std::vector<letters>{{0, 1}, {0, 1}});
    CHECK(op_named(p, "t").operand_letters[0] == letters{1, 0});
    CHECK(op_named(p, "f").operand_letters[0] == letters{0, 1});  // 64 -> 8x8: the major 8 shares
    const auto& sum = op_named(p, "sum");
    CHECK(sum.output_letters == letters{0});
    CHECK(sum.operand_letters[0] == letters{0, 1, 2});
    CHECK(sum.operand_letters[1].empty());
    CHECK(sum.is_output);
    CHECK(op_named(p, "x").is_input);
    // Parameters live from the start to the end; h from its definition to its last use (r).
    CHECK(op_named(p, "x").live.lower == 0);
    CHECK(op_named(p, "x").live.upper == p.time_steps);
    CHECK(op_named(p, "h").live.upper <= op_named(p, "y").live.lower + 1);
    CHECK(op_named(p, "h").shape.element_bytes == 4);
    // Fused away, as XLA's loop fusion leaves them: the broadcast of zeros (into maximum) and
    // the reshape feeding the reduce hold nothing; the transpose and the dot are buffers.
    CHECK(op_named(p, "zeros").live.empty());
    CHECK(op_named(p, "f").live.empty());
    CHECK_FALSE(op_named(p, "t").live.empty());
    CHECK_FALSE(op_named(p, "y").live.empty());
    CHECK_FALSE(op_named(p, "sum").live.empty());
  }

  TEST_CASE("letters of convolution, batched dot, slices, pads, concatenation, updates, and the rest") {
    const auto m = parse(R"(HloModule layers

ENTRY main {
  img = f32[8,32,32,3]{3,2,1,0} parameter(0)
  k = f32[3,3,3,16]{3,2,1,0} parameter(1)
  conv = f32[8,32,32,16]{3,2,1,0} convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  grouped = f32[8,32,32,3]{3,2,1,0} convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3
  q = f32[4,16,64]{2,1,0} parameter(2)
  kv = f32[4,64,16]{2,1,0} parameter(3)
  att = f32[4,16,16]{2,1,0} dot(q, kv), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  s = f32[4,8,16]{2,1,0} slice(att), slice={[0:4], [0:8], [0:16]}
  c = f32[4,24,16]{2,1,0} concatenate(att, s), dimensions={1}
  zero = f32[] constant(0)
  p = f32[4,26,16]{2,1,0} pad(c, zero), padding=0_0x1_1x0_0
  i = s32[] parameter(4)
  u = f32[4,26,16]{2,1,0} dynamic-update-slice(p, s, i, i, i)
  idx = s32[5,1]{1,0} parameter(5)
  g = f32[5,16]{1,0} gather(q, idx), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16,1}
  ROOT t = (f32[8,32,32,16]{3,2,1,0}, f32[8,32,32,3]{3,2,1,0}, f32[4,26,16]{2,1,0}, f32[5,16]{1,0}) tuple(conv, grouped, u, g)
}
)");
    const auto p = program_of(m, mesh_of("8"));
    const auto& conv = op_named(p, "conv");
    CHECK(conv.output_letters == letters{0, whole, whole, 1});
    CHECK(conv.operand_letters == std::vector<letters>{{0, whole, whole, 2}, {whole, whole, 2, 1}});
    CHECK(conv.flops == 2.0 * 8 * 32 * 32 * 16 * (3 * 3 * 3));
    CHECK(op_named(p, "grouped").output_letters == letters{whole, whole, whole, whole});
    const auto& att = op_named(p, "att");
    CHECK(att.output_letters == letters{0, 1, 2});
    CHECK(att.operand_letters == std::vector<letters>{{0, 1, 3}, {0, 3, 2}});
    CHECK(op_named(p, "s").output_letters == letters{0, whole, 2});
    CHECK(op_named(p, "s").operand_letters[0] == letters{0, whole, 2});
    CHECK(op_named(p, "c").output_letters == letters{0, whole, 2});
    CHECK(op_named(p, "c").operand_letters[1] == letters{0, whole, 2});
    CHECK(op_named(p, "p").output_letters == letters{0, whole, 2});
    CHECK(op_named(p, "p").operand_letters[1].empty());
    const auto& u = op_named(p, "u");
    CHECK(u.output_letters == letters{0, whole, 2});
    CHECK(u.operand_letters[1] == letters{0, whole, 2});
    CHECK(u.operand_letters[2].empty());
    CHECK(op_named(p, "g").output_letters == letters{whole, whole});
    CHECK(op_named(p, "g").operand_letters[0] == letters{whole, whole, whole});
    const auto& t = op_named(p, "t");
    CHECK(t.shape.dims.empty());
    CHECK(t.output_letters.empty());
    CHECK(check_program(p.program));
  }

  TEST_CASE("an open Sharding marker takes the layout of the value it marks; a closed one is kept") {
    const auto m = parse(R"(HloModule jit_f, entry_computation_layout={(f32[64,32]{1,0}, f32[32,16]{1,0})->f32[64,16]{1,0}}

ENTRY main.1 {
  a.1 = f32[64,32]{1,0} parameter(0)
  b.1 = f32[32,16]{1,0} parameter(1)
  dot_general.1 = f32[64,16]{1,0} dot(a.1, b.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sharding_constraint.2 = f32[64,16]{1,0} custom-call(dot_general.1), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>"}
  tanh.1 = f32[64,16]{1,0} tanh(sharding_constraint.2)
  old.1 = f32[64,16]{1,0} custom-call(tanh.1), custom_call_target="Sharding", sharding={replicated}, unspecified_dims={0,1}
  ROOT sharding_constraint.3 = f32[64,16]{1,0} custom-call(old.1), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
}
)");
    const auto mesh = mesh_of("x=2,y=4");
    auto p = program_of(m, mesh);
    REQUIRE(p.entry_ops == 5);  // a, b, dot, tanh, and the closed constraint
    const auto op_of = [&](const char* name) {
      return p.op_of_instruction[hlo::index_of(*m.find_instruction(m.entry, name))];
    };
    CHECK(op_of("sharding_constraint.2") == op_of("dot_general.1"));
    CHECK(op_of("old.1") == op_of("tanh.1"));
    CHECK(p.program.ops[op_of("tanh.1")].operands[0] == op_of("dot_general.1"));
    const auto& closed = p.program.ops[op_of("sharding_constraint.3")];
    REQUIRE(closed.fixed.has_value());
    CHECK(partition_spec(*closed.fixed, mesh) == "P('x', None)");
    // The dot's value is held until tanh reads it through the marker.
    CHECK(p.program.ops[op_of("dot_general.1")].live.upper > p.program.ops[op_of("tanh.1")].live.lower);
    auto machine = machine_for("cpu-host-8", mesh);
    auto r = auto_shard(p.program, mesh, *machine);
    REQUIRE(r);
    auto annotated = m;
    REQUIRE(annotate(annotated, p, r->shardings, mesh));
    const auto spec = [&](const char* name) {
      return *annotated[*annotated.find_instruction(annotated.entry, name)].find_attribute("sharding");
    };
    CHECK(spec("sharding_constraint.2") == spec("dot_general.1"));
    CHECK(spec("sharding_constraint.3") == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  }

  TEST_CASE("a user's sharding attribute is kept; bad attributes are named") {
    const auto mesh = mesh_of("data=2,model=4");
    std::string text = perceptron_text;
    text.replace(text.find("w1 = f32[128,256]{1,0} parameter(1)"), 36,
                 "w1 = f32[128,256]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
    const auto p = program_of(parse(text.c_str()), mesh);
    REQUIRE(op_named(p, "w1").fixed.has_value());
    CHECK(partition_spec(*op_named(p, "w1").fixed, mesh) == "P(None, 'model')");

    std::string wrong = perceptron_text;
    wrong.replace(wrong.find("dimensions={1,0}"), 16, "dimensions={1,5}");
    auto bad = read_hlo_program(parse(wrong.c_str()), mesh);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().to_string().find("instruction 't': dimensions names dimension 5 of a rank-2 array") !=
          std::string::npos);

    std::string odd = perceptron_text;
    odd.replace(odd.find("w2 = f32[256,32]{1,0} parameter(2)"), 34,
                "w2 = f32[256,32]{1,0} parameter(2), sharding={devices=[3,1]0,1,2}");
    auto uneven = read_hlo_program(parse(odd.c_str()), mesh);
    REQUIRE_FALSE(uneven);
    CHECK(uneven.error().to_string().find("instruction 'w2'") != std::string::npos);
  }

  TEST_CASE("every real model of the corpus is read and sharded on 8 devices") {
    const std::filesystem::path dir = std::filesystem::path(XLAMEM_TEST_SHARED_DATA) / "hlo" / "xla-models";
    if (!std::filesystem::exists(dir)) {
      MESSAGE("skipped: " << dir.string() << " is absent (the shared data)");
      return;
    }
    const auto mesh = mesh_of("2x4");
    auto machine = machine_for("h100-8-nvlink", mesh);
    REQUIRE(machine);
    std::size_t read = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".hlo") continue;
      CAPTURE(entry.path().filename().string());
      auto m = hlo::read_module_file(entry.path().string());
      REQUIRE_MESSAGE(m, m.error().to_string());
      auto p = read_hlo_program(*m, mesh);
      if (!p) {  // a module that already holds shardings of another mesh is refused with a reason
        CHECK(p.error().to_string().find("instruction '") != std::string::npos);
        continue;
      }
      CHECK(check_program(p->program));
      auto_shard_options o;
      o.solve.time_limit = 2;
      auto r = auto_shard(p->program, mesh, *machine, o);
      REQUIRE_MESSAGE(r, r.error().to_string());
      CHECK(r->solve.feasible);
      CHECK(r->shardings.size() == p->program.op_count());
      ++read;
    }
    CHECK(read >= 5);
  }
}
