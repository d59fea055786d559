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

    reliability_checks()

    print(f"cli: {len(failures)} failed")
    for f in failures:
        print("\n--- " + f)
    return 1 if failures else 0


def reliability_checks():
    """Issue 21: hostile inputs get exit status 3 and a message naming the file and place."""
    def bad(args, *needles, what):
        p = run(args, expect_code=3)
        for n in needles:
            check(n in p.stderr, f"{what}: stderr names {n!r}")
        check(len(p.stderr) < 4000, f"{what}: the message is bounded ({len(p.stderr)} bytes)")
        return p

    def module(body):
        return "HloModule m\n\nENTRY e {\n" + body + "}\n"

    shape = "f32[]"
    for _ in range(20000):
        shape = "f32[]{:P(" + shape + ")}"
    nested = write("nested.hlo", module(f"  ROOT p = {shape} parameter(0)\n"))
    for sub in ["plan", "propagate"]:
        bad([sub, nested], "nested.hlo:4:", "nests too deeply", what=f"{sub}: nested physical shapes")

    huge = write("huge.hlo", module("  ROOT huge = f32[4611686018427387904] parameter(0)\n"))
    bad(["plan", huge], "huge.hlo:4:", "'huge'", "2^60", what="plan: a 2^64-byte shape")

    temps = "".join(f"  t{k} = u8[1152921504606846976] broadcast(p)\n" for k in range(16))
    outs = ", ".join("u8[1152921504606846976]" for _ in range(16))
    names = ", ".join(f"t{k}" for k in range(16))
    big = write("sum.hlo", module("  p = u8[8] parameter(0)\n" + temps + f"  ROOT r = ({outs}) tuple({names})\n"))
    bad(["plan", big], "sum.hlo:5:", "'t0'", "sum to more than", what="plan: 16 buffers of 2^60 bytes")
    csv = write("sum.csv", "id,lower,upper,size\n" + "".join(f"{k},0,2,1152921504606846976\n" for k in range(16)))
    bad(["pack", csv], "sum.csv:2:", "2^60", what="pack: sizes summing above 2^60")

    alias = write("alias.hlo", module("  p = f32[4] parameter(0)\n  ROOT c = f32[4] custom-call(p), "
                                      "custom_call_target=\"x\", output_to_operand_aliasing={{}: (0 {})}\n"))
    bad(["plan", alias], "alias.hlo:5:", "expected ','", what="plan: malformed output_to_operand_aliasing")

    for sub, arg in [("reduce", WORK), ("plan", WORK), ("pack", WORK), ("propagate", WORK)]:
        bad([sub, arg], "is a directory", what=f"{sub}: a directory")
    if os.path.exists("/dev/zero"):
        for sub in ["reduce", "plan", "pack", "propagate"]:
            bad([sub, "/dev/zero"], "/dev/zero: is not a regular file", what=f"{sub}: /dev/zero")

    bad(["reduce", write("bigid.csv", "id,first,last\n100000000,0,1\n")], "bigid.csv:", "id 0 is missing",
        what="reduce: one huge id")
    bad(["reduce", write("maxlast.csv", "id,first,last\n0,0,9223372036854775807\n")], "maxlast.csv:2:5:",
        "out of range", what="reduce: last = INT64_MAX")
    bad(["reduce", write("norows.csv", "id,first,last\n")], "norows.csv:1:1:", "no primitives",
        what="reduce: no rows")

    token = "q" * 5_000_000
    bad(["plan", write("token.hlo", module(f"  ROOT p = f32[] {token}(0)\n"))], "token.hlo:4:", "unknown opcode",
        what="plan: a 5 MB token")

    run(["pack", write("bom.csv", "\ufeffid,lower,upper,size\n0,0,2,8\n1,1,3,8\n")])
    bad(["pack", write("dup.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\na,2,4,8\n")], "dup.csv:4:1:",
        "duplicate id", what="pack: duplicate ids")

    chain = ["HloModule chain\n"]
    depth = 100000  # 10^5: the worklist dataflow and no recursion per call level
    for k in range(depth, 0, -1):
        call = f"call(p), to_apply=c{k + 1}" if k < depth else "copy(n)"
        chain.append(f"c{k} {{\n  p = f32[8]{{0}} parameter(0)\n  n = f32[8]{{0}} negate(p)\n"
                     f"  ROOT r = f32[8]{{0}} {call}\n}}\n")
    chain.append("ENTRY main {\n  p0 = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} call(p0), to_apply=c1\n}\n")
    chain_file = write("chain.hlo", "".join(chain))
    p = run(["plan", chain_file, "--solver", "xla"])
    check("CompiledMemoryStats(" in p.stdout, "plan: a call chain of 10^5 computations is planned")
    run(["propagate", chain_file, "--json"])


if __name__ == "__main__":
    sys.exit(main())
