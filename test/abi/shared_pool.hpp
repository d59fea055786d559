// SPDX-License-Identifier: Apache-2.0
// One program, two translation units that disagree about NDEBUG: both
// define the functions declared here from the same source (tu_body.inc), one with NDEBUG and
// one without, and the test (abi_test.cpp) passes pools and blocks between them. Before the
// debug checks were a template parameter, `fixed_block_pool`'s layout followed NDEBUG, so these
// two translation units defined one class two ways.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/alloc/fixed_block_pool.hpp"
#include "xlamem/alloc/free_list.hpp"
#include "xlamem/alloc/heap_memory.hpp"

namespace abi {

using checked_pool = xlamem::fixed_block_pool<xlamem::aligned_heap_memory, xlamem::lock_free_policy,
                                              xlamem::fail_policy, xlamem::debug_checks>;
using plain_pool = xlamem::fixed_block_pool<xlamem::aligned_heap_memory>;
using biased_pool = xlamem::fixed_block_pool<xlamem::aligned_heap_memory,
                                             xlamem::owner_biased<xlamem::mutex_fifo_policy>>;

/// What one translation unit sees of the shared types.
struct tu_view {
  bool ndebug;                  // whether NDEBUG was defined there
  std::size_t checked_size;     // sizeof(checked_pool)
  std::size_t plain_size;       // sizeof(plain_pool)
  std::size_t biased_size;      // sizeof(biased_pool)
  std::size_t handle_size;      // sizeof(checked_pool::handle)
  std::size_t cache_size;       // sizeof(checked_pool::local_cache)
  int assert_evaluations;       // how often XLAMEM_ASSERT evaluated its condition once
};

/// Misuse messages, collected through pool_options::on_misuse.
struct misuse_log {
  std::vector<std::string> messages;
  static void record(void* self, const char* message) {
    static_cast<misuse_log*>(self)->messages.emplace_back(message);
  }
};

#define XLAMEM_ABI_DECLARE(ns)                                                       \
  namespace ns {                                                                     \
  tu_view view();                                                                    \
  checked_pool::handle acquire(checked_pool& pool);                                  \
  void release(checked_pool::handle& h);                                             \
  std::int64_t held(const checked_pool& pool);                                       \
  void* raw_allocate(checked_pool& pool);                                            \
  void raw_deallocate(checked_pool& pool, void* p);                                  \
  plain_pool::handle acquire_plain(plain_pool& pool);                                \
  void release_plain(plain_pool::handle& h);                                         \
  std::int64_t held_plain(const plain_pool& pool);                                   \
  biased_pool::handle acquire_biased(biased_pool& pool);                             \
  void release_biased(biased_pool::handle& h);                                       \
  checked_pool::local_cache::handle acquire_cached(checked_pool::local_cache& c);    \
  }

XLAMEM_ABI_DECLARE(with_ndebug)
XLAMEM_ABI_DECLARE(without_ndebug)

#undef XLAMEM_ABI_DECLARE

}  // namespace abi
