// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/mesh.hpp: both mesh forms, every parse and validation error naming the bad
// text, strides and names, the presets (names, published figures, the error listing them), and
// how a preset's levels map onto mesh axes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "xlamem/sharding/mesh.hpp"

using namespace xlamem;
using namespace xlamem::sharding;

namespace {

// The error of parsing `text`, which must fail.
error parse_failure(const std::string& text) {
  auto m = parse_mesh(text);
  REQUIRE_MESSAGE(!m, text);
  return m.error();
}

}  // namespace

TEST_CASE("a mesh by sizes gets x, y, z, then a3...; by names keeps them") {
  auto m = parse_mesh("2x4");
  REQUIRE_MESSAGE(m, m.error().to_string());
  CHECK(m->axis_count() == 2);
  CHECK(m->axis(0) == mesh_axis{"x", 2});
  CHECK(m->axis(1) == mesh_axis{"y", 4});
  CHECK(m->device_count() == 8);
  CHECK(m->to_string() == "x=2,y=4");

  auto four = parse_mesh("1x2x3x4");
  REQUIRE(four);
  CHECK(four->axis(2).name == "z");
  CHECK(four->axis(3).name == "a3");
  CHECK(four->device_count() == 24);

  auto named = parse_mesh(" data = 2 , model=4 ");
  REQUIRE_MESSAGE(named, named.error().to_string());
  CHECK(named->axis(0) == mesh_axis{"data", 2});
  CHECK(named->axis(1) == mesh_axis{"model", 4});
  CHECK(named->find("model") == std::optional<std::size_t>(1));
  CHECK_FALSE(named->find("pipe"));
  // Row-major numbering: neighbours on 'data' are 4 devices apart, on 'model' 1.
  CHECK(named->stride(0) == 4);
  CHECK(named->stride(1) == 1);
  auto again = parse_mesh(named->to_string());
  REQUIRE(again);
  CHECK(*again == *named);

  auto one = parse_mesh("8");
  REQUIRE(one);
  CHECK(one->axis(0) == mesh_axis{"x", 8});
}

TEST_CASE("mesh syntax errors quote the bad part") {
  struct bad {
    const char* text;
    errc code;
    const char* quoted;
  };
  for (const bad& b : std::vector<bad>{
           {"", errc::parse_error, "is empty"},
           {"2x", errc::parse_error, "axis 1 ('') is empty"},
           {"2xx4", errc::parse_error, "axis 1 ('') is empty"},
           {"2xfour", errc::parse_error, "'four' is not a whole number"},
           {"2x4.5", errc::parse_error, "'4.5' is not a whole number"},
           {"99999999999999999999x2", errc::parse_error, "is not a whole number"},
           {"data=2,model", errc::parse_error, "axis 1 ('model') is not name=size"},
           {"data=2,,model=4", errc::parse_error, "axis 1 ('') is empty"},
           {"=2", errc::parse_error, "has no name before '='"},
           {"data=,model=4", errc::parse_error, "'' is not a whole number"},
           {"data=2x4", errc::parse_error, "'2x4' is not a whole number"},
       }) {
    const error e = parse_failure(b.text);
    CHECK_MESSAGE(e.code() == b.code, b.text, " -> ", e.to_string());
    CHECK_MESSAGE(e.message().find(b.quoted) != std::string::npos, b.text, " -> ", e.to_string());
    CHECK_MESSAGE(e.message().find(std::string("mesh \"") + b.text + "\"") != std::string::npos, e.to_string());
  }
}

TEST_CASE("mesh validation: sizes, names, device count") {
  struct bad {
    const char* text;
    const char* message;
  };
  for (const bad& b : std::vector<bad>{
           {"0x4", "mesh axis 'x' has size 0; sizes are >= 1"},
           {"2x-1", "mesh axis 'y' has size -1"},
           {"data=2,data=4", "mesh axis name 'data' appears twice"},
           {"1bad=2", "has the name '1bad'"},
           {"da-ta=2", "has the name 'da-ta'"},
           {"1024x1024x2", "more than 1048576 devices (at axis 'z')"},
           {"2097152", "more than 1048576 devices"},
       }) {
    const error e = parse_failure(b.text);
    CHECK_MESSAGE(e.code() == errc::invalid_argument, b.text, " -> ", e.to_string());
    CHECK_MESSAGE(e.message().find(b.message) != std::string::npos, b.text, " -> ", e.to_string());
  }
  CHECK(parse_mesh("1024x1024"));  // exactly 2^20 is allowed
  CHECK_FALSE(device_mesh::make({}));
  std::vector<mesh_axis> many(max_mesh_axes + 1, mesh_axis{"a", 1});
  for (std::size_t i = 0; i < many.size(); ++i) many[i].name = "a" + std::to_string(i);
  auto too_many = device_mesh::make(many);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message().find("17 axes; at most 16") != std::string::npos);
}

TEST_CASE("presets: names, their published figures, and the error that lists them") {
  std::vector<std::string> names;
  for (const auto& p : machine_presets()) names.emplace_back(p.name);
  CHECK(names == std::vector<std::string>{"h100-8-nvlink", "h100-2x8-ib", "tpu-v5e-256", "cpu-host-8"});
  auto unknown = find_machine_preset("dgx-a100");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code() == errc::not_found);
  CHECK(unknown.error().message() ==
        "no machine called 'dgx-a100' (machines: h100-8-nvlink, h100-2x8-ib, tpu-v5e-256, cpu-host-8)");
  auto h100 = find_machine_preset("h100-2x8-ib");
  REQUIRE(h100);
  CHECK((*h100)->device_count() == 16);
  CHECK((*h100)->levels[0].link.bandwidth == 450e9);  // 900 GB/s both ways
  CHECK((*h100)->levels[1].link.bandwidth == 50e9);   // 400 Gb/s NDR per GPU
  CHECK((*h100)->flops == 989.4e12);
  CHECK((*h100)->memory_bandwidth == 3.35e12);
  auto cpu = find_machine_preset(default_machine_name);
  REQUIRE(cpu);
  CHECK((*cpu)->device_count() == 8);
}

TEST_CASE("a preset's levels map onto mesh axes by the devices each axis spans") {
  const auto links = [](const char* machine, const char* mesh_text) {
    auto mesh = parse_mesh(mesh_text);
    REQUIRE(mesh);
    auto m = machine_for(machine, *mesh);
    REQUIRE_MESSAGE(m, m.error().to_string());
    CHECK(check_machine(*m, *mesh));
    std::vector<double> out;
    for (const auto& l : m->links) out.push_back(l.bandwidth);
    return out;
  };
  // Two hosts of 8: an outer axis of 2 crosses hosts, an inner one of 8 stays inside.
  CHECK(links("h100-2x8-ib", "2x8") == std::vector<double>{50e9, 450e9});
  CHECK(links("h100-2x8-ib", "4x4") == std::vector<double>{50e9, 450e9});
  CHECK(links("h100-2x8-ib", "8x2") == std::vector<double>{50e9, 450e9});
  CHECK(links("h100-2x8-ib", "16") == std::vector<double>{50e9});
  CHECK(links("h100-2x8-ib", "2x4") == std::vector<double>{450e9, 450e9});  // one host is enough
  CHECK(links("h100-2x8-ib", "2x2x4") == std::vector<double>{50e9, 450e9, 450e9});
  CHECK(links("h100-8-nvlink", "2x4") == std::vector<double>{450e9, 450e9});
  CHECK(links("h100-8-nvlink", "3") == std::vector<double>{450e9});  // not a divisor: the outermost level
  CHECK(links("tpu-v5e-256", "16x16") == std::vector<double>{100e9, 100e9});
  CHECK(links("cpu-host-8", "2x2x2") == std::vector<double>{38.4e9, 38.4e9, 38.4e9});

  auto big = parse_mesh("4x8");
  REQUIRE(big);
  auto refused = machine_for("h100-2x8-ib", *big);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message() == "mesh x=4,y=8 has 32 devices; machine 'h100-2x8-ib' has 16");
  CHECK_FALSE(machine_for("nope", *big));
}

TEST_CASE("a user's own machine is checked against the mesh") {
  auto mesh = parse_mesh("data=2,model=4");
  REQUIRE(mesh);
  machine_model m{"mine", {{1e-6, 1e9}}, 1e12, 1e11};
  auto wrong = check_machine(m, *mesh);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message() == "machine 'mine' has 1 links for a mesh of 2 axes (data=2,model=4)");
  m.links.push_back({1e-6, 0});
  auto zero = check_machine(m, *mesh);
  REQUIRE_FALSE(zero);
  CHECK(zero.error().message().find("axis 'model' needs a latency >= 0 and a bandwidth > 0") != std::string::npos);
  m.links.back().bandwidth = 2e9;
  CHECK(check_machine(m, *mesh));
  m.flops = 0;
  CHECK_FALSE(check_machine(m, *mesh));
}
