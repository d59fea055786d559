// SPDX-License-Identifier: Apache-2.0
// Built with -UNDEBUG (test/meson.build); the same body as with_ndebug.cpp.
#ifdef NDEBUG
#error "without_ndebug.cpp must be built without NDEBUG"
#endif
#include "shared_pool.hpp"

#define XLAMEM_ABI_TU without_ndebug
#include "tu_body.inc"
