#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Synthetic packing instances shaped like the real compiler traces in ../shared/data/packing-traces.

Measured there (iopddl_S_1 / iopddl_Y_1, the IOPDDL auto-sharding traces): most buffers are
short-lived (median live range 4 steps, 10th percentile 2-4) while one in ten or so lives long
(90th percentile 7,512 / 13,287 steps, 99th 26,922 / 54,109, of horizons 44,681 / 92,494), so
thousands are live at once (3,218 / 9,331 at the peak); sizes spread over eight orders of
magnitude (median 16 / 18 KiB, 90th percentile 1.2 MB / 170 MB, largest 268 MB / 9.4 GB).

Generated: horizon 1.5 n steps; starts uniform; 75 % of the buffers live 1-8 steps, 25 % live
a log-uniform 16 .. min(horizon, 100,000) steps (no real buffer lives longer than the longest
real horizon, 92,494 steps; cut at the horizon); log2(size) normal with mean 14 and deviation 6, clipped to
[2, 33]. Deterministic for a seed. Writes MiniMalloc's CSV (id,lower,upper,size) to stdout.
Usage: gen_trace_like.py N [SEED] > out.csv
"""
import math
import random
import sys


def main():
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    horizon = max(16, int(1.5 * n))
    out = sys.stdout
    out.write("id,lower,upper,size\n")
    lo_long, hi_long = math.log(16), math.log(max(17, min(horizon, 100000)))
    rows = []
    for i in range(n):
        start = rng.randrange(horizon)
        if rng.random() < 0.75:
            length = rng.randint(1, 8)
        else:
            length = int(math.exp(rng.uniform(lo_long, hi_long)))
        bits = min(33.0, max(2.0, rng.gauss(14.0, 6.0)))
        size = int(2 ** bits) + 1
        rows.append(f"{i},{start},{min(horizon, start + length) if start + length > start else start + 1},{size}\n")
    out.writelines(rows)


if __name__ == "__main__":
    main()
