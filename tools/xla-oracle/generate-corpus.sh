#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the differential corpus (test/data/xla-corpus/) for one XLA version: makes the
# version's virtual environment outside the repository, installs the pinned wheels and the model
# libraries into it, compiles every program (tools/xla-oracle/corpus.py), and packs the result
# into test/data/xla-corpus/<version>.tar.xz plus <version>.manifest.json. Run by hand on a
# machine with PyPI access; CI never runs it (it unpacks the committed archives).
#
# Usage: tools/xla-oracle/generate-corpus.sh --jax 0.10.2|0.11.2|0.12.0.1|--tf 2.21.0 [--only P ...]
#                                            [--group G ...] [--jobs N] [--no-pack]
# Environment: XLA_CORPUS_VENV (default /tmp/xla-oracle-venv-<version>), XLA_CORPUS_WORK
# (the unpacked corpus, default /tmp/xla-corpus), PYTHON (the interpreter for a new venv;
# default: pyenv's 3.11 for JAX 0.10, 3.12 for JAX 0.11, 0.12 and TensorFlow). With --only or
# --group, a version missing from XLA_CORPUS_WORK is first unpacked from its committed archive,
# so the other programs' entries are packed again unchanged.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
kind="" version="" args=() pack=1 jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --jax) kind=jax version="$2"; shift 2 ;;
    --tf) kind=tf version="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-pack) pack=0; shift ;;
    --only|--group) flag="$1"; shift; args+=("$flag"); while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do args+=("$1"); shift; done ;;
    *) echo "generate-corpus.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$kind" ] || { echo "generate-corpus.sh: give --jax VERSION or --tf VERSION" >&2; exit 2; }

case "$kind-$version" in
  jax-0.10.*) pyver=3.11 ;;
  *) pyver=3.12 ;;
esac
tag="$kind-$version"
venv="${XLA_CORPUS_VENV:-/tmp/xla-oracle-venv-$( [ $kind = jax ] && echo "${version%.*}" | sed 's/^\(0\.[0-9]*\).*/\1/' || echo tf)}"
work="${XLA_CORPUS_WORK:-/tmp/xla-corpus}"
case "$venv" in "$root"/*) echo "generate-corpus.sh: put the virtual environment outside the repository" >&2; exit 2 ;; esac
python="${PYTHON:-$(ls -d "$(pyenv root 2>/dev/null || echo /root/.pyenv)"/versions/$pyver.* 2>/dev/null | tail -1)/bin/python}"

# The libraries the programs import, installed one by one so that one that cannot be installed
# with this JAX is recorded (the program is then "unavailable" in the manifest), not fatal.
# keras-hub: its tensorflow-text requirement sends pip's resolver into a backtracking search
# over tensorflow releases that did not end in 20 minutes; the backbones need neither, so it is
# installed without dependencies plus the ones its import needs.
JAX_LIBS=(flax dm-haiku equinox optax numpyro diffrax jax-md mujoco-mjx brax keras)
KERAS_HUB=(keras-hub==0.32.0 kagglehub regex rich absl-py packaging tokenizers)

if [ ! -x "$venv/bin/python" ]; then "$python" -m venv "$venv"; fi
if [ "$kind" = jax ]; then
  printf 'jax==%s\njaxlib==%s\n' "$version" "$version" > "$venv/constraints.txt"
  have="$("$venv/bin/python" -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__)' 2>/dev/null || true)"
  [ "$have" = "$version $version" ] || "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" "jax==$version" "jaxlib==$version"
  for lib in "${JAX_LIBS[@]}"; do
    "$venv/bin/pip" show --quiet "$lib" >/dev/null 2>&1 && continue
    "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" "$lib" >"$venv/install-$lib.log" 2>&1 \
      || echo "generate-corpus.sh: $lib does not install with jax $version (see $venv/install-$lib.log)" >&2
  done
  if ! "$venv/bin/pip" show --quiet keras-hub >/dev/null 2>&1; then
    "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" --no-deps "${KERAS_HUB[0]}" \
      && "$venv/bin/pip" install --quiet -c "$venv/constraints.txt" "${KERAS_HUB[@]:1}" \
      || echo "generate-corpus.sh: keras-hub does not install with jax $version" >&2
  fi
else
  "$venv/bin/pip" show --quiet tensorflow-cpu >/dev/null 2>&1 || "$venv/bin/pip" install --quiet "tensorflow-cpu==$version"
fi

archive="$root/test/data/xla-corpus/$tag.tar.xz"
if [ ${#args[@]} -gt 0 ] && [ ! -d "$work/$tag" ] && [ -f "$archive" ]; then
  # Refreshing some programs: start from the committed entries, not from an empty version.
  mkdir -p "$work" && tar -xJf "$archive" -C "$work"
  echo "generate-corpus.sh: unpacked $archive into $work" >&2
fi

export JAX_PLATFORMS=cpu
start=$(date +%s)
"$venv/bin/python" "$here/corpus.py" --out "$work" --jobs "$jobs" "${args[@]}" || status=$?
echo "generate-corpus.sh: $tag compiled in $(( $(date +%s) - start )) s" >&2
if [ "$pack" = 1 ]; then
  mkdir -p "$root/test/data/xla-corpus"
  # Packed by the system python3: the archive bytes depend on liblzma, not on JAX.
  python3 "$here/corpus.py" --pack "$work/$tag" --archive "$root/test/data/xla-corpus/$tag.tar.xz"
  cp "$work/$tag/manifest.json" "$root/test/data/xla-corpus/$tag.manifest.json"
  ls -l "$root/test/data/xla-corpus/$tag.tar.xz"
fi
exit "${status:-0}"
