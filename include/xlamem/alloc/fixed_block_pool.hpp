// SPDX-License-Identifier: Apache-2.0
/// @file
/// `fixed_block_pool<Upstream, FreeList, Exhaustion, Checks>`: N blocks of B bytes at alignment A,
/// carved from one upstream allocation, handed out as move-only RAII handles (the replacement
/// for XLA's HostMemoryPool). The free list (locking) and the behaviour when exhausted are
/// template policies; the pool itself is also a `memory_resource` for requests that fit a block.
///
/// Thread safety: `acquire`, `try_acquire`, `allocate`, `deallocate` and handle release may run
/// concurrently when `FreeList::thread_safe`. Handles and pointers must not outlive the pool.
/// Cost: acquire and release are O(1): with the default `per_cpu_cache_policy`, plain loads
/// and stores on the caller's CPU cache (one restartable sequence each, no atomic
/// read-modify-write; one compare-exchange per half cache moved to or from the shared list,
/// see per_cpu_free_list.hpp); one compare-exchange each with `lock_free_policy` on the
/// caller's CPU stripe (an acquire that must steal visits the other stripes), one lock
/// with `mutex_fifo_policy`, plain loads and stores with `single_thread_policy` (and with an
/// `owner_biased<...>` list while one thread alone uses the pool, see free_list.hpp); the raw
/// `deallocate` additionally maps the pointer to its block (a division; O(chunks) with
/// `grow_policy`).
///
/// Debug checks (`Checks = debug_checks`; the default `no_debug_checks` has none): a double
/// release or a pointer the pool did not hand out is reported to `pool_options::on_misuse`
/// (default `XLAMEM_MISUSE`, which aborts) and ignored; over host-accessible upstreams released
/// blocks are filled with `poison_byte` and checked on the next acquire (a write after release
/// is reported), and the destructor reports blocks still held. They are a template parameter,
/// not a build flag, so that the pool's layout and code are the same in every translation unit
/// whatever `NDEBUG` says there (see docs/alloc.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "xlamem/align.hpp"
#include "xlamem/alloc/exhaustion.hpp"
#include "xlamem/alloc/free_list.hpp"
#include "xlamem/alloc/per_cpu_free_list.hpp"
#include "xlamem/alloc/properties.hpp"
#include "xlamem/alloc/resource.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

/// A misuse report sink: `fn(context, message)`. Plain function pointer + context, so setting
/// one costs no allocation and no `std::function`.
struct misuse_handler {
  void (*fn)(void* context, const char* message) = nullptr;
  void* context = nullptr;
};

/// Sizes and name of a `fixed_block_pool`.
struct pool_options {
  /// N: blocks per chunk (the whole pool unless it grows). At least 1.
  std::uint32_t block_count = 128;
  /// B: usable bytes per block. At least 1.
  std::size_t block_size = 8;
  /// A: alignment of every block, a power of two. Blocks are `align_up(B, A)` bytes apart.
  std::size_t alignment = alignof(std::max_align_t);
  /// Named in every error and misuse message.
  std::string name = "fixed_block_pool";
  /// Where debug checks report misuse; unset means `XLAMEM_MISUSE`.
  misuse_handler on_misuse{};
};

/// The byte debug checks fill released blocks with.
inline constexpr unsigned char poison_byte = 0xDD;

/// Debug checks of a `fixed_block_pool` (its `Checks` parameter): `enabled` says whether the
/// pool tracks every block (one byte per block and a held count, updated by every acquire and
/// release) and poisons released blocks.
template <class C>
concept debug_check_policy = requires {
  { C::enabled } -> std::convertible_to<bool>;
};

/// No debug checks (the default): acquire and release do nothing beyond the free list.
struct no_debug_checks {
  static constexpr bool enabled = false;
};

/// Debug checks on: double releases, foreign pointers, writes after release and blocks still
/// held at destruction are reported (see the file comment). Costs an atomic increment and an
/// exchange per acquire + release, and a pass over the block (poisoning) each way.
struct debug_checks {
  static constexpr bool enabled = true;
};

namespace detail {

struct no_waiters {
  void notify() noexcept {}
};

// Sleeping waiters for wait_policy. A releaser pushes, then reads `waiters` with a
// read-modify-write; a waiter registers with a read-modify-write, then pops under `mutex`.
// RMWs on one variable are totally ordered: either the releaser's comes later and sees the
// waiter, or the waiter's reads from it (acquire after release) and its pop sees the push.
// No fences, so ThreadSanitizer models it exactly.
struct block_waiters {
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<std::uint32_t> waiters{0};

  void notify() noexcept {
    if (waiters.fetch_add(0, std::memory_order_acq_rel) != 0) {
      { std::lock_guard<std::mutex> lock(mutex); }
      cv.notify_all();
    }
  }
};

struct no_debug_state {};

struct debug_state {
  std::unique_ptr<std::atomic<std::uint8_t>[]> in_use;
  std::atomic<std::int64_t> held{0};
};

}  // namespace detail

/// A pool of equal blocks carved from one upstream allocation (more with `grow_policy`).
/// @tparam Upstream where the chunk(s) come from (and fallback blocks, with `fallback_policy`).
/// @tparam FreeList `per_cpu_cache_policy` (default), `lock_free_policy`, `mutex_fifo_policy`,
/// `owner_biased<...>` or `single_thread_policy`.
/// @tparam Exhaustion `fail_policy` (default), `wait_policy`, `grow_policy` or `fallback_policy`.
/// @tparam Checks `no_debug_checks` (default) or `debug_checks`.
template <memory_resource Upstream, free_list_policy FreeList = per_cpu_cache_policy,
          exhaustion_policy Exhaustion = fail_policy, debug_check_policy Checks = no_debug_checks>
class fixed_block_pool
    : public forward_properties<fixed_block_pool<Upstream, FreeList, Exhaustion, Checks>,
                                Upstream> {
  static constexpr exhaustion_action action = Exhaustion::action;
  static constexpr bool grows = action == exhaustion_action::grow;
  static constexpr bool waits = action == exhaustion_action::wait;
  static constexpr bool falls_back = action == exhaustion_action::fallback;
  // Spelled as dependent on Upstream so discarded `if constexpr` branches are not checked.
  static constexpr bool debug = Checks::enabled && sizeof(Upstream) != 0;
  static constexpr bool poisons = debug && has_property<Upstream, host_accessible>;
  static_assert(!waits || FreeList::thread_safe,
                "fixed_block_pool: wait_policy needs a thread-safe free list (a single-thread "
                "pool would wait for a release that can never happen)");

 public:
  using upstream_type = Upstream;
  using free_list_type = FreeList;
  using exhaustion_type = Exhaustion;
  using checks_type = Checks;

  /// The index of a block served by the upstream (fallback) rather than the pool.
  static constexpr std::uint32_t upstream_index = free_list_npos;

  class local_cache;

  /// A move-only owner of one block; releases it to its owner (the pool, or a `local_cache`)
  /// on destruction.
  /// @tparam Owner `fixed_block_pool` or `local_cache`.
  template <class Owner>
  class basic_handle {
    using handle = basic_handle;

   public:
    basic_handle() noexcept = default;
    basic_handle(handle&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)),
          ptr_(std::exchange(other.ptr_, nullptr)),
          index_(other.index_) {}
    /// Releases this handle's own block first, then takes `other`'s.
    handle& operator=(handle&& other) noexcept {
      if (this != &other) {
        reset();
        pool_ = std::exchange(other.pool_, nullptr);
        ptr_ = std::exchange(other.ptr_, nullptr);
        index_ = other.index_;
      }
      return *this;
    }
    basic_handle(const handle&) = delete;
    handle& operator=(const handle&) = delete;
    ~basic_handle() { reset(); }

    /// Returns the block to its owner now; the handle becomes empty.
    void reset() noexcept {
      if (pool_ != nullptr) {
        pool_->release_block(ptr_, index_);
        pool_ = nullptr;
        ptr_ = nullptr;
      }
    }

    /// Stops owning the block without releasing it and returns it; give it back later with
    /// the pool's `deallocate(p, block_size(), alignment())`.
    [[nodiscard]] void* detach() noexcept {
      pool_ = nullptr;
      return std::exchange(ptr_, nullptr);
    }

    /// Whether the handle holds a block.
    [[nodiscard]] explicit operator bool() const noexcept { return ptr_ != nullptr; }
    /// The block's first byte (null when empty).
    [[nodiscard]] void* data() const noexcept { return ptr_; }
    /// The usable bytes of the block (0 when empty).
    [[nodiscard]] std::size_t size() const noexcept {
      return pool_ != nullptr ? pool_->block_size() : 0;
    }
    /// The block's index in the pool, or `upstream_index` for a fallback block.
    [[nodiscard]] std::uint32_t index() const noexcept { return index_; }
    /// Whether the block came from the upstream (fallback) rather than the pool.
    [[nodiscard]] bool from_upstream() const noexcept {
      return ptr_ != nullptr && index_ == upstream_index;
    }

    /// The block as a `T`, or an `invalid_argument` error naming the pool when `T` does not
    /// fit (too big or too strictly aligned) or the handle is empty.
    template <class T>
    [[nodiscard]] result<T*> try_get() const {
      if (pool_ == nullptr) {
        return error(errc::failed_precondition, "fixed_block_pool: get() on an empty handle");
      }
      if (sizeof(T) > pool_->block_size() || alignof(T) > pool_->alignment()) {
        return error(errc::invalid_argument,
                     "fixed_block_pool '" + pool_->name() + "': a type of " +
                         std::to_string(sizeof(T)) + " bytes at alignment " +
                         std::to_string(alignof(T)) + " does not fit its blocks of " +
                         std::to_string(pool_->block_size()) + " bytes at alignment " +
                         std::to_string(pool_->alignment()));
      }
      return static_cast<T*>(ptr_);
    }

    /// The block as a `T`.
    /// @throws exception (invalid_argument) when `T` does not fit the block.
    template <class T>
    [[nodiscard]] T* get() const {
      if (pool_ != nullptr && sizeof(T) <= pool_->block_size() &&
          alignof(T) <= pool_->alignment()) {
        return static_cast<T*>(ptr_);
      }
      throw_error(try_get<T>().error());
    }

   private:
    friend class fixed_block_pool;
    friend class local_cache;
    basic_handle(Owner* pool, void* ptr, std::uint32_t index) noexcept
        : pool_(pool), ptr_(ptr), index_(index) {}

    Owner* pool_ = nullptr;
    void* ptr_ = nullptr;
    std::uint32_t index_ = upstream_index;
  };

  /// The handle `acquire` returns.
  using handle = basic_handle<fixed_block_pool>;

  /// Takes the first chunk (N blocks of B bytes at A) from `upstream`.
  /// @throws exception (invalid_argument) for a zero size or count or a bad alignment;
  /// out_of_memory when the upstream refuses.
  fixed_block_pool(Upstream upstream, pool_options options, Exhaustion exhaustion = {})
      : upstream_(checked(std::move(upstream), options, exhaustion)),
        exhaustion_(exhaustion),
        name_(std::move(options.name)),
        block_size_(options.block_size),
        alignment_(options.alignment),
        stride_(0),
        per_chunk_(options.block_count),
        max_chunks_(1),
        on_misuse_(options.on_misuse),
        free_list_(capacity_of(options, exhaustion)) {
    if constexpr (grows) max_chunks_ = exhaustion.max_chunks;
    stride_ = static_cast<std::size_t>(align_up(block_size_, alignment_));
    if (is_power_of_two(stride_)) {
      while ((std::size_t{1} << stride_shift_) < stride_) ++stride_shift_;
    }
    chunks_ = std::make_unique<std::byte*[]>(max_chunks_);
    if constexpr (debug) {
      debug_.in_use = std::make_unique<std::atomic<std::uint8_t>[]>(
          static_cast<std::size_t>(per_chunk_) * max_chunks_);
    }
    auto first = xlamem::try_allocate(upstream_, chunk_bytes(), alignment_);
    if (!first.has_value()) {  // nothing to undo yet
      throw_error(first.error().with_context("fixed_block_pool '" + name_ + "': taking " +
                                             std::to_string(per_chunk_) + " blocks of " +
                                             std::to_string(block_size_) + " bytes"));
    }
    if constexpr (poisons) std::memset(*first, poison_byte, chunk_bytes());
    chunks_[0] = static_cast<std::byte*>(*first);
    first_chunk_ = chunks_[0];
    chunk_count_.store(1, std::memory_order_release);
    free_list_.push_range(0, per_chunk_);
  }

  /// Builds a pool on the heap, reporting bad options or an upstream failure as an error.
  [[nodiscard]] static result<std::unique_ptr<fixed_block_pool>> create(
      Upstream upstream, pool_options options, Exhaustion exhaustion = {}) noexcept {
    if (auto e = validate(options, exhaustion); !e.has_value()) return e.error();
#if XLAMEM_USE_EXCEPTIONS
    try {
      return std::make_unique<fixed_block_pool>(std::move(upstream), std::move(options),
                                                exhaustion);
    } catch (const exception& ex) {
      return ex.get();
    } catch (const std::bad_alloc& ex) {
      std::string_view what = ex.what();
      constexpr std::string_view prefix = "out_of_memory: ";
      if (what.substr(0, prefix.size()) == prefix) what.remove_prefix(prefix.size());
      return error(errc::out_of_memory, std::string(what));
    }
#else
    return std::make_unique<fixed_block_pool>(std::move(upstream), std::move(options), exhaustion);
#endif
  }

  fixed_block_pool(const fixed_block_pool&) = delete;
  fixed_block_pool& operator=(const fixed_block_pool&) = delete;

  ~fixed_block_pool() {
    if constexpr (debug) {
      const auto held = debug_.held.load(std::memory_order_acquire);
      if (held != 0) {
        misuse("destroyed while " + std::to_string(held) + " block(s) are still held");
      }
    }
    const std::uint32_t chunks = chunk_count_.load(std::memory_order_acquire);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      upstream_.deallocate(chunks_[c], chunk_bytes(), alignment_);
    }
  }

  /// A block, or (per the exhaustion policy) an error: `resource_exhausted` naming the pool,
  /// N and B; `out_of_memory` when growing or falling back fails in the upstream.
  [[nodiscard]] result<handle> try_acquire() noexcept {
    const std::uint32_t i = free_list_.pop();
    if (i == free_list_npos) [[unlikely]]
      return try_acquire_slow();
    on_acquired(i);
    return handle(this, block_ptr(i), i);
  }

  /// A block. @throws out_of_memory (a std::bad_alloc) carrying `try_acquire`'s message.
  [[nodiscard]] handle acquire() {
    std::uint32_t i = free_list_.pop();
    if (i != free_list_npos) [[likely]] {
      on_acquired(i);
      return handle(this, block_ptr(i), i);
    }
    auto r = try_acquire_slow();
    if (!r.has_value()) throw_error(r.error());
    return std::move(*r);
  }

  /// Fills every handle in `out` (empty ones expected), taking what is free in one step of
  /// the free list (one compare-exchange per stripe visited with `lock_free_policy`, usually
  /// one; one lock with `mutex_fifo_policy`) and the rest per the exhaustion policy. All or
  /// nothing: on an error the handles filled so far are released again.
  [[nodiscard]] result<void> try_acquire_many(std::span<handle> out) noexcept {
    std::uint32_t indices[64];
    std::size_t filled = 0;
    while (filled < out.size()) {
      const auto want = static_cast<std::uint32_t>(std::min<std::size_t>(64, out.size() - filled));
      const std::uint32_t got = pop_many(indices, want);
      for (std::uint32_t k = 0; k < got; ++k) {
        on_acquired(indices[k]);
        out[filled++] = handle(this, block_ptr(indices[k]), indices[k]);
      }
      if (got < want) {
        // A batch may come back short while blocks are still free (in a CPU cache, or moving
        // between threads): `pop` is the exact test before the exhaustion policy is asked.
        if (const std::uint32_t i = free_list_.pop(); i != free_list_npos) {
          on_acquired(i);
          out[filled++] = handle(this, block_ptr(i), i);
          continue;
        }
        auto r = try_acquire_slow();
        if (!r.has_value()) {
          release_many(out.first(filled));
          return r.error();
        }
        out[filled++] = std::move(*r);
      }
    }
    return {};
  }

  /// Releases every non-empty handle in `hs`, returning the pool's blocks to the free list in
  /// one step (one compare-exchange or one lock).
  void release_many(std::span<handle> hs) noexcept {
    std::uint32_t indices[64];
    std::uint32_t n = 0;
    for (auto& h : hs) {
      if (h.pool_ == nullptr) continue;
      if (h.index_ == upstream_index) {
        release_upstream_block(h.ptr_);
      } else if (on_releasing(h.ptr_, h.index_)) {
        indices[n++] = h.index_;
        if (n == 64) {
          push_many(indices, n);
          n = 0;
        }
      }
      h.pool_ = nullptr;
      h.ptr_ = nullptr;
    }
    push_many(indices, n);
  }

  /// A cache of free blocks owned by one thread, in front of a thread-safe pool: acquire and
  /// release touch only the cache (no atomic operation), and blocks move between the cache
  /// and the pool in batches of half its capacity (one compare-exchange or lock per batch),
  /// the way malloc's thread caches amortise their shared state. The user owns it (usually
  /// one per worker thread); it is not a global and not thread-safe itself. Destroying it
  /// returns its cached blocks to the pool; handles from it must be gone by then. Blocks in a
  /// cache are invisible to other threads (they may find the pool exhausted, or wait), so keep
  /// the capacity small against N.
  class local_cache {
   public:
    /// The handle this cache's `acquire` returns; it releases into the cache.
    using handle = basic_handle<local_cache>;

    /// @param capacity how many free blocks the cache may hold (2 to 64).
    explicit local_cache(fixed_block_pool& pool, std::uint32_t capacity = 32) noexcept
        : pool_(&pool), capacity_(std::clamp<std::uint32_t>(capacity, 2, 64)) {}
    local_cache(const local_cache&) = delete;
    local_cache& operator=(const local_cache&) = delete;
    ~local_cache() {
      if constexpr (debug) {
        if (held_ != 0) {
          pool_->misuse("local_cache destroyed while " + std::to_string(held_) +
                        " of its block(s) are still held");
        }
      }
      pool_->push_many(slots_, count_);
    }

    /// A block, or the pool's error when it and the cache are empty (per the exhaustion
    /// policy).
    [[nodiscard]] result<handle> try_acquire() noexcept {
      if (count_ == 0) [[unlikely]] {
        count_ = pool_->pop_many(slots_, capacity_ / 2);
        if (count_ == 0) {
          auto r = pool_->try_acquire_slow();
          if (!r.has_value()) return r.error();
          return adopt(*r);
        }
      }
      const std::uint32_t i = slots_[--count_];
      pool_->on_acquired(i);
      if constexpr (debug) ++held_;
      return handle(this, pool_->block_ptr(i), i);
    }

    /// A block. @throws out_of_memory carrying `try_acquire`'s message.
    [[nodiscard]] handle acquire() {
      if (count_ != 0) [[likely]] {
        const std::uint32_t i = slots_[--count_];
        pool_->on_acquired(i);
        if constexpr (debug) ++held_;
        return handle(this, pool_->block_ptr(i), i);
      }
      auto r = try_acquire();
      if (!r.has_value()) throw_error(r.error());
      return std::move(*r);
    }

    /// Free blocks in the cache now.
    [[nodiscard]] std::uint32_t cached() const noexcept { return count_; }
    /// The pool behind the cache.
    [[nodiscard]] fixed_block_pool& pool() const noexcept { return *pool_; }
    [[nodiscard]] std::size_t block_size() const noexcept { return pool_->block_size(); }
    [[nodiscard]] std::size_t alignment() const noexcept { return pool_->alignment(); }
    [[nodiscard]] const std::string& name() const noexcept { return pool_->name(); }

   private:
    friend class basic_handle<local_cache>;

    handle adopt(typename fixed_block_pool::handle& h) noexcept {
      handle out(this, h.ptr_, h.index_);
      h.pool_ = nullptr;
      h.ptr_ = nullptr;
      if constexpr (debug) ++held_;
      return out;
    }

    void release_block(void* p, std::uint32_t i) noexcept {
      if constexpr (debug) --held_;
      if (i == upstream_index) {
        pool_->release_upstream_block(p);
        return;
      }
      if (!pool_->on_releasing(p, i)) return;
      if (count_ == capacity_) [[unlikely]] {
        const std::uint32_t half = capacity_ / 2;
        pool_->push_many(slots_ + count_ - half, half);
        count_ -= half;
      }
      slots_[count_++] = i;
    }

    fixed_block_pool* pool_;
    std::uint32_t capacity_;
    std::uint32_t count_ = 0;
    std::int64_t held_ = 0;
    std::uint32_t slots_[64];
  };

  /// `memory_resource` interface: a block for a request of at most B bytes at alignment at
  /// most A (larger requests are refused, or served by the upstream with `fallback_policy`).
  /// @throws out_of_memory when the pool is exhausted or the request does not fit.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return detail::value_or_throw(try_allocate(bytes, alignment));
  }

  /// Like `allocate`, with failure as an error value.
  [[nodiscard]] result<void*> try_allocate(std::size_t bytes,
                                           std::size_t alignment = default_alignment) noexcept {
    if (!is_power_of_two(alignment)) return bad_alignment_error(name_.c_str(), alignment);
    if (bytes > block_size_ || alignment > alignment_) {
      if constexpr (falls_back) {
        return xlamem::try_allocate(upstream_, bytes, alignment);
      } else {
        return error(errc::out_of_memory,
                     "fixed_block_pool '" + name_ + "': a request of " + std::to_string(bytes) +
                         " bytes at alignment " + std::to_string(alignment) +
                         " does not fit its blocks of " + std::to_string(block_size_) +
                         " bytes at alignment " + std::to_string(alignment_));
      }
    }
    auto h = try_acquire();
    if (!h.has_value()) return h.error();
    return h->detach();  // ownership passes to the caller
  }

  /// Returns memory from `allocate`. A pointer the pool does not own goes to the upstream with
  /// `fallback_policy` and is reported as misuse otherwise (debug checks).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    if (p == nullptr) return;
    const std::uint32_t i = index_of(p);
    if (i != free_list_npos) {
      release_block(p, i);
      return;
    }
    if constexpr (falls_back) {
      if (bytes > block_size_ || alignment > alignment_) {
        upstream_.deallocate(p, bytes, alignment);
      } else {
        release_block(p, upstream_index);
      }
    } else {
      (void)bytes;
      (void)alignment;
      if constexpr (debug) misuse("deallocate of a pointer it did not hand out");
    }
  }

  /// Whether `p` is the start of one of the pool's blocks.
  [[nodiscard]] bool owns(const void* p) const noexcept { return index_of(p) != free_list_npos; }

  /// N: blocks per chunk.
  [[nodiscard]] std::uint32_t block_count() const noexcept { return per_chunk_; }
  /// B: usable bytes per block.
  [[nodiscard]] std::size_t block_size() const noexcept { return block_size_; }
  /// A: alignment of every block.
  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }
  /// Distance between consecutive blocks: `align_up(B, A)`.
  [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
  /// Chunks taken from the upstream so far (1 unless the pool grew).
  [[nodiscard]] std::uint32_t chunk_count() const noexcept {
    return chunk_count_.load(std::memory_order_acquire);
  }
  /// Blocks the pool can hand out now without growing: N × chunks.
  [[nodiscard]] std::uint32_t capacity() const noexcept { return per_chunk_ * chunk_count(); }
  /// The pool's name, as used in messages.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }
  /// The free list (read-only: its `stripe_count()`, `owner_bias_state()`, ...).
  [[nodiscard]] const FreeList& free_list() const noexcept { return free_list_; }
  /// Makes every later acquire and release take the free list's synchronised path, in every
  /// thread (revokes its owner bias, see free_list.hpp). For a pool that threads will share
  /// from the start; without it the first call from a second thread does this once.
  void revoke_owner_bias() noexcept requires requires(FreeList& f) { f.revoke_owner_bias(); }
  { free_list_.revoke_owner_bias(); }
  /// The exhaustion policy's parameters.
  [[nodiscard]] const Exhaustion& exhaustion() const noexcept { return exhaustion_; }
  /// Blocks currently held (handles and `allocate`d), counted only with debug checks; -1
  /// otherwise.
  [[nodiscard]] std::int64_t held() const noexcept {
    if constexpr (debug) return debug_.held.load(std::memory_order_acquire);
    return -1;
  }

  /// Pools are equal only to themselves.
  friend bool operator==(const fixed_block_pool& a, const fixed_block_pool& b) noexcept {
    return &a == &b;
  }

 private:
  static result<void> validate(const pool_options& options, const Exhaustion& exhaustion) {
    const auto bad = [&](const std::string& what) {
      return error(errc::invalid_argument, "fixed_block_pool '" + options.name + "': " + what);
    };
    if (options.block_count == 0) return bad("block_count must be at least 1");
    if (options.block_size == 0) return bad("block_size must be at least 1");
    if (!is_power_of_two(options.alignment)) {
      return bad("alignment " + std::to_string(options.alignment) + " is not a power of two");
    }
    std::uint64_t chunks = 1;
    if constexpr (grows) {
      if (exhaustion.max_chunks == 0) return bad("grow_policy::max_chunks must be at least 1");
      chunks = exhaustion.max_chunks;
    } else {
      (void)exhaustion;
    }
    if (static_cast<std::uint64_t>(options.block_count) * chunks >= free_list_npos) {
      return bad("block_count x max_chunks must stay below 2^32 - 1");
    }
    const auto stride = checked_align_up(options.block_size, options.alignment);
    if (!stride || *stride > UINT64_MAX / options.block_count) {
      return bad("block_count x block_size overflows");
    }
    return {};
  }

  static Upstream&& checked(Upstream&& upstream, const pool_options& options,
                            const Exhaustion& exhaustion) {
    if (auto e = validate(options, exhaustion); !e.has_value()) throw_error(e.error());
    return std::move(upstream);
  }

  static std::uint32_t capacity_of(const pool_options& options, const Exhaustion& exhaustion) {
    if constexpr (grows) {
      return options.block_count * exhaustion.max_chunks;
    } else {
      (void)exhaustion;
      return options.block_count;
    }
  }

  [[nodiscard]] std::size_t chunk_bytes() const noexcept {
    return stride_ * static_cast<std::size_t>(per_chunk_);
  }

  [[nodiscard]] void* block_ptr(std::uint32_t i) const noexcept {
    if constexpr (grows) {
      return chunks_[i / per_chunk_] + static_cast<std::size_t>(i % per_chunk_) * stride_;
    } else {
      return first_chunk_ + static_cast<std::size_t>(i) * stride_;
    }
  }

  [[nodiscard]] std::uint32_t index_of(const void* p) const noexcept {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    const std::uint32_t chunks = chunk_count_.load(std::memory_order_acquire);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const auto base = reinterpret_cast<std::uintptr_t>(chunks_[c]);
      if (addr < base || addr - base >= chunk_bytes()) continue;
      const std::uintptr_t offset = addr - base;
      const std::uintptr_t block = stride_shift_ != 0 ? offset >> stride_shift_ : offset / stride_;
      if (block * stride_ != offset) return free_list_npos;
      return c * per_chunk_ + static_cast<std::uint32_t>(block);
    }
    return free_list_npos;
  }

  void misuse(const std::string& what) const noexcept {
    const std::string message = "fixed_block_pool '" + name_ + "': " + what;
    if (on_misuse_.fn != nullptr) {
      on_misuse_.fn(on_misuse_.context, message.c_str());
    } else {
      XLAMEM_MISUSE(message.c_str());
    }
  }

  void on_acquired(std::uint32_t i) noexcept {
    if constexpr (debug) {
      debug_.in_use[i].store(1, std::memory_order_relaxed);
      debug_.held.fetch_add(1, std::memory_order_relaxed);
      if constexpr (poisons) {
        const auto* b = static_cast<const unsigned char*>(block_ptr(i));
        for (std::size_t k = 0; k < block_size_; ++k) {
          if (b[k] != poison_byte) {
            misuse("block " + std::to_string(i) + " was written after its release (byte " +
                   std::to_string(k) + ")");
            break;
          }
        }
      }
    } else {
      (void)i;
    }
  }

  // Debug bookkeeping of a release; false when it is a double release (reported, ignored).
  bool on_releasing(void* p, std::uint32_t i) noexcept {
    if constexpr (debug) {
      if (debug_.in_use[i].exchange(0, std::memory_order_relaxed) != 1) {
        misuse("double release of block " + std::to_string(i));
        return false;
      }
      debug_.held.fetch_sub(1, std::memory_order_relaxed);
      if constexpr (poisons) std::memset(p, poison_byte, block_size_);
    } else {
      (void)p;
      (void)i;
    }
    return true;
  }

  void release_upstream_block(void* p) noexcept {
    if constexpr (debug) debug_.held.fetch_sub(1, std::memory_order_relaxed);
    upstream_.deallocate(p, block_size_, alignment_);
  }

  // Where every handle and `deallocate` returns a block.
  void release_block(void* p, std::uint32_t i) noexcept {
    if constexpr (falls_back) {  // only a fallback pool hands out upstream blocks
      if (i == upstream_index) {
        release_upstream_block(p);
        return;
      }
    }
    if (!on_releasing(p, i)) return;
    free_list_.push(i);
    notify_waiters();
  }

  // Wakes threads waiting for a block (wait_policy). Not after a push the caller made as the
  // free list's bias owner: a thread that waits has revoked the bias first, and its pop after
  // the revocation sees every push the owner made before it (see owner_bias.hpp); this saves
  // the read-modify-write on the waiter count, most of an owned acquire + release.
  void notify_waiters() noexcept {
    if constexpr (waits) {
      if constexpr (requires { free_list_.owned_by_caller(); }) {
        if (free_list_.owned_by_caller()) return;
      }
      waiters_.notify();
    }
  }

  // Pops up to n indices at once (one compare-exchange or one lock where the policy can).
  std::uint32_t pop_many(std::uint32_t* out, std::uint32_t n) noexcept {
    if constexpr (requires { free_list_.pop_many(out, n); }) {
      return free_list_.pop_many(out, n);
    } else {
      std::uint32_t k = 0;
      while (k < n && (out[k] = free_list_.pop()) != free_list_npos) ++k;
      return k;
    }
  }

  void push_many(const std::uint32_t* in, std::uint32_t n) noexcept {
    if (n == 0) return;
    if constexpr (requires { free_list_.push_many(in, n); }) {
      free_list_.push_many(in, n);
    } else {
      for (std::uint32_t k = 0; k < n; ++k) free_list_.push(in[k]);
    }
    notify_waiters();
  }

  // Exhausted: wait, grow or fall back per the policy. On success returns a block index with
  // a null pointer, or `upstream_index` with a block from the upstream.
  result<std::pair<std::uint32_t, void*>> exhausted_impl() noexcept {
    if constexpr (waits) {
      const auto deadline = std::chrono::steady_clock::now() + exhaustion_.timeout;
      waiters_.waiters.fetch_add(1, std::memory_order_acq_rel);
      std::uint32_t i = free_list_npos;
      {
        std::unique_lock<std::mutex> lock(waiters_.mutex);
        for (;;) {
          i = free_list_.pop();
          if (i != free_list_npos) break;
          if (waiters_.cv.wait_until(lock, deadline) == std::cv_status::timeout) {
            i = free_list_.pop();
            break;
          }
        }
      }
      waiters_.waiters.fetch_sub(1, std::memory_order_relaxed);
      if (i != free_list_npos) return std::pair<std::uint32_t, void*>(i, nullptr);
      return exhausted_error(
          " (waited " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(exhaustion_.timeout).count()) +
          " ms)");
    } else if constexpr (grows) {
      std::lock_guard<std::mutex> lock(grow_mutex_);
      std::uint32_t i = free_list_.pop();  // another thread may have grown meanwhile
      if (i != free_list_npos) return std::pair<std::uint32_t, void*>(i, nullptr);
      const std::uint32_t c = chunk_count_.load(std::memory_order_relaxed);
      if (c >= max_chunks_) {
        return exhausted_error(" (grown to its limit of " + std::to_string(max_chunks_) +
                               " chunks)");
      }
      auto chunk = xlamem::try_allocate(upstream_, chunk_bytes(), alignment_);
      if (!chunk.has_value()) {
        return chunk.error().with_context("fixed_block_pool '" + name_ + "': growing by " +
                                          std::to_string(per_chunk_) + " blocks of " +
                                          std::to_string(block_size_) + " bytes");
      }
      if constexpr (poisons) std::memset(*chunk, poison_byte, chunk_bytes());
      chunks_[c] = static_cast<std::byte*>(*chunk);
      chunk_count_.store(c + 1, std::memory_order_release);
      free_list_.push_range(c * per_chunk_ + 1, per_chunk_ - 1);
      return std::pair<std::uint32_t, void*>(c * per_chunk_, nullptr);
    } else if constexpr (falls_back) {
      auto p = xlamem::try_allocate(upstream_, block_size_, alignment_);
      if (!p.has_value()) {
        return p.error().with_context("fixed_block_pool '" + name_ +
                                      "': falling back to the upstream");
      }
      return std::pair<std::uint32_t, void*>(upstream_index, *p);
    } else {
      return exhausted_error("");
    }
  }

  error exhausted_error(const std::string& detail) const {
    const std::uint32_t total = capacity();
    return error(errc::resource_exhausted,
                 "fixed_block_pool '" + name_ + "': all " + std::to_string(total) + " blocks of " +
                     std::to_string(block_size_) + " bytes are in use" +
                     (total != per_chunk_ ? " (N = " + std::to_string(per_chunk_) + " per chunk)"
                                          : std::string()) +
                     detail);
  }

  result<handle> try_acquire_slow() noexcept {
    auto r = exhausted_impl();
    if (!r.has_value()) return r.error();
    const auto [i, p] = *r;
    if (i == upstream_index) {
      if constexpr (debug) debug_.held.fetch_add(1, std::memory_order_relaxed);
      return handle(this, p, upstream_index);
    }
    on_acquired(i);
    return handle(this, block_ptr(i), i);
  }

  XLAMEM_NO_UNIQUE_ADDRESS Upstream upstream_;
  XLAMEM_NO_UNIQUE_ADDRESS Exhaustion exhaustion_;
  std::string name_;
  std::size_t block_size_;
  std::size_t alignment_;
  std::size_t stride_;
  unsigned stride_shift_ = 0;  // log2(stride_) when a power of two, for the raw deallocate
  std::uint32_t per_chunk_;
  std::uint32_t max_chunks_;
  misuse_handler on_misuse_;
  std::unique_ptr<std::byte*[]> chunks_;
  std::byte* first_chunk_ = nullptr;  // chunks_[0], one load nearer for the acquire's address
  std::atomic<std::uint32_t> chunk_count_{0};
  XLAMEM_NO_UNIQUE_ADDRESS std::conditional_t<grows, std::mutex, detail::no_debug_state>
      grow_mutex_;
  XLAMEM_NO_UNIQUE_ADDRESS std::conditional_t<waits, detail::block_waiters, detail::no_waiters>
      waiters_;
  XLAMEM_NO_UNIQUE_ADDRESS std::conditional_t<debug, detail::debug_state, detail::no_debug_state>
      debug_;
  FreeList free_list_;
};

static_assert(memory_resource<fixed_block_pool<detail::archetype_resource>>);
static_assert(try_allocating_resource<fixed_block_pool<detail::archetype_resource>>);
static_assert(has_property<fixed_block_pool<detail::archetype_resource>, host_accessible>);

}  // namespace xlamem
