// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internals shared by the CUDA resources (device, VMM, async and pinned host memory): retaining
/// the context in `create`, checking entry points and device support, logging a failed
/// allocation or free, and a context-scoped driver free with its logging and misuse check.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "xlamem/config.hpp"
#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem::detail {

/// Device `ordinal`'s retained primary context, or the error in the context of
/// "<resource>::create".
[[nodiscard]] inline result<cuda_primary_context> retain_for_create(
    std::string_view resource, std::shared_ptr<const cuda_driver> driver, int ordinal) {
  auto ctx = cuda_primary_context::retain(std::move(driver), ordinal);
  if (!ctx) return ctx.error().with_context(std::string(resource) + "::create");
  return ctx;
}

/// One driver entry point a resource needs: whether it is loaded, and its name.
struct cuda_entry_point {
  bool present;
  const char* name;
};

/// Success when every entry point in `needed` is loaded, else `unavailable` naming the first
/// missing one.
[[nodiscard]] inline result<void> require_entry_points(
    const cuda_driver& d, std::initializer_list<cuda_entry_point> needed) {
  for (const cuda_entry_point& e : needed) {
    if (!e.present) return d.missing_entry_point(e.name);
  }
  return {};
}

/// Success when the device of `ctx` has the boolean attribute `attribute` (read by
/// `cuDeviceGetAttribute`, named `call` in a driver error); `unimplemented`
/// "<resource>: device N does not support <feature>" when it is 0.
[[nodiscard]] inline result<void> require_device_support(const cuda_primary_context& ctx,
                                                         CUdevice_attribute attribute,
                                                         std::string_view call,
                                                         std::string_view resource,
                                                         std::string_view feature) {
  const cuda_driver& d = ctx.driver();
  int supported = 0;
  if (auto r = d.check(d.api().device_get_attribute(&supported, attribute, ctx.device()), call);
      !r) {
    return r.error();
  }
  if (supported == 0) {
    return error(errc::unimplemented, std::string(resource) + ": device " +
                                          std::to_string(ctx.ordinal()) + " does not support " +
                                          std::string(feature));
  }
  return {};
}

/// Logs an `allocate_failed` event for `bytes` with the message of `e`, and returns `e`.
template <class Log>
[[nodiscard]] result<void*> allocation_failed(Log& log, std::string_view resource, int ordinal,
                                              error e, std::size_t bytes) noexcept {
  log_event(log, cuda_allocation_event_kind::allocate_failed, resource, ordinal, bytes, 0, nullptr,
            e.message());
  return e;
}

/// Logs a `free_failed` event for `p` saying `why`.
template <class Log>
void free_failed(Log& log, std::string_view resource, int ordinal, void* p, std::size_t bytes,
                 std::size_t reserved, std::string_view why) noexcept {
  log_event(log, cuda_allocation_event_kind::free_failed, resource, ordinal, bytes, reserved, p,
            why);
}

/// Frees `p` with `do_free()` (a driver call named `call`, returning its `CUresult`) while
/// `context` is current, and logs the outcome: `free`, or `free_failed` with the scope's or the
/// driver's error. With debug checks a `CUDA_ERROR_INVALID_VALUE` from the driver is reported
/// to `XLAMEM_MISUSE` with `misuse` (a pointer the resource did not hand out, or a double free).
template <class Log, class Free>
void scoped_free(Log& log, std::string_view resource, const cuda_primary_context& context, void* p,
                 std::size_t bytes, std::size_t reserved, std::string_view call, Free do_free,
                 const char* misuse) noexcept {
  const int ordinal = context.ordinal();
  auto scope = context.make_current();
  if (!scope) {
    free_failed(log, resource, ordinal, p, bytes, reserved, scope.error().message());
    return;
  }
  if (const CUresult r = do_free(); r != CUDA_SUCCESS) {
    free_failed(
        log, resource, ordinal, p, bytes, reserved,
        context.driver().make_error(r, cuda_call(resource, call, bytes, ordinal)).message());
#if XLAMEM_DEBUG_CHECKS
    if (r == CUDA_ERROR_INVALID_VALUE) XLAMEM_MISUSE(misuse);
#endif
    return;
  }
  (void)misuse;
  log_event(log, cuda_allocation_event_kind::free, resource, ordinal, bytes, reserved, p);
}

/// What every CUDA resource over a retained primary context holds and answers: the context,
/// the log policy and their accessors. A resource derives from it and brings `context_`, `log_`,
/// `ordinal` and `fail` into scope with using-declarations.
/// @tparam Derived the resource (its `name` labels log events).
/// @tparam Log the log policy.
template <class Derived, class Log>
class cuda_resource_base {
 public:
  /// The ordinal of the device whose context the resource uses.
  [[nodiscard]] int device_ordinal() const noexcept { return context_.ordinal(); }
  /// The retained primary context.
  [[nodiscard]] const cuda_primary_context& context() const noexcept { return context_; }
  /// The driver.
  [[nodiscard]] const cuda_driver& driver() const noexcept { return context_.driver(); }
  /// The log policy.
  [[nodiscard]] Log& log() noexcept { return log_; }

 protected:
  cuda_resource_base(cuda_primary_context context, Log log)
      : context_(std::move(context)), log_(std::move(log)) {}

  [[nodiscard]] int ordinal() const noexcept { return context_.ordinal(); }

  // Logs the failed allocation of `bytes` and returns `e`.
  result<void*> fail(error e, std::size_t bytes) noexcept {
    return allocation_failed(log_, Derived::name, ordinal(), std::move(e), bytes);
  }

  cuda_primary_context context_;
  // Deliberately not [[no_unique_address]]: nvcc 13.0 fails with "internal error during
  // structure layout" when a class ending in such a member is itself a [[no_unique_address]]
  // member (as the upstream of fixed_block_pool). A byte per resource object costs nothing.
  Log log_;
};

}  // namespace xlamem::detail
