// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/version.hpp: the macros, the constants and the string agree with each
// other and with the version in the project's meson.build.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "xlamem/version.hpp"

TEST_SUITE("core") {
  using namespace xlamem;

  TEST_CASE("version") {
    CHECK(version.major == XLAMEM_VERSION_MAJOR);
    CHECK(std::string(version_string) == "0.1.0");
  }
}

TEST_SUITE("core/version") {
  using namespace xlamem;

  TEST_CASE("the constants equal the macros, and the string is major.minor.patch") {
    static_assert(version.major == XLAMEM_VERSION_MAJOR);
    static_assert(version.minor == XLAMEM_VERSION_MINOR);
    static_assert(version.patch == XLAMEM_VERSION_PATCH);
    CHECK(std::strcmp(version_string, XLAMEM_VERSION_STRING) == 0);
    const std::string joined = std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
                               std::to_string(version.patch);
    CHECK(joined == version_string);
  }

  TEST_CASE("the headers' version is the project's (meson.build's version:)") {
    std::ifstream in(std::string(XLAMEM_TEST_SOURCE_DIR) + "/../meson.build");
    REQUIRE(in.good());
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    const std::string key = "version: '";
    const auto at = text.find(key);  // the first version: is project()'s
    REQUIRE(at != std::string::npos);
    const auto end = text.find('\'', at + key.size());
    REQUIRE(end != std::string::npos);
    CHECK(text.substr(at + key.size(), end - at - key.size()) == version_string);
  }
}
