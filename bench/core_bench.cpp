// SPDX-License-Identifier: Apache-2.0
// Core vocabulary costs: a result<T> round trip against a plain value and std::optional, so a
// pass that returns result<T> in a hot loop knows what it pays.
#include <benchmark/benchmark.h>

#include <optional>

#include "xlamem/align.hpp"
#include "xlamem/error.hpp"

namespace {

xlamem::result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return xlamem::error(xlamem::errc::parse_error, "not a digit");
  return c - '0';
}

std::optional<int> parse_digit_optional(char c) {
  if (c < '0' || c > '9') return std::nullopt;
  return c - '0';
}

void bm_result_value(benchmark::State& state) {
  char c = '7';
  for (auto _ : state) {
    benchmark::DoNotOptimize(c);
    auto r = parse_digit(c);
    benchmark::DoNotOptimize(*r);
  }
}
BENCHMARK(bm_result_value);

void bm_optional_value(benchmark::State& state) {
  char c = '7';
  for (auto _ : state) {
    benchmark::DoNotOptimize(c);
    auto r = parse_digit_optional(c);
    benchmark::DoNotOptimize(*r);
  }
}
BENCHMARK(bm_optional_value);

void bm_align_up(benchmark::State& state) {
  std::uint64_t x = 12345;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(xlamem::align_up(x, 256));
  }
}
BENCHMARK(bm_align_up);

}  // namespace

BENCHMARK_MAIN();
