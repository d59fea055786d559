// SPDX-License-Identifier: Apache-2.0
/// @file
/// Restartable sequences (Linux `rseq`) for per-CPU data: the two critical sections a per-CPU
/// stack of block indices needs (pop the top, push one), and the fence that lets another
/// thread take such a stack over. Used by `per_cpu_cache_policy` (per_cpu_free_list.hpp).
///
/// What rseq gives: glibc 2.35+ registers an rseq area for every thread it starts; the kernel
/// keeps the thread's current CPU in it and, if the thread is preempted, migrated or
/// signalled while its instruction pointer is inside a registered critical section, resumes it
/// at the section's abort address instead. A section that ends in one store (its commit) is
/// therefore atomic with respect to every other thread on the same CPU, with no atomic
/// read-modify-write and no lock: a per-CPU stack costs plain loads and stores.
///
/// Taking over another CPU's stack (to drain its blocks when the pool is exhausted): the
/// drainer marks the stack blocked, then calls `membarrier(PRIVATE_EXPEDITED_RSEQ)`, which
/// aborts every critical section running in the process at that moment (a thread that was
/// preempted inside one is aborted when it resumes anyway). After the fence no section that
/// began before the mark can commit, and every section that begins later sees the mark and
/// bails out, so the drainer may read and write the stack with plain accesses until it clears
/// the mark. That needs the process registered for the command once
/// (`MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ`, Linux 5.10+; kept across fork).
///
/// Available on x86-64 Linux with glibc 2.35+ (decided from the target and its system headers,
/// never from a macro the user sets); elsewhere `rseq_usable()` is false and callers use their
/// shared path. Whether rseq is registered is a run-time fact (glibc's tunable
/// `glibc.pthread.rseq=0`, a kernel or sandbox without it, a thread not started by glibc): a
/// thread whose area shows no CPU takes the shared path.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__) && defined(__x86_64__) && defined(__GLIBC__) && defined(__has_include) && \
    defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_include(<linux/membarrier.h>) && \
    __has_builtin(__builtin_thread_pointer)
#include <linux/membarrier.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_membarrier) && defined(RSEQ_SIG)
#define XLAMEM_DETAIL_RSEQ_SECTIONS 1
#endif
#endif
#endif
#ifndef XLAMEM_DETAIL_RSEQ_SECTIONS
#define XLAMEM_DETAIL_RSEQ_SECTIONS 0
#endif

// ThreadSanitizer cannot see the accesses inside the assembly: the stacks' users tell it
// about the hand-off (release before a push, acquire after a pop or a drain) instead.
#if defined(__SANITIZE_THREAD__)
#define XLAMEM_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XLAMEM_DETAIL_TSAN 1
#endif
#endif
#ifndef XLAMEM_DETAIL_TSAN
#define XLAMEM_DETAIL_TSAN 0
#endif
#if XLAMEM_DETAIL_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace xlamem::detail {

/// One CPU's stack of block indices: `count` entries in `slots`, `blocked` set while another
/// thread drains it. 512 bytes of its own, on a 128-byte boundary (the adjacent-line
/// prefetcher pairs lines, so two CPUs' stacks never share a prefetch pair): room for a burst
/// of 64 blocks and as many back without visiting the shared array.
struct alignas(128) cpu_stack {
  static constexpr std::uint32_t max_slots = 126;
  std::uint32_t count = 0;
  std::uint32_t blocked = 0;
  std::uint32_t slots[max_slots] = {};
};
static_assert(sizeof(cpu_stack) == 512);

/// What a critical section did.
/// (The values are what the sections' assembly writes.)
enum class rseq_outcome : std::uint32_t {
  done = 0,       ///< committed
  empty = 1,      ///< pop: nothing to take (nothing changed)
  full = 2,       ///< push: no room (nothing changed)
  restarted = 3,  ///< preempted, migrated, signalled or blocked: nothing changed, take another path
};

/// Happens-before for ThreadSanitizer across the stacks (no-ops otherwise; null: none).
inline void tsan_release(cpu_stack* s) noexcept {
#if XLAMEM_DETAIL_TSAN
  if (s != nullptr) __tsan_release(s);
#else
  (void)s;
#endif
}
inline void tsan_acquire(cpu_stack* s) noexcept {
#if XLAMEM_DETAIL_TSAN
  if (s != nullptr) __tsan_acquire(s);
#else
  (void)s;
#endif
}

/// Whether this build has the critical sections at all (the target and its headers).
inline constexpr bool rseq_sections_built = XLAMEM_DETAIL_RSEQ_SECTIONS != 0;

#if XLAMEM_DETAIL_RSEQ_SECTIONS

/// The calling thread's rseq area, given glibc's `__rseq_offset`.
[[nodiscard]] inline char* rseq_area(std::ptrdiff_t offset) noexcept {
  return static_cast<char*>(__builtin_thread_pointer()) + offset;
}

/// The CPU the kernel last wrote into the area: negative when rseq is not registered there.
[[nodiscard]] inline std::int32_t rseq_cpu(const char* area) noexcept {
  return reinterpret_cast<const volatile struct rseq*>(area)->cpu_id;
}

/// Whether glibc registered rseq (for the main thread, hence for the threads it starts), the
/// process can use the drain fence, and glibc's area has the layout the sections assume
/// (`cpu_id` at byte 4, `rseq_cs` at byte 8). One system call (registration is idempotent).
[[nodiscard]] inline bool rseq_usable() noexcept {
  static_assert(offsetof(struct rseq, cpu_id) == 4 && offsetof(struct rseq, rseq_cs) == 8);
  if (__rseq_size == 0) return false;
  return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0;
}

/// Aborts every critical section running in the process now (see the file comment). False if
/// the kernel refused (then the caller must not touch other CPUs' stacks).
[[nodiscard]] inline bool rseq_fence() noexcept {
  if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0) return true;
  // A child of a process that never registered (or a registration lost): register, retry.
  return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0 &&
         ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0;
}

// The sections. Each one: a descriptor {version 0, flags 0, start, length, abort} in section
// __rseq_cs (32-byte aligned, as the kernel requires; flag "?" puts it in the COMDAT group of
// the inline function it describes, so the linker keeps or drops the two together), its
// address stored into the area's rseq_cs word, then the body from label 1 to label 2, whose
// last instruction is the commit store. The abort address is label 7, "restarted", right
// after the 4-byte signature glibc registered (RSEQ_SIG; the kernel checks it before jumping
// there), never executed as code; the three bytes before the signature make the pair decode
// as one instruction (ud1), so disassembly stays aligned. A section also restarts (rather
// than acting) if the thread's CPU is no longer the one it indexed or the stack is blocked.
// Numeric labels are local to each expansion. Outcomes come back in an output register, not
// through `asm goto`: GCC before 13 miscompiles `asm goto` with outputs (the outputs were
// taken as valid on the jump paths as well).
#define XLAMEM_DETAIL_RSEQ_DESCRIPTOR           \
  ".pushsection __rseq_cs, \"aw?\"\n\t"         \
  ".balign 32\n\t"                              \
  "3:\n\t"                                      \
  ".long 0, 0\n\t"                              \
  ".quad 1f, 2f - 1f, 7f\n\t"                   \
  ".popsection\n\t"                             \
  "leaq 3b(%%rip), %%rax\n\t"
// The tail of every section: label 2 ends it; 7 is "restarted" (the abort address), 8 the
// section's own early exit (empty or full); `status` gets rseq_outcome's value.
#define XLAMEM_DETAIL_RSEQ_TAIL(early)          \
  "2:\n\t"                                      \
  "movl $0, %[status]\n\t"                      \
  "jmp 9f\n\t"                                  \
  ".byte 0x0f, 0xb9, 0x3d\n\t"                  \
  ".long %c[signature]\n\t"                     \
  "7:\n\t"                                      \
  "movl $3, %[status]\n\t"                      \
  "jmp 9f\n\t"                                  \
  "8:\n\t"                                      \
  "movl $" early ", %[status]\n\t"              \
  "9:\n\t"
// Explicit-CPU sections: `area` is the thread's rseq area, `stack` CPU `cpu`'s.
#define XLAMEM_DETAIL_RSEQ_PROLOGUE             \
  XLAMEM_DETAIL_RSEQ_DESCRIPTOR                 \
  "movq %%rax, 8(%[area])\n\t"                  \
  "1:\n\t"                                      \
  "cmpl %[cpu], 4(%[area])\n\t"                 \
  "jnz 7f\n\t"                                  \
  "cmpl $0, 4(%[stack])\n\t"                    \
  "jnz 7f\n\t"
// The fast pair: the section itself reads the CPU (through %fs, the thread pointer, at glibc's
// offset of the area) and finds that CPU's stack in %rax, so nothing is read twice. A CPU id
// not below `cpus` (none, or a thread without rseq) restarts.
#define XLAMEM_DETAIL_RSEQ_LOCAL_PROLOGUE       \
  XLAMEM_DETAIL_RSEQ_DESCRIPTOR                 \
  "movq %%rax, %%fs:8(%[offset])\n\t"           \
  "1:\n\t"                                      \
  "movl %%fs:4(%[offset]), %%eax\n\t"           \
  "cmpl %[cpus], %%eax\n\t"                     \
  "jae 7f\n\t"                                  \
  "shlq $9, %%rax\n\t"                          \
  "addq %[stacks], %%rax\n\t"                   \
  "cmpl $0, 4(%%rax)\n\t"                       \
  "jnz 7f\n\t"
static_assert(sizeof(cpu_stack) == 1 << 9, "the sections index stacks with a shift by 9");

/// Pops the top of the calling CPU's stack (`stacks[cpu]`) into `out`, in one critical
/// section.
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_pop_local(std::ptrdiff_t offset,
                                                                      cpu_stack* stacks,
                                                                      std::uint32_t cpus,
                                                                      std::uint32_t& out) noexcept {
  std::uint32_t status;
  std::uint32_t index;
  asm volatile(XLAMEM_DETAIL_RSEQ_LOCAL_PROLOGUE
               "movl (%%rax), %%ecx\n\t"
               "testl %%ecx, %%ecx\n\t"
               "jz 8f\n\t"
               "subl $1, %%ecx\n\t"
               "movl 8(%%rax, %%rcx, 4), %[index]\n\t"
               "movl %%ecx, (%%rax)\n\t"  // commit: count - 1
               XLAMEM_DETAIL_RSEQ_TAIL("1")
               : [status] "=&r"(status), [index] "=&r"(index)
               : [offset] "r"(offset), [stacks] "r"(stacks), [cpus] "r"(cpus),
                 [signature] "i"(RSEQ_SIG)
               : "rax", "rcx", "memory", "cc");
  // The index is written only where the section committed: elsewhere it was never loaded.
  if (static_cast<rseq_outcome>(status) == rseq_outcome::done) out = index;
  return static_cast<rseq_outcome>(status);
}

/// Pushes `index` onto the calling CPU's stack if it holds fewer than `limit`, in one
/// critical section.
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_push_local(std::ptrdiff_t offset,
                                                                       cpu_stack* stacks,
                                                                       std::uint32_t cpus,
                                                                       std::uint32_t index,
                                                                       std::uint32_t limit) noexcept {
  std::uint32_t status;
  asm volatile(XLAMEM_DETAIL_RSEQ_LOCAL_PROLOGUE
               "movl (%%rax), %%ecx\n\t"
               "cmpl %[limit], %%ecx\n\t"
               "jae 8f\n\t"
               "movl %[index], 8(%%rax, %%rcx, 4)\n\t"
               "addl $1, %%ecx\n\t"
               "movl %%ecx, (%%rax)\n\t"  // commit: count + 1
               XLAMEM_DETAIL_RSEQ_TAIL("2")
               : [status] "=&r"(status)
               : [offset] "r"(offset), [stacks] "r"(stacks), [cpus] "r"(cpus), [index] "r"(index),
                 [limit] "r"(limit), [signature] "i"(RSEQ_SIG)
               : "rax", "rcx", "memory", "cc");
  return static_cast<rseq_outcome>(status);
}

/// Pops the top of `stack` (CPU `cpu`'s) into `out`, in one critical section.
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_pop(char* area, cpu_stack* stack,
                                                                std::uint32_t cpu,
                                                                std::uint32_t& out) noexcept {
  std::uint32_t status;
  std::uint32_t index;
  asm volatile(XLAMEM_DETAIL_RSEQ_PROLOGUE
               "movl (%[stack]), %%eax\n\t"
               "testl %%eax, %%eax\n\t"
               "jz 8f\n\t"
               "subl $1, %%eax\n\t"
               "movl 8(%[stack], %%rax, 4), %[index]\n\t"
               "movl %%eax, (%[stack])\n\t"  // commit: count - 1
               XLAMEM_DETAIL_RSEQ_TAIL("1")
               : [status] "=&r"(status), [index] "=&r"(index)
               : [area] "r"(area), [stack] "r"(stack), [cpu] "r"(cpu), [signature] "i"(RSEQ_SIG)
               : "rax", "memory", "cc");
  // The index is written only where the section committed: elsewhere it was never loaded.
  if (static_cast<rseq_outcome>(status) == rseq_outcome::done) out = index;
  return static_cast<rseq_outcome>(status);
}

/// Pushes `index` onto `stack` (CPU `cpu`'s) if it holds fewer than `limit`, in one critical
/// section.
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_push(char* area, cpu_stack* stack,
                                                                 std::uint32_t cpu,
                                                                 std::uint32_t index,
                                                                 std::uint32_t limit) noexcept {
  std::uint32_t status;
  asm volatile(XLAMEM_DETAIL_RSEQ_PROLOGUE
               "movl (%[stack]), %%eax\n\t"
               "cmpl %[limit], %%eax\n\t"
               "jae 8f\n\t"
               "movl %[index], 8(%[stack], %%rax, 4)\n\t"
               "addl $1, %%eax\n\t"
               "movl %%eax, (%[stack])\n\t"  // commit: count + 1
               XLAMEM_DETAIL_RSEQ_TAIL("2")
               : [status] "=&r"(status)
               : [area] "r"(area), [stack] "r"(stack), [cpu] "r"(cpu), [index] "r"(index),
                 [limit] "r"(limit), [signature] "i"(RSEQ_SIG)
               : "rax", "memory", "cc");
  return static_cast<rseq_outcome>(status);
}

/// Pops up to `n` entries off `stack` into `out[0 .. got)`, in one critical section: `got` =
/// min(n, count) when it commits, else 0 (`n` = 0 takes nothing and commits at once).
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_pop_many(char* area, cpu_stack* stack,
                                                                     std::uint32_t cpu,
                                                                     std::uint32_t* out,
                                                                     std::uint32_t n,
                                                                     std::uint32_t& got) noexcept {
  got = 0;
  if (n == 0) return rseq_outcome::done;  // the copy loop below counts down from n: never 0
  std::uint32_t status;
  std::uint32_t taken;
  asm volatile(XLAMEM_DETAIL_RSEQ_PROLOGUE
               "movl (%[stack]), %%eax\n\t"
               "testl %%eax, %%eax\n\t"
               "jz 8f\n\t"
               "movl %[n], %[taken]\n\t"
               "cmpl %%eax, %[taken]\n\t"
               "cmova %%eax, %[taken]\n\t"  // taken = min(n, count)
               "subl %[taken], %%eax\n\t"   // the count after
               "movl %[taken], %%edx\n\t"
               "5:\n\t"                     // out[j - 1] = slots[after + j - 1], j = taken .. 1
               "leal -1(%%rax, %%rdx), %%ecx\n\t"
               "movl 8(%[stack], %%rcx, 4), %%ecx\n\t"
               "movl %%ecx, -4(%[out], %%rdx, 4)\n\t"
               "subl $1, %%edx\n\t"
               "jnz 5b\n\t"
               "movl %%eax, (%[stack])\n\t"  // commit: count - taken
               XLAMEM_DETAIL_RSEQ_TAIL("1")
               : [status] "=&r"(status), [taken] "=&r"(taken)
               : [area] "r"(area), [stack] "r"(stack), [cpu] "r"(cpu), [out] "r"(out), [n] "r"(n),
                 [signature] "i"(RSEQ_SIG)
               : "rax", "rcx", "rdx", "memory", "cc");
  if (static_cast<rseq_outcome>(status) == rseq_outcome::done) got = taken;
  return static_cast<rseq_outcome>(status);
}

/// Pushes `in[0 .. n)` onto `stack` if it then holds at most `limit`, in one critical section
/// (`n` = 0 pushes nothing and commits at once).
[[nodiscard, gnu::always_inline]] inline rseq_outcome rseq_push_many(char* area, cpu_stack* stack,
                                                                      std::uint32_t cpu,
                                                                      const std::uint32_t* in,
                                                                      std::uint32_t n,
                                                                      std::uint32_t limit) noexcept {
  if (n == 0) return rseq_outcome::done;  // the copy loop below counts down from n: never 0
  std::uint32_t status;
  asm volatile(XLAMEM_DETAIL_RSEQ_PROLOGUE
               "movl (%[stack]), %%eax\n\t"
               "movl %%eax, %%ecx\n\t"
               "addl %[n], %%ecx\n\t"
               "cmpl %[limit], %%ecx\n\t"
               "ja 8f\n\t"
               "movl %[n], %%edx\n\t"
               "5:\n\t"                     // slots[count + j - 1] = in[j - 1], j = n .. 1
               "leal -1(%%rax, %%rdx), %%ecx\n\t"
               "movl -4(%[in], %%rdx, 4), %%r8d\n\t"
               "movl %%r8d, 8(%[stack], %%rcx, 4)\n\t"
               "subl $1, %%edx\n\t"
               "jnz 5b\n\t"
               "addl %[n], %%eax\n\t"
               "movl %%eax, (%[stack])\n\t"  // commit: count + n
               XLAMEM_DETAIL_RSEQ_TAIL("2")
               : [status] "=&r"(status)
               : [area] "r"(area), [stack] "r"(stack), [cpu] "r"(cpu), [in] "r"(in), [n] "r"(n),
                 [limit] "r"(limit), [signature] "i"(RSEQ_SIG)
               : "rax", "rcx", "rdx", "r8", "memory", "cc");
  return static_cast<rseq_outcome>(status);
}

#undef XLAMEM_DETAIL_RSEQ_DESCRIPTOR
#undef XLAMEM_DETAIL_RSEQ_TAIL
#undef XLAMEM_DETAIL_RSEQ_PROLOGUE
#undef XLAMEM_DETAIL_RSEQ_LOCAL_PROLOGUE

/// glibc's offset of the rseq area from the thread pointer.
[[nodiscard]] inline std::ptrdiff_t rseq_offset() noexcept { return __rseq_offset; }

/// CPU ids the kernel may report: those configured (online or not), 0 if unknown.
[[nodiscard]] inline std::uint32_t configured_cpus() noexcept {
  const long n = ::sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? static_cast<std::uint32_t>(n) : 0;
}

#else  // no critical sections in this build: every caller takes its shared path

[[nodiscard]] inline char* rseq_area(std::ptrdiff_t) noexcept { return nullptr; }
[[nodiscard]] inline std::int32_t rseq_cpu(const char*) noexcept { return -1; }
[[nodiscard]] inline bool rseq_usable() noexcept { return false; }
[[nodiscard]] inline bool rseq_fence() noexcept { return false; }
[[nodiscard]] inline rseq_outcome rseq_pop(char*, cpu_stack*, std::uint32_t,
                                           std::uint32_t&) noexcept {
  return rseq_outcome::restarted;
}
[[nodiscard]] inline rseq_outcome rseq_push(char*, cpu_stack*, std::uint32_t, std::uint32_t,
                                            std::uint32_t) noexcept {
  return rseq_outcome::restarted;
}
[[nodiscard]] inline rseq_outcome rseq_pop_local(std::ptrdiff_t, cpu_stack*, std::uint32_t,
                                                 std::uint32_t&) noexcept {
  return rseq_outcome::restarted;
}
[[nodiscard]] inline rseq_outcome rseq_push_local(std::ptrdiff_t, cpu_stack*, std::uint32_t,
                                                  std::uint32_t, std::uint32_t) noexcept {
  return rseq_outcome::restarted;
}
[[nodiscard]] inline rseq_outcome rseq_pop_many(char*, cpu_stack*, std::uint32_t, std::uint32_t*,
                                                std::uint32_t, std::uint32_t& got) noexcept {
  got = 0;
  return rseq_outcome::restarted;
}
[[nodiscard]] inline rseq_outcome rseq_push_many(char*, cpu_stack*, std::uint32_t,
                                                 const std::uint32_t*, std::uint32_t,
                                                 std::uint32_t) noexcept {
  return rseq_outcome::restarted;
}
[[nodiscard]] inline std::ptrdiff_t rseq_offset() noexcept { return 0; }
[[nodiscard]] inline std::uint32_t configured_cpus() noexcept { return 0; }

#endif

}  // namespace xlamem::detail
