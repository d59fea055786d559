// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/compact_vector.hpp: elements in place up to a pointer's size, then one
// heap block; copies, moves, insert, resize, comparisons and the 2^32 - 1 size limit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/compact_vector.hpp"

TEST_SUITE("core") {
  TEST_CASE("compact_vector: in place up to 8 bytes, then one heap block; copies, moves, compares") {
    using ids = xlamem::compact_vector<std::uint32_t>;
    static_assert(sizeof(ids) == 16 && ids::inline_capacity == 2);
    ids v;
    CHECK(v.empty());
    v.push_back(7);
    v.push_back(8);
    CHECK(v.capacity() == 2);  // still in place
    CHECK(v == std::vector<std::uint32_t>{7, 8});
    for (std::uint32_t k = 0; k < 1000; ++k) v.push_back(k);
    REQUIRE(v.size() == 1002);
    CHECK(v.front() == 7);
    CHECK(v.back() == 999);
    CHECK(v[502] == 500);
    CHECK(v.at(3) == 1);
    CHECK_THROWS_AS((void)v.at(1002), std::out_of_range);
    ids copy = v;
    CHECK(copy == v);
    copy[0] = 1;
    CHECK(v[0] == 7);  // deep copy
    ids moved = std::move(copy);
    CHECK(moved.size() == 1002);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from vector is empty
    ids small{1};
    moved = small;  // heap -> in place by copy
    CHECK(moved == std::vector<std::uint32_t>{1});
    small = std::move(v);  // in place <- heap by move
    CHECK(small.size() == 1002);
    small.resize(3);
    CHECK(small == std::vector<std::uint32_t>{7, 8, 0});
    small.resize(5);
    CHECK(small == std::vector<std::uint32_t>{7, 8, 0, 0, 0});  // new elements are zero
    small.clear();
    CHECK(small.empty());
    xlamem::compact_vector<std::int64_t> dims{16};
    CHECK(dims.capacity() == 1);
    const std::span<const std::int64_t> view = dims;
    CHECK(view.size() == 1);
    CHECK(view[0] == 16);
    // insert: in place, at the front, in the middle, at the end, and across the move to the heap.
    ids sorted;
    for (const std::uint32_t x : {5u, 1u, 3u, 9u, 7u}) sorted.insert(std::lower_bound(sorted.begin(), sorted.end(), x), x);
    CHECK(sorted == std::vector<std::uint32_t>{1, 3, 5, 7, 9});
    CHECK(*sorted.insert(sorted.end(), 10) == 10);
    CHECK(*sorted.insert(sorted.begin(), 0) == 0);
    CHECK(sorted == std::vector<std::uint32_t>{0, 1, 3, 5, 7, 9, 10});
  }
}

TEST_SUITE("core/compact_vector") {
  using xlamem::compact_vector;

  TEST_CASE("the in-place capacity is a pointer's worth of elements; the object is 16 bytes") {
    static_assert(compact_vector<std::uint8_t>::inline_capacity == 8);
    static_assert(compact_vector<std::uint16_t>::inline_capacity == 4);
    static_assert(compact_vector<std::int32_t>::inline_capacity == 2);
    static_assert(compact_vector<double>::inline_capacity == 1);
    static_assert(compact_vector<void*>::inline_capacity == 1);
    static_assert(sizeof(compact_vector<std::uint8_t>) == 16 && sizeof(compact_vector<double>) == 16);
    // Only trivial values of at most a pointer's size.
    static_assert(xlamem::compact_element<std::uint64_t>);
    static_assert(!xlamem::compact_element<std::string>);
    struct two_words {
      std::uint64_t a, b;
    };
    static_assert(!xlamem::compact_element<two_words>);

    compact_vector<std::uint8_t> bytes;
    const std::uint8_t* const in_place = bytes.data();
    for (std::uint8_t k = 0; k < 8; ++k) bytes.push_back(k);
    CHECK(bytes.capacity() == 8);
    CHECK(bytes.data() == in_place);  // the eight fit inside the object
    bytes.push_back(8);
    CHECK(bytes.capacity() == 16);  // doubled on the heap
    CHECK(bytes.data() != in_place);
    CHECK(bytes == std::vector<std::uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  }

  TEST_CASE("growth doubles the capacity, and reserve takes exactly what it is asked") {
    compact_vector<std::uint32_t> v;
    std::vector<std::size_t> capacities;
    for (std::uint32_t k = 0; k < 40; ++k) {
      v.push_back(k);
      if (capacities.empty() || capacities.back() != v.capacity()) capacities.push_back(v.capacity());
    }
    CHECK(capacities == std::vector<std::size_t>{2, 4, 8, 16, 32, 64});
    compact_vector<std::uint32_t> r;
    r.reserve(1);  // within the in-place room: nothing changes
    CHECK(r.capacity() == 2);
    r.reserve(5);  // more than double: exactly 5
    CHECK(r.capacity() == 5);
    r.reserve(3);  // never shrinks
    CHECK(r.capacity() == 5);
    CHECK(r.empty());
  }

  TEST_CASE("more than 2^32 - 1 elements is a length_error, and the vector is left as it was") {
    compact_vector<std::uint8_t> v{1, 2, 3};
    CHECK_THROWS_AS(v.reserve(std::size_t{1} << 32), std::length_error);
    CHECK_THROWS_AS(v.resize((std::size_t{1} << 32) + 5), std::length_error);
    try {
      v.reserve(std::size_t{1} << 33);
    } catch (const std::length_error& e) {
      CHECK(std::string(e.what()) == "compact_vector: more than 2^32 - 1 elements");
    }
    CHECK(v == std::vector<std::uint8_t>{1, 2, 3});
    CHECK(v.capacity() == 8);
  }

  TEST_CASE("at() names the failure; pop_back, front and back on both storages") {
    compact_vector<std::uint16_t> v{10, 20, 30};
    CHECK(v.at(2) == 30);
    v.at(2) = 31;  // writable, as std::vector's
    CHECK(std::as_const(v).at(2) == 31);
    v.at(2) = 30;
    try {
      (void)v.at(3);
      FAIL("at(3) of three elements did not throw");
    } catch (const std::out_of_range& e) {
      CHECK(std::string(e.what()) == "compact_vector::at: index out of range");
    }
    v.pop_back();
    CHECK(v.size() == 2);
    CHECK(v.back() == 20);
    v.front() = 11;
    v.back() = 21;
    CHECK(v == std::vector<std::uint16_t>{11, 21});
    for (std::uint16_t k = 0; k < 10; ++k) v.push_back(k);  // now on the heap
    v.pop_back();
    CHECK(v.back() == 8);
    CHECK(v.size() == 11);
    const compact_vector<std::uint16_t>& c = v;
    CHECK(c.front() == 11);
    CHECK(std::accumulate(c.cbegin(), c.cend(), 0) == 11 + 21 + 36);
    compact_vector<std::uint16_t> empty;
    CHECK_THROWS_AS((void)empty.at(0), std::out_of_range);
  }

  TEST_CASE("insert shifts the tail, including when it moves the elements to the heap") {
    compact_vector<std::uint32_t> v{1, 3};  // full in place
    const auto* at = v.insert(v.begin() + 1, 2);  // grows to the heap while inserting
    CHECK(*at == 2);
    CHECK(at == v.data() + 1);
    CHECK(v == std::vector<std::uint32_t>{1, 2, 3});
    std::vector<std::uint32_t> model{1, 2, 3};
    for (std::uint32_t k = 0; k < 200; ++k) {
      const std::size_t pos = (k * 7919u) % (model.size() + 1);
      v.insert(v.begin() + pos, 1000 + k);
      model.insert(model.begin() + static_cast<std::ptrdiff_t>(pos), 1000 + k);
    }
    CHECK(v == model);
    compact_vector<std::uint32_t> e;
    e.insert(e.end(), 5);  // into an empty vector
    CHECK(e == std::vector<std::uint32_t>{5});
  }

  TEST_CASE("assignment in every direction: in place and heap, copy, move, list, self") {
    using v32 = compact_vector<std::uint32_t>;
    v32 heap_src{1, 2, 3, 4, 5};
    v32 inplace_dst{9};
    inplace_dst = heap_src;  // in place <- heap, copy
    CHECK(inplace_dst == heap_src);
    CHECK(heap_src.size() == 5);
    v32 heap_dst{7, 7, 7, 7, 7, 7};
    v32 inplace_src{8};
    heap_dst = std::move(inplace_src);  // heap <- in place, move: takes the in-place elements
    CHECK(heap_dst == std::vector<std::uint32_t>{8});
    CHECK(heap_dst.capacity() == v32::inline_capacity);
    CHECK(inplace_src.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(inplace_src.capacity() == v32::inline_capacity);
    inplace_src.push_back(4);  // a moved-from vector is usable
    CHECK(inplace_src == std::vector<std::uint32_t>{4});

    v32 self{1, 2, 3};
    const v32& alias = self;
    self = alias;  // self copy: unchanged
    CHECK(self == std::vector<std::uint32_t>{1, 2, 3});
    v32& same = self;
    self = std::move(same);  // self move: a no-op
    CHECK(self == std::vector<std::uint32_t>{1, 2, 3});
    self = {4, 5};
    CHECK(self == std::vector<std::uint32_t>{4, 5});
    self = {};
    CHECK(self.empty());

    const std::vector<std::uint32_t> source{6, 7, 8, 9};
    v32 from_span{std::span<const std::uint32_t>(source)};
    CHECK(from_span == source);
    from_span.assign(std::span<const std::uint32_t>(source.data(), 1));
    CHECK(from_span == std::vector<std::uint32_t>{6});
  }

  TEST_CASE("equality: element by element, against another compact_vector or any range") {
    compact_vector<std::int32_t> a{1, 2, 3};
    compact_vector<std::int32_t> b{1, 2};
    CHECK_FALSE(a == b);
    b.push_back(3);
    CHECK(a == b);  // equal element by element
    b.back() = -3;
    CHECK(a != b);
    const std::int32_t raw[] = {1, 2, 3};
    CHECK(a == std::span<const std::int32_t>(raw));
    CHECK_FALSE(a == std::vector<std::int32_t>{1, 2});
    CHECK(compact_vector<std::int32_t>{} == std::vector<std::int32_t>{});
    compact_vector<std::int32_t> in_place{1, 2};
    compact_vector<std::int32_t> on_heap{1, 2, 3};
    on_heap.pop_back();
    CHECK(in_place == on_heap);  // storage does not matter
  }

  TEST_CASE("resize shrinks without freeing and zero-fills what it adds") {
    compact_vector<std::int64_t> v;
    v.resize(4);
    CHECK(v == std::vector<std::int64_t>{0, 0, 0, 0});
    std::iota(v.begin(), v.end(), 5);
    const std::size_t cap = v.capacity();
    v.resize(1);
    CHECK(v.capacity() == cap);
    v.resize(3);
    CHECK(v == std::vector<std::int64_t>{5, 0, 0});  // the old 6 and 7 are not brought back
    v.resize(0);
    CHECK(v.empty());
  }
}
