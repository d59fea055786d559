// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/properties.hpp: a property is declared by a get_property friend
// found by ADL, asked with has_property, and forwarded by adaptors only when the upstream has it.
#include <doctest/doctest.h>

#include <string>

#include "support/alloc_helpers.hpp"

namespace xlamem::test::properties_test {
using namespace xlamem;

// Declares pinned and host_accessible, as a pinned host resource would.
struct pinned_host {
  void* allocate(std::size_t bytes, std::size_t alignment) { return aligned_heap_memory{}.allocate(bytes, alignment); }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    aligned_heap_memory{}.deallocate(p, bytes, alignment);
  }
  friend bool operator==(const pinned_host&, const pinned_host&) noexcept { return true; }
  friend constexpr void get_property(const pinned_host&, pinned) noexcept {}
  friend constexpr void get_property(const pinned_host&, host_accessible) noexcept {}
};

// Device-only memory: no host_accessible.
struct device_only {
  friend constexpr void get_property(const device_only&, device_accessible) noexcept {}
};

// A member function named get_property is not a declaration: only the free function counts.
struct member_only {
  void get_property(host_accessible) const noexcept {}
};

// A user-defined property tag works like the built-in ones.
struct numa_local {};
struct numa_heap_resource {
  friend constexpr void get_property(const numa_heap_resource&, numa_local) noexcept {}
};

// A property declared for a base is inherited by a derived class (ADL looks at bases too).
struct derived_pinned : pinned_host {};

// A hand-written adaptor over U: forwards whatever U declares, nothing else.
template <class U>
struct wrapper : forward_properties<wrapper<U>, U> {};

// What a caller does with a property: choose a path at compile time.
template <class R>
std::string copy_path() {
  if constexpr (has_property<R, pinned>) return "async DMA";
  else if constexpr (has_property<R, host_accessible>) return "staged through pinned memory";
  else return "device to device";
}

}  // namespace xlamem::test::properties_test

TEST_SUITE("alloc/properties") {
  using namespace xlamem::test::properties_test;

  TEST_CASE("has_property: declared by a get_property friend, for exactly the tags declared") {
    static_assert(has_property<pinned_host, pinned>);
    static_assert(has_property<pinned_host, host_accessible>);
    static_assert(!has_property<pinned_host, device_accessible>);
    static_assert(!has_property<pinned_host, executable>);
    static_assert(has_property<device_only, device_accessible>);
    static_assert(!has_property<device_only, host_accessible>);
    static_assert(!has_property<member_only, host_accessible>);
    static_assert(!has_property<int, host_accessible>);
    static_assert(has_property<numa_heap_resource, numa_local>);
    static_assert(!has_property<pinned_host, numa_local>);
    static_assert(has_property<derived_pinned, pinned>);
    // cv-qualified resources ask the same question.
    static_assert(has_property<const pinned_host, pinned>);
    CHECK(copy_path<pinned_host>() == "async DMA");
    CHECK(copy_path<aligned_heap_memory>() == "staged through pinned memory");
    CHECK(copy_path<device_only>() == "device to device");
  }

  TEST_CASE("forward_properties declares for the adaptor what the upstream declares, no more") {
    static_assert(has_property<wrapper<pinned_host>, pinned>);
    static_assert(has_property<wrapper<pinned_host>, host_accessible>);
    static_assert(!has_property<wrapper<pinned_host>, executable>);
    static_assert(has_property<wrapper<device_only>, device_accessible>);
    static_assert(!has_property<wrapper<device_only>, host_accessible>);
    static_assert(has_property<wrapper<numa_heap_resource>, numa_local>);  // user tags forward too
    static_assert(has_property<wrapper<wrapper<pinned_host>>, pinned>);    // and through layers
    static_assert(!has_property<wrapper<member_only>, host_accessible>);
    CHECK(copy_path<wrapper<wrapper<pinned_host>>>() == "async DMA");
    CHECK(copy_path<wrapper<device_only>>() == "device to device");
  }

  TEST_CASE("the library's adaptors and references forward their upstream's properties") {
    using ref = resource_ref<pinned_host>;
    static_assert(has_property<ref, pinned>);
    static_assert(has_property<statistics_adaptor<ref>, pinned>);
    static_assert(has_property<tracking_adaptor<ref>, pinned>);
    static_assert(has_property<limiting_adaptor<ref>, pinned>);
    static_assert(has_property<fault_injection_adaptor<ref>, pinned>);
    static_assert(has_property<statistics_adaptor<resource_ref<limiting_adaptor<ref>>>, pinned>);
    static_assert(!has_property<statistics_adaptor<aligned_heap_memory>, pinned>);
    static_assert(!has_property<fault_injection_adaptor<mapped_memory>, device_accessible>);
    // Such an adaptor is used like its upstream, and chooses the same path.
    pinned_host host;
    statistics_adaptor<resource_ref<pinned_host>> stats(borrow(host));
    auto* p = static_cast<int*>(stats.allocate(sizeof(int) * 4, alignof(int)));
    p[3] = 42;
    CHECK(p[3] == 42);
    stats.deallocate(p, sizeof(int) * 4, alignof(int));
    CHECK(copy_path<decltype(stats)>() == "async DMA");
  }
}
