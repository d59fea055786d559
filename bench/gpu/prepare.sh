#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run this on the development machine (which has doctest-dev, libbenchmark-dev and the CUDA
# toolkit) before a GPU session. It fills build-gpu/ (ignored by git) with what a bare GPU
# machine may lack, so that bench/gpu/run.sh builds and runs there in one go:
#   build-gpu/deps/include/{doctest,benchmark}/   the headers
#   build-gpu/deps/lib/libbenchmark.so*           the Google Benchmark library
#   build-gpu/prebuilt/                           the three programs built here, the fallback
#                                                 when the GPU machine cannot build them
# Then, from the session: run(command="bench/gpu/run.sh", carry=["build-gpu"], timeout_s=420).
# XLAMEM_GPU_DIR overrides the folder (it must stay inside the repository to be carried).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${XLAMEM_GPU_DIR:-$root/build-gpu}
# shellcheck source=bench/gpu/build.sh
. "$root/bench/gpu/build.sh"

mkdir -p "$dir/deps/include" "$dir/deps/lib"
copy_header_dir() {  # NAME: copy /usr/include/NAME (or /usr/local/include/NAME)
  for base in /usr/include /usr/local/include; do
    if [ -d "$base/$1" ]; then
      rm -rf "${dir:?}/deps/include/$1"
      cp -r "$base/$1" "$dir/deps/include/$1"
      return 0
    fi
  done
  echo "prepare: $1 headers not found (Debian: apt-get install ${2})" >&2
  return 1
}
copy_header_dir doctest doctest-dev
copy_header_dir benchmark libbenchmark-dev
found_lib=0
for base in /usr/lib/x86_64-linux-gnu /usr/local/lib /usr/lib; do
  if ls "$base"/libbenchmark.so* >/dev/null 2>&1; then
    cp -P "$base"/libbenchmark.so* "$dir/deps/lib/"
    found_lib=1
    break
  fi
done
[ $found_lib = 1 ] || { echo "prepare: libbenchmark.so not found (apt-get install libbenchmark-dev)" >&2; exit 1; }

# Fallback binaries (run.sh puts deps/lib on LD_LIBRARY_PATH when it runs them).
rm -rf "$dir/prebuilt"
CXX=${CXX:-g++} xlamem_gpu_build "$root" "$dir/prebuilt" "$dir/deps"
du -sh "$dir"
echo "prepare: done; carry \"$(realpath --relative-to="$root" "$dir")\" to the GPU machine"
