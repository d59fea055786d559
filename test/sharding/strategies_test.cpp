// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/strategies.hpp: the strategies of a matrix product on a 1-D mesh written
// out by hand (which splits divide, which leave partial sums, the reduce-scatter and all-reduce
// that finish them and their costs by the collective formulas), the roofline compute time, the
// count on a 2-D mesh and with axes of size 1, fixed shardings (kept, uneven, impossible), the
// cap on strategies, and whole dimensions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "support/sharding_layouts.hpp"
#include "support/sharding_programs.hpp"
#include "xlamem/sharding/strategies.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::test;

namespace {

std::vector<op_strategy> strategies(const program_op& op, const device_mesh& mesh, std::size_t cap = 64) {
  auto s = op_strategies(op, mesh, test_machine(mesh), cap);
  REQUIRE_MESSAGE(s, s.error().to_string());
  return *s;
}

const op_strategy* find_output(const std::vector<op_strategy>& all, const tensor_sharding& out,
                               const tensor_sharding& lhs) {
  for (const auto& s : all) {
    if (s.output == out && s.operands[0] == lhs) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_SUITE("sharding/strategies") {
  TEST_CASE("a matrix product on 4 devices: every even split, partial sums finished two ways") {
    const auto mesh = mesh_of("4");
    const auto p = matmul_program();
    const auto all = strategies(p.ops[2], mesh);
    // Axis on m (8 % 4 = 0), on k (4 % 4 = 0: partial sums, two finishes), not on n (6 % 4 != 0).
    REQUIRE(all.size() == 4);
    CHECK(all[0].output == spec({{}, {}}));
    CHECK(all[0].finish.empty());
    const machine_model machine = test_machine(mesh);
    const double flops = 2.0 * 8 * 4 * 6;

    const auto* rows = find_output(all, spec({{0}, {}}), spec({{0}, {}}));
    REQUIRE(rows != nullptr);
    CHECK(rows->operands[1] == spec({{}, {}}));
    CHECK(rows->finish.empty());
    // Roofline: the bytes dominate (x/4 + w + y/4 = 32 + 96 + 48 bytes at 1e10 B/s).
    CHECK(rows->compute_seconds == doctest::Approx(std::max(flops / 4 / 1e9, (32.0 + 96 + 48) / 1e10)));

    const auto* scattered = find_output(all, spec({{0}, {}}), spec({{}, {0}}));
    REQUIRE(scattered != nullptr);
    CHECK(scattered->operands[1] == spec({{0}, {}}));
    REQUIRE(scattered->finish.size() == 1);
    CHECK(scattered->finish[0].kind == collective_kind::reduce_scatter);
    const auto rs = collective(collective_kind::reduce_scatter, machine, mesh, std::vector<std::size_t>{0}, 8.0 * 6 * 4);
    CHECK(scattered->finish_seconds == doctest::Approx(rs->seconds));

    const auto* reduced = find_output(all, spec({{}, {}}), spec({{}, {0}}));
    REQUIRE(reduced != nullptr);
    REQUIRE(reduced->finish.size() == 1);
    CHECK(reduced->finish[0].kind == collective_kind::all_reduce);
    const auto ar = collective(collective_kind::all_reduce, machine, mesh, std::vector<std::size_t>{0}, 8.0 * 6 * 4);
    CHECK(reduced->finish_seconds == doctest::Approx(ar->seconds));
    CHECK(reduced->seconds() == doctest::Approx(reduced->compute_seconds + ar->seconds));
    // The replicated product repeats all the work on every device.
    CHECK(all[0].compute_seconds == doctest::Approx(std::max(flops / 1e9, (128.0 + 96 + 192) / 1e10)));
  }

  TEST_CASE("an argument costs nothing to run; counts on a 2-D mesh and with axes of size 1") {
    const auto p = matmul_program();
    const auto on_2x2 = strategies(p.ops[0], mesh_of("2x2"));
    CHECK(on_2x2.size() == 9);  // each axis: none, rows or columns (8 and 4 divide by 2 and 4)
    for (const auto& s : on_2x2) CHECK(s.seconds() == 0);
    CHECK(strategies(p.ops[0], mesh_of("1x4")).size() == 3);  // an axis of size 1 changes nothing
    CHECK(strategies(p.ops[1], mesh_of("4")).size() == 2);   // w [4, 6]: 6 is not a multiple of 4
  }

  TEST_CASE("a fixed sharding keeps the strategies that produce it, or names what is wrong") {
    const auto mesh = mesh_of("4");
    auto p = matmul_program();
    p.ops[2].fixed = spec({{0}, {}});
    const auto kept = strategies(p.ops[2], mesh);
    CHECK(kept.size() == 2);  // rows split, and the reduce-scatter onto rows
    for (const auto& s : kept) CHECK(s.output == spec({{0}, {}}));

    // An uneven split fixed by the program is padded, as XLA pads it (6 columns in 4 tiles of 2).
    p.ops[2].fixed = spec({{}, {0}});
    const auto padded = strategies(p.ops[2], mesh);
    REQUIRE(padded.size() == 1);
    CHECK(padded[0].operands[1] == spec({{}, {0}}));
    CHECK(shard_bytes(padded[0].output, p.ops[2].shape, mesh) == 8 * 2 * 4);

    // A split the letters do not allow: the operation runs replicated and keeps its slice.
    p.ops[2].fixed = spec({{0}, {}});
    p.ops[2].output_letters = {whole_dimension, 2};
    const auto sliced = strategies(p.ops[2], mesh);
    REQUIRE(sliced.size() == 1);
    CHECK(sliced[0].output == spec({{0}, {}}));
    CHECK(sliced[0].operands[0] == spec({{}, {}}));
    CHECK(sliced[0].operands[1] == spec({{}, {}}));
    CHECK(sliced[0].finish.empty());

    // A fixed sharding that cannot lay out the array at all is named.
    p.ops[2].fixed = spec({{0}, {0}});
    auto twice = op_strategies(p.ops[2], mesh, test_machine(mesh));
    REQUIRE_FALSE(twice);
    CHECK(twice.error().to_string().find("operation 'y''s own sharding") != std::string::npos);
    CHECK(twice.error().to_string().find("a second time") != std::string::npos);
  }

  TEST_CASE("whole dimensions take no axis; the cap keeps the replicated strategy and the cheapest") {
    const auto mesh = mesh_of("2x2");
    auto p = matmul_program();
    p.ops[0].output_letters = {whole_dimension, whole_dimension};
    const auto only = strategies(p.ops[0], mesh);
    REQUIRE(only.size() == 1);
    CHECK(only[0].output == spec({{}, {}}));

    const auto all = strategies(p.ops[2], mesh);
    const auto capped = strategies(p.ops[2], mesh, 3);
    REQUIRE(capped.size() == 3);
    CHECK(capped[0].output == spec({{}, {}}));
    std::vector<double> rest;
    for (std::size_t i = 1; i < all.size(); ++i) rest.push_back(all[i].seconds());
    std::sort(rest.begin(), rest.end());
    CHECK(capped[1].seconds() == doctest::Approx(rest[0]));
    CHECK(capped[2].seconds() == doctest::Approx(rest[1]));
    CHECK_FALSE(op_strategies(p.ops[2], mesh, test_machine(mesh), 0));
  }
}
