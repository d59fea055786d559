// SPDX-License-Identifier: Apache-2.0
/// @file
/// The CUDA driver, opened at run time. `cuda_driver::load()` opens `libcuda.so.1` with `dlopen`,
/// resolves the entry points xlamem calls into a table of function pointers (`cuda_driver_api`)
/// and calls `cuInit`, so a binary built with this header starts on any machine: without a
/// driver or a device it gets an `unavailable` error, never a crash, a link error or a hang.
///
/// The loaded driver is an object the caller owns and shares (`std::shared_ptr<const
/// cuda_driver>`): there is no process-wide instance. Loading twice is cheap and harmless (the
/// dynamic loader and `cuInit` count references). Every resource keeps its driver alive.
///
/// Entry points are looked up under their versioned ABI names exactly as this toolkit's
/// `cuda.h` spells them (`cuMemAlloc` is the macro for `cuMemAlloc_v2`), so the pointer's type
/// and the symbol always agree; a symbol the installed driver lacks stays null and the resource
/// that needs it reports `unavailable` naming it. `cuGetProcAddress` is not needed for that and
/// is not used.
///
/// Every failing call becomes an `xlamem::error` that names the call, the `CUresult` name and
/// its description (from `cuGetErrorName`/`cuGetErrorString`, or a built-in table when the
/// driver cannot answer, as the toolkit's stub library cannot).
///
/// Thread safety: a `cuda_driver` is immutable after loading except for its allocation-id
/// counter, which is atomic; every member function may be called from any thread.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#endif

#include "xlamem/error.hpp"

#if !defined(CUDA_VERSION) || CUDA_VERSION < 11020
#error "xlamem/cuda needs the cuda.h of CUDA 11.2 or newer (stream-ordered memory pools)"
#endif

namespace xlamem {

/// The driver entry points xlamem calls, as function pointers typed after this toolkit's
/// `cuda.h`. `cuda_driver::load` fills it from `libcuda.so.1`; tests and interposers may fill
/// one themselves and pass it to `cuda_driver::from_api`. A null member means "the driver does
/// not have this entry point".
struct cuda_driver_api {
  // Initialisation, errors, devices, contexts: required.
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  // Plain device memory and copies.
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;
  decltype(&::cuMemGetAddressRange) mem_get_address_range = nullptr;
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;
  decltype(&::cuMemsetD8) memset_d8 = nullptr;
  decltype(&::cuPointerGetAttribute) pointer_get_attribute = nullptr;
  // Pinned host memory.
  decltype(&::cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&::cuMemFreeHost) mem_free_host = nullptr;
  decltype(&::cuMemHostRegister) mem_host_register = nullptr;
  decltype(&::cuMemHostUnregister) mem_host_unregister = nullptr;
  decltype(&::cuMemHostGetDevicePointer) mem_host_get_device_pointer = nullptr;
  // Virtual memory management.
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemAddressReserve) mem_address_reserve = nullptr;
  decltype(&::cuMemAddressFree) mem_address_free = nullptr;
  decltype(&::cuMemMap) mem_map = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;
  decltype(&::cuMemSetAccess) mem_set_access = nullptr;
  decltype(&::cuMemGetAllocationGranularity) mem_get_allocation_granularity = nullptr;
  // Streams and stream-ordered pools.
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuMemPoolCreate) mem_pool_create = nullptr;
  decltype(&::cuMemPoolDestroy) mem_pool_destroy = nullptr;
  decltype(&::cuMemPoolSetAttribute) mem_pool_set_attribute = nullptr;
  decltype(&::cuMemPoolGetAttribute) mem_pool_get_attribute = nullptr;
  decltype(&::cuMemPoolTrimTo) mem_pool_trim_to = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) mem_alloc_from_pool_async = nullptr;
  decltype(&::cuMemFreeAsync) mem_free_async = nullptr;
};

namespace detail {

// The ABI symbol behind a driver API name: the macro argument is expanded first, so
// XLAMEM_DETAIL_CU_SYMBOL(cuMemAlloc) is "cuMemAlloc_v2" with this toolkit's cuda.h.
#define XLAMEM_DETAIL_CU_STRINGIFY(name) #name
#define XLAMEM_DETAIL_CU_SYMBOL(name) XLAMEM_DETAIL_CU_STRINGIFY(name)

// Every entry point: X(member, API name, required). Required ones must all resolve for a load
// to succeed; the others are checked by the resource that needs them.
#define XLAMEM_DETAIL_CU_ENTRY_POINTS(X)                                  \
  X(init, cuInit, true)                                                   \
  X(driver_get_version, cuDriverGetVersion, true)                         \
  X(get_error_name, cuGetErrorName, false)                                \
  X(get_error_string, cuGetErrorString, false)                            \
  X(device_get_count, cuDeviceGetCount, true)                             \
  X(device_get, cuDeviceGet, true)                                        \
  X(device_get_name, cuDeviceGetName, true)                               \
  X(device_get_attribute, cuDeviceGetAttribute, true)                     \
  X(device_total_mem, cuDeviceTotalMem, true)                             \
  X(primary_ctx_retain, cuDevicePrimaryCtxRetain, true)                   \
  X(primary_ctx_release, cuDevicePrimaryCtxRelease, true)                 \
  X(ctx_get_current, cuCtxGetCurrent, true)                               \
  X(ctx_set_current, cuCtxSetCurrent, true)                               \
  X(ctx_synchronize, cuCtxSynchronize, true)                              \
  X(mem_alloc, cuMemAlloc, false)                                         \
  X(mem_free, cuMemFree, false)                                           \
  X(mem_get_info, cuMemGetInfo, false)                                    \
  X(mem_get_address_range, cuMemGetAddressRange, false)                   \
  X(memcpy_htod, cuMemcpyHtoD, false)                                     \
  X(memcpy_dtoh, cuMemcpyDtoH, false)                                     \
  X(memset_d8, cuMemsetD8, false)                                         \
  X(pointer_get_attribute, cuPointerGetAttribute, false)                  \
  X(mem_host_alloc, cuMemHostAlloc, false)                                \
  X(mem_free_host, cuMemFreeHost, false)                                  \
  X(mem_host_register, cuMemHostRegister, false)                          \
  X(mem_host_unregister, cuMemHostUnregister, false)                      \
  X(mem_host_get_device_pointer, cuMemHostGetDevicePointer, false)        \
  X(mem_create, cuMemCreate, false)                                       \
  X(mem_release, cuMemRelease, false)                                     \
  X(mem_address_reserve, cuMemAddressReserve, false)                      \
  X(mem_address_free, cuMemAddressFree, false)                            \
  X(mem_map, cuMemMap, false)                                             \
  X(mem_unmap, cuMemUnmap, false)                                         \
  X(mem_set_access, cuMemSetAccess, false)                                \
  X(mem_get_allocation_granularity, cuMemGetAllocationGranularity, false) \
  X(stream_create, cuStreamCreate, false)                                 \
  X(stream_destroy, cuStreamDestroy, false)                               \
  X(stream_synchronize, cuStreamSynchronize, false)                       \
  X(mem_pool_create, cuMemPoolCreate, false)                              \
  X(mem_pool_destroy, cuMemPoolDestroy, false)                            \
  X(mem_pool_set_attribute, cuMemPoolSetAttribute, false)                 \
  X(mem_pool_get_attribute, cuMemPoolGetAttribute, false)                 \
  X(mem_pool_trim_to, cuMemPoolTrimTo, false)                             \
  X(mem_alloc_from_pool_async, cuMemAllocFromPoolAsync, false)            \
  X(mem_free_async, cuMemFreeAsync, false)

/// The name of a `CUresult` from a table, for when the driver cannot say (stub library, a
/// driver older than the code, or a hand-filled api table without `cuGetErrorName`).
[[nodiscard]] constexpr const char* cu_result_name(CUresult r) noexcept {
  switch (r) {
    case CUDA_SUCCESS:
      return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED:
      return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE:
      return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
      return "CUDA_ERROR_DEVICE_NOT_LICENSED";
    case CUDA_ERROR_INVALID_CONTEXT:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    case CUDA_ERROR_INVALID_HANDLE:
      return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_ILLEGAL_STATE:
      return "CUDA_ERROR_ILLEGAL_STATE";
    case CUDA_ERROR_NOT_FOUND:
      return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY:
      return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
      return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case CUDA_ERROR_NOT_PERMITTED:
      return "CUDA_ERROR_NOT_PERMITTED";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return "CUDA_ERROR_SYSTEM_NOT_READY";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case CUDA_ERROR_UNKNOWN:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return nullptr;
  }
}

/// A short description of a `CUresult`, for the same cases as `cu_result_name`.
[[nodiscard]] constexpr const char* cu_result_description(CUresult r) noexcept {
  switch (r) {
    case CUDA_SUCCESS:
      return "no error";
    case CUDA_ERROR_INVALID_VALUE:
      return "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "initialization error";
    case CUDA_ERROR_DEINITIALIZED:
      return "driver shutting down";
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA driver is a stub library (the toolkit's stubs/libcuda.so, not a real driver)";
    case CUDA_ERROR_NO_DEVICE:
      return "no CUDA-capable device is detected";
    case CUDA_ERROR_INVALID_DEVICE:
      return "invalid device ordinal";
    case CUDA_ERROR_INVALID_CONTEXT:
      return "invalid device context";
    case CUDA_ERROR_INVALID_HANDLE:
      return "invalid resource handle";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "operation not supported";
    case CUDA_ERROR_NOT_PERMITTED:
      return "operation not permitted";
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
      return "device doesn't have valid Grid license";
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return "context is destroyed";
    case CUDA_ERROR_ILLEGAL_STATE:
      return "the operation cannot be performed in the present state";
    case CUDA_ERROR_NOT_FOUND:
      return "named symbol not found";
    case CUDA_ERROR_NOT_READY:
      return "device not ready";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return "an illegal memory access was encountered";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "unspecified launch failure";
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
      return "part or all of the requested memory range is already mapped";
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return "pointer does not correspond to a registered memory region";
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return "system not yet initialized";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "system has unsupported display driver / cuda driver combination";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "forward compatibility was attempted on non supported HW";
    case CUDA_ERROR_UNKNOWN:
      return "unknown error";
    default:
      return nullptr;
  }
}

// dlsym returns an object pointer; copying its bits into a function pointer is how POSIX
// expects it to be used, and memcpy keeps -Wpedantic quiet about the conversion.
template <class Fn>
void assign_symbol(Fn& slot, void* symbol) noexcept {
  static_assert(sizeof(Fn) == sizeof(void*), "function and object pointers differ in size");
  std::memcpy(&slot, &symbol, sizeof slot);
}

}  // namespace detail

/// The `errc` for a `CUresult`: no driver / device → `unavailable`, out of memory →
/// `out_of_memory`, bad arguments → `invalid_argument`, and so on; anything unrecognised (a
/// faulted device, a sticky launch error) is `unavailable` too, since the device cannot serve.
[[nodiscard]] constexpr errc cuda_errc(CUresult r) noexcept {
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return errc::out_of_memory;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_HANDLE:
      return errc::invalid_argument;
    case CUDA_ERROR_NOT_SUPPORTED:
      return errc::unimplemented;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
      return errc::already_exists;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    case CUDA_ERROR_NOT_FOUND:
      return errc::not_found;
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_ILLEGAL_STATE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return errc::failed_precondition;
    default:
      return errc::unavailable;
  }
}

/// What `cuda_driver::device_properties` reports about one device.
struct cuda_device_properties {
  int ordinal = -1;                        ///< the device ordinal asked for
  std::string name;                        ///< e.g. "NVIDIA H200"
  std::size_t total_memory = 0;            ///< bytes, from cuDeviceTotalMem
  int compute_capability_major = 0;        ///< e.g. 9
  int compute_capability_minor = 0;        ///< e.g. 0
  bool unified_addressing = false;         ///< host and device share one address space
  bool virtual_memory_management = false;  ///< cuMemCreate & co. are supported
  bool memory_pools = false;               ///< cuMemAllocAsync & co. are supported
};

/// A loaded CUDA driver: the entry-point table, where it came from, and error formatting.
/// Create with `load()` (the real driver) or `from_api()` (a table you filled); share the
/// returned pointer with every resource that uses it.
class cuda_driver {
 public:
  /// The library `load()` opens by default: the driver's ABI-versioned soname.
  static constexpr const char* default_library = "libcuda.so.1";

  /// Opens `library` with dlopen, resolves the entry points and calls `cuInit(0)`.
  /// @returns `unavailable` when the library cannot be opened (no NVIDIA driver installed),
  /// lacks a required entry point, or `cuInit` fails (no device, stub library, driver too
  /// old); the message names the library, the call and the `CUresult`.
  [[nodiscard]] static result<std::shared_ptr<const cuda_driver>> load(
      const char* library = default_library) {
#if defined(__unix__) || defined(__APPLE__)
    const std::string lib = library != nullptr ? library : default_library;
    ::dlerror();  // clear a stale message
    void* handle = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return error(errc::unavailable,
                   "cuda_driver::load: cannot open the CUDA driver library \"" + lib + "\" (" +
                       (why != nullptr ? why : "unknown dlopen error") +
                       "); is the NVIDIA driver installed? No CUDA device can be used");
    }
    cuda_driver_api api;
    std::string missing;
#define XLAMEM_DETAIL_CU_RESOLVE(member, name, required)        \
  {                                                             \
    void* sym = ::dlsym(handle, XLAMEM_DETAIL_CU_SYMBOL(name)); \
    detail::assign_symbol(api.member, sym);                     \
    if (sym == nullptr && (required)) {                         \
      missing += missing.empty() ? "" : ", ";                   \
      missing += XLAMEM_DETAIL_CU_SYMBOL(name);                 \
    }                                                           \
  }
    XLAMEM_DETAIL_CU_ENTRY_POINTS(XLAMEM_DETAIL_CU_RESOLVE)
#undef XLAMEM_DETAIL_CU_RESOLVE
    if (!missing.empty()) {
      ::dlclose(handle);
      return error(errc::unavailable, "cuda_driver::load: \"" + lib +
                                          "\" lacks required driver entry points: " + missing +
                                          " (driver too old, or not a CUDA driver)");
    }
    // From here on the library stays loaded for the life of the process: the driver does not
    // support being unloaded once cuInit ran, and resources may outlive this scope.
    return initialize(api, lib);
#else
    return error(errc::unavailable, std::string("cuda_driver::load: cannot open \"") +
                                        (library != nullptr ? library : default_library) +
                                        "\": dynamic loading is not supported on this platform");
#endif
  }

  /// A driver over a table the caller filled (tests, interposers, tracing shims). Checks that
  /// the required entry points are present and calls `api.init(0)`.
  /// @param source what to call this driver in messages.
  [[nodiscard]] static result<std::shared_ptr<const cuda_driver>> from_api(
      const cuda_driver_api& api, std::string source = "user-supplied cuda_driver_api") {
    std::string missing;
#define XLAMEM_DETAIL_CU_CHECK(member, name, required) \
  if (api.member == nullptr && (required)) {           \
    missing += missing.empty() ? "" : ", ";            \
    missing += #name;                                  \
  }
    XLAMEM_DETAIL_CU_ENTRY_POINTS(XLAMEM_DETAIL_CU_CHECK)
#undef XLAMEM_DETAIL_CU_CHECK
    if (!missing.empty()) {
      return error(errc::invalid_argument,
                   "cuda_driver::from_api: " + source + " lacks required entry points: " + missing);
    }
    return initialize(api, std::move(source));
  }

  cuda_driver(const cuda_driver&) = delete;
  cuda_driver& operator=(const cuda_driver&) = delete;
  ~cuda_driver() = default;

  /// The entry points. Members documented as optional may be null.
  [[nodiscard]] const cuda_driver_api& api() const noexcept { return api_; }
  /// The library path (or the `source` given to `from_api`).
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// `cuDriverGetVersion`: 1000 × major + 10 × minor, e.g. 13000 for CUDA 13.0.
  [[nodiscard]] int version() const noexcept { return version_; }

  /// The `CUresult`'s name, e.g. "CUDA_ERROR_OUT_OF_MEMORY" (asked of the driver first).
  [[nodiscard]] std::string error_name(CUresult r) const {
    const char* s = nullptr;
    if (api_.get_error_name != nullptr && api_.get_error_name(r, &s) == CUDA_SUCCESS &&
        s != nullptr) {
      return s;
    }
    if (const char* n = detail::cu_result_name(r)) return n;
    return "CUresult " + std::to_string(static_cast<int>(r));
  }

  /// The `CUresult`'s description, e.g. "out of memory" (asked of the driver first).
  [[nodiscard]] std::string error_description(CUresult r) const {
    const char* s = nullptr;
    if (api_.get_error_string != nullptr && api_.get_error_string(r, &s) == CUDA_SUCCESS &&
        s != nullptr) {
      return s;
    }
    if (const char* d = detail::cu_result_description(r)) return d;
    return "no description available";
  }

  /// The error for `call` having returned `r`:
  /// "cuMemAlloc(1024 bytes) on device 0: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  [[nodiscard]] error make_error(CUresult r, std::string_view call) const {
    std::string m(call);
    m += ": ";
    m += error_name(r);
    m += " (";
    m += error_description(r);
    m += ')';
    return error(cuda_errc(r), std::move(m));
  }

  /// Success for `CUDA_SUCCESS`, else `make_error(r, call)`.
  [[nodiscard]] result<void> check(CUresult r, std::string_view call) const {
    if (r == CUDA_SUCCESS) return {};
    return make_error(r, call);
  }

  /// Success when the optional entry point `fn` resolved, else `unavailable` naming it.
  template <class Fn>
  [[nodiscard]] result<void> require(Fn fn, std::string_view name) const {
    if (fn != nullptr) return {};
    return missing_entry_point(name);
  }

  /// The `unavailable` error for an entry point the driver lacks.
  [[nodiscard]] error missing_entry_point(std::string_view name) const {
    return error(errc::unavailable, std::string(name) + " is not available in the CUDA driver " +
                                        source_ + " (version " + std::to_string(version_) +
                                        "): driver too old for this resource");
  }

  /// The number of devices; 0 is a valid answer.
  [[nodiscard]] result<int> device_count() const {
    int n = 0;
    if (auto r = check(api_.device_get_count(&n), "cuDeviceGetCount"); !r) return r.error();
    return n;
  }

  /// The device handle of `ordinal`.
  /// @returns `unavailable` when there is no device at all, `out_of_range` for an ordinal
  /// outside `[0, device_count())`.
  [[nodiscard]] result<CUdevice> device(int ordinal) const {
    auto n = device_count();
    if (!n) return n.error();
    if (*n == 0) {
      return error(errc::unavailable,
                   "no CUDA device: cuDeviceGetCount reports 0 devices (driver " + source_ + ")");
    }
    if (ordinal < 0 || ordinal >= *n) {
      return error(errc::out_of_range, "CUDA device ordinal " + std::to_string(ordinal) +
                                           " is out of range: " + std::to_string(*n) +
                                           " device(s) present");
    }
    CUdevice d{};
    if (auto r =
            check(api_.device_get(&d, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
        !r) {
      return r.error();
    }
    return d;
  }

  /// Name, memory size and capabilities of device `ordinal`.
  [[nodiscard]] result<cuda_device_properties> device_properties(int ordinal) const {
    auto dev = device(ordinal);
    if (!dev) return dev.error();
    cuda_device_properties p;
    p.ordinal = ordinal;
    char name[256] = {};
    if (auto r = check(api_.device_get_name(name, static_cast<int>(sizeof name) - 1, *dev),
                       "cuDeviceGetName");
        !r) {
      return r.error();
    }
    p.name = name;
    std::size_t total = 0;
    if (auto r = check(api_.device_total_mem(&total, *dev), "cuDeviceTotalMem"); !r) {
      return r.error();
    }
    p.total_memory = total;
    auto attribute = [&](CUdevice_attribute a, const char* what) -> result<int> {
      int v = 0;
      if (auto r = check(api_.device_get_attribute(&v, a, *dev),
                         std::string("cuDeviceGetAttribute(") + what + ")");
          !r) {
        return r.error();
      }
      return v;
    };
    struct query {
      CUdevice_attribute attribute;
      const char* name;
      int* out;
    };
    int unified = 0;
    int vmm = 0;
    int pools = 0;
    const query queries[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
         &p.compute_capability_major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR",
         &p.compute_capability_minor},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "UNIFIED_ADDRESSING", &unified},
        {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
         "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED", &vmm},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "MEMORY_POOLS_SUPPORTED", &pools},
    };
    for (const query& q : queries) {
      auto v = attribute(q.attribute, q.name);
      if (!v) return v.error();
      *q.out = *v;
    }
    p.unified_addressing = unified != 0;
    p.virtual_memory_management = vmm != 0;
    p.memory_pools = pools != 0;
    return p;
  }

  /// A fresh allocation id, unique among the allocations made through this driver object
  /// (one per process when the driver is shared, as intended); never 0.
  [[nodiscard]] std::uint64_t next_allocation_id() const noexcept {
    return next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  }

 private:
  cuda_driver(const cuda_driver_api& api, std::string source, int version)
      : api_(api), source_(std::move(source)), version_(version) {}

  static result<std::shared_ptr<const cuda_driver>> initialize(const cuda_driver_api& api,
                                                               std::string source) {
    // Built before cuInit so that its failure is described by the same formatter.
    std::shared_ptr<cuda_driver> d(new cuda_driver(api, std::move(source), 0));
    if (auto r = d->check(api.init(0), "cuInit(0) with driver " + d->source_); !r) {
      return error(errc::unavailable, r.error().message() + "; no CUDA device can be used");
    }
    int v = 0;
    if (auto r = d->check(api.driver_get_version(&v), "cuDriverGetVersion"); !r) {
      return error(errc::unavailable, r.error().message());
    }
    d->version_ = v;
    return std::shared_ptr<const cuda_driver>(std::move(d));
  }

  cuda_driver_api api_;
  std::string source_;
  int version_;
  mutable std::atomic<std::uint64_t> next_id_{0};
};

}  // namespace xlamem

#undef XLAMEM_DETAIL_CU_ENTRY_POINTS
#undef XLAMEM_DETAIL_CU_SYMBOL
#undef XLAMEM_DETAIL_CU_STRINGIFY
