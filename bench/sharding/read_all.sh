#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Time and peak resident memory of reading each shared IOPDDL instance, one process per file:
#   bench/sharding/read_all.sh [BUILD_DIR] [DATA_DIR]   (defaults: build-release, ../shared/data/iopddl)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-release}
data=${2:-../shared/data/iopddl}
exe=$build/bench/sharding/read_iopddl
[ -x "$exe" ] || { echo "build $exe first: meson compile -C $build bench/sharding/read_iopddl" >&2; exit 2; }
printf '| instance | gzip MB | text MB | read s (wall) | user s | peak RSS MiB | arrays MiB |\n|---|---|---|---|---|---|---|\n'
for f in "$data"/asplos-2025-iopddl-*.json.gz; do
  out=$( { /usr/bin/time -f 'TIME %e %U %M' "$exe" "$f"; } 2>&1 )
  read -r _ wall user rss_kb <<<"$(grep '^TIME' <<<"$out")"
  arrays=$(sed -n 's/.*arrays \([0-9.]*\) MiB.*/\1/p' <<<"$out")
  read_s=$(sed -n 's/.*read \([0-9.]*\) s.*/\1/p' <<<"$out")
  gz=$(stat -c %s "$f")
  text=$(gzip -dc "$f" | wc -c)
  name=$(basename "$f" .json.gz)
  printf '| %s | %.1f | %.1f | %s (%s) | %s | %.0f | %s |\n' "${name##*-}" "$(echo "$gz/1000000" | bc -l)" \
    "$(echo "$text/1000000" | bc -l)" "$read_s" "$wall" "$user" "$(echo "$rss_kb/1024" | bc -l)" "$arrays"
done
