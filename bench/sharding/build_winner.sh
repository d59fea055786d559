#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the IOPDDL contest winner's solver (ti2-group/iopddl_experiments, MIT licence, its
# `solver/` folder with the bundled Toulbar2) from a local git snapshot, for the side-by-side
# runner `side_by_side.py`. Nothing is downloaded and nothing lands in this repository: the sources
# are extracted into BUILD_DIR/src and built in BUILD_DIR/build, both outside the checkout.
#
# Get the snapshot first (any clone works; in this project's sessions the `fetch` tool places a
# bare mirror at /work/.mirror/ti2-group+iopddl_experiments/repo, the default):
#   git clone --bare https://github.com/ti2-group/iopddl_experiments /path/iopddl_experiments.git
# Usage:
#   bench/sharding/build_winner.sh [WINNER_GIT_DIR] [BUILD_DIR]
# or set WINNER_GIT, WINNER_COMMIT (default 3a300c7, the published release), BUILD_DIR (default
# /tmp/iopddl-winner) and JOBS (parallel compile jobs, default 1: the machine has 2 cores).
# Prints the path of the built `iopddl` binary on its last line; exit 2 on a usage or setup error.
#
# The solver's CMakeLists links statically (-static, OpenMP, zlib), so the Debian packages are
# cmake, make, g++ (libgomp.a comes with it), libc6-dev (libc.a) and zlib1g-dev (libz.a); with
# -DWCSPFORMATONLY and Boost off, Toulbar2 needs neither Boost nor GMP here. When one is missing
# and we run as root, they are installed with apt-get; otherwise the script names them and stops.
# The build runs under `nice -n 10`. The snapshot's precompiled binary (solver/bin/) is never used.
set -euo pipefail
git_dir="${1:-${WINNER_GIT:-/work/.mirror/ti2-group+iopddl_experiments/repo}}"
build="${2:-${BUILD_DIR:-/tmp/iopddl-winner}}"
commit_want="${WINNER_COMMIT:-3a300c7}"
jobs="${JOBS:-1}"

packages=(cmake make g++ libc6-dev zlib1g-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -qq >&2 && apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "$0: missing Debian packages: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 2
  fi
fi

commit=$(git --git-dir="$git_dir" rev-parse --verify "${commit_want}^{commit}" 2>/dev/null) || {
  echo "$0: $git_dir is not a git snapshot of ti2-group/iopddl_experiments with commit $commit_want" >&2
  exit 2
}

src="$build/src"
if [[ ! -f "$src/.done" || "$(cat "$src/.done")" != "$commit" ]]; then
  rm -rf "$src" "$build/build"
  mkdir -p "$src"
  # File by file rather than `git archive`: a snapshot may lack its largest blobs (the zipped
  # precompiled binary in solver/bin/), and we need only the sources.
  git --git-dir="$git_dir" ls-tree -r "$commit" solver | while read -r _ type blob path; do
    [[ "$type" == blob ]] || continue
    case "$path" in solver/bin/*|*/.DS_Store) continue ;; esac
    rel="${path#solver/}"
    mkdir -p "$src/$(dirname "$rel")"
    git --git-dir="$git_dir" cat-file blob "$blob" > "$src/$rel" || {
      echo "$0: the snapshot lacks $path ($blob)" >&2
      exit 2
    }
  done
  [[ -f "$src/CMakeLists.txt" && -f "$src/main.cpp" ]] || { echo "$0: no solver/ sources at $commit" >&2; exit 2; }
  echo "$commit" > "$src/.done"
fi

start=$(date +%s)
nice -n 10 cmake -S "$src" -B "$build/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
nice -n 10 cmake --build "$build/build" --target iopddl -j "$jobs" >&2
echo "$0: built ti2-group/iopddl_experiments $commit in $(( $(date +%s) - start )) s" >&2
echo "$commit" > "$build/build/COMMIT"
echo "$build/build/iopddl"
