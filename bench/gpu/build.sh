#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared by run.sh and prepare.sh (source it): builds the three GPU programs of xlamem/cuda
# straight with the compilers, no meson needed, so a bare GPU machine can build them:
#   xlamem_cuda_tests  doctest; CPU suites by default, GPU suites with --gpu (exit 77: no GPU)
#   cuda_bench         Google Benchmark; skips with exit 0 without a GPU
#   host_memory_pool   the example, built with nvcc (kernels)
# Usage: xlamem_gpu_build ROOT OUTDIR DEPS [extra link flags...]
#   ROOT: the repository; OUTDIR: where the binaries go; DEPS: a folder with include/ and lib/
#   holding doctest and Google Benchmark when the system lacks them (may not exist).
# Environment: CXX (default g++), NVCC (default: nvcc on PATH or /usr/local/cuda/bin/nvcc).
# Prints one line per program; returns non-zero if any failed (the log says why).

xlamem_find_nvcc() {
  if [ -n "${NVCC:-}" ]; then echo "$NVCC"; return; fi
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    [ -x "$c" ] && { echo "$c"; return; }
  done
}

xlamem_find_cuda_include() {
  local nvcc_path
  nvcc_path=$(xlamem_find_nvcc)
  for d in "${CUDA_HOME:-/nonexistent}/include" "${nvcc_path:+$(dirname "$(dirname "$nvcc_path")")/include}" \
           /usr/local/cuda/include /usr/include; do
    [ -n "$d" ] && [ -f "$d/cuda.h" ] && { echo "$d"; return; }
  done
}

xlamem_gpu_build() {
  local root=$1 out=$2 deps=$3
  shift 3
  local extra=("$@")
  local cxx=${CXX:-g++}
  local nvcc_path cuda_inc
  nvcc_path=$(xlamem_find_nvcc)
  cuda_inc=$(xlamem_find_cuda_include)
  mkdir -p "$out"
  if [ -z "$cuda_inc" ]; then
    echo "build: no cuda.h found (set CUDA_HOME)"
    return 1
  fi
  local inc=(-I "$root/include" -I "$root/test/cuda" -isystem "$cuda_inc")
  local lib=()
  if [ -d "$deps/include" ]; then inc+=(-isystem "$deps/include"); fi
  if [ -d "$deps/lib" ]; then lib+=(-L "$deps/lib" "-Wl,-rpath,$deps/lib"); fi
  local warn=(-std=c++20 -Wall -Wextra)
  local status=0 pids=() names=()

  "$cxx" "${warn[@]}" -O1 -g "${inc[@]}" "$root/test/cuda/main.cpp" "$root"/test/cuda/*_test.cpp "$root"/test/cuda/detail/*_test.cpp \
    -o "$out/xlamem_cuda_tests" -pthread -ldl "${extra[@]}" >"$out/build-tests.log" 2>&1 &
  pids+=($!); names+=(xlamem_cuda_tests)
  "$cxx" "${warn[@]}" -O2 -DNDEBUG "${inc[@]}" "$root/bench/cuda/cuda_bench.cpp" \
    -o "$out/cuda_bench" "${lib[@]}" -lbenchmark -pthread -ldl "${extra[@]}" >"$out/build-bench.log" 2>&1 &
  pids+=($!); names+=(cuda_bench)
  if [ -n "$nvcc_path" ]; then
    "$nvcc_path" -std=c++20 -O2 -I "$root/include" \
      '--generate-code=arch=compute_75,code=[compute_75,sm_75]' '--generate-code=arch=compute_90,code=sm_90' \
      -o "$out/host_memory_pool" "$root/examples/cuda/host_memory_pool.cu" -ldl \
      >"$out/build-example.log" 2>&1 &
    pids+=($!); names+=(host_memory_pool)
  else
    echo "no nvcc found" >"$out/build-example.log"
    echo "build: host_memory_pool FAILED (no nvcc)"
    status=1
  fi
  local i
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      echo "build: ${names[$i]} ok"
    else
      echo "build: ${names[$i]} FAILED (see $out/build-*.log)"
      status=1
    fi
  done
  return $status
}
