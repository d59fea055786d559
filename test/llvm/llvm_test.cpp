// SPDX-License-Identifier: Apache-2.0
// Tests of JIT memory for LLVM (the portable jit/ parts are tested in test/jit/ without LLVM):
// the LLVM adapters, the contiguous section memory manager under a real ORC JIT (RTDyldObjectLinkingLayer) with
// /proc/self/maps protection checks, its error paths, and the mapper registry under 4 threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <llvm/ExecutionEngine/SectionMemoryManager.h>

#include "jit_support.hpp"
#include "xlamem/jit/mapper_registry.hpp"
#include "xlamem/jit/page_mapper.hpp"
#include "xlamem/jit/section_layout.hpp"
#include "xlamem/llvm/compat.hpp"
#include "xlamem/llvm/contiguous_section_memory_manager.hpp"
#include "xlamem/llvm/jit_memory_mapper_registry.hpp"
#include "xlamem/llvm/memory_mapper_bridge.hpp"

namespace {

using xlamem::allocation_purpose;
using xlamem::errc;
using xlamem::page_access;
using xlamem::page_block;

const std::uint64_t page = xlamem::posix_page_mapper().page_size();

// ---- /proc/self/maps --------------------------------------------------------------------------

struct maps_entry {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::string perms;  // "r-xp"
};

std::vector<maps_entry> read_maps() {
  std::vector<maps_entry> out;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    maps_entry e;
    unsigned long long b = 0, en = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s", &b, &en, perms) == 3) {
      e.begin = static_cast<std::uintptr_t>(b);
      e.end = static_cast<std::uintptr_t>(en);
      e.perms = perms;
      out.push_back(e);
    }
  }
  return out;
}

// The protections ("r-x", ...) of the pages of [base, base + size), one per maps entry that
// overlaps it, and whether the entries cover every byte.
struct page_perms {
  std::set<std::string> perms;
  bool covered = false;
};

page_perms perms_of(const void* base, std::size_t size) {
  page_perms out;
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const auto e = b + size;
  std::uintptr_t next = b;
  for (const auto& m : read_maps()) {
    if (m.end <= b || m.begin >= e) continue;
    out.perms.insert(m.perms.substr(0, 3));
    if (m.begin <= next) next = std::max(next, m.end);
  }
  out.covered = next >= e;
  return out;
}

bool any_rwx(const void* base, std::size_t size) {
  for (const auto& p : perms_of(base, size).perms) {
    if (p == "rwx") return true;
  }
  return false;
}

// ---- test mappers -----------------------------------------------------------------------------

// What an inspecting mapper saw.
struct inspection_log {
  std::uint64_t reservations = 0;
  std::uint64_t protections = 0;
  std::uint64_t releases = 0;
  std::uint64_t write_execute_requests = 0;  // asked for W and X at once
  std::uint64_t rwx_seen = 0;                // /proc/self/maps showed rwx in a mapping
  std::vector<page_block> live;
};

// A page mapper over POSIX that, after every reserve and protect, reads /proc/self/maps and
// counts any rwx page of the mapping, so "never rwx" is checked at every step LLVM drives.
class inspecting_page_mapper {
 public:
  explicit inspecting_page_mapper(inspection_log& log) : log_(&log) {}
  [[nodiscard]] std::size_t page_size() const noexcept { return upstream_.page_size(); }
  [[nodiscard]] xlamem::result<page_block> try_reserve(allocation_purpose p, std::size_t n,
                                                       const void* hint,
                                                       page_access a) noexcept {
    if (xlamem::is_write_and_execute(a)) ++log_->write_execute_requests;
    auto r = upstream_.try_reserve(p, n, hint, a);
    if (r) {
      ++log_->reservations;
      log_->live.push_back(*r);
      if (any_rwx(r->base, r->size)) ++log_->rwx_seen;
    }
    return r;
  }
  [[nodiscard]] xlamem::result<void> try_protect(page_block b, page_access a) noexcept {
    if (xlamem::is_write_and_execute(a)) ++log_->write_execute_requests;
    auto r = upstream_.try_protect(b, a);
    if (r) ++log_->protections;
    for (const auto& m : log_->live) {
      if (any_rwx(m.base, m.size)) ++log_->rwx_seen;
    }
    return r;
  }
  [[nodiscard]] xlamem::result<void> try_release(page_block b) noexcept {
    auto r = upstream_.try_release(b);
    if (r && !b.empty()) {
      ++log_->releases;
      std::erase(log_->live, b);
    }
    return r;
  }

 private:
  xlamem::posix_page_mapper upstream_;
  inspection_log* log_;
};
static_assert(xlamem::page_mapper<inspecting_page_mapper>);

// A page mapper whose reservations always fail, as a kernel out of address space would.
class failing_page_mapper {
 public:
  [[nodiscard]] std::size_t page_size() const noexcept { return 4096; }
  [[nodiscard]] xlamem::result<page_block> try_reserve(allocation_purpose p, std::size_t n,
                                                       const void*, page_access) noexcept {
    return xlamem::make_error(errc::out_of_memory,
                              "injected failure: " + xlamem::detail::describe_reserve(p, n));
  }
  [[nodiscard]] xlamem::result<void> try_protect(page_block, page_access) noexcept {
    return xlamem::result<void>(errc::failed_precondition, "injected failure: protect");
  }
  [[nodiscard]] xlamem::result<void> try_release(page_block) noexcept { return {}; }
};
static_assert(xlamem::page_mapper<failing_page_mapper>);

// A negative model: no noexcept, so it is not a page mapper.
struct throwing_page_mapper {
  std::size_t page_size() const { return 4096; }
  xlamem::result<page_block> try_reserve(allocation_purpose, std::size_t, const void*, page_access);
  xlamem::result<void> try_protect(page_block, page_access);
  xlamem::result<void> try_release(page_block);
};
static_assert(!xlamem::page_mapper<throwing_page_mapper>);

using inspected_manager = xlamem::basic_contiguous_section_memory_manager<inspecting_page_mapper>;

xlamem::contiguous_section_options quiet() {
  xlamem::contiguous_section_options o;
  o.log_errors = false;
  return o;
}

}  // namespace

// ==== page mappers ==============================================================================

TEST_SUITE("llvm/memory_mapper_bridge") {
  TEST_CASE("llvm_page_mapper over llvm::sys::Memory and over an LLVM mapper") {
    xlamem::memory_mapper_adaptor<xlamem::posix_page_mapper> llvm_side;
    for (llvm::SectionMemoryManager::MemoryMapper* upstream :
         {static_cast<llvm::SectionMemoryManager::MemoryMapper*>(nullptr),
          static_cast<llvm::SectionMemoryManager::MemoryMapper*>(&llvm_side)}) {
      CAPTURE(upstream != nullptr);
      xlamem::llvm_page_mapper m(upstream);
      CHECK(m.page_size() == page);
      auto r = m.try_reserve(allocation_purpose::read_write_data, 100, nullptr,
                             page_access::read_write);
      REQUIRE(r.has_value());
      CHECK(r->size >= 100);
      static_cast<char*>(r->base)[0] = 1;
      REQUIRE(m.try_protect(*r, page_access::read).has_value());
      CHECK(perms_of(r->base, r->size).perms == std::set<std::string>{"r--"});
      REQUIRE(m.try_release(*r).has_value());
    }
  }

  TEST_CASE("memory_mapper_adaptor turns errors into error codes and keeps the message") {
    xlamem::memory_mapper_adaptor<failing_page_mapper> m;
    std::error_code ec;
    auto b = m.allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose::ROData, 10,
                                    nullptr, llvm::sys::Memory::MF_READ, ec);
    CHECK(b.base() == nullptr);
    CHECK(ec == std::errc::not_enough_memory);
    CHECK(m.last_error_message() ==
          "out_of_memory: injected failure: reserve of 10 bytes for read_only_data");
  }
}

// ==== the manager under a real JIT ==============================================================

namespace {

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

// ==== registry ==================================================================================

namespace {

// A mapper that remembers which region it was made for.
class named_test_mapper final : public llvm::SectionMemoryManager::MemoryMapper {
 public:
  explicit named_test_mapper(std::string region) : region(std::move(region)) {}
  llvm::sys::MemoryBlock allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose,
                                              std::size_t, const llvm::sys::MemoryBlock*,
                                              unsigned, std::error_code& ec) override {
    ec = std::make_error_code(std::errc::not_supported);
    return {};
  }
  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock&, unsigned) override {
    return std::make_error_code(std::errc::not_supported);
  }
  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock&) override { return {}; }
  std::string region;
};

}  // namespace

TEST_SUITE("llvm/jit_memory_mapper_registry") {
  TEST_CASE("4 threads asking for the same and different names get one mapper per name") {
    xlamem::jit_memory_mapper_registry registry;
    std::mutex calls_mutex;
    std::map<std::string, int> calls;
    auto factory = [&](std::string_view region) {
      {
        std::lock_guard<std::mutex> lock(calls_mutex);
        ++calls[std::string(region)];
      }
      std::this_thread::yield();  // widen the race window
      return std::make_unique<named_test_mapper>(std::string(region));
    };
    REQUIRE(registry.register_factory("shared", factory).has_value());
    REQUIRE(registry.register_fallback_factory(factory).has_value());

    constexpr int threads = 4;
    constexpr int rounds = 200;
    std::vector<std::map<std::string, llvm::SectionMemoryManager::MemoryMapper*>> seen(threads);
    std::atomic<int> mismatches{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        const std::string names[] = {"shared", "own_" + std::to_string(t),
                                     "own_" + std::to_string((t + 1) % threads)};
        for (int i = 0; i < rounds; ++i) {
          for (const auto& n : names) {
            auto r = registry.try_get(n);
            if (!r || *r == nullptr) {
              ++mismatches;
              continue;
            }
            auto [it, inserted] = seen[t].try_emplace(n, *r);
            if (!inserted && it->second != *r) ++mismatches;
            if (static_cast<named_test_mapper*>(*r)->region != n) ++mismatches;
          }
        }
      });
    }
    go = true;
    for (auto& th : pool) th.join();

    CHECK(mismatches.load() == 0);
    for (int t = 1; t < threads; ++t) {
      for (const auto& [name, mapper] : seen[t]) {
        if (seen[0].count(name) != 0) CHECK(seen[0][name] == mapper);
      }
    }
    CHECK(seen[0]["shared"] == seen[3]["shared"]);
    CHECK(seen[0]["own_1"] == seen[1]["own_1"]);
    CHECK(registry.size() == 5);
    for (const auto& [name, n] : calls) {
      CAPTURE(name);
      CHECK(n == 1);
    }
    CHECK(calls.size() == 5);
    CHECK(registry.created_names() ==
          std::vector<std::string>{"own_0", "own_1", "own_2", "own_3", "shared"});
    CHECK(registry.registered_names() == std::vector<std::string>{"shared"});
    CHECK(registry.has_fallback());
  }

  TEST_CASE("missing names, duplicates and bad factories answer clearly") {
    xlamem::jit_memory_mapper_registry registry;
    auto missing = registry.try_get("xla_cpu_jit");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code() == errc::not_found);
    CHECK(missing.error().message() ==
          "mapper registry: no factory for region 'xla_cpu_jit' and no fallback (registered: none)");
    CHECK(registry.find("xla_cpu_jit") == nullptr);

    REQUIRE(registry.register_factory("a", xlamem::memory_mapper_factory<xlamem::posix_page_mapper>())
                .has_value());
    auto dup = registry.register_factory("a", xlamem::memory_mapper_factory<xlamem::posix_page_mapper>());
    REQUIRE_FALSE(dup.has_value());
    CHECK(dup.error().code() == errc::already_exists);
    CHECK_FALSE(registry.register_factory("", [](std::string_view) { return nullptr; }).has_value());
    CHECK_FALSE(registry.register_factory("b", nullptr).has_value());
    CHECK(registry.try_get("zzz").error().message().find("(registered: 'a')") != std::string::npos);

    REQUIRE(registry
                .register_factory("null",
                                  [](std::string_view)
                                      -> std::unique_ptr<llvm::SectionMemoryManager::MemoryMapper> {
                                    return nullptr;
                                  })
                .has_value());
    auto null = registry.try_get("null");
    REQUIRE_FALSE(null.has_value());
    CHECK(null.error().code() == errc::internal);
    CHECK(null.error().message().find("returned null") != std::string::npos);
    REQUIRE(registry
                .register_factory("throws",
                                  [](std::string_view)
                                      -> std::unique_ptr<llvm::SectionMemoryManager::MemoryMapper> {
                                    throw std::runtime_error("no pages today");
                                  })
                .has_value());
    CHECK(registry.try_get("throws").error().message().find("threw: no pages today") !=
          std::string::npos);
    CHECK(registry.find("throws") == nullptr);

    // A mapper made by memory_mapper_factory works as an LLVM mapper.
    auto* m = registry.find("a");
    REQUIRE(m != nullptr);
    CHECK(registry.find("a") == m);
    std::error_code ec;
    auto block = m->allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose::Code, 10,
                                         nullptr,
                                         llvm::sys::Memory::MF_READ | llvm::sys::Memory::MF_WRITE,
                                         ec);
    REQUIRE_FALSE(ec);
    CHECK(block.allocatedSize() == page);
    CHECK_FALSE(m->releaseMappedMemory(block));
    CHECK(registry.created_names() == std::vector<std::string>{"a"});
  }
}
