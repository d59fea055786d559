// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/xla/buffer_assignment_dump.hpp.
#include <doctest/doctest.h>

#include "support/oracle_helpers.hpp"

TEST_SUITE("io/buffer_assignment_dump") {
  using namespace xlamem::test::oracle_helpers;

  TEST_CASE("allocation headers and values, all flags") {
    auto r = parse_buffer_assignment_dump(kNewLayout, "ba.txt");
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    const auto& d = *r;
    REQUIRE(d.allocations.size() == 7);
    CHECK(d.allocations[0].maybe_live_out);
    CHECK_FALSE(d.allocations[0].is_entry_parameter());
    CHECK(d.allocations[0].values[0].instruction == "broadcast_add_fusion");
    CHECK(d.allocations[0].values[0].id == 18);
    CHECK(d.allocations[0].values[0].color == 0);
    CHECK(d.allocations[0].line == 2);

    const auto& p = d.allocations[2];
    CHECK(p.color == 5);
    CHECK(p.parameter == 1);
    CHECK(p.parameter_shape == "(f32[4], /*index=5*/s32[])");
    CHECK(p.parameter_shape_index == std::vector<std::int64_t>{1});
    CHECK(p.is_aliased_parameter());
    CHECK(p.values[0].has_shape_index);
    CHECK(p.values[0].shape_index == std::vector<std::int64_t>{1});
    CHECK(p.values[0].color == 5);

    CHECK(d.allocations[3].output_shape == "(f32[4], f32[8,4])");
    CHECK(d.allocations[3].values[0].has_shape_index);
    CHECK(d.allocations[3].values[0].shape_index.empty());
    CHECK(d.allocations[4].is_thread_local);
    CHECK(d.allocations[5].is_constant);
    const auto& t = d.allocations[6];
    CHECK(t.is_preallocated_temp);
    REQUIRE(t.values.size() == 2);
    CHECK(t.values[1].is_phi);
    CHECK(t.values[1].offset == 128);
    CHECK(t.values[1].size == 32);
    CHECK(t.values[1].shape == "f32[8]{0}");

    CHECK(d.allocation_of("ynn_fusion") == &d.allocations[6]);
    CHECK(d.allocation_of("y.1", {1}) == &d.allocations[2]);
    CHECK(d.allocation_of("nope") == nullptr);
    CHECK(d.find_allocation(4) == &d.allocations[4]);
    CHECK(d.find_allocation(9) == nullptr);

    const auto s = d.stats();
    CHECK(s.compiled.argument_size_in_bytes == 128);
    CHECK(s.compiled.output_size_in_bytes == 128 + 16);
    CHECK(s.compiled.alias_size_in_bytes == 0);
    CHECK(s.compiled.host_argument_size_in_bytes == 64);
    CHECK(s.compiled.host_output_size_in_bytes == 64);
    CHECK(s.compiled.host_alias_size_in_bytes == 64);
    CHECK(s.compiled.temp_size_in_bytes == 160);
    CHECK(s.constant == 8);
    CHECK(s.thread_local_bytes == 4);
    CHECK(s.total == 128 + 128 + 64 + 16 + 4 + 8 + 160);
  }

  TEST_CASE("the old single-file layout: totals, used values and live ranges in one text") {
    const std::string text = std::string(
        "BufferAssignment:\n"
        "allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
        " value: <0 p @0> (size=16,offset=0): f32[4]{0}\n"
        "allocation 1: size 16, maybe-live-out:\n"
        " value: <1 t{} @0> (size=16,offset=0): (f32[4]{0})\n"
        "\n"
        "Total bytes used: 32 (32B)\n"
        "\n"
        "Used values:\n"
        "<0 p @0>\n"
        " positions:\n"
        "  p\n"
        "  t {0}\n"
        " uses:\n"
        "  t, operand 0\n"
        "  w, operand 1 {0,2}\n"
        " from instruction: %p = f32[4]{0} parameter(0)\n"
        "<1 t{} @0>\n"
        " positions:\n"
        "  t {}\n"
        " uses:\n"
        "  (none)\n"
        " from instruction: %t = (f32[4]{0}) tuple(%p)\n"
        "HloLiveRange (max 2):\n"
        "  InstructionSequence:\n"
        "    0:p\n"
        "    1:t\n"
        "  BufferLiveRange:\n"
        "    p{}:0-2\n"
        "    t{}:1-2\n"
        "  Live ranges at 1 (peak):\n"
        "    p{}: 16 bytes (cumulative: 16 bytes)\n"
        "    t{}: 8 bytes (cumulative: 24 bytes)\n"
        "  Stack trace breakdown for peak usage: 24 bytes\n"
        "    main (100.0%, total: 24 bytes)\n"
        "      \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 p (66.7%)\n");
    auto r = parse_buffer_assignment_dump(text, "old.txt");
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    const auto& d = *r;
    CHECK(d.allocations.size() == 2);
    CHECK(d.total_bytes_used == 32);
    REQUIRE(d.used_values.size() == 2);
    const auto& v = d.used_values[0];
    CHECK(v.instruction == "p");
    REQUIRE(v.positions.size() == 2);
    CHECK(v.positions[1].instruction == "t");
    CHECK(v.positions[1].shape_index == std::vector<std::int64_t>{0});
    REQUIRE(v.uses.size() == 2);
    CHECK(v.uses[1].instruction == "w");
    CHECK(v.uses[1].operand == 1);
    CHECK(v.uses[1].operand_index == std::vector<std::int64_t>{0, 2});
    CHECK(v.from_instruction == "%p = f32[4]{0} parameter(0)");
    CHECK(d.used_values[1].uses.empty());
    CHECK(d.used_values[1].has_shape_index);
    REQUIRE(d.live_ranges.has_value());
    CHECK(d.live_ranges->max_time == 2);
    CHECK(d.live_ranges->instruction_sequence == std::vector<std::string>{"p", "t"});
    REQUIRE(d.live_range_of("t") != nullptr);
    CHECK(d.live_range_of("t")->start == 1);
    CHECK(d.live_range_of("t")->end == 2);
    CHECK(d.live_ranges->peak_time == 1);
    CHECK(d.live_ranges->peak.size() == 2);
    CHECK(d.live_ranges->peak_bytes == 24);
    CHECK(static_cast<std::uint64_t>(d.stats().total) == *d.total_bytes_used);
  }

  TEST_CASE("split files add up in one dump") {
    buffer_assignment_dump d;
    REQUIRE(xlamem::parse_buffer_assignment_dump_into(d, kNewLayout, "a.txt").has_value());
    REQUIRE(
        xlamem::parse_buffer_assignment_dump_into(d, "\nTotal bytes used: 508 (508B)\n", "b.txt")
            .has_value());
    CHECK(d.total_bytes_used == static_cast<std::uint64_t>(d.stats().total));
    // A second set of allocation blocks does not restart at 0.
    auto again = xlamem::parse_buffer_assignment_dump_into(d, kNewLayout, "c.txt");
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().message() == "c.txt:2:12: allocation 0 is out of order (expected 7)");
  }

  TEST_CASE("malformed dumps give file:line:column") {
    struct bad_case {
      std::string_view text;
      std::string_view message;
    };
    const bad_case cases[] = {
        {"allocation 0: 16, maybe-live-out:\n",
         "f.txt:1:13: expected ': size ', found ': 16, maybe-live-out:'"},
        {"allocation 0: size 1.5KiB, maybe-live-out:\n",
         "f.txt:1:21: expected an integer size in bytes (human-readable sizes are not exact)"},
        {"allocation 0: size 99999999999999999999:\n",
         "f.txt:1:20: an allocation size in bytes does not fit in 64 bits"},
        {"allocation 0: size 8, parameter 0, shape |f32[2] at ShapeIndex {}:\n",
         "f.txt:1:43: unterminated '|' in a parameter shape"},
        {"allocation 0: size 8, maybe-live-out\n",
         "f.txt:1:37: expected ', ' or ':' after an allocation flag, found end of line"},
        {"allocation 0: size 8:\n value: <1 a @0> (size=8,offset=4): f32[2]{0}\n",
         "f.txt:2:24: value [4, 12) lies outside allocation 0 of 8 bytes"},
        {"BufferAssignment:\n value: <1 a @0> (size=8,offset=0): f32[2]{0}\n",
         "f.txt:2:2: a value line before any allocation header"},
        {"allocation 0: size 8:\n value: <1 a @0> (size=8,offset=0):\n",
         "f.txt:2:36: expected the value's shape"},
        {"allocation 0: size 8:\n value: <x a @0> (size=8,offset=0): f32[2]{0}\n",
         "f.txt:2:10: expected a value id, found 'x a @0> (size=8,offset=0...'"},
        {"allocation 1: size 8:\n", "f.txt:1:12: allocation 1 is out of order (expected 0)"},
        {"allocation 0: size 8:\n copy: t{1}\n",
         "f.txt:2:8: expected 'LEAF (emulated copy insertion)' after 'copy: ', found 't{1}'"},
        {"allocation 0: size 8:\n copy: a (emulated copy insertion)\n copy: b (emulated copy insertion)\n",
         "f.txt:3:2: a second 'copy:' line in allocation 0"},
        {"Total bytes used: 8 (8B)\nTotal bytes used: 8 (8B)\n",
         "f.txt:2:1: a second 'Total bytes used' line"},
        {"hello\n", "f.txt:1:1: unexpected line in a buffer-assignment dump: 'hello'"},
        {"  positions:\n", "f.txt:1:3: unexpected indented line outside any section: 'positions:'"},
        {"Used values:\n<1 a @0>\n weird:\n",
         "f.txt:3:2: expected 'positions:', 'uses:' or 'from instruction:', found 'weird:'"},
        {"Used values:\n<1 a @0>\n uses:\n  b, operand x\n",
         "f.txt:4:14: expected an operand number, found 'x'"},
        {"HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:2-1\n",
         "f.txt:3:9: live range 2-1 is not within 0-3"},
        {"HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:0-4\n",
         "f.txt:3:9: live range 0-4 is not within 0-3"},
        {"HloLiveRange (max 3):\n  InstructionSequence:\n    1:a\n",
         "f.txt:3:5: time step 1 is out of order (expected 0)"},
        {"HloLiveRange (max 3):\n  Live ranges at 1 (peak):\n    a{}: 4 bytes\n",
         "f.txt:3:11: expected ' bytes (cumulative: ', found ' bytes'"},
        {"HloLiveRange (max 3):\nHloLiveRange (max 3):\n",
         "f.txt:2:1: a second HloLiveRange section"},
        // The header is a claim checked against the schedule it prints (a 198-byte
        // dump once made the report allocate 10^12 steps).
        {"HloLiveRange (max 1000000000000):\n  InstructionSequence:\n    0:a\n",
         "f.txt:1:1: HloLiveRange (max 1000000000000) but its InstructionSequence lists 1 steps"},
        {"allocation 0: size 9223372036854775807:\nallocation 1: size 1:\n",
         "f.txt:2:20: allocation sizes add up to more than 2^63 - 1 bytes"},
        {"\x01\xff", "f.txt:1:1: unexpected line in a buffer-assignment dump: '\\x01\\xff'"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.text);
      auto r = parse_buffer_assignment_dump(c.text, "f.txt");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code() == errc::parse_error);
      CHECK(r.error().message() == c.message);
    }
  }

  TEST_CASE("truncated and binary input never crashes") {
    const std::string text(kNewLayout);
    for (std::size_t n = 0; n <= text.size(); ++n) {
      auto r = parse_buffer_assignment_dump(std::string_view(text).substr(0, n), "cut.txt");
      if (!r) CHECK(r.error().code() == errc::parse_error);
    }
    std::string noise;
    for (int i = 0; i < 4096; ++i) noise.push_back(static_cast<char>((i * 7919) % 251));
    auto r = parse_buffer_assignment_dump(noise, "noise.bin");
    CHECK_FALSE(r.has_value());
  }

  TEST_CASE("unknown flags are kept, never dropped") {
    auto r =
        parse_buffer_assignment_dump("allocation 0: size 8, page 2, maybe-live-out:\n", "f.txt");
    REQUIRE(r.has_value());
    CHECK(r->allocations[0].other_flags == std::vector<std::string>{"page 2"});
    CHECK(r->allocations[0].maybe_live_out);
  }

  TEST_CASE("a missing file is not_found, naming the path") {
    auto r = xlamem::read_buffer_assignment_dump("/nonexistent/x-buffer-assignment.txt");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::not_found);
    CHECK(r.error().message().find("/nonexistent/x-buffer-assignment.txt") != std::string::npos);
  }
}

TEST_SUITE("oracle/corpus") {
  using namespace xlamem::test::oracle_helpers;

  TEST_CASE("every dump parses and its allocations give XLA's memory_analysis figures") {
    const fs::path root = corpus_dir();
    REQUIRE_MESSAGE(!root.empty(),
                    "test/data/xla-oracle not found; set XLAMEM_ORACLE_DATA to its location");
    const auto programs = corpus_programs(root);
    CHECK(programs.size() >= 12);
    std::uintmax_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) bytes += e.file_size();
    }
    CHECK(bytes < 5u * 1024 * 1024);

    std::size_t largest = 0;
    for (const auto& p : programs) {
      CAPTURE(p.name);
      auto r = xlamem::read_buffer_assignment_dump(p.buffer_assignment);
      REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
      const auto& d = *r;
      REQUIRE(!d.allocations.empty());
      const auto ma = read_flat_json(p.dir / "memory_analysis.json");
      REQUIRE(ma.count("temp_size_in_bytes") == 1);
      const auto s = d.stats();

      // CompiledMemoryStats::PopulateBufferStatsFromAllocations, field by field.
      // The same compiled_memory_stats as buffer assignment's, from the dump's flags.
      const auto& c = s.compiled;
      auto xla = [&](const char* field) { return static_cast<std::int64_t>(ma.at(field)); };
      // CompiledMemoryStats::PopulateBufferStatsFromAllocations, field by field.
      CHECK(c.argument_size_in_bytes == xla("argument_size_in_bytes"));
      CHECK(c.output_size_in_bytes == xla("output_size_in_bytes"));
      CHECK(c.alias_size_in_bytes == xla("alias_size_in_bytes"));
      CHECK(c.temp_size_in_bytes == xla("temp_size_in_bytes"));
      CHECK(c.host_argument_size_in_bytes == xla("host_argument_size_in_bytes"));
      CHECK(c.host_output_size_in_bytes == xla("host_output_size_in_bytes"));
      CHECK(c.host_alias_size_in_bytes == xla("host_alias_size_in_bytes"));
      CHECK(c.host_temp_size_in_bytes == xla("host_temp_size_in_bytes"));
      // "Total bytes used" counts every allocation, constants and thread-local ones included.
      REQUIRE(d.total_bytes_used.has_value());
      CHECK(static_cast<std::uint64_t>(s.total) == *d.total_bytes_used);
      CHECK(s.total >= c.device_footprint());
      // XLA:CPU's peak_memory_in_bytes (ComputePeakMemory over the buffer-assignment proto)
      // counts the allocations that live for the whole run and leaves out the temp allocation:
      // an identity on every program of this corpus (JAX 0.10.2).
      CHECK(xla("peak_memory_in_bytes") ==
            c.argument_size_in_bytes + c.output_size_in_bytes - c.alias_size_in_bytes + s.constant);

      // Each class flag is exclusive where XLA makes it so.
      for (const auto& a : d.allocations) {
        CAPTURE(a.index);
        CHECK(a.other_flags.empty());
        if (a.is_preallocated_temp) {
          CHECK_FALSE(
              (a.is_entry_parameter() || a.maybe_live_out || a.is_constant || a.is_thread_local));
        }
        if (a.is_constant) CHECK(a.values.size() == 1);
      }

      // The values in the allocation blocks are exactly the used values.
      std::map<std::uint64_t, std::string> assigned;
      for (const auto& a : d.allocations) {
        for (const auto& v : a.values) assigned.emplace(v.id, v.instruction);
      }
      CHECK(assigned.size() == d.used_values.size());
      for (const auto& u : d.used_values) {
        auto it = assigned.find(u.id);
        REQUIRE_MESSAGE(it != assigned.end(), "used value " << u.id << " has no allocation");
        CHECK(it->second == u.instruction);
        CHECK_FALSE(u.positions.empty());
        CHECK_FALSE(u.from_instruction.empty());
      }

      // The module defines every instruction the dump names; the schedule covers every buffer.
      std::size_t count = 0;
      const auto names = instruction_names(read_text(p.module), count);
      largest = std::max(largest, count);
      for (const auto& entry : assigned) {
        const std::string& name = entry.second;
        CAPTURE(name);
        CHECK(names.count(name) == 1);
      }
      REQUIRE(d.live_ranges.has_value());
      const auto& lr = *d.live_ranges;
      CHECK(static_cast<std::int64_t>(lr.instruction_sequence.size()) == lr.max_time);
      const std::set<std::string> scheduled(lr.instruction_sequence.begin(),
                                            lr.instruction_sequence.end());
      for (const auto& n : lr.instruction_sequence) CHECK(names.count(n) == 1);
      for (const auto& b : lr.buffers) {
        CAPTURE(b.instruction);
        CHECK(scheduled.count(b.instruction) == 1);
        CHECK(d.allocation_of(b.instruction, b.shape_index) != nullptr);
      }
      // Entry parameters live from 0 to the end (hlo-inputs.md §6.6), except donated ones
      // (may-alias): XLA ends those at their last use so that temporaries can reuse them.
      // A donated parameter's allocation holds temporaries too: find the parameter's value.
      const auto entry_params = entry_parameter_names(read_text(p.module));
      std::size_t checked = 0;
      for (const auto& a : d.allocations) {
        if (!a.is_entry_parameter()) continue;
        for (const auto& v : a.values) {
          if (entry_params.count(v.instruction) == 0) continue;
          CAPTURE(v.instruction);
          const auto* r0 = d.live_range_of(v.instruction, v.shape_index);
          REQUIRE(r0 != nullptr);
          ++checked;
          CHECK(r0->start == 0);
          if (!a.is_aliased_parameter()) CHECK(r0->end == lr.max_time);
        }
      }
      CHECK(checked == entry_params.size());
      // The peak list is a running sum.
      std::uint64_t running = 0;
      for (const auto& e : lr.peak) {
        running += e.bytes;
        CHECK(e.cumulative == running);
      }
    }
    CHECK(largest >= 1000);  // the large model of the corpus
  }

  TEST_CASE("donated arguments alias outputs exactly as input_output_alias says") {
    const fs::path root = corpus_dir();
    REQUIRE(!root.empty());
    for (const auto& p : corpus_programs(root)) {
      CAPTURE(p.name);
      const std::string hlo = read_text(p.module);
      const std::string header = hlo.substr(0, hlo.find('\n'));
      std::size_t aliases = 0;
      const auto at = header.find("input_output_alias={");
      if (at != std::string::npos) {
        const auto end = header.find("}, entry_computation_layout", at);
        REQUIRE(end != std::string::npos);
        const std::string body = header.substr(at, end - at);
        for (std::size_t i = body.find(": ("); i != std::string::npos; i = body.find(": (", i + 1))
          ++aliases;
      }
      auto r = xlamem::read_buffer_assignment_dump(p.buffer_assignment);
      REQUIRE(r.has_value());
      std::size_t aliased = 0;
      for (const auto& a : r->allocations) aliased += a.is_aliased_parameter() ? 1 : 0;
      CHECK(aliased == aliases);
    }
  }
}
