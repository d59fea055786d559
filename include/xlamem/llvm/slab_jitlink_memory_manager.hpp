// SPDX-License-Identifier: Apache-2.0
/// @file
/// A JITLink memory manager (`llvm::jitlink::JITLinkMemoryManager`, what ORC's
/// `ObjectLinkingLayer` and `LLJIT` use from LLVM 17 on ELF x86-64 and AArch64) that carves every
/// link graph out of one reservation, the slab:
///
///     [ code stripe (r-x) | read-only stripe (r--) | read-write stripe (rw-) ]
///
/// - **One slab, ±2 GiB.** The slab is at most `code_reach` bytes (2 GiB), so every PC-relative
///   (Delta32) relocation between any two modules stays in range.
/// - **Striped by protection.** A module's code segment lies in the code stripe, its constants
///   in the read-only stripe, its data in the read-write stripe, each one contiguous run of
///   pages. Runs of one stripe end up with one protection and the kernel merges them, so the
///   slab stays at most 8 mappings however many modules it loads (mappings per module, as
///   JITLink's own managers make them, exhaust `vm.max_map_count`).
/// - **W^X.** Pages are read+write while JITLink writes them (fresh ones committed
///   `commit_ahead_bytes` at a time) and get their final protection (never writable and
///   executable) at finalization. With `dual_mapping` the slab is a memfd
///   mapped twice instead: JITLink writes through a read+write view, code runs from a view whose
///   stripes were mapped r-x / r-- / rw- once at creation, so no protection ever changes.
/// - **Reuse.** Runs of removed modules (a `ResourceTracker` removed, a JITDylib cleared) go to a
///   free list per stripe and are cleared and handed out again before the stripe grows.
/// - **Limits as `llvm::Error`.** `byte_limit` bounds the live bytes; a graph that does not fit
///   the limit or its stripe fails to allocate with an `llvm::Error` naming the sizes, which ORC
///   reports from the lookup that triggered the link; nothing aborts.
/// - **Statistics** (`stats()`): reserved, committed (ever made accessible), live and peak bytes,
///   per-stripe figures, mappings held, and counts of allocations and failures.
/// - **Instruction cache.** Code is flushed with `llvm::sys::Memory::InvalidateInstructionCache`
///   after it is written (a no-op on x86; needed on AArch64).
///
/// Plug into LLJIT in one line (see `object_linking_layer_creator`):
///
///     LLJITBuilder().setObjectLinkingLayerCreator(xlamem::object_linking_layer_creator(mm))
///
/// Differences between LLVM versions (tested on 19 and 22; compiles with 14) are absorbed in
/// `detail::` by member detection, not macros; the creators accept both the
/// `(ExecutionSession&, const Triple&)` signature of LLVM 14-19 and the `(ExecutionSession&)`
/// one of LLVM 22.
#pragma once

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/JITLink/EHFrameSupport.h>
#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/Shared/AllocationActions.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/Memory.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#if __has_include(<llvm/ExecutionEngine/Orc/EHFrameRegistrationPlugin.h>)
#include <llvm/ExecutionEngine/Orc/EHFrameRegistrationPlugin.h>
#define XLAMEM_DETAIL_EH_FRAME_PLUGIN_CREATE 1
#else
#define XLAMEM_DETAIL_EH_FRAME_PLUGIN_CREATE 0
#endif

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"
#include "xlamem/jit/dual_mapping.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/jit/page_run_arena.hpp"
#include "xlamem/jit/section_layout.hpp"

static_assert(LLVM_VERSION_MAJOR >= 14, "xlamem/llvm needs LLVM 14 or later");

namespace xlamem {

/// How a `basic_slab_jitlink_memory_manager` lays out and bounds its slab.
struct slab_jitlink_options {
  std::uint64_t code_bytes = std::uint64_t{256} << 20;        ///< the code stripe
  std::uint64_t read_only_bytes = std::uint64_t{256} << 20;   ///< the read-only stripe
  std::uint64_t read_write_bytes = std::uint64_t{256} << 20;  ///< the read-write stripe
  /// The most bytes (whole pages) live allocations may hold; 0: only the stripes bound them.
  std::uint64_t byte_limit = 0;
  /// Map the slab twice (memfd, Linux): write through one view, run from the other.
  bool dual_mapping = false;
  /// Fresh pages are made read+write this many bytes at a time (rounded to pages), so most
  /// links need no protection change before JITLink writes; 0 means one run at a time.
  std::uint64_t commit_ahead_bytes = std::uint64_t{256} << 10;
  /// The largest slab allowed: the reach of PC-relative relocations between modules.
  std::uint64_t code_reach = default_code_reach;
};

/// Figures of one stripe.
struct slab_stripe_statistics {
  std::uint64_t capacity = 0;   ///< bytes of the slab given to the stripe
  std::uint64_t committed = 0;  ///< bytes ever made accessible (high-water mark, with commit-ahead)
  std::uint64_t live = 0;       ///< bytes held by live allocations
  std::uint64_t free = 0;       ///< bytes released and waiting for reuse
  std::uint64_t free_runs = 0;  ///< runs in the free list
};

/// What a `basic_slab_jitlink_memory_manager` holds and has done (one consistent snapshot).
struct slab_jitlink_statistics {
  std::uint64_t reserved_bytes = 0;   ///< the slab
  std::uint64_t committed_bytes = 0;  ///< sum of the stripes' accessible high-water marks
  std::uint64_t live_bytes = 0;       ///< pages held by in-flight and finalized allocations
  std::uint64_t peak_live_bytes = 0;
  std::uint64_t reused_bytes = 0;      ///< bytes ever served from freed runs
  std::uint64_t mappings = 0;          ///< mappings the manager holds: 1, or 2 views when dual
  std::uint64_t live_allocations = 0;  ///< finalized allocations not yet deallocated
  std::uint64_t allocations = 0;       ///< graphs allocated
  std::uint64_t failed_allocations = 0;
  std::uint64_t deallocations = 0;
  std::uint64_t protections = 0;                    ///< protection changes asked of the page mapper
  std::array<slab_stripe_statistics, 3> stripes{};  ///< by `allocation_purpose`

  [[nodiscard]] const slab_stripe_statistics& stripe(allocation_purpose p) const noexcept {
    return stripes[static_cast<std::size_t>(p)];
  }
};

namespace detail {

/// An xlamem error as an `llvm::Error` (a `StringError` with the code's name and the message).
[[nodiscard]] inline llvm::Error to_llvm_error(const error& e) {
  return llvm::make_error<llvm::StringError>(e.to_string(), llvm::inconvertibleErrorCode());
}

/// The protection a JITLink segment asks for (`orc::MemProt` in LLVM 19 and 22,
/// `jitlink::MemProt` in 14; the same enumerators).
template <class Prot>
[[nodiscard]] page_access jitlink_access(Prot p) noexcept {
  const auto bits = [](Prot x) { return static_cast<std::uint64_t>(x); };
  page_access a = page_access::none;
  if ((bits(p) & bits(Prot::Read)) != 0) a = a | page_access::read;
  if ((bits(p) & bits(Prot::Write)) != 0) a = a | page_access::write;
  if ((bits(p) & bits(Prot::Exec)) != 0) a = a | page_access::execute;
  return a;
}

/// True for a group whose memory is freed once finalization is over: `getMemLifetime()` (LLVM
/// 19, 22), `getMemLifetimePolicy()` (the name between), `getMemDeallocPolicy()` (LLVM 14).
template <class Group>
[[nodiscard]] bool jitlink_finalize_lifetime(const Group& g) noexcept {
  if constexpr (requires { g.getMemLifetime(); }) {
    return g.getMemLifetime() == decltype(g.getMemLifetime())::Finalize;
  } else if constexpr (requires { g.getMemLifetimePolicy(); }) {
    return g.getMemLifetimePolicy() == decltype(g.getMemLifetimePolicy())::Finalize;
  } else {
    return g.getMemDeallocPolicy() == decltype(g.getMemDeallocPolicy())::Finalize;
  }
}

/// The stripe for a protection: executable -> code, writable -> read-write, else read-only.
[[nodiscard]] inline allocation_purpose stripe_for(page_access a) noexcept {
  if (has_access(a, page_access::execute)) return allocation_purpose::code;
  if (has_access(a, page_access::write)) return allocation_purpose::read_write_data;
  return allocation_purpose::read_only_data;
}

/// The protection every page of a stripe has once finalized (and in a dual mapping's
/// executable view from the start).
[[nodiscard]] inline page_access stripe_access(allocation_purpose p) noexcept {
  switch (p) {
    case allocation_purpose::code:
      return page_access::read_execute;
    case allocation_purpose::read_only_data:
      return page_access::read;
    case allocation_purpose::read_write_data:
      break;
  }
  return page_access::read_write;
}

}  // namespace detail

/// The slab JITLink memory manager over a `page_mapper` (see the file comment).
/// Thread-safe: JITLink may allocate, finalize and deallocate from several threads; the
/// bookkeeping and every call into the page mapper run under one lock, so `PageMapper` need not
/// be thread-safe itself. The manager must outlive every allocation it made (own it in the
/// `ObjectLinkingLayer`, or keep it alive longer than the JIT).
/// @tparam PageMapper a `page_mapper`, held by value (use `page_mapper_ref` to share one). Only
///         used without `dual_mapping`: one reservation of the whole slab, inaccessible, whose
///         pages are then protected run by run.
template <page_mapper PageMapper>
class basic_slab_jitlink_memory_manager final : public llvm::jitlink::JITLinkMemoryManager {
  using base = llvm::jitlink::JITLinkMemoryManager;

 public:
  using base::allocate;
  using base::deallocate;

  /// Reserves the slab.
  /// @returns the manager, or `invalid_argument` (a stripe size of 0 or not whole pages, a slab
  ///          larger than `code_reach`) or the mapper's / the dual mapping's error.
  [[nodiscard]] static result<std::unique_ptr<basic_slab_jitlink_memory_manager>> try_create(
      PageMapper mapper = PageMapper{}, slab_jitlink_options options = {}) noexcept {
    try {
      std::unique_ptr<basic_slab_jitlink_memory_manager> m(
          new basic_slab_jitlink_memory_manager(std::move(mapper), options));
      auto r = m->reserve();
      if (!r) return r.error().with_context("slab_jitlink_memory_manager");
      return m;
    } catch (...) {
      return make_error(errc::out_of_memory, "slab_jitlink_memory_manager: out of memory");
    }
  }

  /// `try_create` with the error as an `llvm::Error`.
  [[nodiscard]] static llvm::Expected<std::unique_ptr<basic_slab_jitlink_memory_manager>> create(
      PageMapper mapper = PageMapper{}, slab_jitlink_options options = {}) {
    auto r = try_create(std::move(mapper), options);
    if (!r) return detail::to_llvm_error(r.error());
    return std::move(*r);
  }

  basic_slab_jitlink_memory_manager(const basic_slab_jitlink_memory_manager&) = delete;
  basic_slab_jitlink_memory_manager& operator=(const basic_slab_jitlink_memory_manager&) = delete;

  /// Releases the slab (allocations still live die with it).
  ~basic_slab_jitlink_memory_manager() override {
    if (!slab_.empty()) (void)mapper_.try_release(slab_);
  }

  /// Lays `graph` out, takes one run per segment from its stripe, makes the runs writable (clears
  /// reused ones) and points the graph's blocks at them. Errors (`llvm::Error` to
  /// `on_allocated`): an alignment above the page size, a segment asking for write+execute, the
  /// byte limit, a full stripe, a failed protection.
  void allocate(const llvm::jitlink::JITLinkDylib* /*dylib*/, llvm::jitlink::LinkGraph& graph,
                OnAllocatedFunction on_allocated) override {
    on_allocated(allocate_graph(graph));
  }

  /// Runs each allocation's deallocation actions (last first), then frees its runs for reuse.
  /// Errors are joined and passed on; every allocation is freed even when one fails.
  void deallocate(std::vector<FinalizedAlloc> allocs,
                  OnDeallocatedFunction on_deallocated) override {
    llvm::Error err = llvm::Error::success();
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) {
      const std::uint64_t id = it->release().getValue();
      finalized_record record;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto found = finalized_.find(id);
        if (found == finalized_.end()) {
          err = llvm::joinErrors(
              std::move(err), detail::to_llvm_error(make_error(
                                  errc::not_found,
                                  "slab_jitlink_memory_manager: deallocate "
                                  "of allocation " +
                                      std::to_string(id) + ", which this manager does not hold")));
          continue;
        }
        record = std::move(found->second);
        finalized_.erase(found);
      }
      err = llvm::joinErrors(std::move(err),
                             llvm::orc::shared::runDeallocActions(record.dealloc_actions));
      std::lock_guard<std::mutex> lock(mutex_);
      release_runs(record.runs);
      ++deallocations_;
    }
    on_deallocated(std::move(err));
  }

  /// A snapshot of the figures.
  [[nodiscard]] slab_jitlink_statistics stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    slab_jitlink_statistics s;
    s.reserved_bytes = total_;
    for (std::size_t i = 0; i < stripes_.size(); ++i) {
      const auto& a = stripes_[i];
      const std::uint64_t committed = committed_end_[i] - a.begin();
      s.stripes[i] = {a.capacity(), committed, a.live_bytes(), a.free_bytes(), a.free_runs()};
      s.committed_bytes += committed;
      s.live_bytes += a.live_bytes();
      s.reused_bytes += a.reused_bytes();
    }
    s.peak_live_bytes = peak_live_;
    s.mappings = options_.dual_mapping ? (dual_.empty() ? 0 : 2) : (slab_.empty() ? 0 : 1);
    s.live_allocations = finalized_.size();
    s.allocations = allocations_;
    s.failed_allocations = failed_allocations_;
    s.deallocations = deallocations_;
    s.protections = protections_;
    return s;
  }

  [[nodiscard]] const slab_jitlink_options& options() const noexcept { return options_; }
  [[nodiscard]] std::uint64_t page_size() const noexcept { return page_size_; }
  /// Where code runs: the slab (the executable view with `dual_mapping`).
  [[nodiscard]] page_block slab() const noexcept { return {exec_base_, total_}; }
  /// Where the linker writes: the slab itself, or the writable view with `dual_mapping`.
  [[nodiscard]] page_block writable_view() const noexcept { return {write_base_, total_}; }
  /// The part of `slab()` that holds stripe `p`.
  [[nodiscard]] page_block stripe(allocation_purpose p) const noexcept {
    const auto& a = stripes_[static_cast<std::size_t>(p)];
    return {static_cast<std::byte*>(exec_base_) + a.begin(),
            static_cast<std::size_t>(a.capacity())};
  }
  [[nodiscard]] PageMapper& mapper() noexcept { return mapper_; }

 private:
  struct segment_run {
    allocation_purpose stripe = allocation_purpose::code;
    page_run run;
    page_access access = page_access::none;
    bool finalize_lifetime = false;
  };
  struct finalized_record {
    std::vector<segment_run> runs;
    std::vector<llvm::orc::shared::WrapperFunctionCall> dealloc_actions;
  };

  class in_flight final : public base::InFlightAlloc {
   public:
    in_flight(basic_slab_jitlink_memory_manager& owner, llvm::jitlink::LinkGraph& graph,
              std::vector<segment_run> runs)
        : owner_(&owner), graph_(&graph), runs_(std::move(runs)) {}
    in_flight(const in_flight&) = delete;
    in_flight& operator=(const in_flight&) = delete;
    ~in_flight() override {
      if (!runs_.empty()) owner_->abandon_runs(runs_);
    }

    void finalize(OnFinalizedFunction on_finalized) override {
      on_finalized(owner_->finalize_graph(*graph_, runs_));
    }
    void abandon(OnAbandonedFunction on_abandoned) override {
      owner_->abandon_runs(runs_);
      on_abandoned(llvm::Error::success());
    }

   private:
    basic_slab_jitlink_memory_manager* owner_;
    llvm::jitlink::LinkGraph* graph_;
    std::vector<segment_run> runs_;  ///< emptied once finalized or abandoned
  };

  basic_slab_jitlink_memory_manager(PageMapper mapper, slab_jitlink_options options)
      : mapper_(std::move(mapper)),
        options_(options),
        page_size_(static_cast<std::uint64_t>(mapper_.page_size())) {}

  result<void> reserve() {
    const std::uint64_t sizes[] = {options_.code_bytes, options_.read_only_bytes,
                                   options_.read_write_bytes};
    const char* names[] = {"code", "read-only", "read-write"};
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      if (sizes[i] == 0 || !is_aligned(sizes[i], page_size_) || sizes[i] > options_.code_reach) {
        return result<void>(errc::invalid_argument, std::string("the ") + names[i] + " stripe of " +
                                                        std::to_string(sizes[i]) +
                                                        " bytes must be a positive multiple "
                                                        "of the page size " +
                                                        std::to_string(page_size_) +
                                                        " and at most the reach " +
                                                        std::to_string(options_.code_reach));
      }
      stripes_[i] = page_run_arena(offset, sizes[i], page_size_);
      committed_end_[i] = offset;
      offset += sizes[i];
    }
    total_ = offset;
    if (total_ > options_.code_reach) {
      return result<void>(errc::invalid_argument,
                          "a slab of " + std::to_string(total_) + " bytes exceeds the " +
                              std::to_string(options_.code_reach) +
                              "-byte reach of PC-relative relocations between its modules");
    }
    if (options_.dual_mapping) {
      std::array<dual_mapping_part, 3> parts;
      for (std::size_t i = 0; i < 3; ++i) {
        parts[i] = {stripes_[i].begin(), stripes_[i].capacity(),
                    detail::stripe_access(static_cast<allocation_purpose>(i))};
      }
      auto d = dual_mapping::try_create("xlamem-jit", total_, parts, page_size_);
      if (!d) return d.error();
      dual_ = std::move(*d);
      exec_base_ = dual_.exec_base();
      write_base_ = dual_.write_base();
      return {};
    }
    auto r = mapper_.try_reserve(allocation_purpose::code, static_cast<std::size_t>(total_),
                                 nullptr, page_access::none);
    if (!r) return r.error();
    slab_ = *r;
    exec_base_ = write_base_ = slab_.base;
    return {};
  }

  [[nodiscard]] std::byte* exec_at(std::uint64_t offset) const noexcept {
    return static_cast<std::byte*>(exec_base_) + offset;
  }
  [[nodiscard]] std::byte* write_at(std::uint64_t offset) const noexcept {
    return static_cast<std::byte*>(write_base_) + offset;
  }
  [[nodiscard]] page_block block_of(const page_run& r) const noexcept {
    return {exec_at(r.offset), static_cast<std::size_t>(r.size)};
  }

  llvm::Error fail(errc code, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++failed_allocations_;
    return detail::to_llvm_error(make_error(code, "slab_jitlink_memory_manager: " + message));
  }

  AllocResult allocate_graph(llvm::jitlink::LinkGraph& graph) {
    const std::string name = "link graph '" + std::string(graph.getName()) + "'";
    llvm::jitlink::BasicLayout layout(graph);
    struct wanted {
      llvm::jitlink::BasicLayout::Segment* segment;
      allocation_purpose stripe;
      page_access access;
      bool finalize_lifetime;
      std::uint64_t bytes;
    };
    std::vector<wanted> segments;
    std::uint64_t total = 0;
    for (auto& [group, segment] : layout.segments()) {
      const page_access access = detail::jitlink_access(group.getMemProt());
      if (is_write_and_execute(access)) {
        return fail(errc::invalid_argument,
                    name + ": a segment asks for writable and executable memory (" +
                        to_string(access) + "), which this manager never maps (W^X)");
      }
      if (segment.Alignment.value() > page_size_) {
        return fail(errc::invalid_argument,
                    name + ": a " + to_string(access) + " segment asks for alignment " +
                        std::to_string(segment.Alignment.value()) + ", above the page size " +
                        std::to_string(page_size_));
      }
      const std::uint64_t bytes = align_up(
          static_cast<std::uint64_t>(segment.ContentSize) + segment.ZeroFillSize, page_size_);
      segments.push_back({&segment, detail::stripe_for(access), access,
                          detail::jitlink_finalize_lifetime(group), bytes});
      total += bytes;
    }

    std::vector<segment_run> runs;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::uint64_t live = 0;
      for (const auto& a : stripes_) live += a.live_bytes();
      if (options_.byte_limit != 0 &&
          total > options_.byte_limit - std::min(live, options_.byte_limit)) {
        ++failed_allocations_;
        return detail::to_llvm_error(
            make_error(errc::resource_exhausted,
                       "slab_jitlink_memory_manager: " + name + " needs " + std::to_string(total) +
                           " bytes, but " + std::to_string(live) + " of the " +
                           std::to_string(options_.byte_limit) + "-byte limit are live"));
      }
      for (const auto& w : segments) {
        if (w.bytes == 0) continue;
        auto& arena = stripes_[static_cast<std::size_t>(w.stripe)];
        auto run = arena.try_allocate(w.bytes);
        if (!run) {
          release_runs(runs);
          ++failed_allocations_;
          return detail::to_llvm_error(
              run.error().with_context("slab_jitlink_memory_manager: " + name + ": the " +
                                       std::string(to_string(w.stripe)) + " stripe"));
        }
        runs.push_back({w.stripe, *run, w.access, w.finalize_lifetime});
        if (auto p = make_writable(w.stripe, *run); !p) {
          release_runs(runs);
          ++failed_allocations_;
          return detail::to_llvm_error(
              p.error().with_context("slab_jitlink_memory_manager: " + name));
        }
      }
      live += total;
      peak_live_ = std::max(peak_live_, live);
      ++allocations_;
    }

    std::size_t next = 0;
    for (auto& w : segments) {
      if (w.bytes == 0) {
        // Nothing to hold: any address inside the stripe will do, nothing is written there.
        const auto& arena = stripes_[static_cast<std::size_t>(w.stripe)];
        w.segment->Addr = llvm::orc::ExecutorAddr::fromPtr(exec_at(arena.begin()));
        w.segment->WorkingMem = reinterpret_cast<char*>(write_at(arena.begin()));
        continue;
      }
      const auto& r = runs[next++];
      if (r.run.reused)
        std::memset(write_at(r.run.offset), 0, static_cast<std::size_t>(r.run.size));
      w.segment->Addr = llvm::orc::ExecutorAddr::fromPtr(exec_at(r.run.offset));
      w.segment->WorkingMem = reinterpret_cast<char*>(write_at(r.run.offset));
    }
    if (auto err = layout.apply()) {
      abandon_runs(runs);
      std::lock_guard<std::mutex> lock(mutex_);
      ++failed_allocations_;
      return err;
    }
    return std::make_unique<in_flight>(*this, graph, std::move(runs));
  }

  llvm::Expected<FinalizedAlloc> finalize_graph(llvm::jitlink::LinkGraph& graph,
                                                std::vector<segment_run>& runs) {
    if (!options_.dual_mapping) {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& r : runs) {
        if (r.access == page_access::read_write) continue;
        auto p = mapper_.try_protect(block_of(r.run), r.access);
        if (!p) {
          release_runs(runs);
          runs.clear();
          return detail::to_llvm_error(
              p.error().with_context("slab_jitlink_memory_manager: finalizing link graph '" +
                                     std::string(graph.getName()) + "'"));
        }
        ++protections_;
      }
    }
    for (const auto& r : runs) {
      if (has_access(r.access, page_access::execute)) {
        llvm::sys::Memory::InvalidateInstructionCache(exec_at(r.run.offset),
                                                      static_cast<std::size_t>(r.run.size));
      }
    }
    auto dealloc_actions = llvm::orc::shared::runFinalizeActions(graph.allocActions());
    if (!dealloc_actions) {
      abandon_runs(runs);
      return dealloc_actions.takeError();
    }
    finalized_record record;
    record.dealloc_actions = std::move(*dealloc_actions);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& r : runs) {
      if (r.finalize_lifetime) {
        (void)stripes_[static_cast<std::size_t>(r.stripe)].release(r.run);
      } else {
        record.runs.push_back(r);
      }
    }
    runs.clear();
    const std::uint64_t id = next_id_++;
    finalized_.emplace(id, std::move(record));
    return FinalizedAlloc(llvm::orc::ExecutorAddr(id));
  }

  /// Under the lock: makes `run` read+write for JITLink. Fresh pages below the stripe's
  /// committed end are still read+write from an earlier commit-ahead; past it, the next chunk is
  /// committed. A reused run is re-protected unless its stripe is the read-write one (whose
  /// pages never change). Nothing to do with a dual mapping's writable view.
  result<void> make_writable(allocation_purpose stripe, const page_run& run) {
    if (options_.dual_mapping) return {};
    const auto i = static_cast<std::size_t>(stripe);
    if (run.reused) {
      if (stripe == allocation_purpose::read_write_data) return {};
      auto p = mapper_.try_protect(block_of(run), page_access::read_write);
      if (p) ++protections_;
      return p;
    }
    if (run.end() <= committed_end_[i]) return {};
    const auto& arena = stripes_[i];
    const std::uint64_t stripe_end = arena.begin() + arena.capacity();
    const std::uint64_t ahead = align_up(options_.commit_ahead_bytes, page_size_);
    const std::uint64_t end = std::min(stripe_end, std::max(run.end(), committed_end_[i] + ahead));
    const page_run chunk{committed_end_[i], end - committed_end_[i]};
    auto p = mapper_.try_protect(block_of(chunk), page_access::read_write);
    if (!p) return p;
    ++protections_;
    committed_end_[i] = end;
    return {};
  }

  /// Frees the runs of an allocation that never finalized (and empties `runs`).
  void abandon_runs(std::vector<segment_run>& runs) {
    std::lock_guard<std::mutex> lock(mutex_);
    release_runs(runs);
    runs.clear();
  }

  /// Under the lock: back to the stripes' free lists. Protections stay (r-x runs stay r-x, so
  /// the stripe remains one mapping); `allocate_graph` makes a reused run writable and clears it.
  void release_runs(const std::vector<segment_run>& runs) noexcept {
    for (const auto& r : runs) {
      (void)stripes_[static_cast<std::size_t>(r.stripe)].release(r.run);
    }
  }

  XLAMEM_NO_UNIQUE_ADDRESS PageMapper mapper_;
  slab_jitlink_options options_;
  std::uint64_t page_size_ = 4096;
  std::uint64_t total_ = 0;
  page_block slab_{};
  dual_mapping dual_;
  void* exec_base_ = nullptr;
  void* write_base_ = nullptr;

  mutable std::mutex mutex_;
  std::array<page_run_arena, 3> stripes_{};
  std::array<std::uint64_t, 3> committed_end_{};  ///< offsets: pages below were made accessible
  std::unordered_map<std::uint64_t, finalized_record> finalized_;
  std::uint64_t next_id_ = 1;
  std::uint64_t peak_live_ = 0;
  std::uint64_t allocations_ = 0;
  std::uint64_t failed_allocations_ = 0;
  std::uint64_t deallocations_ = 0;
  std::uint64_t protections_ = 0;
};

#if defined(__unix__) || defined(__APPLE__)
/// The slab manager over `posix_page_mapper` (mmap/mprotect).
using slab_jitlink_memory_manager = basic_slab_jitlink_memory_manager<posix_page_mapper>;
#endif

/// Who registers each JIT-linked `.eh_frame` with the process's unwinder, so that C++ exceptions
/// unwind through JIT-compiled frames. Exactly one must: libgcc 13 and later drop a second
/// registration of a section and abort on its second deregistration (ResourceTracker removal,
/// JIT teardown).
enum class eh_frame_registration {
  /// Where LLJIT's own platform set-up does not. LLVM 14-19: LLJIT registers EH frames only on
  /// its default object layer, so the creator's layer gets the plugin. LLVM 20 and later:
  /// LLJIT's generic platform (the default on ELF without the ORC runtime) adds the plugin to
  /// any `ObjectLinkingLayer`, so the creator adds none. Counted on LLVM 19 and 22
  /// (test/llvm/slab_jitlink_memory_manager_test.cpp).
  automatic,
  /// The creator's layer always: LLVM 20+ with `setUpInactivePlatform`, or a layer driven
  /// without LLJIT's platform set-up.
  by_layer,
  /// Not the creator's layer: a platform registers them (`ELFNixPlatform` with the ORC
  /// runtime), or none are wanted.
  none,
};

namespace detail {

/// Whether LLJIT's platform set-up adds an EH-frame plugin to a custom `ObjectLinkingLayer`
/// itself (LLVM 20 moved the plugin from LLJIT's default layer into
/// `setUpGenericLLVMIRPlatform`).
inline constexpr bool lljit_registers_eh_frames = LLVM_VERSION_MAJOR >= 20;

/// Adds the plugin that registers each graph's `.eh_frame`. LLVM 22 makes it with
/// `EHFrameRegistrationPlugin::Create` (its own header); LLVM 14-19 from an
/// `InProcessEHFrameRegistrar`.
inline llvm::Error add_eh_frame_registration(llvm::orc::ObjectLinkingLayer& layer,
                                             llvm::orc::ExecutionSession& es) {
#if XLAMEM_DETAIL_EH_FRAME_PLUGIN_CREATE
  auto plugin = llvm::orc::EHFrameRegistrationPlugin::Create(es);
  if (!plugin) return plugin.takeError();
  layer.addPlugin(std::move(*plugin));
#else
  layer.addPlugin(std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(
      es, std::make_unique<llvm::jitlink::InProcessEHFrameRegistrar>()));
#endif
  return llvm::Error::success();
}

inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> finish_layer(
    std::unique_ptr<llvm::orc::ObjectLinkingLayer> layer, llvm::orc::ExecutionSession& es,
    eh_frame_registration eh_frames) {
  const bool here = eh_frames == eh_frame_registration::by_layer ||
                    (eh_frames == eh_frame_registration::automatic && !lljit_registers_eh_frames);
  if (here) {
    if (auto err = add_eh_frame_registration(*layer, es)) return err;
  }
  return layer;
}

}  // namespace detail

/// An `LLJITBuilder::setObjectLinkingLayerCreator` argument: an `ObjectLinkingLayer` over
/// `manager`, which must outlive the JIT, with each `.eh_frame` registered once (see
/// `eh_frame_registration`). Accepts the creator signatures of every LLVM version.
template <class Manager>
[[nodiscard]] auto object_linking_layer_creator(
    Manager& manager, eh_frame_registration eh_frames = eh_frame_registration::automatic) {
  return [&manager, eh_frames](
             llvm::orc::ExecutionSession& es,
             const auto&...) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    return detail::finish_layer(std::make_unique<llvm::orc::ObjectLinkingLayer>(es, manager), es,
                                eh_frames);
  };
}

/// The same, with a manager made by `make()` (returning `llvm::Expected<std::unique_ptr<M>>` or
/// `std::unique_ptr<M>`) and owned by the layer, one per JIT.
template <class Make>
[[nodiscard]] auto owning_object_linking_layer_creator(
    Make make, eh_frame_registration eh_frames = eh_frame_registration::automatic) {
  return [make = std::move(make), eh_frames](
             llvm::orc::ExecutionSession& es,
             const auto&...) mutable -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    auto made = make();
    if constexpr (requires { made.takeError(); }) {
      if (!made) return made.takeError();
      return detail::finish_layer(
          std::make_unique<llvm::orc::ObjectLinkingLayer>(es, std::move(*made)), es, eh_frames);
    } else {
      return detail::finish_layer(
          std::make_unique<llvm::orc::ObjectLinkingLayer>(es, std::move(made)), es, eh_frames);
    }
  };
}

}  // namespace xlamem

#undef XLAMEM_DETAIL_EH_FRAME_PLUGIN_CREATE
