#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package's tests, as a user gets it: a wheel built by `pip wheel .`
# (meson-python and nanobind from PyPI, in pip's isolated build environment), checked for this
# machine's paths, installed with jax (CPU), nbclient, ipykernel and pandas into a fresh virtual
# environment, then test/python/python_test.py, test/python/arguments_test.py and
# test/python/command_line_test.py (`python -m xlamem` against the C++ tool, which must be built).
#   test/python/run.sh [WORK_DIR]     (default build/python; XLAMEM_CLI: the tool, default
#                                      build/tools/xlamem/xlamem)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$root/build/python}
mkdir -p "$work"

# JAX's newest releases need Python >= 3.12: take pyenv's 3.12 or 3.13 when there is one.
py=""
pyenv_root=$(pyenv root 2>/dev/null || true)
for c in "$pyenv_root"/versions/3.12*/bin/python3 "$pyenv_root"/versions/3.13*/bin/python3 \
  "$(command -v python3.12 || true)" "$(command -v python3.13 || true)" "$(command -v python3 || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then py=$c; break; fi
done
[ -n "$py" ] || { echo "python tests: no python3 found" >&2; exit 1; }
echo "python tests: $("$py" --version) at $py"

rm -rf "$work/venv" "$work/wheel"
"$py" -m venv "$work/venv"
start=$(date +%s)
"$work/venv/bin/pip" wheel --quiet --no-deps --wheel-dir "$work/wheel" "$root"
wheel_done=$(date +%s)
wheel=$(ls "$work"/wheel/xlamem-*.whl)
echo "python tests: built $(basename "$wheel") in $((wheel_done - start)) s"

# The wheel must not carry this machine's paths (source tree, pip's build folder, home).
"$work/venv/bin/python" - "$wheel" "$root" <<'PY'
import sys, zipfile
wheel, root = sys.argv[1], sys.argv[2]
needles = [root.encode(), b"/tmp/pip-", b"/root/", b".mesonpy-"]
bad = []
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        data = z.read(name)
        bad += [f"{name}: {n.decode()}" for n in needles if n in data]
if bad:
    print("python tests: FAILED the wheel holds build-machine paths:\n  " + "\n  ".join(bad))
    sys.exit(1)
print(f"python tests: ok      the wheel holds no build-machine paths ({len(needles)} patterns)")
PY

"$work/venv/bin/pip" install --quiet "$wheel" jax nbclient nbformat ipykernel pandas
echo "python tests: installed the wheel, jax, nbclient, ipykernel and pandas in $(($(date +%s) - wheel_done)) s"
cli=${XLAMEM_CLI:-$root/build/tools/xlamem/xlamem}
# The venv first on PATH: the notebook's kernel (ipykernel's kernel.json says "python") is this one.
status=0
PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" "$root/test/python/python_test.py" "$root" "$work/test" \
  --xlamem-cli "$cli" || status=1
# Every public argument checked, and Ctrl-C (needs the package only).
"$work/venv/bin/python" "$root/test/python/arguments_test.py" "$root" "$work/arguments" || status=1
# python -m xlamem is the tool: every command's options, defaults, output and exit status.
"$work/venv/bin/python" "$root/test/python/command_line_test.py" "$root" "$work/command_line" "$cli" || status=1
exit $status
