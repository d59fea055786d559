// SPDX-License-Identifier: Apache-2.0
// Built with -DNDEBUG (test/meson.build); the same body as without_ndebug.cpp.
#ifndef NDEBUG
#error "with_ndebug.cpp must be built with NDEBUG defined"
#endif
#include "shared_pool.hpp"

#define XLAMEM_ABI_TU with_ndebug
#include "tu_body.inc"
