// SPDX-License-Identifier: Apache-2.0
// doctest main of xlamem_cuda_tests. Without arguments it runs the CPU suites (everything but
// "cuda/gpu*"). With --gpu it runs only the GPU suites, after checking that a driver and a
// device are there; if not, it prints the reason and exits 77, which meson reports as SKIP.
// --fake-gpu runs the GPU suites over the fake driver: a smoke test of the suites themselves.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "fake_driver.hpp"
#include "xlamem/cuda/driver.hpp"

int main(int argc, char** argv) {
  bool gpu = false;
  bool fake = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gpu") == 0) {
      gpu = true;
    } else if (std::strcmp(argv[i], "--fake-gpu") == 0) {
      gpu = fake = true;
      xlamem::test::fake_gpu_mode() = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (gpu && !fake) {
    auto driver = xlamem::cuda_driver::load();
    if (!driver) {
      std::printf("SKIP: GPU tests: %s\n", driver.error().to_string().c_str());
      return 77;
    }
    auto count = (*driver)->device_count();
    if (!count || *count == 0) {
      std::printf("SKIP: GPU tests: %s\n",
                  count ? "the CUDA driver reports no device" : count.error().to_string().c_str());
      return 77;
    }
    auto props = (*driver)->device_properties(0);
    std::printf("GPU tests on device 0 of %d: %s (driver %d)\n", *count,
                props ? props->name.c_str() : props.error().to_string().c_str(),
                (*driver)->version());
  }
  doctest::Context context;
  context.applyCommandLine(static_cast<int>(args.size()), args.data());
  if (gpu) {
    context.addFilter("test-suite", "cuda/gpu*");
  } else {
    context.addFilter("test-suite-exclude", "cuda/gpu*");
  }
  return context.run();
}
