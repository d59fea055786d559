// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/alloc/owner_bias.hpp: unowned -> owned by the first thread -> revoked
// for good by the second; revoke(); run(); and a revoker waiting out the owner's operation.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "xlamem/alloc/owner_bias.hpp"

TEST_SUITE("alloc/owner_bias") {
  using xlamem::owner_bias;
  using state = owner_bias::state_kind;

  // Whether a fresh owner_bias can be owned in this process (else it goes shared at once).
  bool can_bias() { return owner_bias::supported() && owner_bias::available(); }

  TEST_CASE("supported() says what the platform allows; available() only where supported") {
#if defined(__linux__) && defined(__GLIBC__)
    CHECK(owner_bias::supported());
#endif
    if (!owner_bias::supported()) CHECK_FALSE(owner_bias::available());
  }

  TEST_CASE("the first thread to enter owns it; a second thread revokes the bias for good") {
    owner_bias b;
    if (!can_bias()) {
      CHECK(b.state() == state::shared);
      CHECK_FALSE(b.enter());
      return;
    }
    CHECK(b.state() == state::unowned);
    CHECK_FALSE(b.held_by_caller());
    REQUIRE(b.enter());
    CHECK(b.state() == state::owned);
    CHECK(b.held_by_caller());
    b.leave();
    CHECK(b.enter());  // the owner enters again and again
    b.leave();

    bool other_entered = true;
    bool other_held = true;
    std::thread([&] {
      other_held = b.held_by_caller();
      other_entered = b.enter();  // revokes: the synchronised path from now on
    }).join();
    CHECK_FALSE(other_held);
    CHECK_FALSE(other_entered);
    CHECK(b.state() == state::shared);
    CHECK_FALSE(b.enter());  // the former owner too, for good
    CHECK_FALSE(b.held_by_caller());
  }

  TEST_CASE("revoke(): from unowned or by the owner straight to shared; idempotent; any thread") {
    {
      owner_bias b;
      b.revoke();
      CHECK(b.state() == state::shared);
      b.revoke();
      CHECK(b.state() == state::shared);
      CHECK_FALSE(b.enter());
    }
    if (!can_bias()) return;
    {
      owner_bias b;
      REQUIRE(b.enter());
      b.leave();
      b.revoke();  // by the owner itself, outside an operation
      CHECK(b.state() == state::shared);
      CHECK_FALSE(b.held_by_caller());
    }
    {
      owner_bias b;
      REQUIRE(b.enter());
      b.leave();
      std::thread([&] { b.revoke(); }).join();  // by another thread: the handshake
      CHECK(b.state() == state::shared);
      CHECK_FALSE(b.enter());
    }
  }

  TEST_CASE("run() takes the plain path while owned, the synchronised one after, and returns its value") {
    owner_bias b;
    int plain = 0;
    int synced = 0;
    const auto op = [&] {
      return b.run([&] { return ++plain; }, [&] { return -(++synced); });
    };
    if (can_bias()) {
      CHECK(op() == 1);
      CHECK(op() == 2);
      int from_other = 0;
      std::thread([&] { from_other = op(); }).join();  // would hang if run() had not left
      CHECK(from_other == -1);
      CHECK(op() == -2);
      CHECK(plain == 2);
    } else {
      CHECK(op() == -1);
    }
    CHECK(b.state() == state::shared);
  }

  TEST_CASE("a revoking thread waits while the owner is inside an operation") {
    if (!can_bias()) return;
    owner_bias b;
    REQUIRE(b.enter());  // the owner is now inside an operation
    std::atomic<bool> done{false};
    bool entered = true;
    std::thread other([&] {
      entered = b.enter();
      done.store(true);
    });
    // The other thread marks the state revoking, then waits for the owner to leave.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (b.state() != state::revoking && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    CHECK(b.state() == state::revoking);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK_FALSE(done.load());
    CHECK(b.state() == state::revoking);
    b.leave();
    other.join();
    CHECK(done.load());
    CHECK_FALSE(entered);
    CHECK(b.state() == state::shared);
  }

  TEST_CASE("many threads arriving at once all end on the synchronised path") {
    if (!can_bias()) return;
    owner_bias b;
    REQUIRE(b.enter());
    b.leave();
    std::atomic<int> owned_elsewhere{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        for (int k = 0; k < 100; ++k) {
          if (b.enter()) {
            owned_elsewhere.fetch_add(1);
            b.leave();
          }
        }
      });
    }
    go.store(true);
    for (auto& th : ts) th.join();
    CHECK(owned_elsewhere.load() == 0);
    CHECK(b.state() == state::shared);
  }
}
