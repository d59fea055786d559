// SPDX-License-Identifier: Apache-2.0
// The one translation unit that holds doctest's main; suites live in the *_test.cpp files.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
