#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares what `side_by_side.py` needs, outside the repository: a Python venv with OR-tools and
# SciPy from PyPI (the benchmark environment only; CI never installs it) and the contest winner's
# solver (build_winner.sh). Nothing here is needed to build or test xlamem.
# Usage: bench/sharding/setup.sh [VENV_DIR]   (default /tmp/shard-bench-venv; BUILD_DIR, WINNER_GIT
# and JOBS pass through to build_winner.sh). Prints the venv's python and the winner's binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-${VENV_DIR:-/tmp/shard-bench-venv}}"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
# Pinned so that a rerun measures the same CP-SAT; the side-by-side run records the version.
"$venv/bin/pip" install -q "ortools==9.15.6755" "scipy>=1.10" >&2
winner=$("$here/build_winner.sh" | tail -n 1)
echo "python: $venv/bin/python"
echo "winner: $winner"
