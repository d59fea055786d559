#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Best peak within a time limit (default 60 s) for each file of MiniMalloc's challenging suite,
# with `xlamem pack --json`, as a Markdown table. 11 files x 60 s = 11 minutes.
# Usage: bench/packing/best_peak.sh [XLAMEM_BINARY] [SECONDS] [DATA_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../build-release/tools/xlamem/xlamem}"
limit="${2:-60}"
data="${3:-$here/../../../shared/data/minimalloc/challenging}"
declare -A mm_best=([C]=1039360 [D]=1031168 [J]=1035264)
echo "| file | lower bound | best peak | peak / LB | optimal | seconds | MiniMalloc best |"
echo "| --- | ---: | ---: | ---: | --- | ---: | ---: |"
for f in A B C D E F G H I J K; do
  json="$("$bin" pack "$data/$f.1048576.csv" --time-limit "$limit" --json)"
  python3 - "$f" "$json" "${mm_best[$f]:-1048576}" <<'PY'
import json, sys
name, j, mm = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
print(f"| {name} | {j['lower_bound']} | {j['peak']} | {j['peak'] / j['lower_bound']:.3f} | "
      f"{'yes' if j['optimal'] else 'no'} | {j['seconds']:.1f} | {mm} |")
PY
done
