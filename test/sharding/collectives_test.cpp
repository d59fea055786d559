// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/collectives.hpp: every collective's formula against figures computed by
// hand on one axis and on two axes of different links (the stage order chosen), bad arguments;
// resharding: every single-axis move, multi-axis moves, invalid moves, the identity, round
// trips, and a brute force over every sharding of a rank-2 and a rank-3 array on 2x2 and 2x2x2
// meshes (and an uneven one): a resharding never costs more than gathering everything and slicing,
// and the unchecked pricing a problem's build uses (one scratch for all pairs) gives the same figures.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/sharding_layouts.hpp"
#include "xlamem/sharding/collectives.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::test;  // mesh_of, spec, all_specs

namespace {

collective_cost cost(collective_kind k, const machine_model& machine, const device_mesh& mesh,
                     std::vector<std::size_t> axes, double bytes) {
  auto c = collective(k, machine, mesh, axes, bytes);
  REQUIRE_MESSAGE(c, c.error().to_string());
  return *c;
}

resharding_cost reshard(const array_shape& shape, const tensor_sharding& from, const tensor_sharding& to,
                        const device_mesh& mesh, const machine_model& machine) {
  auto r = resharding(shape, from, to, mesh, machine);
  REQUIRE_MESSAGE(r, r.error().to_string());
  return *r;
}

// The axes of `s` that split some dimension.
std::vector<std::size_t> split_axes(const tensor_sharding& s) {
  std::vector<std::size_t> out;
  for (const auto& d : s.dims) out.insert(out.end(), d.begin(), d.end());
  return out;
}

bool partial_subset(const tensor_sharding& inner, const tensor_sharding& outer) {
  for (std::size_t a : inner.partial) {
    bool found = false;
    for (std::size_t b : outer.partial) found = found || a == b;
    if (!found) return false;
  }
  return true;
}

}  // namespace

// One collective and the figures computed by hand for it.
struct expected_cost {
  collective_kind kind;
  std::vector<std::size_t> axes;
  double bytes;
  double seconds;
  double bytes_sent;
};

void check_costs(const machine_model& machine, const device_mesh& m, const std::vector<expected_cost>& rows) {
  for (const expected_cost& r : rows) {
    const collective_cost c = cost(r.kind, machine, m, r.axes, r.bytes);
    CHECK_MESSAGE(c.seconds == doctest::Approx(r.seconds).epsilon(1e-12), to_string(r.kind));
    CHECK_MESSAGE(c.bytes_sent == doctest::Approx(r.bytes_sent), to_string(r.kind));
  }
}

TEST_CASE("one axis: every collective against figures computed by hand") {
  const device_mesh m = mesh_of("x=4");
  const machine_model machine{"test", {{1e-6, 1e9}}, 1e12, 1e11};
  check_costs(machine, m, {
      {collective_kind::all_gather, {0}, 1000, 3e-6 + 3e-6, 3000},      // 3 steps, 3 shards of 1000
      {collective_kind::reduce_scatter, {0}, 4000, 3e-6 + 3e-6, 3000},  // 3 steps of 1000
      {collective_kind::all_reduce, {0}, 4000, 12e-6, 6000},            // the two above
      {collective_kind::all_to_all, {0}, 4000, 3e-6 + 3e-6, 3000},      // 1000 to each of 3 peers
      {collective_kind::collective_permute, {0}, 4000, 1e-6 + 4e-6, 4000},
      // No axes cost nothing.
      {collective_kind::all_gather, {}, 4000, 0, 0},
      {collective_kind::all_reduce, {}, 4000, 0, 0},
      {collective_kind::collective_permute, {}, 4000, 0, 0},
  });
  // Nor do axes of size 1.
  const device_mesh thin = mesh_of("x=1,y=4");
  const machine_model two{"test", {{1e-6, 1e9}, {1e-6, 1e9}}, 1e12, 1e11};
  CHECK(cost(collective_kind::all_reduce, two, thin, {0}, 4000).seconds == 0);
  CHECK(to_string(collective_kind::reduce_scatter) == "reduce-scatter");
  CHECK(to_string(collective_kind::collective_permute) == "collective-permute");
}

TEST_CASE("two axes of different links: hierarchical stages in the cheapest order") {
  const device_mesh m = mesh_of("x=2,y=4");
  const machine_model machine{"test", {{1e-6, 1e9}, {0.5e-6, 4e9}}, 1e12, 1e11};
  check_costs(machine, m, {
      // all-gather of 1000: x (slowest) first, 1e-6 + 1000/1e9; then y on 2000, 1.5e-6 + 6000/4e9
      // (the other order would cost 2.25e-6 + 5e-6).
      {collective_kind::all_gather, {1, 0}, 1000, 2e-6 + 3e-6, 1000 + 6000},
      // reduce-scatter of 8000: y (fastest) first, 1.5e-6 + 6000/4e9; then x on 2000, 1e-6 + 1000/1e9.
      {collective_kind::reduce_scatter, {0, 1}, 8000, 3e-6 + 2e-6, 7000},
      // all-reduce: that reduce-scatter, then the all-gather of its 1000-byte result.
      {collective_kind::all_reduce, {0, 1}, 8000, 10e-6, 14000},
      // all-to-all: the axes' terms add: x 1e-6 + 4000/1e9, y 1.5e-6 + 6000/4e9.
      {collective_kind::all_to_all, {0, 1}, 8000, 5e-6 + 3e-6, 10000},
      // permute: the slowest link once.
      {collective_kind::collective_permute, {0, 1}, 8000, 1e-6 + 8e-6, 8000},
  });
}

TEST_CASE("collective arguments are checked") {
  const device_mesh m = mesh_of("x=2,y=4");
  const machine_model machine{"test", {{1e-6, 1e9}, {1e-6, 1e9}}, 1e12, 1e11};
  const std::vector<std::size_t> outside{2}, twice{1, 1}, fine{0};
  auto a = collective(collective_kind::all_gather, machine, m, outside, 8);
  REQUIRE_FALSE(a);
  CHECK(a.error().message() == "a collective over axis 2, which mesh x=2,y=4 does not have");
  auto b = collective(collective_kind::all_gather, machine, m, twice, 8);
  REQUIRE_FALSE(b);
  CHECK(b.error().message() == "a collective names axis 'y' twice");
  CHECK_FALSE(collective(collective_kind::all_gather, machine, m, fine, -1));
  const machine_model short_machine{"short", {{1e-6, 1e9}}, 1e12, 1e11};
  CHECK_FALSE(collective(collective_kind::all_gather, short_machine, m, fine, 8));
}

TEST_CASE("resharding: every single-axis move") {
  const device_mesh m = mesh_of("x=4");
  const machine_model machine{"test", {{1e-6, 1e9}}, 1e12, 1e11};
  const array_shape shape{{8, 8}, 4};  // 256 bytes, 64 per shard
  const auto none = tensor_sharding::replicated(2);
  const auto d0 = spec({{0}, {}});
  const auto d1 = spec({{}, {0}});
  const auto part = spec({{}, {}}, {0});

  CHECK(reshard(shape, none, d0, m, machine).steps.empty());  // a local slice
  CHECK(reshard(shape, none, d0, m, machine).seconds == 0);

  auto gather = reshard(shape, d0, none, m, machine);
  REQUIRE(gather.steps.size() == 1);
  CHECK(gather.steps[0].kind == collective_kind::all_gather);
  CHECK(gather.steps[0].axes == std::vector<std::size_t>{0});
  CHECK(gather.steps[0].bytes_in == 64);
  CHECK(gather.seconds == doctest::Approx(3e-6 + 3 * 64 / 1e9));
  CHECK(gather.bytes_sent == doctest::Approx(192));

  auto exchange = reshard(shape, d0, d1, m, machine);
  REQUIRE(exchange.steps.size() == 1);
  CHECK(exchange.steps[0].kind == collective_kind::all_to_all);
  CHECK(exchange.seconds == doctest::Approx(3e-6 + 0.75 * 64 / 1e9));

  auto reduce = reshard(shape, part, none, m, machine);
  REQUIRE(reduce.steps.size() == 1);
  CHECK(reduce.steps[0].kind == collective_kind::all_reduce);
  CHECK(reduce.steps[0].bytes_in == 256);
  CHECK(reduce.seconds == doctest::Approx(2 * (3e-6 + 0.75 * 256 / 1e9)));

  auto scatter = reshard(shape, part, d1, m, machine);
  REQUIRE(scatter.steps.size() == 1);
  CHECK(scatter.steps[0].kind == collective_kind::reduce_scatter);
  CHECK(scatter.seconds == doctest::Approx(3e-6 + 0.75 * 256 / 1e9));

  CHECK(reshard(shape, part, part, m, machine).seconds == 0);
  // Axes of size 1 move nothing and take no step.
  const device_mesh thin = mesh_of("p=1,x=4");
  const machine_model two{"test", {{1e-6, 1e9}, {1e-6, 1e9}}, 1e12, 1e11};
  CHECK(reshard(shape, spec({{0}, {}}, {}), spec({{}, {0}}, {}), thin, two).steps.empty());
  CHECK(reshard(shape, spec({{}, {}}, {0}), none, thin, two).steps.empty());
  for (const auto& from : {none, d0}) {
    auto bad = resharding(shape, from, part, m, machine);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message().find("cannot become a partial sum over 'x'") != std::string::npos);
  }
}

TEST_CASE("resharding: moves over several axes, in the order that moves the fewest bytes") {
  const device_mesh m = mesh_of("x=2,y=4");
  const machine_model machine{"test", {{1e-6, 1e9}, {0.5e-6, 4e9}}, 1e12, 1e11};
  const array_shape shape{{8, 16}, 4};  // 512 bytes
  auto gather = reshard(shape, spec({{0, 1}, {}}), tensor_sharding::replicated(2), m, machine);
  REQUIRE(gather.steps.size() == 1);
  CHECK(gather.steps[0].axes == std::vector<std::size_t>{0, 1});
  CHECK(gather.steps[0].bytes_in == 64);
  CHECK(gather.seconds == doctest::Approx(cost(collective_kind::all_gather, machine, m, {0, 1}, 64).seconds));

  // Keeping 'x' on dimension 0 and adding 'y' after it is a slice.
  CHECK(reshard(shape, spec({{0}, {}}), spec({{0, 1}, {}}), m, machine).seconds == 0);
  // 'y' before 'x' changes what 'x' cuts: both are gathered (then sliced again).
  auto reorder = reshard(shape, spec({{0}, {}}), spec({{1, 0}, {}}), m, machine);
  REQUIRE(reorder.steps.size() == 1);
  CHECK(reorder.steps[0].kind == collective_kind::all_gather);
  CHECK(reorder.steps[0].axes == std::vector<std::size_t>{0});

  // Swapping the axes of two dimensions: one all-to-all over both, on the 64-byte shards.
  auto swap = reshard(shape, spec({{0}, {1}}), spec({{1}, {0}}), m, machine);
  REQUIRE(swap.steps.size() == 1);
  CHECK(swap.steps[0].kind == collective_kind::all_to_all);
  CHECK(swap.steps[0].axes == std::vector<std::size_t>{0, 1});
  CHECK(swap.steps[0].bytes_in == 64);

  // A dot's output, partial over 'y', split on 'x': the reduce-scatter runs on the 256-byte
  // shard, after the free slice of 'x' onto dimension 1 would have... (here 'x' stays).
  auto rs = reshard(shape, spec({{0}, {}}, {1}), spec({{0}, {1}}), m, machine);
  REQUIRE(rs.steps.size() == 1);
  CHECK(rs.steps[0].kind == collective_kind::reduce_scatter);
  CHECK(rs.steps[0].bytes_in == 256);

  // Slices first: partial over 'y' to split 'x' on dimension 0 and 'y' replicated: slice 'x'
  // (512 -> 256 bytes), then all-reduce over 'y' on 256 bytes.
  auto sliced = reshard(shape, spec({{}, {}}, {1}), spec({{0}, {}}), m, machine);
  REQUIRE(sliced.steps.size() == 1);
  CHECK(sliced.steps[0].kind == collective_kind::all_reduce);
  CHECK(sliced.steps[0].bytes_in == 256);

  // Everything at once: x from dim 0 to dim 1 (all-to-all), y partial to replicated
  // (all-reduce), in that order, each on 256 bytes.
  auto mixed = reshard(shape, spec({{0}, {}}, {1}), spec({{}, {0}}), m, machine);
  REQUIRE(mixed.steps.size() == 2);
  CHECK(mixed.steps[0].kind == collective_kind::all_to_all);
  CHECK(mixed.steps[1].kind == collective_kind::all_reduce);
  CHECK(mixed.steps[1].bytes_in == 256);
  CHECK(mixed.seconds == doctest::Approx(mixed.steps[0].seconds + mixed.steps[1].seconds));

  auto bad = resharding(shape, spec({{0}}), tensor_sharding::replicated(2), m, machine);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message() == "the source sharding: a sharding of rank 1 for an array of rank 2");
  auto outside = resharding(shape, tensor_sharding::replicated(2), spec({{}, {}}, {9}), m, machine);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message() ==
        "the target sharding: the partial sums names mesh axis 9, which mesh x=2,y=4 does not have");
}

TEST_CASE("brute force: never above gather-everything-then-slice; identity free; round trips") {
  struct setup {
    const char* mesh;
    std::vector<axis_link> links;
    array_shape shape;
  };
  for (const setup& c : std::vector<setup>{
           {"x=2,y=2", {{5e-6, 1e9}, {1e-6, 8e9}}, {{8, 8}, 4}},
           {"x=2,y=2", {{1e-6, 8e9}, {5e-6, 1e9}}, {{4, 8, 4}, 2}},
           {"x=2,y=2", {{5e-6, 1e9}, {1e-6, 8e9}}, {{3, 5}, 4}},  // uneven: padded shards
           {"x=2,y=2,z=2", {{5e-6, 1e9}, {2e-6, 4e9}, {1e-6, 8e9}}, {{8, 8}, 4}},
           {"x=2,y=2,z=2", {{1e-6, 8e9}, {1e-6, 8e9}, {5e-6, 1e9}}, {{4, 8, 4}, 2}},
       }) {
    const device_mesh m = mesh_of(c.mesh);
    const machine_model machine{"test", c.links, 1e12, 1e11};
    const auto specs = all_specs(c.shape.dims.size(), m, true);
    std::size_t pairs = 0;
    sharding::detail::resharding_scratch scratch;  // one for every pair, as a problem's build uses it
    for (const auto& from : specs) {
      CHECK(reshard(c.shape, from, from, m, machine).seconds == 0);
      for (const auto& to : specs) {
        if (!partial_subset(to, from)) {
          CHECK_FALSE(resharding(c.shape, from, to, m, machine));
          continue;
        }
        ++pairs;
        const resharding_cost full = reshard(c.shape, from, to, m, machine);
        const double there = full.seconds;
        // The unchecked pricing with reused scratch gives the same figures, without the steps.
        const auto quick = sharding::detail::resharding_of(c.shape, from, to, m, machine, false, scratch);
        REQUIRE(quick);
        CHECK(quick->seconds == there);
        CHECK(quick->bytes_sent == full.bytes_sent);
        CHECK(quick->steps.empty());
        // The baseline: all-reduce the partial sums `to` drops, gather every split, slice.
        std::vector<std::size_t> dropped;
        for (std::size_t a : from.partial) {
          bool kept = false;
          for (std::size_t b : to.partial) kept = kept || a == b;
          if (!kept) dropped.push_back(a);
        }
        const double bytes = static_cast<double>(shard_bytes(from, c.shape, m));
        const double baseline = cost(collective_kind::all_reduce, machine, m, dropped, bytes).seconds +
                                cost(collective_kind::all_gather, machine, m, split_axes(from), bytes).seconds;
        CHECK_MESSAGE(there <= baseline * (1 + 1e-12), partition_spec(from, m), " -> ", partition_spec(to, m), ": ",
                      there, " > ", baseline);
        if (partial_subset(from, to) && !(from == to)) {
          const double back = reshard(c.shape, to, from, m, machine).seconds;
          CHECK_MESSAGE(there + back > 0, partition_spec(from, m), " <-> ", partition_spec(to, m));
        }
      }
    }
    CHECK(pairs > 200);
  }
}
