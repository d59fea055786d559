// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/jit/dual_mapping.hpp (no LLVM needed).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>

#include "support/proc_maps.hpp"
#include "xlamem/jit/dual_mapping.hpp"
#include "xlamem/jit/page_mapper.hpp"

TEST_SUITE("jit/dual_mapping") {
  using namespace xlamem;
  namespace t = xlamem::test;
  const std::uint64_t page = posix_page_mapper().page_size();

  TEST_CASE("dual_mapping: one object, a writable view and an executable view") {
    const xlamem::dual_mapping_part parts[] = {
        {0, page, page_access::read_execute},
        {page, page, page_access::read},
        {2 * page, page, page_access::read_write},
    };
    auto d = xlamem::dual_mapping::try_create("xlamem-test", 3 * page, parts, page);
    REQUIRE_MESSAGE(d.has_value(), (d ? std::string() : d.error().to_string()));
    std::memcpy(d->write_base() + page + 8, "stripe", 7);
    CHECK(std::memcmp(d->exec_base() + page + 8, "stripe", 7) == 0);
    d->exec_base()[2 * page] = std::byte{42};  // rw- in the executable view too
    CHECK(d->write_base()[2 * page] == std::byte{42});
    CHECK(d->writable(d->exec_base() + 5) == d->write_base() + 5);

    const auto exec = t::maps_in(d->exec_base(), 3 * page);
    REQUIRE(exec.size() == 3);
    CHECK(exec[0].perms.substr(0, 3) == "r-x");
    CHECK(exec[1].perms.substr(0, 3) == "r--");
    CHECK(exec[2].perms.substr(0, 3) == "rw-");
    CHECK(exec[0].path.find("memfd:xlamem-test") != std::string::npos);
    const auto write = t::maps_in(d->write_base(), 3 * page);
    REQUIRE(write.size() == 1);
    CHECK(write[0].perms.substr(0, 3) == "rw-");

    const xlamem::dual_mapping_part wx[] = {
        {0, page, page_access::read_write | page_access::execute}};
    auto bad = xlamem::dual_mapping::try_create("xlamem-test", page, wx, page);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == errc::invalid_argument);
    CHECK(xlamem::dual_mapping::try_create("x", page + 1, {}, page).error().code() ==
          errc::invalid_argument);
  }
}
