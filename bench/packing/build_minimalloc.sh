#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds MiniMalloc (github.com/google/minimalloc) from local git snapshots, for the side-by-side
# runner `minimalloc_side_by_side.py`. Nothing is downloaded and nothing lands in this repository.
#
# Get the snapshots first (any git clone works; in this project's sessions the `fetch` tool
# places bare mirrors under /work/.mirror/):
#   git clone --bare https://github.com/google/minimalloc   /path/minimalloc.git
#   git clone --bare https://github.com/abseil/abseil-cpp   /path/abseil-cpp.git
# Usage:
#   bench/packing/build_minimalloc.sh MINIMALLOC_GIT_DIR ABSEIL_GIT_DIR [BUILD_DIR]
# or set MINIMALLOC_GIT, ABSEIL_GIT (and BUILD_DIR). Default BUILD_DIR: /tmp/minimalloc-build.
# Prints the path of the built `minimalloc` binary on its last line.
#
# MiniMalloc's own CMakeLists also needs googletest (a submodule) for its tests; the binary needs
# only abseil, so this script writes a small CMakeLists of its own that compiles MiniMalloc's
# sources unchanged, in Release mode (-O3 -DNDEBUG, CMake's default for Release).
set -euo pipefail
mm_git="${1:-${MINIMALLOC_GIT:-}}"
absl_git="${2:-${ABSEIL_GIT:-}}"
build="${3:-${BUILD_DIR:-/tmp/minimalloc-build}}"
if [[ -z "$mm_git" || -z "$absl_git" ]]; then
  echo "usage: $0 MINIMALLOC_GIT_DIR ABSEIL_GIT_DIR [BUILD_DIR]" >&2
  exit 2
fi
for g in "$mm_git" "$absl_git"; do
  git --git-dir="$g" rev-parse --verify HEAD >/dev/null 2>&1 || { echo "$0: not a git snapshot: $g" >&2; exit 2; }
done
src="$build/src"
if [[ ! -f "$src/.done" ]]; then
  rm -rf "$src"
  mkdir -p "$src/minimalloc" "$src/abseil-cpp"
  git --git-dir="$mm_git" archive HEAD | tar -x -C "$src/minimalloc"
  git --git-dir="$absl_git" archive HEAD | tar -x -C "$src/abseil-cpp"
  {
    echo "minimalloc $(git --git-dir="$mm_git" rev-parse HEAD)"
    echo "abseil-cpp $(git --git-dir="$absl_git" rev-parse HEAD)"
  } > "$src/VERSIONS"
  cat > "$src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(minimalloc_side_by_side LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(ABSL_PROPAGATE_CXX_STD ON)
add_subdirectory(abseil-cpp EXCLUDE_FROM_ALL)
set(mm ${CMAKE_CURRENT_SOURCE_DIR}/minimalloc/src)
add_executable(minimalloc ${mm}/main.cc ${mm}/converter.cc ${mm}/minimalloc.cc ${mm}/solver.cc
               ${mm}/sweeper.cc ${mm}/validator.cc)
target_include_directories(minimalloc PRIVATE ${mm})
target_link_libraries(minimalloc PRIVATE absl::flags absl::flags_parse absl::statusor absl::log
                      absl::log_initialize absl::time absl::strings)
CMAKE
  touch "$src/.done"
fi
cmake -S "$src" -B "$build/out" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/out" --target minimalloc -j "${JOBS:-1}" >&2
cat "$src/VERSIONS" >&2
echo "$build/out/minimalloc"
