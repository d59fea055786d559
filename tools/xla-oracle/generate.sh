#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the XLA oracle corpus (test/data/xla-oracle/) with pinned JAX CPU wheels from PyPI.
# Run by hand on a machine with network access; CI never runs it (the tests read the committed
# corpus). Usage: tools/xla-oracle/generate.sh [--only PROGRAM ...]
# Environment: XLA_ORACLE_VENV (default /tmp/xla-oracle-venv), XLA_ORACLE_OUT (default the
# repository's test/data/xla-oracle), PYTHON (default python3; must be 3.11 or newer).
set -euo pipefail

JAX_VERSION=0.10.2      # pinned: change it only together with a full corpus refresh
JAXLIB_VERSION=0.10.2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${XLA_ORACLE_VENV:-/tmp/xla-oracle-venv}"
out="${XLA_ORACLE_OUT:-$root/test/data/xla-oracle}"
python="${PYTHON:-python3}"

case "$venv" in
  "$root"/*) echo "generate.sh: put the virtual environment outside the repository ($venv)" >&2; exit 2 ;;
esac

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
have="$("$venv/bin/python" -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__)' 2>/dev/null || true)"
if [ "$have" != "$JAX_VERSION $JAXLIB_VERSION" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "jax==$JAX_VERSION" "jaxlib==$JAXLIB_VERSION"
fi

# One CPU device and no accelerator plugins, whatever the machine has.
export JAX_PLATFORMS=cpu
only=()
if [ "${1:-}" = "--only" ]; then shift; only=(--only "$@"); fi
"$venv/bin/python" "$here/programs.py" --out "$out" "${only[@]}"
du -sh "$out"
