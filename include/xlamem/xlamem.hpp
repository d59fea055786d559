// SPDX-License-Identifier: Apache-2.0
/// @file
/// Umbrella header for the portable core. It never includes `cuda/` or `llvm/` headers.
#pragma once

#include "xlamem/align.hpp"
#include "xlamem/config.hpp"
#include "xlamem/error.hpp"
#include "xlamem/version.hpp"
