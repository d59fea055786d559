// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/tensor_sharding.hpp: validation errors naming dimension, size and axes;
// shard shapes, bytes and replication computed by hand (even and padded); PartitionSpec text;
// HLO sharding attributes written by hand from XLA's format (iota tile assignments with and
// without a transpose, last_tile_dim_replicate); and reading attributes back, every spec of a
// small mesh round-tripping.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/sharding_layouts.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::test;  // mesh_of, spec, all_specs

namespace {

std::string hlo(const tensor_sharding& s, const device_mesh& m) {
  auto text = to_hlo_sharding(s, m);
  REQUIRE_MESSAGE(text, text.error().to_string());
  return *text;
}

// An attribute that `parse_hlo_sharding` must refuse on mesh data=2,model=4, and a part of the
// message; every message also quotes the attribute.
struct bad_attribute {
  const char* text;
  std::size_t rank;
  const char* message;
};

void check_parse_failures(errc code, const std::vector<bad_attribute>& rows) {
  const device_mesh m = mesh_of("data=2,model=4");
  for (const bad_attribute& b : rows) {
    auto s = parse_hlo_sharding(b.text, b.rank, m);
    REQUIRE_FALSE_MESSAGE(s, b.text);
    CHECK_MESSAGE(s.error().code() == code, s.error().to_string());
    CHECK_MESSAGE(s.error().message().find(b.message) != std::string::npos, s.error().to_string());
    CHECK_MESSAGE(s.error().message().find(b.text) != std::string::npos, s.error().to_string());
  }
}

}  // namespace

TEST_CASE("shard shapes, bytes and replication on hand-computed cases") {
  const device_mesh m = mesh_of("data=2,model=4");
  const array_shape shape{{8, 16}, 4};  // 512 bytes
  struct row {
    tensor_sharding s;
    std::vector<std::int64_t> dims;
    std::int64_t bytes;
    std::int64_t replication;
  };
  for (const row& r : std::vector<row>{
           {tensor_sharding::replicated(2), {8, 16}, 512, 8},
           {spec({{0}, {}}), {4, 16}, 256, 4},
           {spec({{}, {1}}), {8, 4}, 128, 2},
           {spec({{0}, {1}}), {4, 4}, 64, 1},
           {spec({{0, 1}, {}}), {1, 16}, 64, 1},
           {spec({{1, 0}, {}}), {1, 16}, 64, 1},
           {spec({{}, {}}, {1}), {8, 16}, 512, 2},  // 4 addends, each held twice
           {spec({{0}, {}}, {1}), {4, 16}, 256, 1},
       }) {
    REQUIRE_MESSAGE(check_sharding(r.s, shape, m), partition_spec(r.s, m));
    CHECK(shard_dims(r.s, shape, m) == r.dims);
    CHECK(shard_bytes(r.s, shape, m) == r.bytes);
    CHECK(replication(r.s, m) == r.replication);
  }
}

TEST_CASE("uneven splits: rejected by default, padded to the ceiling when allowed") {
  const device_mesh m = mesh_of("data=2,model=4");
  const array_shape shape{{6, 3}, 2};
  const auto s = spec({{1}, {0}});
  auto refused = check_sharding(s, shape, m);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == errc::invalid_argument);
  CHECK(refused.error().message() == "dimension 0 (size 6) split over 'model' (4 tiles) is not a multiple of 4");
  REQUIRE(check_sharding(s, shape, m, uneven_shards::pad));
  CHECK(shard_dims(s, shape, m) == std::vector<std::int64_t>{2, 2});  // ceil(6/4), ceil(3/2)
  CHECK(shard_bytes(s, shape, m) == 8);
  // Several axes on one dimension are named together.
  auto both = check_sharding(spec({{0, 1}, {}}), array_shape{{12, 3}, 4}, m);
  REQUIRE_FALSE(both);
  CHECK(both.error().message() == "dimension 0 (size 12) split over ('data', 'model') (8 tiles) is not a multiple of 8");
}

TEST_CASE("invalid shardings name what is wrong") {
  const device_mesh m = mesh_of("data=2,model=4");
  const array_shape shape{{8, 16}, 4};
  struct bad {
    tensor_sharding s;
    const char* message;
  };
  for (const bad& b : std::vector<bad>{
           {spec({{0}, {0}}), "dimension 1 (size 16) uses mesh axis 'data' a second time"},
           {spec({{0, 0}, {}}), "dimension 0 (size 8) uses mesh axis 'data' a second time"},
           {spec({{0}, {}}, {0}), "the partial sums uses mesh axis 'data' a second time"},
           {spec({{}, {2}}), "dimension 1 (size 16) names mesh axis 2, which mesh data=2,model=4 does not have"},
           {spec({{}}), "a sharding of rank 1 for an array of rank 2"},
       }) {
    auto r = check_sharding(b.s, shape, m);
    REQUIRE_FALSE(r);
    CHECK(r.error().message() == b.message);
  }
  CHECK_FALSE(check_sharding(tensor_sharding::replicated(2), array_shape{{8, 16}, 0}, m));
  CHECK_FALSE(check_sharding(tensor_sharding::replicated(2), array_shape{{-1, 16}, 4}, m));
  CHECK_FALSE(check_sharding(tensor_sharding::replicated(2), array_shape{{1 << 30, 1 << 30}, 1 << 30}, m));
}

TEST_CASE("the allocation-free check agrees with check_sharding on every small sharding, valid or not") {
  // Rank 2 on x=2,y=3,z=2, axes 0..3 (3 is outside the mesh): each dimension and the partial
  // sums take 0 to 2 axes in any order, repeats included, on even and uneven shapes.
  const device_mesh m = mesh_of("x=2,y=3,z=2");
  std::vector<std::vector<std::size_t>> lists{{}};
  for (std::size_t a = 0; a < 4; ++a) {
    lists.push_back({a});
    for (std::size_t b = 0; b < 4; ++b) lists.push_back({a, b});
  }
  std::size_t checked = 0;
  std::size_t valid = 0;
  for (const array_shape& shape : {array_shape{{12, 6}, 4}, array_shape{{5, 7}, 2}, array_shape{{0, -3}, 4}}) {
    for (const auto& d0 : lists) {
      for (const auto& d1 : lists) {
        for (const auto& partial : lists) {
          tensor_sharding s;
          s.dims = {d0, d1};
          s.partial = partial;
          for (const uneven_shards u : {uneven_shards::reject, uneven_shards::pad}) {
            const bool ok = static_cast<bool>(check_sharding(s, shape, m, u));
            CHECK((sharding::detail::first_defect(s, shape, m, u).what == sharding::detail::sharding_defect::kind::none) == ok);
            ++checked;
            valid += ok ? 1 : 0;
          }
        }
      }
    }
  }
  CHECK(checked == 3 * 21 * 21 * 21 * 2);
  CHECK(valid > 200);  // both kinds exercised
  CHECK(valid < checked / 2);
}

TEST_CASE("PartitionSpec text") {
  const device_mesh m = mesh_of("data=2,model=4");
  CHECK(partition_spec(spec({{0}, {}}), m) == "P('data', None)");
  CHECK(partition_spec(spec({{0, 1}, {}}), m) == "P(('data', 'model'), None)");
  CHECK(partition_spec(spec({{}, {1}}, {0}), m) == "P(None, 'model', unreduced={'data'})");
  CHECK(partition_spec(tensor_sharding::replicated(0), m) == "P()");
  CHECK(partition_spec(spec({}, {0, 1}), m) == "P(unreduced={'data', 'model'})");
}

TEST_CASE("HLO sharding attributes, written by hand from XLA's format") {
  const device_mesh m = mesh_of("data=2,model=4");  // device = 4 * data + model
  CHECK(hlo(tensor_sharding::replicated(2), m) == "{replicated}");
  CHECK(hlo(tensor_sharding::replicated(0), m) == "{replicated}");
  CHECK(hlo(spec({{0}, {}}), m) == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  CHECK(hlo(spec({{}, {0}}), m) == "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  CHECK(hlo(spec({{1}, {}}), m) == "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  CHECK(hlo(spec({{0}, {1}}), m) == "{devices=[2,4]<=[8]}");
  CHECK(hlo(spec({{1}, {0}}), m) == "{devices=[4,2]<=[2,4]T(1,0)}");
  CHECK(hlo(spec({{0, 1}, {}}), m) == "{devices=[8,1]<=[8]}");
  CHECK(hlo(spec({{1, 0}, {}}), m) == "{devices=[8,1]<=[2,4]T(1,0)}");

  const device_mesh cube = mesh_of("a=2,b=2,c=2");
  CHECK(hlo(spec({{0, 2}, {1}}), cube) == "{devices=[4,2]<=[2,2,2]T(0,2,1)}");
  CHECK(hlo(spec({{1}, {}}), cube) == "{devices=[2,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
  // c first, then a and b (neighbours, merged into one dimension of 4).
  CHECK(hlo(spec({{2}, {}}), cube) == "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  CHECK(hlo(spec({{2}, {0, 1}}), cube) == "{devices=[2,4]<=[4,2]T(1,0)}");

  // Axes of size 1 drop out of the iota form; splitting over them alone is replication.
  const device_mesh thin = mesh_of("p=1,q=4");
  CHECK(hlo(spec({{1}}), thin) == "{devices=[4]<=[4]}");
  CHECK(hlo(spec({{0}}), thin) == "{replicated}");

  auto outside = to_hlo_sharding(spec({{0}, {7}}), m);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message() == "dimension 1 names mesh axis 7, which mesh data=2,model=4 does not have");
  CHECK_FALSE(to_hlo_sharding(spec({{0}, {}}, {0}), m));
  auto partial = to_hlo_sharding(spec({{0}, {}}, {1}), m);
  REQUIRE_FALSE(partial);
  CHECK(partial.error().code() == errc::failed_precondition);
  CHECK(partial.error().message().find("P('data', None, unreduced={'model'})") != std::string::npos);
}

TEST_CASE("HLO sharding attributes read back onto a mesh") {
  const device_mesh m = mesh_of("data=2,model=4");
  const auto read = [&](const char* text, std::size_t rank) {
    auto s = parse_hlo_sharding(text, rank, m);
    REQUIRE_MESSAGE(s, s.error().to_string());
    return partition_spec(*s, m);
  };
  CHECK(read("{replicated}", 2) == "P(None, None)");
  CHECK(read(" {devices=[2,1,4]<=[8] last_tile_dim_replicate} ", 2) == "P('data', None)");
  CHECK(read("{devices=[4,2]<=[2,4]T(1,0)}", 2) == "P('model', 'data')");
  CHECK(read("{devices=[8,1]<=[2,4]T(1,0)}", 2) == "P(('model', 'data'), None)");
  // Explicit device lists, as older XLA prints them.
  CHECK(read("{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}", 2) == "P('data', None)");
  CHECK(read("{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}", 2) == "P('model', None)");
  // The order of the replicas of a tile does not matter.
  CHECK(read("{devices=[4,1,2]4,0,1,5,2,6,3,7 last_tile_dim_replicate}", 2) == "P('model', None)");
  CHECK(read("{devices=[2,4]<=[8] metadata={op_name=\"x\"}}", 2) == "P('data', 'model')");
}

TEST_CASE("HLO sharding attributes that do not parse") {
  check_parse_failures(errc::parse_error, {
      {"devices=[2]", 1, "expected '{...}'"},
      {"{devices=[2,x]<=[8]}", 2, "expected [tile dimensions]"},
      {"{devices=[2,4]<=[8}", 2, "expected [dimensions] after '<='"},
      {"{devices=[2,4]<=[8]T(1,0)}", 2, "bad transpose"},
      {"{devices=[2,4]<=[1048576,1048576]}", 2, "the iota dimensions hold more than"},
  });
}

TEST_CASE("HLO sharding attributes with no PartitionSpec") {
  check_parse_failures(errc::unimplemented, {
      {"{maximal device=0}", 2, "only {replicated} and {devices=...}"},
      {"{manual}", 2, "only {replicated} and {devices=...}"},
      {"{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}", 2, "is not supported"},
  });
  check_parse_failures(errc::invalid_argument, {
      {"{devices=[3,1]0,1,2}", 2, "places 3 devices; mesh data=2,model=4 has 8"},
      {"{devices=[2,4]<=[8]}", 3, "has 2 tiled dimensions for an array of rank 3"},
      {"{devices=[2,4]-1,0,1,2,3,4,5,6}", 2, "is no PartitionSpec"},
      // Tiles by parity of 'model': no assignment of whole axes does that.
      {"{devices=[2,4]0,2,4,6,1,3,5,7}", 2, "is no PartitionSpec over the axes of mesh"},
  });
}

TEST_CASE("every spec of rank 2 and 3 on 2x4 and 2x2x2 round-trips through the HLO attribute") {
  for (const char* mesh_text : {"data=2,model=4", "a=2,b=2,c=2"}) {
    const device_mesh m = mesh_of(mesh_text);
    for (std::size_t rank : {2u, 3u}) {
      for (const auto& s : all_specs(rank, m, false)) {
        const std::string text = hlo(s, m);
        auto back = parse_hlo_sharding(text, rank, m);
        REQUIRE_MESSAGE(back, back.error().to_string());
        CHECK_MESSAGE(*back == s, partition_spec(s, m), " -> ", text, " -> ", partition_spec(*back, m));
      }
    }
  }
}
