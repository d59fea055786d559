#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The packing scale curve: both instance generators at several sizes, every named solver side
by side in one run on one machine, as a Markdown table for docs/benchmarks.md.

For each generator (gen_trace_like.py: the IOPDDL traces' statistics, long lifetimes capped;
gen_training_step.py: a training step, activations held from the forward to the mirrored
backward op) and size, the instance is written once, then `xlamem pack FILE --solver S --json
--time-limit T` runs in a fresh process per solver under a wall-clock cap. Columns: wall time
of the whole command (reading, solving, validating, writing), its peak resident memory
(GNU time's %M), peak / lower bound, status, and the buffers live at the peak. A run
past the cap is killed and shown as such: that is the figure.

Usage: scale_curve.py --xlamem build-release/tools/xlamem/xlamem [--sizes 10000 100000 1000000]
           [--solvers search heuristic sweep xla first-fit] [--time-limit 10] [--cap 60]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(kind, n, path):
    script = os.path.join(HERE, "gen_trace_like.py" if kind == "trace-like" else "gen_training_step.py")
    with open(path, "w") as out:
        r = subprocess.run([sys.executable, script, str(n)], stdout=out, stderr=subprocess.PIPE, text=True, check=True)
    return r.stderr.strip()


def live_at_peak(path):
    delta = {}
    with open(path) as f:
        next(f)
        for line in f:
            _, lo, hi, _size = line.rstrip("\n").split(",")[:4]
            delta[int(lo)] = delta.get(int(lo), 0) + 1
            delta[int(hi)] = delta.get(int(hi), 0) - 1
    live = best = 0
    for t in sorted(delta):
        live += delta[t]
        best = max(best, live)
    return best


def run(tool, path, solver, time_limit, cap, extra=()):
    """One `xlamem pack` in a fresh process under GNU time (its peak resident memory: a child of
    this Python process would count the interpreter's pages it was forked with), killed with
    its process group at `cap` seconds. `extra`: more arguments (`--capacity N`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path, rss_path = os.path.join(tmp, "out.json"), os.path.join(tmp, "rss")
        with open(out_path, "w") as out, open(os.path.join(tmp, "err"), "w+") as err:
            t0 = time.monotonic()
            p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path, tool, "pack", path, "--solver", solver,
                                  "--json", "--time-limit", str(time_limit), *extra],
                                 stdout=out, stderr=err, text=True, start_new_session=True)
            try:
                p.wait(timeout=cap)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                return {"wall": None, "rss_mb": None, "ratio": None, "status": f"killed at {cap:g} s"}
            wall = time.monotonic() - t0
            err.seek(0)
            message = err.read().strip()
        with open(rss_path) as f:
            rss_mb = int(f.read().split()[-1]) / 1024
        if p.returncode not in (0, 1, 2):  # 1 and 2: infeasible or undecided under a capacity, reported in JSON
            return {"wall": wall, "rss_mb": rss_mb, "ratio": None, "status": f"exit {p.returncode}: {message[:80]}"}
        with open(out_path) as f:
            d = json.load(f)
    ratio = d["peak"] / d["lower_bound"] if d["peak"] is not None and d["lower_bound"] else None
    return {"wall": wall, "rss_mb": rss_mb, "ratio": ratio, "status": d.get("status", "?"), "fallback": d.get("fallback")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xlamem", required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000, 1000000])
    ap.add_argument("--generators", nargs="+", default=["trace-like", "training-step"])
    ap.add_argument("--solvers", nargs="+", default=["search", "heuristic", "sweep", "xla", "first-fit"])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--cap", type=float, default=60.0, help="wall-clock seconds before a run is killed")
    a = ap.parse_args()
    print(f"xlamem pack --time-limit {a.time_limit:g}, each run capped at {a.cap:g} s wall; "
          f"load average at start {os.getloadavg()[0]:.2f}\n")
    print("| generator | buffers | live at the peak | solver | wall s | resident MB | peak / bound | status |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.generators:
            for n in a.sizes:
                path = os.path.join(tmp, f"{kind}-{n}.csv")
                generate(kind, n, path)
                with open(path) as f:
                    count = sum(1 for _ in f) - 1
                live = live_at_peak(path)
                for s in a.solvers:
                    r = run(a.xlamem, path, s, a.time_limit, a.cap)
                    wall = f"{r['wall']:.2f}" if r["wall"] is not None else "–"
                    rss = f"{r['rss_mb']:.0f}" if r["rss_mb"] is not None else "–"
                    ratio = f"{r['ratio']:.4f}" if r["ratio"] is not None else "–"
                    print(f"| {kind} | {count:,} | {live:,} | {s} | {wall} | {rss} | {ratio} | {r['status']} |", flush=True)


if __name__ == "__main__":
    main()
