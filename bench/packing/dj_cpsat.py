#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cross-checks for issue 18 item 5 (a lower bound above max live on MiniMalloc's D and J) with
an independent solver, OR-Tools CP-SAT. Not part of the build or CI: it needs `pip install
ortools` in a generator environment.

  dj_cpsat.py FILE.csv decide [--capacity C] [--seconds S] [--workers W] [--hint PLACEMENT.csv]
                              [--output PLACEMENT.csv]
      Does everything fit under C bytes (default: max live)? A NoOverlap2D model in granules
      (time fixed, offset free) plus one NoOverlap per section. Prints FEASIBLE (and writes the
      placement to --output, check it with `dj_bound --check`), INFEASIBLE, or UNKNOWN.
  dj_cpsat.py FILE.csv split [--capacity C]
      The neighbour-split relaxation, one per buffer b: split the buffers that meet b in time
      into below and above so that, at every section b is live, the ones below fit under b's
      offset and the ones above over b's end. If one buffer has no such split, C + granule is
      a lower bound; prints how many buffers have none.
"""
import argparse
import csv
import math
import sys
import time

from ortools.sat.python import cp_model


def read(path):
    rows = list(csv.DictReader(open(path)))
    buffers = [(int(r["lower"]), int(r["upper"]), int(r["size"])) for r in rows]
    granule = 0
    for _, _, s in buffers:
        granule = math.gcd(granule, s)
    times = sorted({t for lo, up, _ in buffers for t in (lo, up)})
    sections = [[i for i, (lo, up, _) in enumerate(buffers) if lo <= t < up] for t in times[:-1]]
    max_live = max(sum(buffers[i][2] for i in live) for live in sections)
    return rows, buffers, granule, times, sections, max_live


def decide(args, rows, buffers, granule, times, sections, max_live):
    cap = (args.capacity or max_live) // granule
    m = cp_model.CpModel()
    offsets, xs, ys = [], [], []
    for i, (lo, up, s) in enumerate(buffers):
        y = m.NewIntVar(0, cap - s // granule, f"y{i}")
        offsets.append(y)
        xs.append(m.NewFixedSizeIntervalVar(lo, up - lo, f"x{i}"))
        ys.append(m.NewFixedSizeIntervalVar(y, s // granule, f"iy{i}"))
    m.AddNoOverlap2D(xs, ys)
    for live in sections:
        m.AddNoOverlap([ys[i] for i in live])
    if args.hint:
        by_id = {r["id"]: int(r["offset"]) // granule for r in csv.DictReader(open(args.hint))}
        for i, r in enumerate(rows):
            if r["id"] in by_id:
                m.AddHint(offsets[i], by_id[r["id"]])
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = args.seconds
    solver.parameters.num_workers = args.workers
    start = time.time()
    status = solver.Solve(m)
    name = {cp_model.OPTIMAL: "FEASIBLE", cp_model.FEASIBLE: "FEASIBLE", cp_model.INFEASIBLE: "INFEASIBLE"}
    verdict = name.get(status, "UNKNOWN")
    print(f"{args.file} capacity={cap * granule} max_live={max_live} workers={args.workers} "
          f"{verdict} seconds={time.time() - start:.1f}")
    if verdict == "FEASIBLE" and args.output:
        with open(args.output, "w") as out:
            out.write("id,lower,upper,size,offset\n")
            for i, r in enumerate(rows):
                out.write(f"{r['id']},{r['lower']},{r['upper']},{r['size']},{solver.Value(offsets[i]) * granule}\n")
    return 0 if verdict != "UNKNOWN" else 2


def split(args, rows, buffers, granule, times, sections, max_live):
    cap = (args.capacity or max_live) // granule
    none = 0
    start = time.time()
    for b, (lo, up, s) in enumerate(buffers):
        mine = [k for k, t in enumerate(times[:-1]) if lo <= t < up]
        neighbours = sorted({j for k in mine for j in sections[k] if j != b})
        m = cp_model.CpModel()
        below = {j: m.NewBoolVar(f"b{j}") for j in neighbours}
        y = m.NewIntVar(0, cap - s // granule, "y")
        for k in mine:
            live = [j for j in sections[k] if j != b]
            total = sum(buffers[j][2] // granule for j in live)
            under = sum(buffers[j][2] // granule * below[j] for j in live)
            m.Add(under <= y)
            m.Add(total - under <= cap - y - s // granule)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        # No time limit: each model is small, and only a proven INFEASIBLE may count.
        if solver.Solve(m) == cp_model.INFEASIBLE:
            none += 1
            print(f"  buffer {rows[b]['id']}: no split at {cap * granule}")
    print(f"{args.file} capacity={cap * granule} max_live={max_live} buffers={len(buffers)} "
          f"without_split={none} seconds={time.time() - start:.1f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("mode", choices=["decide", "split"])
    ap.add_argument("--capacity", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--hint")
    ap.add_argument("--output")
    args = ap.parse_args()
    data = read(args.file)
    return (decide if args.mode == "decide" else split)(args, *data)


if __name__ == "__main__":
    sys.exit(main())
