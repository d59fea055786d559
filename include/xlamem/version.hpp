// SPDX-License-Identifier: Apache-2.0
/// @file
/// The library version, as macros for the preprocessor and as constants for code.
#pragma once

#define XLAMEM_VERSION_MAJOR 0
#define XLAMEM_VERSION_MINOR 1
#define XLAMEM_VERSION_PATCH 0
#define XLAMEM_VERSION_STRING "0.1.0"

namespace xlamem {

/// The version of the headers in use: major, minor and patch.
struct version_info {
  int major;
  int minor;
  int patch;
};

inline constexpr version_info version{XLAMEM_VERSION_MAJOR, XLAMEM_VERSION_MINOR,
                                      XLAMEM_VERSION_PATCH};
inline constexpr const char* version_string = XLAMEM_VERSION_STRING;

}  // namespace xlamem
