#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cross-checks for a lower bound above max live on MiniMalloc's D and J with
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
  dj_cpsat.py FILE.csv pairs [--capacity C] [--windows DIR]
      The same for two buffers b and c that meet in time, b under c: every other buffer that
      meets b or c in time goes under b, between the two, or over c (under or over the one it
      meets when it meets only one), and at every section of b or c the sums fit. If neither
      order of some pair has such a split, C + granule is a lower bound. A pair whose times lie
      inside a window of DIR (feasible window placements at C, as `dj_bound --certificates`
      writes them) takes its split from that placement, checked here, instead of a solve.
  dj_cpsat.py FILE.csv grow --from PLACEMENT.csv --window FIRST END --to SECTION
                            [--dj-bound PATH] [--outdir DIR] [--capacity C] [--seconds S]
                            [--lns K1,K2,...] [--lns-seconds S2] [--workers W]
      Widens a feasible window [FIRST, END) (PLACEMENT: its placement at C, as `dj_bound
      --certificates` writes it) one section at a time toward SECTION (below FIRST: the window
      grows to the left; at or above END: to the right), keeping C. Each window's relaxation
      comes from `dj_bound FILE.csv --relaxation`, so sections are the library's. A step first
      solves with the last placement as a hint (S seconds), then as a large neighbourhood
      search: the hinted buffers that start (end) before the K-th start (after the K-th last
      end) counted from the new side keep their offsets, K from the list in turn (S2 seconds
      each). Each placement found is written to DIR/window_FIRST_END.csv and re-checked with
      `dj_bound --check`; a step that finds none stops (UNKNOWN or INFEASIBLE neighbourhoods
      prove nothing about the window).
"""
import argparse
import csv
import glob
import math
import subprocess
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


def placement_model(buffers, granule, cap, hint=None, fixed=()):
    """The decision at cap granules as a CP-SAT model: a NoOverlap2D (time fixed, offset free)
    plus one NoOverlap per section. `hint` maps buffer index to a hinted offset in granules;
    the buffers in `fixed` (indices, all hinted) keep theirs. Returns the model and offsets."""
    hint = hint or {}
    m = cp_model.CpModel()
    offsets, xs, ys = [], [], []
    for i, (lo, up, s) in enumerate(buffers):
        h = hint.get(i)
        usable = h is not None and 0 <= h <= cap - s // granule
        y = m.NewConstant(h) if usable and i in fixed else m.NewIntVar(0, cap - s // granule, f"y{i}")
        if usable and i not in fixed:
            m.AddHint(y, h)
        offsets.append(y)
        xs.append(m.NewFixedSizeIntervalVar(lo, up - lo, f"x{i}"))
        ys.append(m.NewFixedSizeIntervalVar(y, s // granule, f"iy{i}"))
    m.AddNoOverlap2D(xs, ys)
    for t in sorted({up for _, up, _ in buffers}):
        m.AddNoOverlap([ys[i] for i, (lo, up, _) in enumerate(buffers) if lo < t <= up])
    return m, offsets


def write_placement(path, rows, solver, offsets, granule):
    with open(path, "w") as out:
        out.write("id,lower,upper,size,offset\n")
        for i, r in enumerate(rows):
            out.write(f"{r['id']},{r['lower']},{r['upper']},{r['size']},{solver.Value(offsets[i]) * granule}\n")


def read_hint(path, rows, granule):
    by_id = {r["id"]: int(r["offset"]) // granule for r in csv.DictReader(open(path))}
    return {i: by_id[r["id"]] for i, r in enumerate(rows) if r["id"] in by_id}


def decide(args, rows, buffers, granule, times, sections, max_live):
    cap = (args.capacity or max_live) // granule
    m, offsets = placement_model(buffers, granule, cap, read_hint(args.hint, rows, granule) if args.hint else None)
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
        write_placement(args.output, rows, solver, offsets, granule)
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


def meets(buffers, x, y):
    """Whether buffers x and y are live at a common time."""
    return buffers[x][0] < buffers[y][1] and buffers[y][0] < buffers[x][1]


def pair_model(b, c, buffers, granule, cap, sections, times, fixed=None):
    """The pair split of b under c as a CP-SAT model, or with `fixed` (offset in granules per
    buffer) just a check of the split that placement induces. Returns True, False or None."""
    lo = min(buffers[b][0], buffers[c][0])
    up = max(buffers[b][1], buffers[c][1])
    mine = [k for k, t in enumerate(times[:-1]) if lo <= t < up]
    sb, sc = buffers[b][2] // granule, buffers[c][2] // granule

    def live(k, x):
        return buffers[x][0] <= times[k] < buffers[x][1]

    if fixed is not None:
        yb, yc = fixed[b], fixed[c]
        if not (0 <= yb and yb + sb <= yc and yc + sc <= cap):
            return None  # the placement has c under b: no split of this order from it
        for k in mine:
            # The split the placement induces, checked by the model's sums.
            rest = [j for j in sections[k] if j not in (b, c)]
            if any(j not in fixed or not 0 <= fixed[j] <= cap - buffers[j][2] // granule for j in rest):
                return False
            under, between, over = 0, 0, 0
            for j in rest:
                yj, sj = fixed[j], buffers[j][2] // granule
                for x, yx, sx in ((b, yb, sb), (c, yc, sc)):
                    if meets(buffers, j, x) and not (yj + sj <= yx or yx + sx <= yj):
                        return False  # j crosses b or c: no region
                if live(k, b) and live(k, c):
                    under += sj * (yj < yb)
                    between += sj * (yb < yj < yc)
                    over += sj * (yj > yc)
                else:
                    y = yb if live(k, b) else yc
                    under += sj * (yj < y)
                    over += sj * (yj > y)
            if live(k, b) and live(k, c):
                if under > yb or between > yc - yb - sb or over > cap - yc - sc:
                    return False
            else:
                y, sx = (yb, sb) if live(k, b) else (yc, sc)
                if under > y or over > cap - y - sx:
                    return False
        return True
    m = cp_model.CpModel()
    yb = m.NewIntVar(0, cap - sb, "yb")
    yc = m.NewIntVar(0, cap - sc, "yc")
    m.Add(yb + sb <= yc)
    under_b, under_c = {}, {}  # 0/1 expressions: j under b, j under c
    neighbours = sorted({j for k in mine for j in sections[k] if j not in (b, c)})
    for j in neighbours:
        if meets(buffers, j, b) and meets(buffers, j, c):
            lower, middle = m.NewBoolVar(""), m.NewBoolVar("")
            m.Add(lower + middle <= 1)
            under_b[j], under_c[j] = lower, lower + middle
        elif meets(buffers, j, b):
            under_b[j] = m.NewBoolVar("")
        else:
            under_c[j] = m.NewBoolVar("")
    for k in mine:
        rest = [j for j in sections[k] if j not in (b, c)]
        size = {j: buffers[j][2] // granule for j in rest}
        total = sum(size.values())
        if live(k, b) and live(k, c):
            low = sum(size[j] * under_b[j] for j in rest)
            mid = sum(size[j] * under_c[j] for j in rest) - low
            m.Add(low <= yb)
            m.Add(mid <= yc - yb - sb)
            m.Add(total - low - mid <= cap - yc - sc)
        else:
            y, sx, under = (yb, sb, under_b) if live(k, b) else (yc, sc, under_c)
            low = sum(size[j] * under[j] for j in rest)
            m.Add(low <= y)
            m.Add(total - low <= cap - y - sx)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.Solve(m)  # no time limit: small models, and only INFEASIBLE may count
    return status != cp_model.INFEASIBLE


def pairs(args, rows, buffers, granule, times, sections, max_live):
    cap = (args.capacity or max_live) // granule
    windows = []  # (t0, t1, offsets in granules by buffer index) of each feasible window
    index = {r["id"]: i for i, r in enumerate(rows)}
    for path in sorted(glob.glob(f"{args.windows}/*.csv")) if args.windows else []:
        placed = list(csv.DictReader(open(path)))
        offsets = {index[r["id"]]: int(r["offset"]) // granule for r in placed}
        if any(int(r["offset"]) + int(r["size"]) > cap * granule for r in placed):
            sys.exit(f"{path}: a buffer ends above the capacity {cap * granule}")
        windows.append((min(int(r["lower"]) for r in placed), max(int(r["upper"]) for r in placed), offsets))
    start = time.time()
    counted = {"certificate": 0, "solved": 0, "none": 0}
    n = len(buffers)
    for b in range(n):
        for c in range(b + 1, n):
            if not meets(buffers, b, c):
                continue
            lo, up = min(buffers[b][0], buffers[c][0]), max(buffers[b][1], buffers[c][1])
            done = False
            for t0, t1, offsets in windows:
                if t0 <= lo and up <= t1:
                    for x, y in ((b, c), (c, b)):
                        if pair_model(x, y, buffers, granule, cap, sections, times, offsets):
                            done = True
                            break
                    if done:
                        break
            if done:
                counted["certificate"] += 1
                continue
            if pair_model(b, c, buffers, granule, cap, sections, times) or \
               pair_model(c, b, buffers, granule, cap, sections, times):
                counted["solved"] += 1
            else:
                counted["none"] += 1
                print(f"  pair {rows[b]['id']}, {rows[c]['id']}: no split in either order at {cap * granule}")
    print(f"{args.file} capacity={cap * granule} max_live={max_live} pairs={sum(counted.values())} "
          f"split_from_window={counted['certificate']} split_solved={counted['solved']} "
          f"without_split={counted['none']} seconds={time.time() - start:.1f}")
    return 0


def grow(args, rows, buffers, granule, times, sections, max_live):
    cap_bytes = args.capacity or max_live
    first, end = args.window
    placement = args.source
    left = args.to < first
    start = time.time()
    while True:
        if args.to < first:
            first -= 1
        elif args.to >= end:
            end += 1
        else:
            break
        window = f"{args.outdir}/relaxation_{first}_{end}.csv"
        subprocess.run([args.dj_bound, args.file, "--relaxation", str(first), str(end), window], check=True,
                       capture_output=True)
        w_rows, w_buffers, g, *_ = read(window)
        cap = cap_bytes // g
        hint = read_hint(placement, w_rows, g)
        if left:
            starts = sorted({lo for lo, _, _ in w_buffers})
            away = lambda k, i: w_buffers[i][0] >= starts[min(k, len(starts)) - 1]
        else:
            ends = sorted({up for _, up, _ in w_buffers})
            away = lambda k, i: w_buffers[i][1] <= ends[-min(k, len(ends))]
        found = None
        for k in [0] + args.lns:
            fixed = {i for i in hint if away(k, i)} if k else set()
            m, offsets = placement_model(w_buffers, g, cap, hint, fixed)
            solver = cp_model.CpSolver()
            solver.parameters.max_time_in_seconds = args.lns_seconds if k else args.seconds
            solver.parameters.num_workers = args.workers
            status = solver.Solve(m)
            print(f"  [{first},{end}) buffers={len(w_buffers)} fixed={len(fixed)} {solver.StatusName(status)} "
                  f"{solver.WallTime():.1f}s", flush=True)
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                found = f"{args.outdir}/window_{first}_{end}.csv"
                write_placement(found, w_rows, solver, offsets, g)
                break
        if found is None:
            print(f"{args.file}: no placement of [{first},{end}) at {cap_bytes} found; widest window reached "
                  f"{placement} ({time.time() - start:.0f} s)")
            return 2
        subprocess.run([args.dj_bound, "--check", found, str(cap_bytes)], check=True)
        placement = found
    print(f"{args.file}: reached {placement} at {cap_bytes} ({time.time() - start:.0f} s)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("mode", choices=["decide", "split", "pairs", "grow"])
    ap.add_argument("--capacity", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--hint")
    ap.add_argument("--output")
    ap.add_argument("--windows")
    ap.add_argument("--from", dest="source")
    ap.add_argument("--window", type=int, nargs=2)
    ap.add_argument("--to", type=int)
    ap.add_argument("--dj-bound", default="build-release/bench/packing/dj_bound")
    ap.add_argument("--outdir", default=".")
    ap.add_argument("--lns", type=lambda v: [int(k) for k in v.split(",")], default=[2, 3, 5, 8, 12, 20, 30])
    ap.add_argument("--lns-seconds", type=float, default=60)
    args = ap.parse_args()
    data = read(args.file)
    if args.mode == "grow" and (args.source is None or args.window is None or args.to is None):
        ap.error("grow needs --from, --window and --to")
    return {"decide": decide, "split": split, "pairs": pairs, "grow": grow}[args.mode](args, *data)


if __name__ == "__main__":
    sys.exit(main())
