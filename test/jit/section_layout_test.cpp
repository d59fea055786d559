// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/jit/section_layout.hpp (no LLVM needed).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/align.hpp"
#include "xlamem/jit/section_layout.hpp"

TEST_SUITE("jit/section_layout") {
  using namespace xlamem;
  using xlamem::allocation_purpose;

  TEST_CASE("parts are ordered code < read-only < read-write, page-aligned and padded") {
    auto l = xlamem::plan_contiguous_sections({100, 16}, {4096, 64}, {1, 8}, 4096);
    REQUIRE(l.has_value());
    CHECK(l->code == xlamem::section_part_extent{0, 4096});
    // 4096 + 64 padding rounds up to two pages.
    CHECK(l->read_only == xlamem::section_part_extent{4096, 8192});
    CHECK(l->read_write == xlamem::section_part_extent{12288, 4096});
    CHECK(l->total_size == 16384);
    CHECK(&l->part(allocation_purpose::read_only_data) == &l->read_only);
  }

  TEST_CASE("empty parts take no pages") {
    auto l = xlamem::plan_contiguous_sections({0, 1}, {10, 0}, {0, 16}, 4096);
    REQUIRE(l.has_value());
    CHECK(l->code.capacity == 0);
    CHECK(l->read_only == xlamem::section_part_extent{0, 4096});
    CHECK(l->read_write.capacity == 0);
    CHECK(l->total_size == 4096);
  }

  TEST_CASE("bad alignments and sizes are named") {
    auto huge = xlamem::plan_contiguous_sections({10, 8192}, {}, {}, 4096);
    REQUIRE_FALSE(huge.has_value());
    CHECK(huge.error().code() == errc::invalid_argument);
    CHECK(huge.error().message().find("code alignment 8192 exceeds the page size 4096") !=
          std::string::npos);
    auto odd = xlamem::plan_contiguous_sections({}, {10, 24}, {}, 4096);
    REQUIRE_FALSE(odd.has_value());
    CHECK(odd.error().message().find("read-only data alignment 24 is not a power of two") !=
          std::string::npos);
    auto overflow = xlamem::plan_contiguous_sections({}, {}, {~std::uint64_t{0} - 2, 8}, 4096);
    REQUIRE_FALSE(overflow.has_value());
    CHECK(overflow.error().message().find("read-write data size") != std::string::npos);
    CHECK_FALSE(xlamem::plan_contiguous_sections({}, {}, {}, 3000).has_value());
  }

  TEST_CASE("announced sections fit in any order and alignment up to the announced one") {
    // RuntimeDyld announces sum(align_up(size_i, A)); sections then come at alignments <= A.
    const std::uint64_t sizes[] = {1, 17, 200, 64, 3, 4000, 9};
    const std::uint64_t aligns[] = {1, 8, 64, 16, 2, 64, 4};
    std::uint64_t announced = 0;
    for (auto s : sizes) announced += xlamem::align_up(s, 64);
    auto l = xlamem::plan_contiguous_sections({announced, 64}, {}, {}, 4096);
    REQUIRE(l.has_value());
    std::vector<int> order = {0, 1, 2, 3, 4, 5, 6};
    do {
      xlamem::section_bump_allocator part(allocation_purpose::code, l->code, 4096);
      for (int i : order) {
        auto r = part.try_allocate(sizes[i], aligns[i]);
        REQUIRE(r.has_value());
        CHECK(xlamem::is_aligned(*r, aligns[i]));
      }
      CHECK(part.used() <= announced);
    } while (std::next_permutation(order.begin(), order.begin() + 4));
  }

  TEST_CASE("bump allocation accounts bytes and padding and refuses what does not fit") {
    xlamem::section_bump_allocator part(allocation_purpose::read_only_data, {4096, 4096}, 4096);
    auto a = part.try_allocate(10, 1);
    REQUIRE(a.has_value());
    CHECK(*a == 4096);
    auto b = part.try_allocate(100, 64);
    REQUIRE(b.has_value());
    CHECK(*b == 4096 + 64);
    CHECK(part.bytes() == 110);
    CHECK(part.padding() == 54);
    CHECK(part.count() == 2);
    CHECK(part.remaining() == 4096 - 164);
    auto big = part.try_allocate(4000, 16);
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().code() == errc::resource_exhausted);
    CHECK(big.error().message() ==
          "suballocation of 4000 bytes at alignment 16 does not fit the read_only_data part: 164 "
          "of 4096 reserved bytes are used");
    auto wide = part.try_allocate(8, 8192);
    REQUIRE_FALSE(wide.has_value());
    CHECK(wide.error().message().find("exceeds the page size 4096") != std::string::npos);
    CHECK(part.count() == 2);  // failures change nothing
  }

  TEST_CASE("code distance: within reach passes, beyond it names the section") {
    std::vector<xlamem::placed_section> s = {
        {allocation_purpose::code, 0, 100, 1, ".text"},
        {allocation_purpose::read_only_data, 4096, 64, 2, ".rodata"},
        {allocation_purpose::read_write_data, 8192, 8, 3, ".data"},
    };
    CHECK(xlamem::check_code_distance(s).has_value());
    CHECK(xlamem::check_code_distance(s, 8200).has_value());
    auto far = xlamem::check_code_distance(s, 8199);
    REQUIRE_FALSE(far.has_value());
    CHECK(far.error().code() == errc::out_of_range);
    CHECK(far.error().message().find("section '.data' (id 3, read_write_data") != std::string::npos);
    std::vector<xlamem::placed_section> no_code = {
        {allocation_purpose::read_only_data, 0, 1ULL << 40, 1, ".big"}};
    CHECK(xlamem::check_code_distance(no_code, 16).has_value());
  }
}
