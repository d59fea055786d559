#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end checks of the xlamem command-line tool: every subcommand on a bundled input, its
machine-readable output, its picture, and its exit status on bad input.
Usage: cli_test.py XLAMEM_EXE SOURCE_ROOT WORK_DIR
"""
import json
import os
import subprocess
import sys

failures = []


def run(args, expect_code=0, stdin=None):
    proc = subprocess.run([EXE, *args], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    label = "xlamem " + " ".join(os.path.relpath(a, ROOT) if os.path.isabs(a) else a for a in args)
    if proc.returncode != expect_code:
        failures.append(f"{label}: exit {proc.returncode}, expected {expect_code}\n{proc.stderr[-2000:]}")
        print(f"FAILED  {label}")
    else:
        print(f"ok      {label}")
    return proc


def check(cond, what):
    print(("ok      " if cond else "FAILED  ") + what)
    if not cond:
        failures.append(what)


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    global EXE, ROOT, WORK
    EXE, ROOT, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    os.makedirs(WORK, exist_ok=True)

    p = run(["--version"])
    check(p.stdout.startswith("xlamem "), "--version names the tool")
    p = run(["--help"])
    for sub in ["pack", "plan", "propagate", "reduce"]:
        check(sub in p.stdout, f"--help lists '{sub}'")

    # pack: the Quick-start example, JSON, SVG, output CSV, bad input.
    csv = os.path.join(ROOT, "examples", "packing", "transformer_step.csv")
    svg = os.path.join(WORK, "pack.svg")
    out_csv = os.path.join(WORK, "placed.csv")
    p = run(["pack", csv, "--svg", svg, "--output", out_csv])
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    check(last.startswith("peak=") and "lower_bound=" in last and "optimal=" in last and "seconds=" in last,
          "pack: last line is 'peak=... lower_bound=... optimal=... seconds=...'")
    check(os.path.isfile(svg) and "<svg" in open(svg).read(2000), "pack --svg writes an SVG")
    check(os.path.isfile(out_csv) and open(out_csv).readline().strip().endswith("offset"),
          "pack --output writes the offset column")
    p = run(["pack", csv, "--json"])
    try:
        j = json.loads(p.stdout)
        check(j["peak"] >= j["lower_bound"] > 0, "pack --json: peak >= lower_bound > 0")
    except Exception as e:  # noqa: BLE001
        check(False, f"pack --json prints one JSON object ({e})")
    bad = write("bad.csv", "id,lower,upper,size\n0,5,3,100\n")
    p = run(["pack", bad], expect_code=3)
    check("bad.csv:2" in p.stderr, "pack: a bad row is named by file and line")
    tight = write("tight.csv", "id,lower,upper,size\n0,0,2,100\n1,1,3,100\n")
    run(["pack", tight, "--capacity", "150"], expect_code=1)
    run(["pack", os.path.join(WORK, "missing.csv")], expect_code=3)

    # reduce: closed intervals, JSON, bad input.
    intervals = write("terms.csv", "id,first,last\n0,0,4\n1,0,4\n2,1,3\n3,2,5\n4,3,2\n")
    p = run(["reduce", intervals, "--json"])
    try:
        j = json.loads(p.stdout)
        check(j["terms_after"] <= j["terms_before"], "reduce --json: terms_after <= terms_before")
    except Exception as e:  # noqa: BLE001
        check(False, f"reduce --json prints one JSON object ({e})")
    run(["reduce", write("terms-bad.csv", "id,first,last\n0,x,4\n")], expect_code=3)

    # propagate and plan on the bundled model (our own JAX program compiled by XLA).
    hlo = os.path.join(ROOT, "examples", "planning", "mlp_train_step.hlo")
    p = run(["propagate", hlo])
    check("HloModule" in p.stdout, "propagate prints the module")
    p = run(["propagate", hlo, "--json"])
    try:
        check(isinstance(json.loads(p.stdout), list), "propagate --json prints a JSON array")
    except Exception as e:  # noqa: BLE001
        check(False, f"propagate --json parses ({e})")
    plan_svg = os.path.join(WORK, "plan.svg")
    p = run(["plan", hlo, "--svg", plan_svg])
    check("CompiledMemoryStats(" in p.stdout, "plan prints XLA's CompiledMemoryStats line")
    check(os.path.isfile(plan_svg) and "<svg" in open(plan_svg).read(2000), "plan --svg writes an SVG")
    p = run(["plan", hlo, "--json"])
    try:
        j = json.loads(p.stdout)
        check(all(k in j for k in ["compiled_memory_stats", "allocations", "live_ranges"]),
              "plan --json has compiled_memory_stats, allocations, live_ranges")
    except Exception as e:  # noqa: BLE001
        check(False, f"plan --json prints one JSON object ({e})")
    broken = write("broken.hlo", "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0\n}\n")
    p = run(["plan", broken], expect_code=3)
    check("broken.hlo:" in p.stderr, "plan: a malformed module is named with its place")
    run(["propagate", broken], expect_code=3)

    print(f"cli: {len(failures)} failed")
    for f in failures:
        print("\n--- " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
