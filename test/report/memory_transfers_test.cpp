// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/report/memory_transfers.hpp: host offloading as XLA leaves it after
// its host offloader (copy-start / copy-done pairs to and from S(5), a dynamic-update-slice into
// a host buffer and a dynamic-slice out of it) gives the transfers each way, a host peak apart
// from the device peak, the summary's transfer line and the diff's rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "xlamem/input_file.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_page.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/report/diff.hpp"
#include "xlamem/report/memory_transfers.hpp"

namespace {

// test/data/memory-spaces/offloaded.hlo: an activation offloaded to host memory and brought
// back (copy-start/copy-done), and a slice written into a host buffer and read back
// (dynamic-update-slice / dynamic-slice), as XLA's host offloader leaves activation offloading,
// with 1 MiB activations; kept.hlo: the same program with the activation kept in device memory;
// dus_ds.hlo: XLA's host-offloader test BasicDusDs after the offloader (an f32[1,2048,2048]
// activation written into an f32[2,2048,2048] host buffer and sliced back).
std::string module_text(const char* name) {
  const auto path = std::string(XLAMEM_TEST_SOURCE_DIR) + "/data/memory-spaces/" + name;
  auto text = xlamem::read_input_file(path);
  REQUIRE_MESSAGE(text.has_value(), path);
  return *text;
}

xlamem::report::memory_report report_of(const char* name) {
  xlamem::report::plan_request r;
  r.backend = "gpu";
  auto out = xlamem::plan_report(module_text(name), name, r);
  REQUIRE(out.has_value());
  return *out;
}

}  // namespace

TEST_SUITE("report/memory_transfers") {
  TEST_CASE("copy-start pairs and dynamic slices between device and host memory are the transfers") {
    const auto r = report_of("offloaded.hlo");
    REQUIRE(r.transfers.size() == 4);
    const auto& t = r.transfers;
    CHECK(t[0].instruction == "cs");
    CHECK(t[0].from_color == 0);
    CHECK(t[0].to_color == 5);
    CHECK(t[0].bytes == 1024 * 256 * 4);
    CHECK(t[0].time >= 0);
    CHECK(t[1].instruction == "dus");  // the update's bytes move, not the host buffer's
    CHECK(t[1].to_color == 5);
    CHECK(t[1].bytes == 256 * 4);
    CHECK(t[2].instruction == "ds");
    CHECK(t[2].from_color == 5);
    CHECK(t[2].bytes == 256 * 4);
    CHECK(t[3].instruction == "cs2");
    CHECK(t[3].from_color == 5);
    CHECK(t[3].to_color == 0);
    CHECK(r.transferred_bytes(true) == 1024 * 256 * 4 + 256 * 4);
    CHECK(r.transferred_bytes(false) == 1024 * 256 * 4 + 256 * 4);
  }

  TEST_CASE("host memory has its own peak, apart from the device's") {
    const auto r = report_of("offloaded.hlo");
    CHECK(r.host_peak() >= 1024 * 256 * 4);
    bool device = false, host = false;
    for (const auto& m : r.memory_spaces) {
      device = device || (!m.host && m.bytes > 0);
      host = host || (m.host && m.bytes == r.host_peak());
    }
    CHECK(device);
    CHECK(host);
    // The report's one peak is device memory's: the host bytes are not in it.
    for (const auto& m : r.memory_spaces) {
      if (m.color == 0) CHECK(r.peak.bytes == m.bytes);
    }
    const auto text = xlamem::summary_text(r);
    CHECK(text.find("transfers: 1.00 MiB to host memory in 2 instructions") != std::string::npos);
    CHECK(text.find("(host): peak") != std::string::npos);
    const auto page = xlamem::report_page(r);
    CHECK(page.find("host memory peak") != std::string::npos);
    CHECK(page.find("to host, ") != std::string::npos);
    // The page's host chart: its data names the host colour and each transfer with its step.
    CHECK(page.find("\"host\":{\"color\":5") != std::string::npos);
    CHECK(page.find("<svg id=\"host\"") != std::string::npos);
    for (const auto& m : r.transfers) {
      if (m.time >= 0) CHECK(page.find("[" + std::to_string(m.time) + "," + std::to_string(m.bytes) + ",") != std::string::npos);
    }
    // Host use over time peaks where memory_spaces says, and is never above it.
    const auto usage = xlamem::report::memory_space_usage(r.timeline, r.timeline.host_color);
    std::int64_t most = 0;
    for (const auto v : usage) most = std::max(most, v);
    CHECK(most == r.host_peak());
  }

  TEST_CASE("XLA's BasicDusDs after its host offloader: 16 MiB each way, a 32 MiB host buffer") {
    const auto r = report_of("dus_ds.hlo");
    REQUIRE(r.transfers.size() == 2);
    CHECK(r.transfers[0].opcode == "dynamic-update-slice");
    CHECK(r.transfers[0].bytes == 16 << 20);
    CHECK(r.transfers[1].opcode == "dynamic-slice");
    CHECK(r.transfers[1].bytes == 16 << 20);
    CHECK(r.host_peak() == 32 << 20);
  }

  TEST_CASE("a module without memory spaces moves nothing; the diff shows what offloading adds") {
    const auto before = report_of("kept.hlo");
    CHECK(before.transfers.empty());
    CHECK(before.host_peak() == 0);
    CHECK(xlamem::report_page(before).find("\"host\":{") == std::string::npos);  // no host chart
    const auto after = report_of("offloaded.hlo");
    const auto d = xlamem::report::diff(before, after);
    bool to_host = false, host_peak = false;
    for (const auto& s : d.stats) {
      if (s.name == "to host") to_host = s.before == 0 && s.after == after.transferred_bytes(true);
      if (s.name == "host peak") host_peak = s.before == 0 && s.after == after.host_peak();
    }
    CHECK(to_host);
    CHECK(host_peak);
    CHECK(xlamem::diff_text(d).find("to host") != std::string::npos);
  }
}
