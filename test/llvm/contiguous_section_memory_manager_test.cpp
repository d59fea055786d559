// SPDX-License-Identifier: Apache-2.0
// Tests of xlamem/llvm/contiguous_section_memory_manager.hpp: modules JIT-compiled through ORC's
// RTDyldObjectLinkingLayer into one mapping each (r-x / r-- / rw- in /proc/self/maps), error paths.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>

#include "../support/proc_maps.hpp"
#include "jit_support.hpp"
#include "mapper_support.hpp"
#include "xlamem/align.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/jit/section_layout.hpp"
#include "xlamem/llvm/compat.hpp"
#include "xlamem/llvm/contiguous_section_memory_manager.hpp"
#include "xlamem/llvm/jit_memory_mapper_registry.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace {

using xlamem::allocation_purpose;
using xlamem::errc;
using xlamem::page_block;
using xlamem::test::any_rwx;
using xlamem::test::failing_page_mapper;
using xlamem::test::inspecting_page_mapper;
using xlamem::test::inspection_log;
using xlamem::test::page;
using xlamem::test::perms_of;

using inspected_manager = xlamem::basic_contiguous_section_memory_manager<inspecting_page_mapper>;

xlamem::contiguous_section_options quiet() {
  xlamem::contiguous_section_options o;
  o.log_errors = false;
  return o;
}

// Checks the pages of one finalized manager against /proc/self/maps and that its sections lie
// inside its one mapping, in the part that matches their purpose.
template <class Manager>
void check_finalized_manager(const Manager& mm) {
  const page_block whole = mm.reservation();
  REQUIRE_FALSE(whole.empty());
  CHECK(mm.stats().mappings == 1);
  CHECK(mm.finalized());
  for (const auto& s : mm.sections()) {
    CAPTURE(s.name);
    const auto part = mm.part_pages(s.purpose);
    CHECK(whole.contains(whole.begin() + s.offset, s.size));
    CHECK(part.contains(whole.begin() + s.offset, s.size));
  }
  const std::pair<allocation_purpose, const char*> expected[] = {
      {allocation_purpose::code, "r-x"},
      {allocation_purpose::read_only_data, "r--"},
      {allocation_purpose::read_write_data, "rw-"}};
  for (const auto& [purpose, perms] : expected) {
    CAPTURE(xlamem::to_string(purpose));
    const auto part = mm.part_pages(purpose);
    if (part.empty()) continue;
    const auto seen = perms_of(part.base, part.size);
    CHECK(seen.covered);
    CHECK(seen.perms == std::set<std::string>{perms});
  }
  CHECK_FALSE(any_rwx(whole.base, whole.size));
  const auto code = mm.part_pages(allocation_purpose::code);
  const auto ro = mm.part_pages(allocation_purpose::read_only_data);
  const auto rw = mm.part_pages(allocation_purpose::read_write_data);
  if (!code.empty() && !ro.empty()) CHECK(code.end() <= ro.begin());
  if (!ro.empty() && !rw.empty()) CHECK(ro.end() <= rw.begin());
}

}  // namespace

TEST_SUITE("llvm/contiguous_section_memory_manager") {
  TEST_CASE("several modules JIT through ORC, each in one mapping with r-x / r-- / rw- pages") {
    inspection_log log;
    std::vector<inspected_manager*> managers;
    auto jit = xlamem::test::make_rtdyld_jit([&] {
      auto mm = std::make_unique<inspected_manager>(inspecting_page_mapper(log));
      managers.push_back(mm.get());
      return mm;
    });
    REQUIRE_MESSAGE(static_cast<bool>(jit), llvm::toString(jit.takeError()));

    constexpr int modules = 4;
    llvm::orc::ThreadSafeContext tsc(std::make_unique<llvm::LLVMContext>());
    for (int k = 0; k < modules; ++k) {
      auto m = xlamem::test::make_module(xlamem::test::context_of(tsc), k, k > 0 ? k - 1 : -1);
      auto err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), tsc));
      REQUIRE_MESSAGE(!err, llvm::toString(std::move(err)));
    }
    for (int k = 0; k < modules; ++k) {
      CAPTURE(k);
      std::string why;
      auto lookup = xlamem::test::lookup_function(**jit, "lookup_" + std::to_string(k), why);
      auto bump = xlamem::test::lookup_function(**jit, "bump_" + std::to_string(k), why);
      REQUIRE_MESSAGE((lookup != nullptr), why);
      REQUIRE_MESSAGE((bump != nullptr), why);
      for (int i = 0; i < 10; ++i) CHECK(lookup(i) == xlamem::test::table_entry(k, i & 7));
      CHECK(bump(5) == 5 + xlamem::test::bias_of(k));
      CHECK(bump(7) == 12 + xlamem::test::bias_of(k));
      auto counter = (*jit)->lookup("counter_" + std::to_string(k));
      REQUIRE(static_cast<bool>(counter));
      CHECK(*reinterpret_cast<const std::int64_t*>(
                static_cast<std::uintptr_t>(xlamem::test::address_value(*counter))) == 12);
      if (k > 0) {
        auto cross = xlamem::test::lookup_function(**jit, "cross_" + std::to_string(k), why);
        REQUIRE_MESSAGE((cross != nullptr), why);
        CHECK(cross(3) == xlamem::test::table_entry(k - 1, 3) + xlamem::test::table_entry(k, 3));
      }
    }

    REQUIRE(managers.size() == static_cast<std::size_t>(modules));
    std::set<void*> bases;
    for (auto* mm : managers) {
      check_finalized_manager(*mm);
      bases.insert(mm->reservation().base);
      const auto s = mm->stats();
      CHECK(s.code.bytes > 0);
      CHECK(s.read_only.bytes >= 64);  // the table
      CHECK(s.read_write.bytes >= 16);  // counter and bias
      CHECK(s.code.capacity + s.read_only.capacity + s.read_write.capacity == s.mapped_bytes);
      CHECK(s.code.bytes + s.code.padding + s.code.unused() == s.code.capacity);
      CHECK_FALSE(mm->last_error().has_value());
    }
    CHECK(bases.size() == managers.size());
    CHECK(log.reservations == static_cast<std::uint64_t>(modules));
    CHECK(log.write_execute_requests == 0);
    CHECK(log.rwx_seen == 0);
    CHECK(log.protections >= static_cast<std::uint64_t>(modules));

    jit->reset();  // managers release their mappings with the JIT
    CHECK(log.releases == static_cast<std::uint64_t>(modules));
    CHECK(log.live.empty());
  }

  TEST_CASE("the LLVM-mapper manager, a registry mapper and SectionMemoryManager all run the IR") {
    xlamem::counting_page_mapper_adaptor<xlamem::posix_page_mapper> counted;
    xlamem::jit_memory_mapper_registry registry;
    REQUIRE(registry
                .register_factory("xlamem_test_jit",
                                  xlamem::memory_mapper_factory(
                                      xlamem::page_mapper_ref<decltype(counted)>(counted)))
                .has_value());
    llvm::SectionMemoryManager::MemoryMapper* from_registry = registry.find("xlamem_test_jit");
    REQUIRE(from_registry != nullptr);
    CHECK(registry.find("no_such_region") == nullptr);  // callers fall back to LLVM's default

    struct variant {
      const char* name;
      std::function<std::unique_ptr<llvm::RuntimeDyld::MemoryManager>()> make;
    };
    std::vector<xlamem::contiguous_section_memory_manager*> ours;
    const variant variants[] = {
        {"contiguous over llvm::sys::Memory",
         [&] {
           auto mm = std::make_unique<xlamem::contiguous_section_memory_manager>();
           ours.push_back(mm.get());
           return std::unique_ptr<llvm::RuntimeDyld::MemoryManager>(std::move(mm));
         }},
        {"contiguous over a registry mapper",
         [&] {
           auto mm = std::make_unique<xlamem::contiguous_section_memory_manager>(from_registry);
           ours.push_back(mm.get());
           return std::unique_ptr<llvm::RuntimeDyld::MemoryManager>(std::move(mm));
         }},
        {"llvm::SectionMemoryManager over a registry mapper",
         [&] {
           return std::unique_ptr<llvm::RuntimeDyld::MemoryManager>(
               std::make_unique<llvm::SectionMemoryManager>(from_registry));
         }},
    };
    for (const auto& v : variants) {
      const std::string name = v.name;
      CAPTURE(name);
      ours.clear();
      const auto before = counted.counts();
      auto jit = xlamem::test::make_rtdyld_jit(v.make);
      REQUIRE_MESSAGE(static_cast<bool>(jit), llvm::toString(jit.takeError()));
      llvm::orc::ThreadSafeContext tsc(std::make_unique<llvm::LLVMContext>());
      for (int k = 0; k < 2; ++k) {
        auto err = (*jit)->addIRModule(
            llvm::orc::ThreadSafeModule(xlamem::test::make_module(xlamem::test::context_of(tsc), k), tsc));
        REQUIRE_MESSAGE(!err, llvm::toString(std::move(err)));
      }
      std::string why;
      for (int k = 0; k < 2; ++k) {
        auto lookup = xlamem::test::lookup_function(**jit, "lookup_" + std::to_string(k), why);
        auto bump = xlamem::test::lookup_function(**jit, "bump_" + std::to_string(k), why);
        REQUIRE_MESSAGE((lookup != nullptr), why);
        REQUIRE_MESSAGE((bump != nullptr), why);
        CHECK(lookup(6) == xlamem::test::table_entry(k, 6));
        CHECK(bump(1) == 1 + xlamem::test::bias_of(k));
      }
      for (auto* mm : ours) check_finalized_manager(*mm);
      const auto after = counted.counts();
      const auto made = after.reservations - before.reservations;
      if (std::string(v.name).find("registry") != std::string::npos) {
        // One mapping per object for ours; one per section group for SectionMemoryManager.
        if (std::string(v.name).find("contiguous") != std::string::npos) {
          CHECK(made == 2);
        } else {
          CHECK(made >= 4);
        }
      } else {
        CHECK(made == 0);
      }
      CHECK(after.write_execute_requests == 0);
    }
    CHECK(registry.created_names() == std::vector<std::string>{"xlamem_test_jit"});
  }

  TEST_CASE("oversize suballocation returns null and finalize reports it") {
    inspection_log log;
    inspected_manager mm(inspecting_page_mapper(log), quiet());
    mm.reserveAllocationSpace(100, xlamem::detail::rtdyld_reserve_alignment(16), 0,
                              xlamem::detail::rtdyld_reserve_alignment(1), 8,
                              xlamem::detail::rtdyld_reserve_alignment(8));
    REQUIRE_FALSE(mm.last_error().has_value());
    CHECK(mm.stats().mapped_bytes == 2 * page);
    CHECK(mm.allocateCodeSection(100, 16, 1, ".text") != nullptr);
    CHECK(mm.allocateCodeSection(2 * page, 16, 2, ".text.big") == nullptr);
    REQUIRE(mm.last_error().has_value());
    CHECK(mm.last_error()->code() == errc::resource_exhausted);
    CHECK(mm.last_error()->message().find("section '.text.big' (id 2): suballocation of 8192") !=
          std::string::npos);
    // No read-only part was announced: a read-only section has nowhere to go.
    CHECK(mm.allocateDataSection(8, 8, 3, ".rodata", true) == nullptr);
    std::string message;
    CHECK(mm.finalizeMemory(&message));
    CHECK(message.find("does not fit the code part") != std::string::npos);
    CHECK(log.rwx_seen == 0);
  }

  TEST_CASE("alignment above the page size is refused at reservation and at allocation") {
    inspection_log log;
    {
      inspected_manager mm(inspecting_page_mapper(log), quiet());
      mm.reserveAllocationSpace(64, xlamem::detail::rtdyld_reserve_alignment(16), 64,
                                xlamem::detail::rtdyld_reserve_alignment(1 << 16), 0,
                                xlamem::detail::rtdyld_reserve_alignment(1));
      REQUIRE(mm.last_error().has_value());
      CHECK(mm.last_error()->code() == errc::invalid_argument);
      CHECK(mm.last_error()->message().find("read-only data alignment 65536 exceeds the page size") !=
            std::string::npos);
      CHECK(mm.reservation().empty());
      CHECK(mm.allocateCodeSection(8, 16, 1, ".text") == nullptr);
      std::string message;
      CHECK(mm.finalizeMemory(&message));
      CHECK(message.find("65536") != std::string::npos);
    }
    {
      inspected_manager mm(inspecting_page_mapper(log), quiet());
      REQUIRE(mm.try_reserve({64, 16}, {}, {}).has_value());
      auto r = mm.try_allocate(allocation_purpose::code, 8, page * 4, 7, ".text.aligned");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().message().find("section '.text.aligned' (id 7)") != std::string::npos);
      CHECK(r.error().message().find("exceeds the page size") != std::string::npos);
    }
    CHECK(log.reservations == 1);
    CHECK(log.releases == 1);
  }

  TEST_CASE("a second reservation is refused and the first stays") {
    inspection_log log;
    inspected_manager mm(inspecting_page_mapper(log), quiet());
    REQUIRE(mm.try_reserve({64, 16}, {64, 8}, {64, 8}).has_value());
    const auto first = mm.reservation();
    auto again = mm.try_reserve({64, 16}, {}, {});
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code() == errc::failed_precondition);
    CHECK(again.error().message().find("a second reservation") != std::string::npos);
    CHECK(mm.reservation() == first);
    CHECK(log.reservations == 1);
  }

  TEST_CASE("a failing mapper: reservation failure reaches allocation and finalize") {
    SUBCASE("page mapper policy") {
      xlamem::basic_contiguous_section_memory_manager<failing_page_mapper> mm({}, quiet());
      mm.reserveAllocationSpace(64, xlamem::detail::rtdyld_reserve_alignment(16), 64,
                                xlamem::detail::rtdyld_reserve_alignment(8), 64,
                                xlamem::detail::rtdyld_reserve_alignment(8));
      REQUIRE(mm.last_error().has_value());
      CHECK(mm.last_error()->code() == errc::out_of_memory);
      CHECK(mm.last_error()->message().find("reservation for code 64 bytes at alignment 16") !=
            std::string::npos);
      CHECK(mm.last_error()->message().find("injected failure: reserve of 12288 bytes for code") !=
            std::string::npos);
      CHECK(mm.allocateDataSection(8, 8, 1, ".data", false) == nullptr);
      auto r = mm.try_allocate(allocation_purpose::code, 8, 16, 2, ".text");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().message().find("the reservation failed") != std::string::npos);
      std::string message;
      CHECK(mm.finalizeMemory(&message));
      CHECK(message.find("injected failure") != std::string::npos);
      CHECK(mm.stats().mappings == 0);
    }
    SUBCASE("through an LLVM MemoryMapper") {
      xlamem::memory_mapper_adaptor<failing_page_mapper> failing;
      xlamem::contiguous_section_memory_manager mm(&failing, quiet());
      REQUIRE_FALSE(mm.try_reserve({64, 16}, {}, {}).has_value());
      REQUIRE(mm.last_error().has_value());
      CHECK(mm.last_error()->message().find("LLVM memory mapper: reserve of 4096 bytes for code "
                                            "failed") != std::string::npos);
      CHECK(failing.last_error_message().find("injected failure") != std::string::npos);
      CHECK(mm.allocateCodeSection(8, 16, 1, ".text") == nullptr);
    }
  }

  TEST_CASE("a failing mapper under a real JIT: RuntimeDyld stops, and stderr says why") {
    // RuntimeDyld answers a null section with report_fatal_error, which ends the process; run
    // the JIT in a child and read what it printed.
    int out[2];
    REQUIRE(::pipe(out) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child's output goes to the pipe, and a crash is not reported as this test's.
      for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(sig, SIG_DFL);
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::close(out[0]);
      auto jit = xlamem::test::make_rtdyld_jit([] {
        return std::make_unique<xlamem::basic_contiguous_section_memory_manager<failing_page_mapper>>();
      });
      if (!jit) ::_exit(10);
      llvm::orc::ThreadSafeContext tsc(std::make_unique<llvm::LLVMContext>());
      if (auto err = (*jit)->addIRModule(
              llvm::orc::ThreadSafeModule(xlamem::test::make_module(xlamem::test::context_of(tsc), 0), tsc))) {
        llvm::consumeError(std::move(err));
        ::_exit(11);
      }
      auto sym = (*jit)->lookup("lookup_0");
      if (!sym) {
        llvm::errs() << llvm::toString(sym.takeError()) << "\n";
        ::_exit(12);
      }
      ::_exit(0);  // must not happen: there is no memory to load into
    }
    ::close(out[1]);
    std::string printed;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) printed.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CAPTURE(printed);
    CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(printed.find("xlamem: out_of_memory: contiguous_section_memory_manager: reservation for "
                       "code") != std::string::npos);
    CHECK(printed.find("injected failure") != std::string::npos);
  }

  TEST_CASE("finalize refuses sections beyond the code's reach and leaves pages writable") {
    inspection_log log;
    auto options = quiet();
    options.code_reach = 2 * page;
    inspected_manager mm(inspecting_page_mapper(log), options);
    REQUIRE(mm.try_reserve({100, 16}, {4 * page, 16}, {}).has_value());
    REQUIRE(mm.try_allocate(allocation_purpose::code, 100, 16, 1, ".text").has_value());
    REQUIRE(mm.try_allocate(allocation_purpose::read_only_data, 3 * page, 16, 2, ".rodata")
                .has_value());
    std::string message;
    CHECK(mm.finalizeMemory(&message));
    CHECK(message.find("section '.rodata' (id 2, read_only_data") != std::string::npos);
    CHECK(message.find("reach of 32-bit PC-relative relocations") != std::string::npos);
    CHECK_FALSE(mm.finalized());
    CHECK(log.protections == 0);
    // The default reach (2 GiB) accepts the same layout.
    inspected_manager ok(inspecting_page_mapper(log), quiet());
    REQUIRE(ok.try_reserve({100, 16}, {4 * page, 16}, {}).has_value());
    REQUIRE(ok.try_allocate(allocation_purpose::code, 100, 16, 1, ".text").has_value());
    REQUIRE(ok.try_allocate(allocation_purpose::read_only_data, 3 * page, 16, 2, ".rodata")
                .has_value());
    CHECK_FALSE(ok.finalizeMemory(&message));
    CHECK(ok.finalized());
    check_finalized_manager(ok);
    // After finalize the manager takes no more sections.
    CHECK(ok.allocateDataSection(8, 8, 3, ".data", false) == nullptr);
  }

  TEST_CASE("alignment 0 means 16; an empty object maps nothing") {
    inspection_log log;
    inspected_manager mm(inspecting_page_mapper(log), quiet());
    REQUIRE(mm.try_reserve({64, 16}, {}, {}).has_value());
    REQUIRE(mm.try_allocate(allocation_purpose::code, 1, 1, 1, ".a").has_value());
    auto b = mm.try_allocate(allocation_purpose::code, 1, 0, 2, ".b");
    REQUIRE(b.has_value());
    CHECK(xlamem::is_aligned(*b, 16));
    inspected_manager empty(inspecting_page_mapper(log), quiet());
    REQUIRE(empty.try_reserve({}, {}, {}).has_value());
    CHECK(empty.reservation().empty());
    CHECK_FALSE(empty.finalizeMemory(nullptr));
    CHECK(log.reservations == 1);
  }
}
