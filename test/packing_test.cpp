// SPDX-License-Identifier: Apache-2.0
// Tests for the packing area (filled by its issue).
#include <doctest/doctest.h>
