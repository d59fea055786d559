// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/cuda/device_allocation.hpp: the cuda_device_resource concept, and
// device_allocation (ownership, ids, sizes, reset, moves, to_string, errors) over the fake
// driver's resources; in "cuda/gpu", an allocation on the real device.
#include "xlamem/cuda/device_allocation.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "cuda_test_support.hpp"
#include "fake_driver.hpp"
#include "xlamem/alloc/heap_memory.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/cuda/async_memory.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/pinned_host_memory.hpp"
#include "xlamem/cuda/pinned_pool.hpp"
#include "xlamem/cuda/vmm_memory.hpp"

using namespace xlamem;
using xlamem::test::check_round_trip;
using xlamem::test::contains;
using xlamem::test::fake_driver;
using xlamem::test::fake_gpu;
using xlamem::test::pointer_text;
using xlamem::test::real_driver;
using xlamem::test::recording_log;

// The concept: the models, and near misses that differ from a model in one way (in a named
// namespace: its functions are declared only, which clang flags in an unnamed one).
namespace device_allocation_test {
struct device_resource_without_driver {
  void* allocate(std::size_t, std::size_t);
  void deallocate(void*, std::size_t, std::size_t) noexcept;
  int device_ordinal() const;
  friend bool operator==(const device_resource_without_driver&,
                         const device_resource_without_driver&);
  friend void get_property(const device_resource_without_driver&, device_accessible) noexcept;
};
}  // namespace device_allocation_test

static_assert(cuda_device_resource<cuda_device_memory<>>);
static_assert(cuda_device_resource<cuda_vmm_device_memory<recording_log>>);
static_assert(cuda_device_resource<cuda_async_memory<>>);
static_assert(!cuda_device_resource<cuda_pinned_host_memory<>>);  // host memory
static_assert(!cuda_device_resource<aligned_heap_memory>);
static_assert(!cuda_device_resource<device_allocation_test::device_resource_without_driver>);
static_assert(!cuda_device_resource<cuda_device_pool<>>);  // a pool names no device

TEST_SUITE("cuda/device_allocation") {
  TEST_CASE("owns its memory, has ids, size, ordinal and to_string") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    {
      auto a = device_allocation::allocate(*mem, 1024);
      auto b = device_allocation::allocate(*mem, 4096);
      CHECK(a.address() != nullptr);
      CHECK(a.size() == 1024);
      CHECK(a.device_ordinal() == 0);
      CHECK(a.unique_id() != 0);
      CHECK(b.unique_id() != a.unique_id());
      CHECK(a.device_pointer() == reinterpret_cast<std::uintptr_t>(a.address()));
      const std::string s = a.to_string();
      CHECK(contains(s, "id=" + std::to_string(a.unique_id())));
      CHECK(contains(s, "device=0"));
      CHECK(contains(s, "size=1024"));
      CHECK(fake_gpu::get().device_allocations.size() == 2);

      device_allocation moved = std::move(a);
      CHECK_FALSE(a);
      CHECK(moved);
      moved = std::move(b);  // frees moved's own memory first
      CHECK(fake_gpu::get().device_allocations.size() == 1);
    }
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("zero bytes give an empty allocation without a driver call (as XLA)") {
    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::try_allocate(*mem, 0);
    REQUIRE(a.has_value());
    CHECK(a->address() == nullptr);
    CHECK(a->size() == 0);
    CHECK(fake_gpu::get().contexts_at_alloc.empty());
  }

  TEST_CASE("failures carry the resource's error") {
    auto d = fake_driver();
    fake_gpu::get().memory_limit = 4096;
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::try_allocate(*mem, 1 << 20);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().code() == errc::out_of_memory);
    CHECK_THROWS_AS((void)device_allocation::allocate(*mem, 1 << 20), std::bad_alloc);
  }

  TEST_CASE("over VMM the size is the padded size") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE(vmm.has_value());
    auto a = device_allocation::allocate(*vmm, 1000);
    CHECK(a.size() == (2u << 20));
    CHECK(a.requested_size() == 1000);
  }

  TEST_CASE("an empty allocation; reset frees at once; alignment and requested size are kept") {
    const device_allocation empty;
    CHECK_FALSE(empty);
    CHECK(empty.address() == nullptr);
    CHECK(empty.device_pointer() == 0);
    CHECK(empty.size() == 0);
    CHECK(empty.requested_size() == 0);
    CHECK(empty.alignment() == device_allocation::default_device_alignment);
    CHECK(empty.device_ordinal() == -1);
    CHECK(empty.unique_id() == 0);
    CHECK(empty.to_string() == "device_allocation{id=0, device=-1, address=" +
                                   pointer_text(nullptr) + ", size=0, requested=0}");

    auto d = fake_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::allocate(*mem, 100, 512);
    CHECK(a.alignment() == 512);
    CHECK(a.requested_size() == 100);
    CHECK(a.size() == 100);  // cuda_device_memory reports no padded size
    CHECK(reinterpret_cast<std::uintptr_t>(a.address()) % 512 == 0);
    CHECK(a.to_string() == "device_allocation{id=" + std::to_string(a.unique_id()) +
                               ", device=0, address=" + pointer_text(a.address()) +
                               ", size=100, requested=100}");
    a.reset();
    CHECK_FALSE(a);
    CHECK(a.unique_id() == 0);
    CHECK(a.size() == 0);
    CHECK(fake_gpu::get().device_allocations.empty());
    a.reset();  // a second reset does nothing
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("ids are unique across resources sharing a driver; a moved allocation frees once") {
    auto d = fake_driver();
    auto async = cuda_async_memory<>::create(d, 0);
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(async.has_value());
    REQUIRE(mem.has_value());
    {
      auto a = device_allocation::allocate(*async, 1000);
      auto b = device_allocation::allocate(*mem, 8);
      CHECK(a.size() == 1000);
      CHECK(a.unique_id() != b.unique_id());
      CHECK(fake_gpu::get().pool_allocations.size() == 1);
      {
        device_allocation moved(std::move(a));
        CHECK(moved.size() == 1000);
        CHECK_FALSE(a);
        CHECK(a.unique_id() == 0);
      }
      CHECK(fake_gpu::get().pool_allocations.empty());
      CHECK(fake_gpu::get().device_allocations.size() == 1);
    }
    CHECK(fake_gpu::get().device_allocations.empty());
  }

  TEST_CASE("a failed VMM allocation leaves nothing behind and keeps the driver's message") {
    auto d = fake_driver();
    auto vmm = cuda_vmm_device_memory<>::create(d, 0);
    REQUIRE(vmm.has_value());
    fake_gpu::get().fail_next["cuMemMap"] = CUDA_ERROR_OUT_OF_MEMORY;
    auto a = device_allocation::try_allocate(*vmm, 1000);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().code() == errc::out_of_memory);
    CHECK(a.error().message() ==
          "cuda_vmm_device_memory: cuMemMap(2097152 bytes) on device 0: "
          "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    CHECK(fake_gpu::get().vmm_reservations.empty());
    CHECK(fake_gpu::get().vmm_handles.empty());
  }
}

// GPU suite: the real driver and device (main.cpp runs it with --gpu only).
TEST_SUITE("cuda/gpu") {
  TEST_CASE("device_allocation over the real device") {
    auto d = real_driver();
    auto mem = cuda_device_memory<>::create(d, 0);
    REQUIRE(mem.has_value());
    auto a = device_allocation::allocate(*mem, 1024);
    CHECK(a.size() >= 1024);
    CHECK(a.unique_id() != 0);
    check_round_trip(mem->context(), a.address(), 1024);
    MESSAGE(a.to_string());
    auto z = device_allocation::allocate(*mem, 0);
    CHECK(z.address() == nullptr);
  }
}
