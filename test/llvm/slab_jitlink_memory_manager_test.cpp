// SPDX-License-Identifier: Apache-2.0
// Tests of xlamem/llvm/slab_jitlink_memory_manager.hpp (LLVM 19 and later): LLJIT programs that
// JITLink links into the slab, EH frames, removal and reuse, W^X in /proc/self/maps, the byte
// limit, the dual mapping, and errors that come back as llvm::Error.
#include <doctest/doctest.h>
#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "eh_frame_counter.hpp"
#include "jitlink_support.hpp"
#include "xlamem/jit/dual_mapping.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/jit/page_run_arena.hpp"
#include "xlamem/llvm/slab_jitlink_memory_manager.hpp"

namespace {

using xlamem::allocation_purpose;
using xlamem::errc;
using xlamem::page_access;
namespace t = xlamem::test;

const std::uint64_t page = xlamem::posix_page_mapper().page_size();
// Finalized, committed-ahead and untouched pages in each of the three stripes; the read-write
// stripe's first two have one protection.
constexpr std::size_t max_slab_maps = 8;

std::string text(llvm::Error e) { return llvm::toString(std::move(e)); }

// A JIT over `mm` whose session errors (link failures) are collected in `errors`.
struct jit_fixture {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string errors;

  explicit jit_fixture(xlamem::slab_jitlink_memory_manager& mm) {
    auto j = t::make_jitlink_jit(xlamem::object_linking_layer_creator(mm));
    REQUIRE_MESSAGE(static_cast<bool>(j), (j ? std::string() : text(j.takeError())));
    jit = std::move(*j);
    jit->getExecutionSession().setErrorReporter(
        [this](llvm::Error e) { errors += llvm::toString(std::move(e)) + "\n"; });
  }

  llvm::Error add(int k, int calls = -1, llvm::orc::ResourceTrackerSP rt = nullptr) {
    auto m = t::parse_module(t::module_ir(k, calls), "module_" + std::to_string(k));
    if (!m) return m.takeError();
    return rt ? jit->addIRModule(rt, std::move(*m)) : jit->addIRModule(std::move(*m));
  }

  llvm::Expected<std::int64_t (*)(std::int64_t)> function(const std::string& name) {
    auto a = jit->lookup(name);
    if (!a) return a.takeError();
    return t::as_function(*a);
  }
};

std::unique_ptr<xlamem::slab_jitlink_memory_manager> make_manager(
    xlamem::slab_jitlink_options options = {}) {
  auto m = xlamem::slab_jitlink_memory_manager::try_create({}, options);
  REQUIRE_MESSAGE(m.has_value(), (m ? std::string() : m.error().to_string()));
  return std::move(*m);
}

bool inside(const xlamem::page_block& b, const void* p) { return b.contains(p); }

void throw_from_host() { throw std::runtime_error("thrown by the host"); }

}  // namespace

TEST_SUITE("llvm/slab_jitlink_memory_manager") {
  TEST_CASE("an LLJIT over the slab: cross-module calls, constants, mutable globals, W^X") {
    auto mm = make_manager();
    {
      jit_fixture f(*mm);
      REQUIRE_MESSAGE(!f.add(0), f.errors);
      REQUIRE(!f.add(1, /*calls=*/0));
      auto cross = f.function("cross_1");
      REQUIRE_MESSAGE(static_cast<bool>(cross), (cross ? std::string() : text(cross.takeError())));
      for (int i = 0; i < 8; ++i) {
        CHECK((*cross)(i) == t::jl_table_entry(0, i) + t::jl_table_entry(1, i));
      }
      auto bump = f.function("bump_1");
      REQUIRE(static_cast<bool>(bump));
      CHECK((*bump)(5) == 5 + t::jl_bias(1));
      CHECK((*bump)(2) == 7 + t::jl_bias(1));
      auto counter = f.jit->lookup("counter_1");
      REQUIRE(static_cast<bool>(counter));
      CHECK(*counter->toPtr<std::int64_t*>() == 7);

      // Code in the code stripe, the mutable counter in the read-write stripe.
      CHECK(inside(mm->stripe(allocation_purpose::code), reinterpret_cast<const void*>(*cross)));
      CHECK(inside(mm->stripe(allocation_purpose::read_write_data), counter->toPtr<const void*>()));
      CHECK(t::rwx_maps().empty());
      // The slab's stripes merge: at most three mappings per stripe (finalized pages, pages
      // committed ahead, untouched pages) however the modules fall.
      CHECK(t::maps_in(mm->slab().base, mm->slab().size).size() <= max_slab_maps);

      const auto s = mm->stats();
      CHECK(s.reserved_bytes == mm->slab().size);
      CHECK(s.mappings == 1);
      CHECK(s.live_allocations == 2);
      CHECK(s.allocations == 2);
      CHECK(s.failed_allocations == 0);
      CHECK(s.stripe(allocation_purpose::code).live >= 2 * page);
      CHECK(s.stripe(allocation_purpose::read_only_data).live >= 2 * page);
      CHECK(s.live_bytes <= s.committed_bytes);
      CHECK(f.errors.empty());
    }
    const auto s = mm->stats();  // the JIT is gone: everything deallocated
    CHECK(s.live_allocations == 0);
    CHECK(s.live_bytes == 0);
    CHECK(s.deallocations == 2);
  }

  TEST_CASE("EH frames are registered: a C++ exception unwinds through JIT-compiled frames") {
    auto mm = make_manager();
    jit_fixture f(*mm);
    auto m = t::parse_module(
        "define void @call_through(ptr %f) uwtable {\n"
        "  call void %f()\n"
        "  ret void\n"
        "}\n",
        "unwind");
    REQUIRE(static_cast<bool>(m));
    REQUIRE(!f.jit->addIRModule(std::move(*m)));
    auto a = f.jit->lookup("call_through");
    REQUIRE_MESSAGE(static_cast<bool>(a), (a ? std::string() : text(a.takeError())));
    auto* call_through = a->toPtr<void (*)(void (*)())>();
    std::string caught;
    try {
      call_through(&throw_from_host);
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
    CHECK(caught == "thrown by the host");
  }

  TEST_CASE("each JIT-linked .eh_frame is registered once and deregistered once (removal and teardown)") {
    // On LLVM 22 LLJIT's platform set-up adds its own EH-frame plugin to a custom
    // ObjectLinkingLayer, and the creator added a second: every section registered twice, which
    // libgcc 13+ answers with an abort on the second deregistration.
    const auto unwinding_module = [](const std::string& name) {
      return t::parse_module("define void @" + name + "(ptr %f) uwtable {\n  call void %f()\n  ret void\n}\n", name);
    };
    auto mm = make_manager();
    const auto before = t::eh_frame_registrations();
    {
      jit_fixture f(*mm);
      auto tracker = f.jit->getMainJITDylib().createResourceTracker();
      auto m = unwinding_module("first");
      REQUIRE(static_cast<bool>(m));
      REQUIRE(!f.jit->addIRModule(tracker, std::move(*m)));
      REQUIRE(static_cast<bool>(f.jit->lookup("first")));
      auto linked = t::eh_frame_registrations();
      CHECK(linked.registered - before.registered == 1);
      CHECK(linked.deregistered == before.deregistered);
      REQUIRE(!tracker->remove());
      auto removed = t::eh_frame_registrations();
      CHECK(removed.registered - before.registered == 1);
      CHECK(removed.deregistered - before.deregistered == 1);
      // A second module stays until the JIT is torn down.
      auto second = unwinding_module("second");
      REQUIRE(static_cast<bool>(second));
      REQUIRE(!f.jit->addIRModule(std::move(*second)));
      REQUIRE(static_cast<bool>(f.jit->lookup("second")));
      CHECK(t::eh_frame_registrations().registered - before.registered == 2);
      CHECK(f.errors.empty());
    }
    const auto after = t::eh_frame_registrations();
    CHECK(after.registered - before.registered == 2);
    CHECK(after.deregistered - before.deregistered == 2);
    // What libgcc 13 would drop or abort on.
    CHECK(after.duplicates == before.duplicates);
    CHECK(after.unmatched == before.unmatched);
  }

  TEST_CASE("eh_frame_registration::by_layer registers once where LLJIT's platform is inactive") {
    auto mm = make_manager();
    t::init_native_jit();
    auto j = llvm::orc::LLJITBuilder()
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                 .setObjectLinkingLayerCreator(
                     xlamem::object_linking_layer_creator(*mm, xlamem::eh_frame_registration::by_layer))
                 .create();
    REQUIRE_MESSAGE(static_cast<bool>(j), (j ? std::string() : text(j.takeError())));
    const auto before = t::eh_frame_registrations();
    auto m = t::parse_module("define void @inactive(ptr %f) uwtable {\n  call void %f()\n  ret void\n}\n",
                             "inactive");
    REQUIRE(static_cast<bool>(m));
    REQUIRE(!(*j)->addIRModule(std::move(*m)));
    REQUIRE(static_cast<bool>((*j)->lookup("inactive")));
    CHECK(t::eh_frame_registrations().registered - before.registered == 1);
    j->reset();
    CHECK(t::eh_frame_registrations().deregistered - before.deregistered == 1);
  }

  TEST_CASE("the one-line LLJITBuilder plug-in that owns its manager") {
    auto j = t::make_jitlink_jit(xlamem::owning_object_linking_layer_creator(
        [] { return xlamem::slab_jitlink_memory_manager::create(); }));
    REQUIRE_MESSAGE(static_cast<bool>(j), (j ? std::string() : text(j.takeError())));
    auto m = t::parse_module(t::module_ir(3), "module_3");
    REQUIRE(static_cast<bool>(m));
    REQUIRE(!(*j)->addIRModule(std::move(*m)));
    auto a = (*j)->lookup("lookup_3");
    REQUIRE(static_cast<bool>(a));
    CHECK(t::as_function(*a)(10) == t::jl_table_entry(3, 2));
  }

  TEST_CASE("many modules keep a constant number of mappings; removal frees and reuse clears") {
    auto mm = make_manager();
    jit_fixture f(*mm);
    constexpr int n = 150;
    std::vector<llvm::orc::ResourceTrackerSP> trackers;
    for (int k = 0; k < n; ++k) {
      trackers.push_back(f.jit->getMainJITDylib().createResourceTracker());
      REQUIRE(!f.add(k, k > 0 ? k - 1 : -1, trackers.back()));
    }
    for (int k = 0; k < n; ++k) {  // links every module
      auto b = f.function("bump_" + std::to_string(k));
      REQUIRE_MESSAGE(static_cast<bool>(b), (b ? std::string() : text(b.takeError())));
      CHECK((*b)(1) == 1 + t::jl_bias(k));
    }
    auto cross = f.function("cross_" + std::to_string(n - 1));
    REQUIRE(static_cast<bool>(cross));
    CHECK((*cross)(3) == t::jl_table_entry(n - 2, 3) + t::jl_table_entry(n - 1, 3));
    const auto loaded = mm->stats();
    CHECK(loaded.live_allocations == n);
    CHECK(t::maps_in(mm->slab().base, mm->slab().size).size() <= max_slab_maps);
    CHECK(t::rwx_maps().empty());

    // Remove the upper half (their callers go first), then load them again.
    for (int k = n - 1; k >= n / 2; --k) REQUIRE(!trackers[static_cast<std::size_t>(k)]->remove());
    const auto removed = mm->stats();
    CHECK(removed.live_allocations == n - n / 2);
    CHECK(removed.live_bytes < loaded.live_bytes);
    CHECK(removed.committed_bytes == loaded.committed_bytes);
    CHECK(removed.stripe(allocation_purpose::code).free > 0);

    for (int k = n / 2; k < n; ++k) {
      trackers[static_cast<std::size_t>(k)] = f.jit->getMainJITDylib().createResourceTracker();
      REQUIRE(!f.add(k, k - 1, trackers[static_cast<std::size_t>(k)]));
      auto b = f.function("bump_" + std::to_string(k));
      REQUIRE(static_cast<bool>(b));
      CHECK((*b)(1) == 1 + t::jl_bias(k));  // the counter starts from zero again
    }
    const auto reloaded = mm->stats();
    CHECK(reloaded.live_allocations == n);
    CHECK(reloaded.reused_bytes > 0);
    CHECK(reloaded.committed_bytes == loaded.committed_bytes);  // no growth: all reused
    CHECK(t::maps_in(mm->slab().base, mm->slab().size).size() <= max_slab_maps);
    CHECK(t::rwx_maps().empty());
    CHECK(f.errors.empty());
  }

  TEST_CASE("links on 4 compile threads share one slab") {
    auto mm = make_manager();
    t::init_native_jit();
    auto j = llvm::orc::LLJITBuilder()
                 .setNumCompileThreads(4)
                 .setObjectLinkingLayerCreator(xlamem::object_linking_layer_creator(*mm))
                 .create();
    REQUIRE_MESSAGE(static_cast<bool>(j), (j ? std::string() : text(j.takeError())));
    constexpr int n = 64;
    for (int k = 0; k < n; ++k) {
      auto m = t::parse_module(t::module_ir(k, k > 0 ? k - 1 : -1), "module_" + std::to_string(k));
      REQUIRE(static_cast<bool>(m));
      REQUIRE(!(*j)->addIRModule(std::move(*m)));
    }
    // One bulk lookup: ORC compiles and links the modules on its worker threads at once.
    llvm::orc::SymbolLookupSet names;
    for (int k = 0; k < n; ++k) names.add((*j)->mangleAndIntern("bump_" + std::to_string(k)));
    auto found = (*j)->getExecutionSession().lookup(
        llvm::orc::makeJITDylibSearchOrder(&(*j)->getMainJITDylib()), std::move(names));
    REQUIRE_MESSAGE(static_cast<bool>(found), (found ? std::string() : text(found.takeError())));
    std::int64_t sum = 0;
    for (const auto& [name, sym] : *found) sum += t::as_function(sym.getAddress())(1);
    CHECK(sum == std::int64_t{n} * 101 + std::int64_t{n} * (n - 1) / 2);
    const auto s = mm->stats();
    CHECK(s.live_allocations == n);
    CHECK(s.failed_allocations == 0);
    CHECK(t::maps_in(mm->slab().base, mm->slab().size).size() <= max_slab_maps);
    CHECK(t::rwx_maps().empty());
    }

  TEST_CASE("the byte limit fails the link with an llvm::Error, and the JIT goes on") {
    auto probe = make_manager();
    {
      jit_fixture f(*probe);
      REQUIRE(!f.add(0));
      REQUIRE(static_cast<bool>(f.function("bump_0")));
    }
    const std::uint64_t one = probe->stats().peak_live_bytes;
    REQUIRE(one > 0);

    xlamem::slab_jitlink_options options;
    options.byte_limit = one + one / 2;  // one module fits, two do not
    auto mm = make_manager(options);
    jit_fixture f(*mm);
    auto rt0 = f.jit->getMainJITDylib().createResourceTracker();
    REQUIRE(!f.add(0, -1, rt0));
    REQUIRE(static_cast<bool>(f.function("bump_0")));
    REQUIRE(!f.add(1));
    auto second = f.function("bump_1");
    REQUIRE_FALSE(static_cast<bool>(second));
    (void)text(second.takeError());
    CHECK(f.errors.find("limit are live") != std::string::npos);
    CHECK(f.errors.find("resource_exhausted") != std::string::npos);
    CHECK(mm->stats().failed_allocations == 1);
    CHECK(mm->stats().live_bytes == one);

    // Room again once module 0 is removed.
    REQUIRE(!rt0->remove());
    REQUIRE(!f.add(2));
    auto third = f.function("bump_2");
    REQUIRE_MESSAGE(static_cast<bool>(third), (third ? std::string() : text(third.takeError())));
    CHECK((*third)(1) == 1 + t::jl_bias(2));
  }

  TEST_CASE("a full stripe and an over-aligned section fail as llvm::Error, never abort") {
    xlamem::slab_jitlink_options options;
    options.code_bytes = page;
    options.read_only_bytes = page;
    options.read_write_bytes = 4 * page;
    auto mm = make_manager(options);
    jit_fixture f(*mm);
    REQUIRE(!f.add(0));
    REQUIRE(static_cast<bool>(f.function("bump_0")));
    REQUIRE(!f.add(1));
    auto full = f.function("bump_1");
    REQUIRE_FALSE(static_cast<bool>(full));
    (void)text(full.takeError());
    CHECK(f.errors.find("stripe") != std::string::npos);
    CHECK(f.errors.find("does not fit") != std::string::npos);

    auto mm2 = make_manager();
    jit_fixture g(*mm2);
    auto m = t::parse_module(
        "@big = global [16 x i8] zeroinitializer, align 65536\n"
        "define ptr @where() {\n  ret ptr @big\n}\n",
        "aligned");
    REQUIRE(static_cast<bool>(m));
    REQUIRE(!g.jit->addIRModule(std::move(*m)));
    auto where = g.jit->lookup("where");
    REQUIRE_FALSE(static_cast<bool>(where));
    (void)text(where.takeError());
    CHECK(g.errors.find("alignment 65536, above the page size") != std::string::npos);
    CHECK(mm2->stats().live_bytes == 0);
  }

  TEST_CASE("creation errors are values: stripe sizes, the 2 GiB reach, llvm::Expected") {
    xlamem::slab_jitlink_options options;
    options.code_bytes = 0;
    auto zero = xlamem::slab_jitlink_memory_manager::try_create({}, options);
    REQUIRE_FALSE(zero.has_value());
    CHECK(zero.error().code() == errc::invalid_argument);
    CHECK(zero.error().message().find("code stripe") != std::string::npos);

    options = {};
    options.code_bytes = std::uint64_t{1} << 31;
    auto far = xlamem::slab_jitlink_memory_manager::create({}, options);
    REQUIRE_FALSE(static_cast<bool>(far));
    const std::string why = text(far.takeError());
    CHECK(why.find("reach of PC-relative relocations") != std::string::npos);

    options = {};
    options.read_write_bytes = page + 1;
    CHECK_FALSE(xlamem::slab_jitlink_memory_manager::try_create({}, options).has_value());
  }

  TEST_CASE("a protection failure is an llvm::Error from the link") {
    // Fails every protection change after the first `allow`.
    struct failing_mapper {
      xlamem::posix_page_mapper upstream;
      int allow = 0;
      [[nodiscard]] std::size_t page_size() const noexcept { return upstream.page_size(); }
      [[nodiscard]] xlamem::result<xlamem::page_block> try_reserve(allocation_purpose p,
                                                                   std::size_t n, const void* h,
                                                                   page_access a) noexcept {
        return upstream.try_reserve(p, n, h, a);
      }
      [[nodiscard]] xlamem::result<void> try_protect(xlamem::page_block b, page_access a) noexcept {
        if (allow-- <= 0)
          return xlamem::result<void>(errc::failed_precondition, "injected protect failure");
        return upstream.try_protect(b, a);
      }
      [[nodiscard]] xlamem::result<void> try_release(xlamem::page_block b) noexcept {
        return upstream.try_release(b);
      }
    };
    static_assert(xlamem::page_mapper<failing_mapper>);
    using manager = xlamem::basic_slab_jitlink_memory_manager<failing_mapper>;
    for (int allow : {0, 3}) {  // fail making the first run writable; fail a finalization
      CAPTURE(allow);
      auto mm = manager::try_create(failing_mapper{{}, allow});
      REQUIRE(mm.has_value());
      auto j = t::make_jitlink_jit(xlamem::object_linking_layer_creator(**mm));
      REQUIRE(static_cast<bool>(j));
      std::string errors;
      (*j)->getExecutionSession().setErrorReporter(
          [&](llvm::Error e) { errors += llvm::toString(std::move(e)); });
      auto m = t::parse_module(t::module_ir(0), "module_0");
      REQUIRE(static_cast<bool>(m));
      REQUIRE(!(*j)->addIRModule(std::move(*m)));
      auto f = (*j)->lookup("bump_0");
      REQUIRE_FALSE(static_cast<bool>(f));
      (void)text(f.takeError());
      CHECK(errors.find("injected protect failure") != std::string::npos);
      CHECK((*mm)->stats().live_bytes == 0);
    }
  }

  TEST_CASE("dual mapping: written through one view, run from the other, no protection changes") {
    xlamem::slab_jitlink_options options;
    options.dual_mapping = true;
    auto mm = make_manager(options);
    jit_fixture f(*mm);
    for (int k = 0; k < 20; ++k) REQUIRE(!f.add(k, k > 0 ? k - 1 : -1));
    auto cross = f.function("cross_19");
    REQUIRE_MESSAGE(static_cast<bool>(cross), (cross ? std::string() : text(cross.takeError())));
    CHECK((*cross)(6) == t::jl_table_entry(18, 6) + t::jl_table_entry(19, 6));
    auto bump = f.function("bump_7");
    REQUIRE(static_cast<bool>(bump));
    CHECK((*bump)(4) == 4 + t::jl_bias(7));

    CHECK(inside(mm->stripe(allocation_purpose::code), reinterpret_cast<const void*>(*cross)));
    CHECK(mm->writable_view().base != mm->slab().base);
    const auto exec = t::maps_in(mm->slab().base, mm->slab().size);
    REQUIRE(exec.size() == 3);
    CHECK(exec[0].perms.substr(0, 3) == "r-x");
    CHECK(exec[1].perms.substr(0, 3) == "r--");
    CHECK(exec[2].perms.substr(0, 3) == "rw-");
    CHECK(t::maps_in(mm->writable_view().base, mm->writable_view().size).size() == 1);
    CHECK(t::rwx_maps().empty());
    const auto s = mm->stats();
    CHECK(s.mappings == 2);
    CHECK(s.protections == 0);
    CHECK(s.live_allocations == 20);
    CHECK(f.errors.empty());
  }

}  // TEST_SUITE
