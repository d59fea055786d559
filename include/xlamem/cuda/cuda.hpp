// SPDX-License-Identifier: Apache-2.0
/// @file
/// Umbrella of the CUDA part: the run-time driver loader, contexts, the device, VMM,
/// stream-ordered and pinned host resources, RAII device allocations, and pools over them.
/// Only headers under xlamem/cuda/ include the CUDA toolkit's `cuda.h` (types and constants
/// only: nothing links against libcuda, it is opened with dlopen at run time).
#pragma once

#include "xlamem/cuda/allocation_log.hpp"
#include "xlamem/cuda/async_memory.hpp"
#include "xlamem/cuda/context.hpp"
#include "xlamem/cuda/device_allocation.hpp"
#include "xlamem/cuda/device_memory.hpp"
#include "xlamem/cuda/driver.hpp"
#include "xlamem/cuda/pinned_host_memory.hpp"
#include "xlamem/cuda/pinned_pool.hpp"
#include "xlamem/cuda/vmm_memory.hpp"
