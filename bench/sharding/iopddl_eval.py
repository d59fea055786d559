#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent evaluator of IOPDDL problems (standard library only), for the numbers the C++
reader and evaluator are tested against (test/sharding/evaluate_test.cpp, test/io/iopddl_json_test.cpp).

For each problem file (JSON, plain or gzip): node, edge, strategy and edge-cost counts, the usage
limit, and for fixed assignments (strategy 0 everywhere; the first strategy of least usage of each
node; or a solution file `[s0, s1, ...]`) the cost split into node and edge parts, the number of
forbidden choices (cost >= 10^18), the peak usage and its first time step, the first time step
over the limit. Intervals [lo, hi] are half-open. One JSON object per line.

    python3 bench/sharding/iopddl_eval.py ../shared/data/iopddl/*.json.gz
    python3 bench/sharding/iopddl_eval.py PROBLEM --solution SOLUTION
"""
import argparse
import gzip
import json
import sys

FORBIDDEN = 10**18


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)["problem"]


def evaluate(p, choice):
    nodes, edges = p["nodes"], p["edges"]
    node_cost = sum(nodes["costs"][i][s] for i, s in enumerate(choice))
    forbidden = sum(1 for i, s in enumerate(choice) if nodes["costs"][i][s] >= FORBIDDEN)
    edge_cost = 0
    for (u, v), matrix in zip(edges["nodes"], edges["costs"]):
        c = matrix[choice[u] * len(nodes["costs"][v]) + choice[v]]
        edge_cost += c
        forbidden += c >= FORBIDDEN
    # Usage per time step: a difference map over the interval ends, summed in time order.
    delta = {}
    for i, (lo, hi) in enumerate(nodes["intervals"]):
        u = nodes["usages"][i][choice[i]]
        if lo < hi and u != 0:
            delta[lo] = delta.get(lo, 0) + u
            delta[hi] = delta.get(hi, 0) - u
    times = sorted(delta)
    usage, peak, peak_time, over = 0, None, 0, None
    for t in times[:-1]:  # after the last end nothing is live
        usage += delta[t]
        if peak is None or usage > peak:
            peak, peak_time = usage, t
        if over is None and usage > p["usage_limit"]:
            over = t
    return {
        "cost": node_cost + edge_cost,
        "node_cost": node_cost,
        "edge_cost": edge_cost,
        "forbidden": forbidden,
        "peak_usage": peak or 0,
        "peak_time": peak_time,
        "first_over_limit": over,
        "feasible": over is None,
    }


def read_solution(path):
    with open(path, encoding="utf-8") as f:
        return json.loads(f.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--solution", help="evaluate this solution file too (one problem only)")
    args = ap.parse_args()
    if args.solution and len(args.problems) != 1:
        ap.error("--solution takes one problem")
    for path in args.problems:
        p = load(path)
        nodes, edges = p["nodes"], p["edges"]
        counts = [len(c) for c in nodes["costs"]]
        zero = [0] * len(counts)
        least = [min(range(len(u)), key=lambda s, u=u: (u[s], s)) for u in nodes["usages"]]
        out = {
            "file": path.rsplit("/", 1)[-1],
            "name": p.get("name", ""),
            "nodes": len(nodes["intervals"]),
            "edges": len(edges["nodes"]),
            "strategies": sum(counts),
            "edge_costs": sum(len(m) for m in edges["costs"]),
            "usage_limit": p["usage_limit"],
            "max_time": max((hi for _, hi in nodes["intervals"]), default=0),
            "zero": evaluate(p, zero),
            "least_usage": evaluate(p, least),
        }
        if args.solution:
            out["solution"] = evaluate(p, read_solution(args.solution))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
