#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The time limit as a contract: every named solver, on every input here, returns within its
`--time-limit` (+5 % or 50 ms, whichever is larger) with a placement and its status.

Inputs: every file of ../shared/data/packing-traces/ and of the MiniMalloc suite
(../shared/data/minimalloc/; minimised, and decided under the capacity in the file name), and
both generators of this folder (gen_training_step.py, gen_trace_like.py) at the sizes given.
Each run is `xlamem pack FILE --solver S --json --time-limit T` in a fresh process (its wall
time counts reading, solving, checking and writing), killed at 3 T + 30 s. T is `--limit`, or
`--large-limit` from `--large` buffers on (where reading alone takes a second). A run keeps
the contract when it exits 0 with status optimal, feasible or time_limit (or, under a
capacity, 1 or 2 with status infeasible or no_answer) within the allowance. Prints a Markdown table and the
runs that broke it; exits 1 if any did.

Usage: time_limit_contract.py --xlamem build-release/tools/xlamem/xlamem [--data ../shared/data]
           [--sizes 10000 100000 1000000] [--limit 1] [--large-limit 10] [--large 500000]
           [--solvers search heuristic xla first-fit skyline stack sweep] [--only NAME_PART]
"""
import argparse
import glob
import os
import sys
import tempfile

ANSWERED = ("optimal", "feasible", "time_limit")  # statuses with a placement

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scale_curve import generate, run  # noqa: E402

SOLVERS = ["search", "heuristic", "xla", "first-fit", "skyline", "stack", "sweep"]


def inputs(data, tmp, sizes):
    """(name, path, extra arguments) for every input."""
    out = []
    for path in sorted(glob.glob(os.path.join(data, "packing-traces", "*.csv"))):
        out.append((os.path.basename(path), path, ()))
    for path in sorted(glob.glob(os.path.join(data, "minimalloc", "*", "*.csv"))):
        name = os.path.basename(path)
        out.append((name, path, ()))
        capacity = name.split(".")[1] if name.count(".") == 2 else ""
        if capacity.isdigit():
            out.append((name + " (capacity)", path, ("--capacity", capacity)))
    for kind in ("training-step", "trace-like"):
        for n in sizes:
            path = os.path.join(tmp, f"{kind}-{n}.csv")
            generate(kind, n, path)
            out.append((f"{kind} {n:,}", path, ()))
    return out


def buffers(path):
    with open(path) as f:
        return sum(1 for _ in f) - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xlamem", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000, 1000000])
    ap.add_argument("--solvers", nargs="+", default=SOLVERS)
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--large-limit", type=float, default=10.0)
    ap.add_argument("--large", type=int, default=500000, help="buffers from which --large-limit applies")
    ap.add_argument("--only", default="", help="only inputs whose name contains this")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.data, "packing-traces")):
        sys.exit(f"time_limit_contract: no {a.data}/packing-traces (give --data)")
    broken = []
    worst = 0.0
    summary = []  # per input: name, buffers, limit, (largest wall / limit, its solver), statuses
    print(f"xlamem pack --time-limit {a.limit:g} ({a.large_limit:g} from {a.large:,} buffers); "
          f"allowance +5 % or 50 ms; load average at start {os.getloadavg()[0]:.2f}\n")
    print("| input | buffers | limit s | solver | wall s | wall / limit | resident MB | peak / bound | status |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, extra in inputs(a.data, tmp, a.sizes):
            if a.only not in name:
                continue
            n = buffers(path)
            limit = a.large_limit if n >= a.large else a.limit
            allowance = max(0.05 * limit, 0.05)
            summary.append([name, n, limit, (0.0, ""), {}])
            for s in a.solvers:
                r = run(a.xlamem, path, s, limit, 3 * limit + 30, extra)
                status = r["status"] + (f" ({r['fallback']})" if r.get("fallback") else "")
                decided = ANSWERED if not extra else ANSWERED + ("infeasible", "no_answer")
                ok = r["wall"] is not None and r["wall"] <= limit + allowance and r["status"] in decided
                if r["wall"] is not None:
                    worst = max(worst, r["wall"] / limit)
                    summary[-1][3] = max(summary[-1][3], (r["wall"] / limit, s))
                summary[-1][4][status] = summary[-1][4].get(status, 0) + 1
                wall = f"{r['wall']:.2f}" if r["wall"] is not None else "–"
                share = f"{r['wall'] / limit:.3f}" if r["wall"] is not None else "–"
                rss = f"{r['rss_mb']:.0f}" if r["rss_mb"] is not None else "–"
                ratio = f"{r['ratio']:.4f}" if r["ratio"] is not None else "–"
                print(f"| {name} | {n:,} | {limit:g} | {s} | {wall} | {share} | {rss} | {ratio} | {status}"
                      f"{'' if ok else ' **BROKEN**'} |", flush=True)
                if not ok:
                    broken.append(f"{name} {s}: {wall} s of {limit:g}, {status}")
    print("\n| input | buffers | limit s | largest wall / limit (solver) | statuses of the solvers |")
    print("|---|---|---|---|---|")
    for name, n, limit, (share, solver), statuses in summary:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        print(f"| {name} | {n:,} | {limit:g} | {share:.3f} ({solver}) | {counts} |")
    print(f"\nlargest wall / limit: {worst:.3f}; runs that broke the contract: {len(broken)}")
    for b in broken:
        print("  " + b)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
