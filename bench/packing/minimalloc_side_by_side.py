#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""MiniMalloc and `xlamem pack` side by side on MiniMalloc's challenging suite, in one run.

For every file the two solvers alternate (MiniMalloc, xlamem, MiniMalloc, xlamem, ...), each
run `--repeats` times (default 3); the figure per solver and file is the median of its CPU
seconds (user + system of the child process, from wait4), so that other load on the machine
counts as little as possible. Both solve the decision problem at the same capacity (default
1048576) with default settings; every placement they write is checked here (same buffers,
offsets within the capacity, no two buffers live at the same time overlapping in memory).
Prints a Markdown table with the ratios, the totals and the load averages before and after.

Build MiniMalloc first with bench/packing/build_minimalloc.sh (it prints the binary's path).
Usage:
  bench/packing/minimalloc_side_by_side.py --minimalloc /tmp/minimalloc-build/out/minimalloc \\
      --xlamem build-release/tools/xlamem/xlamem [--data ../shared/data/minimalloc/challenging] \\
      [--capacity 1048576] [--repeats 3] [--files A,B,...]
Exit status 1 when any placement is invalid or any run fails.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile


def cpu_run(cmd):
    """Runs cmd; returns (exit status, CPU seconds of the child, stderr)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return proc.returncode, usage.ru_utime + usage.ru_stime, err.read().decode(errors="replace")


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def check_placement(problem_rows, out_path, capacity):
    """Returns None when the placement in out_path is valid, else a message."""
    try:
        placed = read_rows(out_path)
    except OSError as e:
        return f"no output: {e}"
    if len(placed) != len(problem_rows):
        return f"{len(placed)} rows for {len(problem_rows)} buffers"
    want = {}
    for r in problem_rows:
        want[r["id"]] = (int(r["lower"]), int(r["upper"]), int(r["size"]))
    boxes = []
    for r in placed:
        key = r.get("id", r.get("buffer"))
        if key not in want:
            return f"unknown buffer {key}"
        lower, upper, size = int(r["lower"]), int(r["upper"]), int(r["size"])
        if (lower, upper, size) != want[key]:
            return f"buffer {key} changed"
        off = int(r["offset"])
        if off < 0 or off + size > capacity:
            return f"buffer {key} at {off} exceeds the capacity"
        if size > 0:
            boxes.append((lower, upper, off, off + size, key))
    # Sweep over time; the live set is disjoint in memory while valid.
    events = sorted([(b[0], 1, i) for i, b in enumerate(boxes)] + [(b[1], 0, i) for i, b in enumerate(boxes)])
    live = []
    for _, kind, i in events:
        if kind == 0:
            live.remove(i)
            continue
        lo, hi = boxes[i][2], boxes[i][3]
        for j in live:
            if boxes[j][2] < hi and lo < boxes[j][3]:
                return f"buffers {boxes[i][4]} and {boxes[j][4]} overlap"
        live.append(i)
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minimalloc", required=True)
    ap.add_argument("--xlamem", default=os.path.join(here, "../../build-release/tools/xlamem/xlamem"))
    ap.add_argument("--data", default=os.path.join(here, "../../../shared/data/minimalloc/challenging"))
    ap.add_argument("--capacity", type=int, default=1048576)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--files", default="A,B,C,D,E,F,G,H,I,J,K")
    a = ap.parse_args()
    load_before = os.getloadavg()
    failures = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.files.split(","):
            path = os.path.join(a.data, f"{name}.{a.capacity}.csv")
            problem = read_rows(path)
            times = {"minimalloc": [], "xlamem": []}
            valid = True
            for rep in range(a.repeats):
                for solver in ("minimalloc", "xlamem"):
                    out = os.path.join(tmp, f"{name}.{solver}.{rep}.csv")
                    if solver == "minimalloc":
                        cmd = [a.minimalloc, f"--capacity={a.capacity}", f"--input={path}", f"--output={out}"]
                    else:
                        cmd = [a.xlamem, "pack", path, "--capacity", str(a.capacity), "--time-limit", "600",
                               "--output", out]
                    code, cpu, err = cpu_run(cmd)
                    if code != 0:
                        print(f"{name}: {solver} exited {code}: {err.strip()[-300:]}", file=sys.stderr)
                        valid = False
                        continue
                    problem_msg = check_placement(problem, out, a.capacity)
                    if problem_msg:
                        print(f"{name}: {solver}: invalid placement: {problem_msg}", file=sys.stderr)
                        valid = False
                    times[solver].append(cpu)
            if not valid:
                failures += 1
            mm = statistics.median(times["minimalloc"]) if times["minimalloc"] else float("nan")
            xl = statistics.median(times["xlamem"]) if times["xlamem"] else float("nan")
            rows.append((name, mm, xl, valid))
            print(f"{name}: MiniMalloc {mm:.3f} s, xlamem {xl:.3f} s, {mm / xl if xl else float('inf'):.1f}x",
                  file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(f"MiniMalloc vs `xlamem pack`, decision at capacity {a.capacity}, CPU seconds, median of {a.repeats} "
          f"alternating runs; load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    print()
    print("| file | MiniMalloc (s) | xlamem (s) | MiniMalloc / xlamem | placements valid |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, mm, xl, valid in rows:
        print(f"| {name} | {mm:.3f} | {xl:.3f} | {mm / xl if xl else float('inf'):.1f}x | {'yes' if valid else 'NO'} |")
    tm = sum(r[1] for r in rows)
    tx = sum(r[2] for r in rows)
    slower = [r[0] for r in rows if r[2] >= r[1]]
    print(f"| total | {tm:.3f} | {tx:.3f} | {tm / tx if tx else float('inf'):.1f}x | "
          f"{'yes' if failures == 0 else 'NO'} |")
    print()
    print(f"xlamem faster on every file: {'yes' if not slower else 'no (not on ' + ', '.join(slower) + ')'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
