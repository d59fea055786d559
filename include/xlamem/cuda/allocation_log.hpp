// SPDX-License-Identifier: Apache-2.0
/// @file
/// The logging hook of the CUDA resources: every allocation, free and failure is described by a
/// `cuda_allocation_event` (resource, device ordinal, requested and reserved bytes, pointer) and
/// handed to the resource's log policy, a model of `cuda_allocation_log` (XLA's
/// CudaDeviceAllocator logs the same at VLOG(3)).
/// - `no_allocation_log`: does nothing; its calls compile away (the default).
/// - `callback_allocation_log`: calls a plain function pointer with a context.
/// - `stream_allocation_log`: writes one line per event to a `FILE*` (stderr by default).
///
/// Contract the compiler cannot check: `record` must not throw (it runs inside `deallocate`,
/// which is noexcept) and must not call back into the resource. It may be called concurrently
/// from several threads when the resource is used so; the policies here are thread-safe
/// (`stream_allocation_log` relies on stdio's per-call locking).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace xlamem {

/// What happened.
enum class cuda_allocation_event_kind {
  allocate,         ///< memory was handed out
  free,             ///< memory was returned to the driver
  allocate_failed,  ///< a request failed; `message` says why
  free_failed,      ///< the driver refused a free (it cannot be reported otherwise); `message`
};

/// The lowercase name of an event kind: "allocate", "free_failed".
[[nodiscard]] constexpr std::string_view to_string(cuda_allocation_event_kind k) noexcept {
  switch (k) {
    case cuda_allocation_event_kind::allocate:
      return "allocate";
    case cuda_allocation_event_kind::free:
      return "free";
    case cuda_allocation_event_kind::allocate_failed:
      return "allocate_failed";
    case cuda_allocation_event_kind::free_failed:
      return "free_failed";
  }
  return "unknown";
}

/// One allocation event.
struct cuda_allocation_event {
  cuda_allocation_event_kind kind = cuda_allocation_event_kind::allocate;
  std::string_view resource;      ///< "cuda_device_memory", "cuda_vmm_device_memory", ...
  int device_ordinal = -1;        ///< the device (or, for pinned host memory, its context's device)
  std::size_t size = 0;           ///< bytes requested
  std::size_t reserved = 0;       ///< bytes taken from the driver (VMM granularity, padding)
  const void* pointer = nullptr;  ///< the memory (null for a failed allocation)
  std::string_view message;       ///< the error, for the *_failed kinds; empty otherwise
};

/// One line: "cuda_device_memory: allocate 1024 bytes (1024 reserved) at 0x7f... on device 0".
[[nodiscard]] inline std::string to_string(const cuda_allocation_event& e) {
  char pointer[32];
  std::snprintf(pointer, sizeof pointer, "%p", e.pointer);
  std::string s(e.resource);
  s += ": ";
  s += to_string(e.kind);
  s += ' ';
  s += std::to_string(e.size);
  s += " bytes (";
  s += std::to_string(e.reserved);
  s += " reserved) at ";
  s += pointer;
  s += " on device ";
  s += std::to_string(e.device_ordinal);
  if (!e.message.empty()) {
    s += ": ";
    s += e.message;
  }
  return s;
}

/// A log policy: `log.record(event)`, noexcept.
template <class L>
concept cuda_allocation_log = requires(L& log, const cuda_allocation_event& e) {
  { log.record(e) }
  noexcept;
};

/// Records nothing; calls to it compile away (the events are not even built).
struct no_allocation_log {
  constexpr void record(const cuda_allocation_event&) noexcept {}
};
static_assert(cuda_allocation_log<no_allocation_log>);

/// Calls `fn(context, event)` for every event.
struct callback_allocation_log {
  void (*fn)(void* context, const cuda_allocation_event& event) = nullptr;
  void* context = nullptr;

  void record(const cuda_allocation_event& e) noexcept {
    if (fn != nullptr) fn(context, e);
  }
};
static_assert(cuda_allocation_log<callback_allocation_log>);

/// Writes `to_string(event)` and a newline to `file` (stderr when null). A line that cannot be
/// formatted (out of memory) is dropped.
struct stream_allocation_log {
  std::FILE* file = nullptr;

  void record(const cuda_allocation_event& e) noexcept {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      const std::string line = to_string(e) + "\n";
      std::fputs(line.c_str(), file != nullptr ? file : stderr);
    } catch (...) {
    }
#else
    const std::string line = to_string(e) + "\n";
    std::fputs(line.c_str(), file != nullptr ? file : stderr);
#endif
  }
};
static_assert(cuda_allocation_log<stream_allocation_log>);

}  // namespace xlamem
