// SPDX-License-Identifier: Apache-2.0
/// @file
/// Context handling for the CUDA resources: `cuda_primary_context` retains the primary context
/// of a device ordinal (released when the last copy goes), and `cuda_context_scope` makes a
/// context current on the calling thread for the length of a call and restores whatever was
/// current before (XLA's `executor->Activate()`, without a per-thread stack of its own).
///
/// Thread safety: a `cuda_primary_context` may be shared and copied across threads (its retain
/// count lives in a shared, immutable state). A `cuda_context_scope` belongs to the thread that
/// entered it and must be destroyed on that thread, in reverse order of entry.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/error.hpp"

namespace xlamem {

namespace detail {

[[nodiscard]] inline void* to_pointer(CUdeviceptr d) noexcept {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(d));
}

[[nodiscard]] inline CUdeviceptr to_deviceptr(const void* p) noexcept {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
}

// "cuda_device_memory: cuMemAlloc(1024 bytes) on device 0", the call part of an error message.
[[nodiscard]] inline std::string cuda_call(std::string_view resource, std::string_view call,
                                           std::size_t bytes, int ordinal) {
  std::string s(resource);
  s += ": ";
  s += call;
  s += '(';
  s += std::to_string(bytes);
  s += " bytes) on device ";
  s += std::to_string(ordinal);
  return s;
}

// Hands one event to a log policy; the message is only built when the log is not a no-op.
template <class Log>
void log_event(Log& log, cuda_allocation_event_kind kind, std::string_view resource, int ordinal,
               std::size_t size, std::size_t reserved, const void* pointer,
               std::string_view message = {}) noexcept {
  if constexpr (!std::is_same_v<Log, no_allocation_log>) {
    cuda_allocation_event e;
    e.kind = kind;
    e.resource = resource;
    e.device_ordinal = ordinal;
    e.size = size;
    e.reserved = reserved;
    e.pointer = pointer;
    e.message = message;
    log.record(e);
  } else {
    (void)log, (void)kind, (void)resource, (void)ordinal, (void)size, (void)reserved, (void)pointer,
        (void)message;
  }
}

}  // namespace detail

/// Makes a context current on this thread until destroyed, then restores the previous one.
/// When the context is already current, nothing is switched and nothing restored (one
/// `cuCtxGetCurrent`, no `cuCtxSetCurrent`), which keeps hot allocation paths cheap.
class cuda_context_scope {
 public:
  /// Makes `context` current on the calling thread.
  /// @returns the driver's error (naming `cuCtxGetCurrent` or `cuCtxSetCurrent`) on failure.
  [[nodiscard]] static result<cuda_context_scope> enter(const cuda_driver& driver,
                                                        CUcontext context) {
    CUcontext previous = nullptr;
    if (auto r = driver.check(driver.api().ctx_get_current(&previous), "cuCtxGetCurrent"); !r) {
      return r.error();
    }
    if (previous == context) return cuda_context_scope(&driver, previous, false);
    if (auto r = driver.check(driver.api().ctx_set_current(context), "cuCtxSetCurrent"); !r) {
      return r.error();
    }
    return cuda_context_scope(&driver, previous, true);
  }

  cuda_context_scope(cuda_context_scope&& other) noexcept
      : driver_(other.driver_),
        previous_(other.previous_),
        switched_(std::exchange(other.switched_, false)) {}
  cuda_context_scope(const cuda_context_scope&) = delete;
  cuda_context_scope& operator=(const cuda_context_scope&) = delete;
  cuda_context_scope& operator=(cuda_context_scope&&) = delete;

  /// Restores the previous context; an error there cannot be reported and is ignored (the
  /// thread then keeps this scope's context current, which is harmless for later driver calls).
  ~cuda_context_scope() {
    if (switched_) (void)driver_->api().ctx_set_current(previous_);
  }

  /// The context that was current before, restored at destruction (may be null).
  [[nodiscard]] CUcontext previous() const noexcept { return previous_; }
  /// Whether entering changed the current context.
  [[nodiscard]] bool switched() const noexcept { return switched_; }

 private:
  cuda_context_scope(const cuda_driver* driver, CUcontext previous, bool switched) noexcept
      : driver_(driver), previous_(previous), switched_(switched) {}

  const cuda_driver* driver_;
  CUcontext previous_;
  bool switched_;
};

/// The primary context of one device ordinal, retained (`cuDevicePrimaryCtxRetain`) for as
/// long as any copy of this object lives, then released (`cuDevicePrimaryCtxRelease`). Copies
/// share one retain. Keeps its driver alive.
class cuda_primary_context {
 public:
  /// Retains the primary context of device `ordinal`.
  /// @returns `invalid_argument` for a null driver, `unavailable` when there is no device,
  /// `out_of_range` for a bad ordinal, or the driver's error naming the call.
  [[nodiscard]] static result<cuda_primary_context> retain(
      std::shared_ptr<const cuda_driver> driver, int ordinal = 0) {
    if (driver == nullptr) {
      return error(errc::invalid_argument, "cuda_primary_context::retain: the driver is null");
    }
    auto dev = driver->device(ordinal);
    if (!dev) return dev.error();
    CUcontext ctx = nullptr;
    if (auto r = driver->check(driver->api().primary_ctx_retain(&ctx, *dev),
                               "cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) + ")");
        !r) {
      return r.error();
    }
    return cuda_primary_context(
        std::make_shared<const state>(std::move(driver), ordinal, *dev, ctx));
  }

  /// Device ordinal, as given to `retain`.
  [[nodiscard]] int ordinal() const noexcept { return state_->ordinal; }
  /// Driver device handle.
  [[nodiscard]] CUdevice device() const noexcept { return state_->device; }
  /// The retained context.
  [[nodiscard]] CUcontext get() const noexcept { return state_->context; }
  /// The driver this context came from.
  [[nodiscard]] const cuda_driver& driver() const noexcept { return *state_->driver; }
  /// The driver, shared.
  [[nodiscard]] const std::shared_ptr<const cuda_driver>& shared_driver() const noexcept {
    return state_->driver;
  }

  /// Makes this context current on the calling thread until the returned scope ends.
  [[nodiscard]] result<cuda_context_scope> make_current() const {
    return cuda_context_scope::enter(*state_->driver, state_->context);
  }

  /// Same driver object and same device.
  friend bool operator==(const cuda_primary_context& a, const cuda_primary_context& b) noexcept {
    return a.state_->driver == b.state_->driver && a.state_->context == b.state_->context;
  }

 private:
  struct state {
    state(std::shared_ptr<const cuda_driver> d, int o, CUdevice dev, CUcontext c) noexcept
        : driver(std::move(d)), ordinal(o), device(dev), context(c) {}
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() { (void)driver->api().primary_ctx_release(device); }

    std::shared_ptr<const cuda_driver> driver;
    int ordinal;
    CUdevice device;
    CUcontext context;
  };

  explicit cuda_primary_context(std::shared_ptr<const state> s) noexcept : state_(std::move(s)) {}

  std::shared_ptr<const state> state_;
};

}  // namespace xlamem
