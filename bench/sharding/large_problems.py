#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The time limit of `xlamem shard` as a contract at sizes far beyond the contest's: wall clock
(reading included), resident memory and the answer per size of generated problem.

Each problem comes from `gen_iopddl` (bench/sharding/gen_iopddl.cpp: mixed shapes, 1-8
strategies, a tight memory limit, forbidden pairs) and is written once under a temporary folder
(never the repository). Then `xlamem shard FILE --time-limit T --json` runs in a fresh process
under GNU time: wall seconds measured here (from the start of the process to its end), peak
resident memory, the status, whether the answer fits and is permitted, and when the first
feasible answer came. Prints a Markdown table; exits 1 when a run goes past its limit + 5 %, has
no feasible answer, or exceeds `--max-rss-gb`.

Usage: large_problems.py --xlamem build-release/tools/xlamem/xlamem
           --gen build-release/bench/sharding/gen_iopddl
           [--cases 1000000:3 10000000:30] [--edges-per-node 1] [--threads 0] [--max-rss-gb 12]
           [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def generate(gen, nodes, edges, seed, path):
    t0 = time.monotonic()
    subprocess.run([gen, "--nodes", str(nodes), "--edges", str(edges), "--seed", str(seed), "--output", path], check=True)
    return time.monotonic() - t0


def shard(tool, path, limit, threads):
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "time")
        cmd = ["/usr/bin/time", "-f", "%M", "-o", stats, tool, "shard", path, "--time-limit", str(limit), "--json", "--quiet"]
        if threads:
            cmd += ["--threads", str(threads)]
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        with open(stats) as f:
            rss_kb = int(f.read().split()[-1])
    try:
        report = json.loads(p.stdout)
    except ValueError:
        report = {"status": "unreadable output", "stderr": p.stderr.strip()[-300:]}
    return {"wall": wall, "rss": rss_kb * 1024, "rc": p.returncode, "report": report}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xlamem", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--cases", nargs="+", default=["1000000:3", "10000000:30"], help="NODES:SECONDS")
    ap.add_argument("--edges-per-node", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-rss-gb", type=float, default=12.0)
    ap.add_argument("--keep", help="write the problems here and keep them (default: a temporary folder)")
    args = ap.parse_args()

    folder = args.keep or tempfile.mkdtemp(prefix="xlamem-large-iopddl-")
    rows, bad = [], False
    for case in args.cases:
        nodes, limit = case.split(":")
        nodes, limit = int(nodes), float(limit)
        edges = int(nodes * args.edges_per_node)
        path = os.path.join(folder, f"generated-{nodes}-{edges}-seed-{args.seed}.json")
        gen_s = generate(args.gen, nodes, edges, args.seed, path) if not os.path.exists(path) else 0.0
        size = os.path.getsize(path)
        r = shard(args.xlamem, path, limit, args.threads)
        if not args.keep:
            os.remove(path)
        rep = r["report"]
        allowed = bool(rep.get("feasible")) and str(rep.get("forbidden_choices", "1")) == "0"
        over = r["wall"] > limit * 1.05
        too_big = r["rss"] > args.max_rss_gb * 2**30
        bad |= over or not allowed or too_big
        rows.append((nodes, edges, size, gen_s, limit, r, rep, allowed, over, too_big))
        print(f"# {nodes} nodes: {r['wall']:.2f} s, {r['rss'] / 2**30:.2f} GiB, {rep.get('status')}", file=sys.stderr)

    print("| nodes | edges | file | limit (s) | wall (s) | within +5 % | status | feasible, permitted | first feasible (s) "
          "| peak RSS | bytes / (node + edge) |")
    print("|---:|---:|---:|---:|---:|:---:|---|:---:|---:|---:|---:|")
    for nodes, edges, size, _, limit, r, rep, allowed, over, too_big in rows:
        first = rep.get("seconds_to_first_feasible", -1)
        print(f"| {nodes:,} | {edges:,} | {size / 1e9:.2f} GB | {limit:g} | {r['wall']:.2f} | {'no' if over else 'yes'} "
              f"| {rep.get('status')} | {'yes' if allowed else 'no'} | {float(first):.2f} "
              f"| {r['rss'] / 2**30:.2f} GiB{' (over)' if too_big else ''} | {r['rss'] / (nodes + edges):.0f} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
