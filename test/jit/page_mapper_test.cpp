// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/jit/page_mapper.hpp (no LLVM needed).
#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <string>

#include "support/proc_maps.hpp"
#include "xlamem/align.hpp"
#include "xlamem/jit/page_mapper.hpp"

TEST_SUITE("jit/page_mapper") {
  using namespace xlamem;
  using xlamem::test::perms_of;
  const std::uint64_t page = posix_page_mapper().page_size();

  TEST_CASE("posix mapper reserves whole pages, protects and releases them") {
    xlamem::counting_page_mapper_adaptor<xlamem::posix_page_mapper> m;
    auto r = m.try_reserve(allocation_purpose::code, 5000, nullptr, page_access::read_write);
    REQUIRE(r.has_value());
    CHECK(r->size == xlamem::align_up(5000, page));
    CHECK(xlamem::is_aligned(r->base, page));
    static_cast<char*>(r->base)[4999] = 42;
    CHECK(perms_of(r->base, r->size).perms == std::set<std::string>{"rw-"});
    REQUIRE(m.try_protect(*r, page_access::read).has_value());
    CHECK(perms_of(r->base, r->size).perms == std::set<std::string>{"r--"});
    CHECK(static_cast<char*>(r->base)[4999] == 42);
    REQUIRE(m.try_release(*r).has_value());
    auto c = m.counts();
    CHECK(c.reservations == 1);
    CHECK(c.protections == 1);
    CHECK(c.releases == 1);
    CHECK(c.bytes_reserved == r->size);
    CHECK(c.bytes_live == 0);
    CHECK(c.peak_bytes_live == r->size);
    CHECK(c.write_execute_requests == 0);
  }

  TEST_CASE("posix mapper errors name the request") {
    xlamem::posix_page_mapper m;
    auto zero = m.try_reserve(allocation_purpose::read_only_data, 0, nullptr, page_access::read);
    REQUIRE_FALSE(zero.has_value());
    CHECK(zero.error().message().find("reserve of 0 bytes for read_only_data") != std::string::npos);
    auto huge = m.try_reserve(allocation_purpose::code, std::size_t{1} << 62, nullptr,
                              page_access::read_write);
    REQUIRE_FALSE(huge.has_value());
    CHECK(huge.error().code() == errc::out_of_memory);
    CHECK(huge.error().message().find("mmap failed") != std::string::npos);
    CHECK_FALSE(m.try_protect(page_block{}, page_access::read).has_value());
    CHECK(m.try_release(page_block{}).has_value());
  }
}
