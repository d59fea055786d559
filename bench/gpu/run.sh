#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One go on a machine with an NVIDIA GPU: builds and runs every GPU test and the GPU benchmark
# of xlamem/cuda, and writes the results to $OUT (the device tool's output folder) or, when
# $OUT is unset, to build-gpu/results/. Expected runtime on the H200 machine: a minute or two; each
# step has a timeout so the whole script ends within about 7.5 minutes even if something hangs.
#
# Files written (8, the most the device tool brings back):
#   gpu-results.md   the summary: GPU, driver, per-step verdicts, the benchmark table with ratios
#                    and the acceptance lines (paste the table into docs/benchmarks.md, "CUDA")
#   env.txt          nvidia-smi, compilers, CPU count
#   build.log        compiler output
#   tests-cpu.log    xlamem_cuda_tests (CPU suites, fake driver)
#   tests-gpu.log    xlamem_cuda_tests --gpu (GPU suites; exit 77 = no GPU, reported as SKIP)
#   example.log      examples/cuda/host_memory_pool
#   bench.log        cuda_bench console output
#   cuda_bench.json  cuda_bench JSON (input of bench/gpu/table.py)
#
# It needs g++ (C++20), nvcc and cuda.h, python3, doctest and Google Benchmark. Where the GPU
# machine lacks doctest or Google Benchmark, run bench/gpu/prepare.sh beforehand on the
# development machine and carry build-gpu/ (it also holds prebuilt binaries, used for any
# program that fails to build here). Exit code: 0 when every step passed, 1 otherwise.
#
# Device session: run(command="bench/gpu/run.sh", carry=["build-gpu"], timeout_s=480).
# XLAMEM_GPU_BUILD_TIMEOUT (seconds, default 150) lengthens the build step on slow machines.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${XLAMEM_GPU_DIR:-$root/build-gpu}
results=${OUT:-$dir/results}
mkdir -p "$results" "$dir"
# shellcheck source=bench/gpu/build.sh
. "$root/bench/gpu/build.sh"
begin=$(date +%s)
summary=$results/gpu-results.md

# --- environment ---------------------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "cpus: $(nproc)"
  echo "git: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo 'not a git checkout')"
  echo "--- nvidia-smi"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi failed"
  echo "--- compilers"
  ${CXX:-g++} --version 2>&1 | head -1
  nv=$(xlamem_find_nvcc)
  if [ -n "$nv" ]; then "$nv" --version 2>&1 | tail -2; else echo "nvcc: not found"; fi
  echo "cuda.h: $(xlamem_find_cuda_include)"
  echo "deps: $( [ -d "$dir/deps" ] && echo "$dir/deps (carried)" || echo 'system')"
} >"$results/env.txt" 2>&1
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu_name=${gpu_name:-unknown GPU}

# --- build -----------------------------------------------------------------------------------
bin=$dir/bin
rm -rf "$bin"
export -f xlamem_gpu_build xlamem_find_nvcc xlamem_find_cuda_include
timeout --kill-after=10 "${XLAMEM_GPU_BUILD_TIMEOUT:-150}" bash -c 'xlamem_gpu_build "$@"' _ "$root" "$bin" "$dir/deps" >"$results/build.log" 2>&1
build_rc=$?
for f in "$bin"/build-*.log; do
  [ -f "$f" ] && { echo "--- $(basename "$f")"; cat "$f"; } >>"$results/build.log"
done
if [ -d "$dir/deps/lib" ]; then export LD_LIBRARY_PATH="$dir/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
declare -A exe origin
for name in xlamem_cuda_tests cuda_bench host_memory_pool; do
  if [ -x "$bin/$name" ]; then
    exe[$name]=$bin/$name; origin[$name]="built here"
  elif [ -x "$dir/prebuilt/$name" ]; then
    exe[$name]=$dir/prebuilt/$name; origin[$name]="prebuilt (bench/gpu/prepare.sh), build failed here"
  else
    exe[$name]=""; origin[$name]="MISSING: build failed (see build.log)"
  fi
done

# --- run ---------------------------------------------------------------------------------------
declare -A rc secs
step() {  # NAME TIMEOUT LOG PROGRAM [ARGS...]
  local name=$1 limit=$2 log=$3 prog=$4
  shift 4
  local t0
  t0=$(date +%s)
  if [ -z "$prog" ]; then
    echo "not built" >"$log"
    rc[$name]=127
  else
    echo "== $name: $prog $*" | tee "$log"
    timeout --kill-after=10 "$limit" "$prog" "$@" >>"$log" 2>&1
    rc[$name]=$?
    # The example and the benchmark exit 0 when they skip for want of a GPU: count that as 77.
    if [ "${rc[$name]}" = 0 ] && grep -q ': skipped: ' "$log"; then rc[$name]=77; fi
  fi
  secs[$name]=$(( $(date +%s) - t0 ))
  echo "== $name: exit ${rc[$name]} after ${secs[$name]} s"
}
step tests-cpu 45 "$results/tests-cpu.log" "${exe[xlamem_cuda_tests]}"
step tests-gpu 90 "$results/tests-gpu.log" "${exe[xlamem_cuda_tests]}" --gpu -s --duration=true
step example 30 "$results/example.log" "${exe[host_memory_pool]}"
step bench 120 "$results/bench.log" "${exe[cuda_bench]}" --benchmark_min_time=0.1 \
  --benchmark_out="$results/cuda_bench.json" --benchmark_out_format=json

# --- summary -----------------------------------------------------------------------------------
verdict() {
  case ${rc[$1]} in
    0) echo PASS ;;
    77) echo "SKIP (no GPU)" ;;
    124|137) echo "FAIL (timeout)" ;;
    127) echo "FAIL (not built)" ;;
    *) echo "FAIL (exit ${rc[$1]})" ;;
  esac
}
{
  echo "# xlamem/cuda GPU run on ${gpu_name}"
  echo
  echo "bench/gpu/run.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - begin )) s in all; environment in env.txt."
  echo
  echo "| step | verdict | seconds | program |"
  echo "|---|---|---:|---|"
  echo "| build | $([ $build_rc = 0 ] && echo PASS || echo "FAIL (exit $build_rc)") | | g++ / nvcc |"
  echo "| GPU tests (xlamem_cuda_tests --gpu) | $(verdict tests-gpu) | ${secs[tests-gpu]} | ${origin[xlamem_cuda_tests]} |"
  echo "| CPU tests (xlamem_cuda_tests) | $(verdict tests-cpu) | ${secs[tests-cpu]} | ${origin[xlamem_cuda_tests]} |"
  echo "| example host_memory_pool | $(verdict example) | ${secs[example]} | ${origin[host_memory_pool]} |"
  echo "| benchmark cuda_bench | $(verdict bench) | ${secs[bench]} | ${origin[cuda_bench]} |"
  echo
  echo "GPU tests:"
  echo
  echo '```'
  grep -E '^(GPU tests|SKIP)|test cases:|assertions:|Status:' "$results/tests-gpu.log" | head -8
  grep -E 'ERROR|FATAL|MESSAGE: (device 0|VMM|pool usage)' "$results/tests-gpu.log" | head -40
  echo '```'
  echo
  echo "Example:"
  echo
  echo '```'
  tail -n 12 "$results/example.log"
  echo '```'
  echo
  if [ -s "$results/cuda_bench.json" ]; then
    python3 "$root/bench/gpu/table.py" "$results/cuda_bench.json" 2>&1
  else
    echo "No benchmark JSON was written; see bench.log."
  fi
} >"$summary"

cat "$summary"
status=0
for s in tests-gpu tests-cpu example bench; do [ "${rc[$s]}" = 0 ] || status=1; done
[ $build_rc = 0 ] || status=1
exit $status
