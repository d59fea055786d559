#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The complexity budget's large cases as a benchmark: CPU time and resident memory of `xlamem
plan` per shape and size (docs/error-handling.md).

Each shape comes from `gen_hlo` (bench/reliability/gen_hlo.cpp, over test/support/
hlo_generators.hpp): nested while loops, a call chain, one instruction with N operands and a
value with N users (fan), and a straight-line module. Every module is written once, then
`xlamem plan FILE` runs in a fresh process under GNU time: CPU seconds (user + system), wall
seconds, peak resident memory, and that memory per byte of input and per instruction (the
input's lines that define one). A run past `--cap` seconds is killed, and that is its figure.
Prints a Markdown table; exits 1 when a plan fails.

With `--baseline OTHER_XLAMEM` (an older build, say), each module is planned by the baseline
and then by `--xlamem`, one after the other in this run, and the table adds the baseline's CPU
seconds and resident memory and the ratios (baseline / this): side by side, not against
figures from another day.

Usage: large_cases.py --xlamem build-release/tools/xlamem/xlamem --gen-hlo build/bench/reliability/gen_hlo
           [--shapes nested-whiles call-chain fan straight-line] [--scale 1] [--cap 120]
           [--baseline OLD_XLAMEM]
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

# Sizes per shape: the budget's sizes (docs/error-handling.md) and one step below.
SIZES = {
    "nested-whiles": [1000, 10000],
    "call-chain": [10000, 100000],
    "fan": [10000, 100000],
    "straight-line": [100000, 1000000],
}


def plan(tool, path, cap):
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "time")
        t0 = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", stats, tool, "plan", path],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = p.communicate(timeout=cap)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return None
        wall = time.monotonic() - t0
        with open(stats) as f:
            user, system, rss_kb = f.read().split()[-3:]
    return {"cpu": float(user) + float(system), "wall": wall, "rss": int(rss_kb) * 1024, "rc": p.returncode,
            "err": err.strip().splitlines()[-1:] if p.returncode else []}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xlamem", required=True)
    ap.add_argument("--gen-hlo", required=True)
    ap.add_argument("--shapes", nargs="+", default=list(SIZES))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every size (0.1 for a quick look)")
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--baseline", help="another xlamem to run side by side on the same modules")
    a = ap.parse_args()
    failed = 0
    print(f"xlamem plan per shape and size; load average at start {os.getloadavg()[0]:.2f}\n")
    head = "| shape | size | input MB | instructions | CPU s | wall s | resident MB | resident / input | bytes per instruction |"
    if a.baseline:
        head += " baseline CPU s | baseline resident MB | CPU ratio | memory ratio |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes:
            for size in SIZES[shape]:
                n = max(1, int(size * a.scale))
                path = os.path.join(tmp, f"{shape}-{n}.hlo")
                with open(path, "w") as out:
                    subprocess.run([a.gen_hlo, shape, str(n)], stdout=out, check=True)
                with open(path) as f:
                    text = f.read()
                instructions = sum(1 for line in text.splitlines() if " = " in line and "HloModule" not in line)
                base = plan(a.baseline, path, a.cap) if a.baseline else None
                r = plan(a.xlamem, path, a.cap)
                mb = len(text) / 1e6
                if r is None:
                    print(f"| {shape} | {n:,} | {mb:.1f} | {instructions:,} | killed at {a.cap:g} s | | | | |", flush=True)
                    failed += 1
                    continue
                status = "" if r["rc"] == 0 else f" (exit {r['rc']}: {' '.join(r['err'])[:60]})"
                failed += r["rc"] != 0
                row = (f"| {shape} | {n:,} | {mb:.1f} | {instructions:,} | {r['cpu']:.2f} | {r['wall']:.2f} | "
                       f"{r['rss'] / 1e6:.0f} | {r['rss'] / max(len(text), 1):.1f} | "
                       f"{r['rss'] / max(instructions, 1):,.0f}{status} |")
                if a.baseline:
                    if base is None:
                        row += f" killed at {a.cap:g} s | | | |"
                    else:
                        row += (f" {base['cpu']:.2f} | {base['rss'] / 1e6:.0f} | {base['cpu'] / max(r['cpu'], 1e-3):.2f} | "
                                f"{base['rss'] / max(r['rss'], 1):.2f} |")
                print(row, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
