// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/mapped_memory.hpp: whole zeroed pages, alignments above the page
// size by over-mapping and trimming, unmapping on deallocate, and refusals as errors.
#include <doctest/doctest.h>

#include <cerrno>

#include <sys/mman.h>
#include <unistd.h>

#include "support/alloc_helpers.hpp"

TEST_SUITE("alloc/resources") {
  using namespace xlamem::test::alloc_helpers;

  TEST_CASE("aligned_heap_memory and mapped_memory honour large alignments") {
    aligned_heap_memory heap;
    void* p = heap.allocate(10, 4096);
    CHECK(is_aligned(p, 4096));
    heap.deallocate(p, 10, 4096);

    mapped_memory pages;
    const std::size_t page = mapped_memory::page_size();
    void* q = pages.allocate(3 * page + 1, 1u << 21);  // 2 MiB: over-map and trim
    CHECK(is_aligned(q, 1u << 21));
    std::memset(q, 1, 3 * page + 1);
    pages.deallocate(q, 3 * page + 1, 1u << 21);
    void* z = pages.allocate(0, 8);  // a zero-byte request still gets a (page) mapping
    CHECK(z != nullptr);
    pages.deallocate(z, 0, 8);
  }

  TEST_CASE("mapped_memory reports an impossible request as out_of_memory") {
    mapped_memory pages;
    auto r = pages.try_allocate(SIZE_MAX - 10, 8);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::out_of_memory);
    CHECK(r.error().message().find("mapped_memory") != std::string::npos);
    CHECK_THROWS_AS((void)pages.allocate(SIZE_MAX / 2, 8), xlamem::out_of_memory);
  }
}

TEST_SUITE("alloc/mapped_memory") {
  using namespace xlamem::test::alloc_helpers;

  // Whether every page of [p, p + bytes) is mapped in this process.
  bool mapped(const void* p, std::size_t bytes) {
    return ::msync(const_cast<void*>(p), bytes, MS_ASYNC) == 0;
  }

  TEST_CASE("page_size is the system's, a power of two") {
    const std::size_t page = mapped_memory::page_size();
    CHECK(page == static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
    CHECK(is_power_of_two(page));
    CHECK(page >= 4096);
  }

  TEST_CASE("requests are whole pages, zero-filled, and unmapped by deallocate") {
    mapped_memory pages;
    const std::size_t page = mapped_memory::page_size();
    for (const std::size_t bytes : {std::size_t{1}, page - 1, page, page + 1, 5 * page}) {
      auto* p = static_cast<unsigned char*>(pages.allocate(bytes, 8));
      const std::size_t whole = align_up(bytes, page);
      CHECK(is_aligned(p, page));  // mappings start on a page
      CHECK(mapped(p, whole));
      CHECK(std::all_of(p, p + whole, [](unsigned char c) { return c == 0; }));
      std::memset(p, 0xAB, whole);  // the rounding is usable, to the end of the last page
      pages.deallocate(p, bytes, 8);
      CHECK_FALSE(mapped(p, page));
    }
  }

  TEST_CASE("alignment above the page size: the head and tail of the over-mapping are given back") {
    mapped_memory pages;
    const std::size_t page = mapped_memory::page_size();
    for (const std::size_t alignment : {2 * page, 16 * page, std::size_t{1} << 22}) {
      const std::size_t bytes = 2 * page;
      auto* p = static_cast<unsigned char*>(pages.allocate(bytes, alignment));
      CHECK(is_aligned(p, alignment));
      CHECK(mapped(p, bytes));
      // Over-mapping took alignment - page more bytes than needed; all of them were trimmed,
      // so at least the page before or the page after the block is no longer mapped.
      CHECK((!mapped(p - page, page) || !mapped(p + bytes, page)));
      pages.deallocate(p, bytes, alignment);
      CHECK_FALSE(mapped(p, page));
    }
  }

  TEST_CASE("a bad alignment is invalid_argument; a size past the address space out_of_memory") {
    mapped_memory pages;
    auto r = pages.try_allocate(100, 6);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == errc::invalid_argument);
    CHECK(r.error().message() == "mapped_memory: alignment 6 is not a power of two");
    CHECK_THROWS_AS((void)pages.allocate(100, 0), xlamem::exception);
    auto big = pages.try_allocate(SIZE_MAX - 10, 8);  // does not round up to a page
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().message() == "mapped_memory: request of " + std::to_string(SIZE_MAX - 10) + " bytes is too large");
    // Rounds up to whole pages, but the over-mapping for the alignment would not fit in a size_t.
    const std::size_t page = mapped_memory::page_size();
    auto over = pages.try_allocate(SIZE_MAX - 2 * page, 4 * page);
    REQUIRE_FALSE(over.has_value());
    CHECK(over.error().code() == errc::out_of_memory);
    CHECK(over.error().message().find("is too large") != std::string::npos);
    auto refused = pages.try_allocate(SIZE_MAX / 4, 8);  // a size the kernel refuses
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == errc::out_of_memory);
    CHECK(refused.error().message().find("mapped_memory: mmap of ") == 0);
    CHECK(refused.error().message().find(" bytes failed: ") != std::string::npos);
  }

  TEST_CASE("options: the huge-page hint is kept and allocation works with it") {
    CHECK_FALSE(mapped_memory{}.options().huge_page_hint);
    mapped_memory huge(mapped_memory_options{.huge_page_hint = true});
    CHECK(huge.options().huge_page_hint);
    const std::size_t two_mib = std::size_t{1} << 21;
    auto* p = static_cast<unsigned char*>(huge.allocate(2 * two_mib, two_mib));
    CHECK(is_aligned(p, two_mib));
    p[0] = 1;
    p[2 * two_mib - 1] = 2;
    CHECK(p[0] + p[2 * two_mib - 1] == 3);
    huge.deallocate(p, 2 * two_mib, two_mib);
    // Any instance may unmap what another mapped.
    void* q = huge.allocate(100, 8);
    CHECK(huge == mapped_memory{});
    mapped_memory{}.deallocate(q, 100, 8);
    mapped_memory{}.deallocate(nullptr, 100, 8);  // null: nothing to do
    static_assert(has_property<mapped_memory, host_accessible>);
    static_assert(!has_property<mapped_memory, device_accessible>);
  }
}
