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


def mlp_module(batch):
    """A small scheduled HLO module with metadata as JAX writes it: a two-layer MLP forward of
    `batch` rows. Two batch sizes are two compilations of one program (for `xlamem diff`)."""
    src = 'source_file="/home/user/model.py"'
    md = lambda op, line: f'metadata={{op_name="jit(mlp)/jit(main)/{op}" {src} source_line={line}}}'  # noqa: E731
    b = batch
    return f"""HloModule jit_mlp, is_scheduled=true, entry_computation_layout={{(f32[{b},64]{{1,0}}, f32[64,128]{{1,0}}, f32[128,10]{{1,0}})->f32[{b},10]{{1,0}}}}

ENTRY %main.5 (x.1: f32[{b},64], w1.2: f32[64,128], w2.3: f32[128,10]) -> f32[{b},10] {{
  %x.1 = f32[{b},64]{{1,0}} parameter(0), metadata={{op_name="x"}}
  %w1.2 = f32[64,128]{{1,0}} parameter(1), metadata={{op_name="w1"}}
  %w2.3 = f32[128,10]{{1,0}} parameter(2), metadata={{op_name="w2"}}
  %dot.4 = f32[{b},128]{{1,0}} dot(f32[{b},64]{{1,0}} %x.1, f32[64,128]{{1,0}} %w1.2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {md("dot_general", 12)}
  %tanh.5 = f32[{b},128]{{1,0}} tanh(f32[{b},128]{{1,0}} %dot.4), {md("tanh", 13)}
  %dot.6 = f32[{b},10]{{1,0}} dot(f32[{b},128]{{1,0}} %tanh.5, f32[128,10]{{1,0}} %w2.3), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {md("dot_general", 14)}
  ROOT %add.7 = f32[{b},10]{{1,0}} add(f32[{b},10]{{1,0}} %dot.6, f32[{b},10]{{1,0}} %dot.6), {md("add", 15)}
}}
"""


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


def error_line(p, command, place):
    """The one error format: `xlamem CMD: error: FILE:LINE:COL: message`."""
    first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
    return first.startswith(f"xlamem {command}: error: ") and place in first


def consistency(hlo, csv, intervals, broken, bad):
    # One error format in every subcommand, naming the place.
    p = run(["plan", broken], expect_code=3)
    check(error_line(p, "plan", "broken.hlo:5:"), "plan: 'xlamem plan: error: FILE:LINE:COL: ...'")
    p = run(["propagate", broken], expect_code=3)
    check(error_line(p, "propagate", "broken.hlo:5:"), "propagate: 'xlamem propagate: error: FILE:LINE:COL: ...'")
    p = run(["pack", bad], expect_code=3)
    check(error_line(p, "pack", "bad.csv:2"), "pack: 'xlamem pack: error: FILE:LINE...'")
    p = run(["reduce", write("terms-bad2.csv", "id,first,last\n0,x,4\n")], expect_code=3)
    check(error_line(p, "reduce", "terms-bad2.csv:2:"), "reduce: 'xlamem reduce: error: FILE:LINE:COL: ...'")
    p = run(["diff", broken, hlo], expect_code=3)
    check(error_line(p, "diff", "broken.hlo:5:"), "diff: 'xlamem diff: error: FILE:LINE:COL: ...'")
    p = run(["plan", os.path.join(WORK, "missing.hlo")], expect_code=3)
    check(error_line(p, "plan", "missing.hlo"), "plan: a missing file is named")

    # '-' reads standard input in every subcommand that reads a file.
    hlo_text, csv_text = open(hlo).read(), open(csv).read()
    p = run(["plan", "-"], stdin=hlo_text)
    check("peak:" in p.stdout, "plan - reads the module from standard input")
    p = run(["propagate", "-"], stdin=hlo_text)
    check("HloModule" in p.stdout, "propagate - reads standard input")
    p = run(["pack", "-", "--solver", "heuristic"], stdin=csv_text)
    check(p.stdout.strip().splitlines()[-1].startswith("peak="), "pack - reads standard input")
    p = run(["reduce", "-"], stdin=open(intervals).read())
    check("terms:" in p.stdout, "reduce - reads standard input")
    p = run(["pack", "-"], stdin="id,lower,upper,size\n0,5,3,100\n", expect_code=3)
    check(error_line(p, "pack", "<stdin>:2"), "pack -: errors name <stdin>")

    # One solver vocabulary in plan and pack; the old spellings are aliases.
    for solver in ["search", "heuristic", "xla", "first-fit", "skyline", "stack", "sweep"]:
        p = run(["pack", csv, "--solver", solver, "--time-limit", "0.2", "--json"])
        try:
            check(json.loads(p.stdout)["solver"] == solver, f"pack --solver {solver}")
        except Exception as e:  # noqa: BLE001
            check(False, f"pack --solver {solver} --json parses ({e})")
        p = run(["plan", hlo, "--solver", solver, "--time-limit", "0.2", "--json"])
        try:
            check(f"solver {solver}" in json.loads(p.stdout)["description"], f"plan --solver {solver}")
        except Exception as e:  # noqa: BLE001
            check(False, f"plan --solver {solver} --json parses ({e})")
    for alias, name in [("xla-best-fit", "xla"), ("portfolio", "heuristic"), ("auto", "search")]:
        p = run(["pack", csv, "--solver", alias, "--time-limit", "0.2", "--json"])
        check(json.loads(p.stdout or "{}").get("solver") == name, f"pack --solver {alias} is an alias of {name}")
    for cmd in (["pack", csv], ["plan", hlo]):
        p = run([*cmd, "--solver", "bogus"], expect_code=3)
        check("unknown solver 'bogus' (expected search, heuristic, xla, first-fit, skyline, stack or sweep)" in p.stderr,
              f"{cmd[0]} --solver bogus names the solvers")

    # The same JSON style: one object with "command" and "file"; bytes are integers.
    for args in (["plan", hlo], ["pack", csv], ["propagate", hlo], ["reduce", intervals]):
        p = run([*args, "--json"])
        try:
            j = json.loads(p.stdout)
            check(isinstance(j, dict) and j.get("command") == args[0] and "file" in j,
                  f"{args[0]} --json: one object with command and file")
        except Exception as e:  # noqa: BLE001
            check(False, f"{args[0]} --json parses ({e})")
    j = json.loads(run(["plan", hlo, "--json"]).stdout)
    check(all(isinstance(v, int) for v in j["compiled_memory_stats"].values()), "plan --json: bytes are integers")

    # Hostile and degenerate command lines.
    p = run(["plan", hlo, "--alignment", "0"], expect_code=3)
    check(error_line(p, "plan", "--alignment") and "power of two" in p.stderr and "1.79769" not in p.stderr,
          "plan --alignment 0 says a power of two is needed")
    p = run(["plan", hlo, "--alignment", "48"], expect_code=3)
    check("power of two" in p.stderr, "plan --alignment 48 is refused")
    # Backends: XLA:GPU's rules and its alignment unless one is given.
    d = json.loads(run(["plan", hlo, "--backend", "gpu", "--solver", "xla", "--json"]).stdout)["description"]
    check("alignment 256" in d and "XLA:GPU rules" in d, f"plan --backend gpu plans with XLA:GPU's rules at 256 B ({d})")
    d = json.loads(run(["plan", hlo, "--backend", "gpu", "--alignment", "128", "--json"]).stdout)["description"]
    check("alignment 128" in d, "plan --backend gpu --alignment 128 keeps the alignment given")
    d = json.loads(run(["plan", hlo, "--json"]).stdout)["description"]
    check("alignment 64" in d and "GPU" not in d, "plan plans with XLA:CPU's rules by default")
    p = run(["plan", hlo, "--backend", "tpu"], expect_code=3)
    check(error_line(p, "plan", "--backend") and "unknown backend 'tpu'" in p.stderr,
          "plan --backend tpu names the backends")
    p = run(["frobnicate"], expect_code=2)
    check("unknown command 'frobnicate'" in p.stderr and "plan" in p.stderr and "diff" in p.stderr,
          "an unknown command is named and the commands listed")
    for value, words in [("nan", "not a number"), ("-1", "negative")]:
        p = run(["pack", csv, "--time-limit", value], expect_code=3)
        check(error_line(p, "pack", "--time-limit") and words in p.stderr, f"pack --time-limit {value} is refused")
    # One meaning of a time limit in every command: 0 the quickest answer, inf none.
    tiny = write("tiny.csv", "id,lower,upper,size\na,0,4,64\nb,2,6,32\n")
    p = run(["pack", tiny, "--time-limit", "inf", "--json"])
    check(json.loads(p.stdout)["status"] == "optimal", "pack --time-limit inf: no limit, the search finishes")
    p = run(["pack", csv, "--time-limit", "0", "--json"])
    check(json.loads(p.stdout)["status"] in ("optimal", "time_limit"), "pack --time-limit 0: the quickest placement")
    p = run(["plan", hlo, "--time-limit", "nan"], expect_code=3)
    check("not a number" in p.stderr, "plan --time-limit nan is refused")
    p = run(["plan", hlo, "--no-such-option"], expect_code=2)
    check(error_line(p, "plan", "--no-such-option"), "plan: an unknown option is a usage error")


def diagnosis(hlo):
    # The summary for people: at most 30 lines, the peak, the heap, fragmentation, top buffers.
    p = run(["plan", hlo])
    lines = p.stdout.splitlines()
    check(len(lines) <= 30, f"plan summary of the demo is {len(lines)} lines (at most 30)")
    for words in ["peak:", "while running", "temporary heap", "lower bound", "fragmentation at the peak",
                  "largest free hole", "largest buffers live at the peak"]:
        check(words in p.stdout, f"plan summary says '{words}'")
    p = run(["plan", hlo, "--dump", "xla"])
    check(p.stdout.startswith("BufferAssignment:") and "Total bytes used" in p.stdout,
          "plan --dump xla prints XLA's allocation table")
    run(["plan", hlo, "--dump", "nonsense"], expect_code=3)

    # Sources from metadata.
    small = write("mlp_b256.hlo", mlp_module(256))
    big = write("mlp_b512.hlo", mlp_module(512))
    p = run(["plan", small])
    check("model.py:1" in p.stdout and "dot_general" in p.stdout, "plan: top buffers show model.py:LINE and op_name")
    out = p.stdout.splitlines()
    header = next((k for k, l in enumerate(out) if l.split()[:2] == ["size", "kind"]), None)
    top = out[header + 1] if header is not None and header + 1 < len(out) else ""
    check("model.py:1" in top, f"plan: the top buffer's source line is printed ({top.strip()})")

    # XLA's own plan: a buffer-assignment dump and a dump folder, reported without replanning.
    oracle = os.path.join(ROOT, "test", "data", "xla-oracle")
    folder = os.path.join(oracle, "mlp_train_step")
    ba = os.path.join(folder, "jit_mlp_train_step.cpu_after_optimizations-buffer-assignment.txt")
    p = run(["plan", ba, "--json"])
    j = json.loads(p.stdout or "{}")
    check(j.get("origin") == "xla", "plan on *-buffer-assignment.txt reports XLA's plan")
    check(j.get("compiled_memory_stats", {}).get("temp_size_in_bytes") ==
          json.load(open(os.path.join(folder, "memory_analysis.json")))["temp_size_in_bytes"],
          "plan on XLA's dump: temp bytes as XLA's memory_analysis()")
    mine = json.loads(run(["plan", os.path.join(folder, "jit_mlp_train_step.cpu_after_optimizations.txt"),
                           "--solver", "xla", "--json"]).stdout or "{}")
    check(j.get("peak", {}).get("bytes") == mine.get("peak", {}).get("bytes"),
          "plan on XLA's dump: the peak of xlamem's XLA-exact plan of the module")
    p = run(["plan", folder])
    check("XLA's buffer assignment" in p.stdout and len(p.stdout.splitlines()) <= 30,
          "plan on a --xla_dump_to folder reports XLA's plan in at most 30 lines")
    p = run(["plan", folder, "--replan", "--solver", "xla"])
    check("xlamem plan" in p.stdout, "plan FOLDER --replan plans the module")
    p = run(["plan", folder, "--module", "mlp_train"])
    check("jit_mlp_train_step" in p.stdout, "plan FOLDER --module picks the module by name")
    p = run(["plan", folder, "--module", "nope"], expect_code=3)
    check("jit_mlp_train_step" in p.stderr, "plan FOLDER --module with no match lists the modules")
    for name in sorted(os.listdir(oracle)):
        d = os.path.join(oracle, name)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith("after_optimizations.txt"):
                n = len(run(["plan", os.path.join(d, f), "--solver", "xla"]).stdout.splitlines())
                check(n <= 30, f"plan summary of oracle {name} is {n} lines (at most 30)")
        n = len(run(["plan", d]).stdout.splitlines())
        check(n <= 30, f"plan summary of XLA's plan of oracle {name} is {n} lines (at most 30)")

    # diff: identical modules, then a batch doubled.
    p = run(["diff", small, small])
    check("no change" in p.stdout, "diff of two identical modules: no change")
    p = run(["diff", small, big])
    check("no change" not in p.stdout and "+" in p.stdout and "peak" in p.stdout, "diff names the peak's growth")
    grown = [l for l in p.stdout.splitlines() if l.strip().startswith("+") and "model.py:1" in l]
    check(any("dot.4" in l for l in grown) and any("tanh.5" in l for l in grown),
          "diff names the buffers that grew, with their sources")
    j = json.loads(run(["diff", small, big, "--json"]).stdout or "{}")
    check(j.get("command") == "diff" and not j.get("identical") and
          any(c["name"] == "dot.4" and c["delta"] > 0 and c.get("source", {}).get("source_line") == 12
              for c in j.get("changed", [])), "diff --json: dot.4 grew, from model.py:12")
    # Our JAX train step with the batch doubled (every batch dimension 32 -> 64).
    step = open(hlo).read()
    doubled = write("mlp_train_step_b64.hlo", step.replace("[32,", "[64,").replace("[32]", "[64]"))
    p = run(["diff", hlo, doubled])
    check("compare_select_fusion" in p.stdout and "f32[32,512]{1,0} -> f32[64,512]{1,0}" in p.stdout,
          "diff of the train step with the batch doubled names the grown activations")
    p = run(["diff", folder, folder])
    check("no change" in p.stdout, "diff of a dump folder with itself: no change")

    # The page and the picture.
    page = os.path.join(WORK, "plan.html")
    run(["plan", small, "--html", page])
    html = open(page).read() if os.path.isfile(page) else ""
    check(html.startswith("<!DOCTYPE html>") and 'id="chart"' in html and "<script>" in html,
          "plan --html writes one self-contained page")


def main():
    global EXE, ROOT, WORK
    EXE, ROOT, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    os.makedirs(WORK, exist_ok=True)

    p = run(["--version"])
    check(p.stdout.startswith("xlamem "), "--version names the tool")
    p = run(["--help"])
    for sub in ["autoshard", "diff", "pack", "plan", "propagate", "reduce", "shard"]:
        check(sub in p.stdout, f"--help lists '{sub}'")

    # pack: the Quick-start example, JSON, SVG, output CSV, bad input.
    csv = os.path.join(ROOT, "examples", "packing", "transformer_step.csv")
    svg = os.path.join(WORK, "pack.svg")
    out_csv = os.path.join(WORK, "placed.csv")
    p = run(["pack", csv, "--svg", svg, "--output", out_csv])
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    check(last.startswith("peak=") and "lower_bound=" in last and "optimal=" in last and "seconds=" in last
          and (" status=optimal" in last or " status=feasible" in last),
          "pack: last line is 'peak=... lower_bound=... optimal=... seconds=... status=...'")
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
    # The time limit is kept by every solver: XLA's best fit cut short, the sweep places.
    rows, state = ["id,lower,upper,size"], 7
    for i in range(20000):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        lo, span, size = state % 4000, 1 + (state >> 20) % 1333, 1 + (state >> 40) % 1000
        rows.append(f"{i},{lo},{lo + span},{size}")
    busy = write("busy.csv", "\n".join(rows) + "\n")
    p = run(["pack", busy, "--solver", "xla", "--time-limit", "0.001", "--json"])
    try:
        j = json.loads(p.stdout)
        check(j["status"] == "time_limit" and j["fallback"] == "sweep" and j["peak"] >= j["lower_bound"],
              "pack --time-limit: a solver cut short reports status time_limit and the fallback that placed")
    except Exception as e:  # noqa: BLE001
        check(False, f"pack --time-limit --json prints one JSON object ({e})")

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
        check(isinstance(json.loads(p.stdout)["leaves"], list), "propagate --json: leaves is an array")
    except Exception as e:  # noqa: BLE001
        check(False, f"propagate --json parses ({e})")
    plan_svg = os.path.join(WORK, "plan.svg")
    p = run(["plan", hlo, "--svg", plan_svg])
    check("CompiledMemoryStats(" in p.stdout, "plan prints XLA's CompiledMemoryStats line")
    check(os.path.isfile(plan_svg) and "<svg" in open(plan_svg).read(2000), "plan --svg writes an SVG")
    check("all device memory over time" in open(plan_svg).read(4000), "plan --svg draws the whole memory (io/codec/svg.hpp)")
    p = run(["plan", hlo, "--json"])
    try:
        j = json.loads(p.stdout)
        check(all(k in j for k in ["compiled_memory_stats", "allocations", "live_ranges", "peak", "buffers",
                                   "temp_heaps", "fragmentation_at_peak"]),
              "plan --json has compiled_memory_stats, allocations, live_ranges, peak, buffers, heaps, fragmentation")
    except Exception as e:  # noqa: BLE001
        check(False, f"plan --json prints one JSON object ({e})")
    broken = write("broken.hlo", "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0\n}\n")
    p = run(["plan", broken], expect_code=3)
    check("broken.hlo:" in p.stderr, "plan: a malformed module is named with its place")
    run(["propagate", broken], expect_code=3)

    consistency(hlo, csv, intervals, broken, bad)
    diagnosis(hlo)
    dump_folder_sources()
    sharding()
    autosharding()
    reliability_checks()

    print(f"cli: {len(failures)} failed")
    for f in failures:
        print("\n--- " + f)
    return 1 if failures else 0


def dump_folder_sources():
    """`xlamem plan DIR` on an --xla_dump_to folder written by JAX 0.12 reads XLA's own plan and
    takes the sources from the module beside it (its stack-frame tables): file:line, not only
    op names. The folder is one program of the corpus, unpacked here."""
    import tarfile
    archive = os.path.join(ROOT, "test", "data", "xla-corpus", "jax-0.12.0.1.tar.xz")
    folder = os.path.join(WORK, "dump-moe_topk")
    os.makedirs(folder, exist_ok=True)
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            if m.isfile() and "/moe_topk/" in m.name and m.name.endswith(".txt"):
                with open(os.path.join(folder, os.path.basename(m.name)), "wb") as out:
                    out.write(tar.extractfile(m).read())
    p = run(["plan", folder])
    check("XLA's" in p.stdout and ".py:" in p.stdout, "plan DIR: XLA's own plan with file:line sources from the module")
    dump = [f for f in os.listdir(folder) if f.endswith("-buffer-assignment.txt")]
    if dump:
        p = run(["plan", os.path.join(folder, dump[0])])
        check(".py:" in p.stdout, "plan *-buffer-assignment.txt: file:line sources from the module beside it")


def autosharding():
    """xlamem autoshard on the bundled training step: within a limit that rules out replicated
    weights, the weights come back sharded and the written module carries a sharding= attribute
    on every entry instruction (and reads back to the same layouts); an impossible limit exits 1
    and says how low any sharding goes; bad meshes, machines, sizes and modules exit 3 by name."""
    example = os.path.join(ROOT, "examples", "autoshard", "mlp_train_step.hlo")
    annotated = os.path.join(WORK, "annotated.hlo")
    p = run(["autoshard", example, "--mesh", "2x4", "--memory-limit", "20MiB", "--time-limit", "3", "--threads", "1",
             "--output", annotated, "--json"])
    try:
        r = json.loads(p.stdout)
    except ValueError:
        r = {}
    check(r.get("fits") is True and 0 < r.get("peak_bytes", 1 << 40) <= 20 << 20,
          "autoshard: the answer's predicted peak is within 20 MiB")
    check(r.get("mesh") == "x=2,y=4" and r.get("machine") == "cpu-host-8", "autoshard: mesh and default machine named")
    specs = [q.get("spec") for q in r.get("parameters", [])]
    check(len(specs) == 4 and specs[0] != "P(None, None)" and specs[1] != "P(None, None)",
          "autoshard: the weights (16 MiB each) are not replicated under a 20 MiB limit")
    text = open(annotated).read() if os.path.isfile(annotated) else ""
    entry = text[text.find("ENTRY"):]
    check(entry.count("sharding={") >= 38, "autoshard --output: every entry instruction carries a sharding")
    p = run(["autoshard", annotated, "--mesh", "2x4", "--memory-limit", "20MiB", "--time-limit", "3", "--json"])
    try:
        again = json.loads(p.stdout)
    except ValueError:
        again = {}
    check(again.get("cost_ns") is not None and r.get("cost_ns") is not None and
          int(again["cost_ns"]) <= int(r["cost_ns"]) and again.get("parameters") == r.get("parameters"),
          "autoshard: the annotated module reads back to the same layouts, at no higher cost")
    p = run(["autoshard", example, "--mesh", "2x4", "--time-limit", "2"])
    check("peak:" in p.stdout and "arguments:" in p.stdout and "largest arrays:" in p.stdout,
          "autoshard: the summary names the peak, the arguments' specs and the largest arrays")
    p = run(["autoshard", example, "--mesh", "2x4", "--memory-limit", "1MiB", "--time-limit", "2"], expect_code=1)
    check("over the limit" in p.stdout and "no sharding on this mesh holds less than" in p.stdout,
          "autoshard: an impossible limit exits 1 and says how low any sharding goes")
    p = run(["autoshard", example, "--mesh", "2xx4"], expect_code=3)
    check(error_line(p, "autoshard", "--mesh") and "axis 1" in p.stderr, "autoshard: a bad mesh is named")
    p = run(["autoshard", example, "--mesh", "4x4"], expect_code=3)
    check("16 devices" in p.stderr and "cpu-host-8" in p.stderr, "autoshard: a mesh larger than the machine is named")
    p = run(["autoshard", example, "--mesh", "8", "--machine", "dgx-a100"], expect_code=3)
    check("no machine called 'dgx-a100'" in p.stderr and "h100-8-nvlink" in p.stderr,
          "autoshard: an unknown machine lists the presets")
    p = run(["autoshard", example, "--mesh", "8", "--memory-limit", "12 parsecs"], expect_code=3)
    check("--memory-limit '12 parsecs' is not a size" in p.stderr, "autoshard: a bad size is named")
    broken = write("broken_autoshard.hlo", "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0\n}\n")
    p = run(["autoshard", broken, "--mesh", "8"], expect_code=3)
    check("broken_autoshard.hlo:" in p.stderr, "autoshard: a malformed module is named with its place")


def sharding():
    """xlamem shard on the bundled example: solved, written, scored back; bad input exits 3
    with the JSON path; an impossible limit exits 1 with the least excess."""
    example = os.path.join(ROOT, "examples", "sharding", "mlp_block.json")
    sol = os.path.join(WORK, "mlp_block.sol")
    p = run(["shard", example, "--time-limit", "2", "--output", sol, "--json"])
    r = json.loads(p.stdout) if p.returncode == 0 else {}
    check(r.get("status") == "optimal" and r.get("cost") == "1256" and r.get("forbidden_choices") == 0,
          "shard: the example's optimum (1256), proven")
    check(int(r.get("peak", "999")) <= r.get("limit", 0), "shard: the answer's peak is within the limit")
    p = run(["shard", example, "--evaluate", sol, "--json"])
    e = json.loads(p.stdout) if p.returncode == 0 else {}
    check(e.get("cost") == "1256" and e.get("feasible") is True, "shard --evaluate scores the written solution")
    p = run(["shard", "-", "--time-limit", "1"], stdin=open(example).read())
    check("1256" in p.stdout, "shard: '-' reads standard input")

    problem = json.load(open(example))
    tight = json.loads(json.dumps(problem))
    tight["problem"]["usage_limit"] = 100
    p = run(["shard", write("tight.json", json.dumps(tight)), "--time-limit", "1"], expect_code=1)
    check("limit" in p.stdout, "shard: no answer within an impossible limit exits 1 and says so")
    bad = json.loads(json.dumps(problem))
    bad["problem"]["edges"]["costs"][3] = [1, 2]
    p = run(["shard", write("badedge.json", json.dumps(bad))], expect_code=3)
    check(error_line(p, "shard", "badedge.json") and "edges" in p.stderr,
          "shard: a cost matrix of the wrong size names the file and the JSON path")
    blob = open(example, "rb").read()
    import gzip
    cut = os.path.join(WORK, "cut.json.gz")
    with open(cut, "wb") as f:
        f.write(gzip.compress(blob)[:200])
    p = run(["shard", cut], expect_code=3)
    check(error_line(p, "shard", "cut.json.gz"), "shard: a truncated gzip names the file")
    p = run(["shard", example, "--time-limit", "-1"], expect_code=3)
    check(error_line(p, "shard", "--time-limit"), "shard --time-limit -1 is refused, as pack's is")
    p = run(["shard", example, "--evaluate", write("short.sol", "[0, 1]\n")], expect_code=3)
    check(error_line(p, "shard", "short.sol"), "shard --evaluate: a solution of the wrong length names the file")
    reproducible_shard()


def random_iopddl(seed, nodes):
    """A random IOPDDL problem: a chain plus random edges, 2-4 strategies, overlapping intervals."""
    import random
    rng = random.Random(seed)
    k = [rng.randint(2, 4) for _ in range(nodes)]
    intervals = []
    for i in range(nodes):
        lo = rng.randint(0, nodes // 2)
        intervals.append([lo, lo + rng.randint(1, nodes // 4)])
    usages = [[rng.randint(1, 100) for _ in range(k[i])] for i in range(nodes)]
    load = [0] * (nodes + nodes // 4 + 1)  # the least usage at each time step
    for (lo, hi), u in zip(intervals, usages):
        for t in range(lo, hi):
            load[t] += min(u)
    least_peak = max(load)
    pairs = [(i, i + 1) for i in range(nodes - 1)] + [tuple(sorted(rng.sample(range(nodes), 2))) for _ in range(nodes // 2)]
    return {"problem": {
        "name": f"random-{seed}",
        "nodes": {"intervals": intervals, "costs": [[rng.randint(0, 1000) for _ in range(n)] for n in k], "usages": usages},
        "edges": {"nodes": [list(e) for e in pairs],
                  "costs": [[rng.randint(0, 500) for _ in range(k[a] * k[b])] for a, b in pairs]},
        "usage_limit": least_peak * 6 // 5}}


def reproducible_shard():
    """--threads 1 with a --work-limit: the same answer alone and beside a second run competing
    for the CPUs (a different pace), with status work_limit."""
    problem = write("random-800.json", json.dumps(random_iopddl(5, 800)))
    args = ["shard", problem, "--threads", "1", "--work-limit", "2000", "--seed", "7", "--time-limit", "100", "--json"]
    alone = run([*args, "--output", os.path.join(WORK, "alone.sol")])
    side = [subprocess.Popen([EXE, *args, "--output", os.path.join(WORK, f"side{i}.sol")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [proc.communicate(timeout=120)[0] for proc in side]
    answers = [json.loads(o) if o.strip() else {} for o in [alone.stdout, *outs]]
    solutions = [open(os.path.join(WORK, name)).read() if os.path.exists(os.path.join(WORK, name)) else None
                 for name in ["alone.sol", "side0.sol", "side1.sol"]]
    check(answers[0].get("status") == "work_limit" and answers[0].get("work_limit") == 2000,
          "shard --work-limit: the work limit ended the search (status work_limit)")
    check(all(a.get("cost") == answers[0].get("cost") and a.get("search_steps") == answers[0].get("search_steps")
              for a in answers) and solutions[0] is not None and solutions.count(solutions[0]) == 3,
          "shard --threads 1 --work-limit: the same solution alone and under load " +
          str([(a.get("cost"), a.get("relaxation_steps"), a.get("search_steps")) for a in answers]))


def reliability_checks():
    """Hostile inputs get exit status 3 and a message naming the file and place."""
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

    for sub, arg in [("reduce", WORK), ("pack", WORK), ("propagate", WORK)]:
        bad([sub, arg], "is a directory", what=f"{sub}: a directory")
    # plan reads a folder as an --xla_dump_to dump: one without modules is refused.
    empty = os.path.join(WORK, "empty-dump")
    os.makedirs(empty, exist_ok=True)
    bad(["plan", empty], "empty-dump", "--xla_dump_to folder", what="plan: a folder without modules")
    if os.path.exists("/dev/zero"):
        for sub in ["reduce", "plan", "pack", "propagate"]:
            bad([sub, "/dev/zero"], "/dev/zero: is not a regular file", what=f"{sub}: /dev/zero")

    bad(["reduce", write("bigid.csv", "id,first,last\n100000000,0,1\n")], "bigid.csv:2:1:", "id 0 is missing",
        what="reduce: one huge id")
    bad(["reduce", write("maxlast.csv", "id,first,last\n0,0,9223372036854775807\n")], "maxlast.csv:2:5:",
        "out of range", what="reduce: last = INT64_MAX")
    bad(["reduce", write("norows.csv", "id,first,last\n")], "norows.csv:1:1:", "no primitives",
        what="reduce: no rows")
    # A dump folder with decoys named like modules (a FIFO, a stale link, a folder) and many
    # modules: the real module is planned, the no-match message stays short.
    decoys = os.path.join(WORK, "decoys")
    os.makedirs(decoys, exist_ok=True)
    with open(os.path.join(decoys, "module_real.cpu_after_optimizations.txt"), "w") as f:
        f.write(mlp_module(8))
    fifo = os.path.join(decoys, "module_zfifo.cpu_after_optimizations.txt")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    stale = os.path.join(decoys, "module_zstale.cpu_after_optimizations.txt")
    if not os.path.lexists(stale):
        os.symlink(os.path.join(decoys, "gone"), stale)
    os.makedirs(os.path.join(decoys, "module_zdir.cpu_after_optimizations.txt"), exist_ok=True)
    for k in range(300):
        open(os.path.join(decoys, f"module_{k:04d}.cpu_after_optimizations-buffer-assignment.txt"), "w").close()
    p = run(["plan", decoys, "--module", "module_real"])
    check("peak" in p.stdout, "plan DIR --module: FIFOs, stale links and folders named like modules are passed over")
    p = run(["plan", decoys, "--module", "nomatch"], expect_code=3)
    check("and 281 more" in p.stderr and len(p.stderr) < 2000,
          f"plan DIR --module nomatch: a short message ({len(p.stderr)} bytes)")
    # Output lost on a full disk is a failure with the reason: a file asked for
    # and standard output alike.
    if os.path.exists("/dev/full"):
        csv = os.path.join(ROOT, "examples", "packing", "transformer_step.csv")
        bad(["pack", csv, "--output", "/dev/full"], "/dev/full", "No space left", what="pack --output /dev/full")
        bad(["pack", csv, "--svg", "/dev/full"], "/dev/full", "No space left", what="pack --svg /dev/full")
        with open("/dev/full", "w") as full:
            p = subprocess.run([EXE, "pack", csv], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        check(p.returncode == 3 and "standard output" in p.stderr, "pack > /dev/full: exit 3, naming standard output")
    # XLA writes {INT64_MAX, 0} for a primitive that is never live: read as no interval, and
    # reduced exactly as any other empty pair.
    rows = ["id,first,last", "0,0,9", "1,9223372036854775807,0", "2,2,7", "3,4,12", "4,9223372036854775807,0", "5,0,12"]
    marker = run(["reduce", write("xla-empty.csv", "\n".join(rows) + "\n"), "--json"])
    plain = run(["reduce", write("plain-empty.csv", "\n".join(r.replace("9223372036854775807,0", "1,0")
                                                                for r in rows) + "\n"), "--json"])
    if marker.returncode == 0 and plain.returncode == 0:
        a, b = json.loads(marker.stdout), json.loads(plain.stdout)
        a.pop("file", None), b.pop("file", None)
        for d in (a, b):
            for k in [k for k in d if "seconds" in k]:
                d.pop(k)
            d["intervals"] = [iv if iv[0] <= iv[1] else "empty" for iv in d.get("intervals", [])]
        check(a == b, "reduce: XLA's empty-interval marker {INT64_MAX, 0} reduces as any empty interval")

    token = "q" * 5_000_000
    bad(["plan", write("token.hlo", module(f"  ROOT p = f32[] {token}(0)\n"))], "token.hlo:4:", "unknown opcode",
        what="plan: a 5 MB token")

    run(["pack", write("bom.csv", "\ufeffid,lower,upper,size\n0,0,2,8\n1,1,3,8\n")])
    bad(["pack", write("dup.csv", "id,lower,upper,size\na,0,2,8\nb,1,3,8\na,2,4,8\n")], "dup.csv:4:1:",
        "duplicate id", what="pack: duplicate ids")

    def call_chain(depth):
        chain = ["HloModule chain\n"]
        for k in range(depth, 0, -1):
            call = f"call(p), to_apply=c{k + 1}" if k < depth else "copy(n)"
            chain.append(f"c{k} {{\n  p = f32[8]{{0}} parameter(0)\n  n = f32[8]{{0}} negate(p)\n"
                         f"  ROOT r = f32[8]{{0}} {call}\n}}\n")
        chain.append("ENTRY main {\n  p0 = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} call(p0), to_apply=c1\n}\n")
        return "".join(chain)

    # Near-linear dataflow, reuse checks and report on a chain of 10^5 computations
    # (300,002 instructions, 11 MB): propagate, then plan with the summary, the page and the
    # picture (about 2-3 s each on the CI machine; quadratic steps took minutes).
    chain = write("chain5.hlo", call_chain(100000))
    run(["propagate", chain, "--json"])
    page, picture = os.path.join(WORK, "chain5.html"), os.path.join(WORK, "chain5.svg")
    p = run(["plan", chain, "--solver", "xla", "--html", page, "--svg", picture])
    check("300002 instructions" in p.stdout and os.path.getsize(page) > 0 and os.path.getsize(picture) > 0,
          "plan: a call chain of 10^5 computations is planned, with its page and picture")


if __name__ == "__main__":
    sys.exit(main())
