#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`python -m xlamem` is the xlamem tool (needs the installed package and the built tool, not
JAX; test/python/run.sh runs it in the wheel's virtual environment).

Checks: the same commands; for every command, the same options with the same value types and
the same stated defaults (parsed from `CMD --help`), and the same help text; the same output,
files, and exit status for each command run with its defaults and with options, for bad input
and usage errors; in a process of one's own, `xlamem.__main__.main()` writes to sys.stdout and
sys.stderr as they are redirected and reads sys.stdin for `-`; Ctrl-C stops a long `pack`
(KeyboardInterrupt in-process, the process ended as the tool's is); and the default-solver rule
(README, "The command-line tool") in every front end: `search` where a plan stands alone
(`plan`, `pack`, `xlamem.pack()`), `xla` where it is set beside another (`diff`,
`xlamem.diff()`, `xlamem.report()` beside `memory_analysis()`).

Usage: command_line_test.py SOURCE_ROOT WORK_DIR XLAMEM_CLI
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

from arguments_test import LATENCY, hard_module, hard_rows, sigint_child
from python_test import check, summary  # noqa: E402 - the same report of checks

PYTHON_CLI = [sys.executable, "-m", "xlamem"]


def run(cmd: list[str], args: list[str], cwd: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(cmd + args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


def commands(help_text: str) -> list[str]:
    """The commands `xlamem --help` lists under "Subcommands:"."""
    section = help_text.split("Subcommands:", 1)[-1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ")]


def stated_default(head: list[str], text: str) -> str | None:
    """The default an option's help states: CLI11's `[value]`, "Default here: X",
    "(default X...)", or "X (... the default)" (the solver table marks its default so)."""
    captured = [w[1:-1] for w in head if w.startswith("[") and w.endswith("]")]
    for pattern in (r"Default here: ([\w-]+)", r"\(default:? ([^;)]+)", r"([\w-]+) \([^;]*?\bthe default\)"):
        m = re.search(pattern, text)
        if m:
            return m.group(1).strip()
    return captured[0] if captured else None


def options(help_text: str) -> dict[str, tuple[str, str | None]]:
    """Each positional and option of a command's help: its value type and its stated default."""
    rows: list[tuple[list[str], str]] = []
    for line in help_text.splitlines():
        if line.startswith("    ") and rows:  # the help of a long option, on the next line
            rows[-1] = (rows[-1][0], rows[-1][1] + " " + line.strip())
        elif line.startswith("  ") and not line.startswith("   "):
            head, _, text = line.strip().partition("  ")
            rows.append((head.split(), text.strip()))
    return {words[0]: (" ".join(words[1:]), stated_default(words, text)) for words, text in rows if words}


def same_options(cli: str, work: str) -> list[str]:
    """Every command's options and defaults, the tool's and `python -m xlamem`'s."""
    tool, py = run([cli], ["--help"], work), run(PYTHON_CLI, ["--help"], work)
    names = commands(tool.stdout)
    check(len(names) >= 6 and names == commands(py.stdout), f"the same commands: {names} and {commands(py.stdout)}")
    check(tool.stdout == py.stdout and tool.returncode == py.returncode == 0, "xlamem --help: the same text")
    for name in names:
        tool, py = run([cli], [name, "--help"], work), run(PYTHON_CLI, [name, "--help"], work)
        mine, theirs = options(tool.stdout), options(py.stdout)
        stated = {k: v[1] for k, v in mine.items() if v[1] is not None}
        check(len(mine) >= 3 and mine == theirs and tool.returncode == py.returncode == 0,
              f"{name}: the same {len(mine)} options, types and defaults ({stated}); python -m gives "
              f"{ {k: v for k, v in theirs.items() if mine.get(k) != v} }, lacks {sorted(set(mine) - set(theirs))}")
        check(tool.stdout == py.stdout and tool.stderr == py.stderr, f"xlamem {name} --help: the same text")
    return names


def normalised(text: str) -> str:
    """Output with timings (every decimal fraction) and pack's seconds= hidden."""
    return re.sub(r"\d+\.\d+(e-?\d+)?", "#", text)


def same_runs(cli: str, root: str, work: str) -> None:
    """Each run in two folders, the tool's and python -m's: the same output, files and status."""
    module = os.path.join(root, "examples", "planning", "mlp_train_step.hlo")
    rows = "id,lower,upper,size\na,0,4,64\nb,2,6,32\nc,5,8,64\n"
    csv = os.path.join(work, "rows.csv")
    with open(csv, "w") as f:
        f.write(rows)
    terms = os.path.join(work, "terms.csv")
    with open(terms, "w") as f:
        f.write("id,first,last\n0,0,5\n1,2,7\n2,3,4\n")
    memory_spaces = os.path.join(root, "test", "data", "memory-spaces", "offloaded.hlo")
    sharding = os.path.join(root, "examples", "sharding", "mlp_block.json")
    runs = [
        ([], ""), (["--version"], ""), (["nope"], ""), (["plan"], ""), (["plan", module, "--bogus"], ""),
        (["plan", module], ""), (["plan", module, "--json", "--top", "3"], ""), (["plan", module, "--dump", "xla"], ""),
        (["plan", module, "--solver", "xla", "--svg", "m.svg", "--html", "m.html"], ""),
        (["plan", module, "--alignment", "3"], ""), (["plan", module, "--top", "-1"], ""),
        (["plan", module, "--solver", "nope"], ""), (["plan", os.path.join(work, "missing.hlo")], ""),
        (["diff", module, module], ""), (["diff", module, module, "--top", "3", "--json"], ""),
        (["pack", csv], ""), (["pack", csv, "--json", "--output", "out.csv", "--svg", "out.svg", "--seed", "7"], ""),
        (["pack", csv, "--capacity", "64"], ""), (["pack", "-", "--solver", "xla"], rows),
        (["pack", csv, "--time-limit", "nan"], ""), (["pack", csv, "--time-limit", "-1"], ""),
        (["pack", csv, "--seed", "-1"], ""), (["pack", csv, "--capacity", "-5"], ""),
        (["diff", module, module, "--top", "-2"], ""),
        (["reduce", terms], ""), (["reduce", terms, "--policy", "split_aware", "--json"], ""),
        (["propagate", memory_spaces, "--json"], ""), (["propagate", memory_spaces, "--short"], ""),
        (["shard", sharding, "--threads", "1", "--json"], ""), (["shard", sharding, "--time-limit", "nan"], ""),
        (["shard", sharding, "--seed", "-1"], ""),
    ]
    for k, (args, stdin) in enumerate(runs):
        outs = []
        for who, cmd in (("tool", [cli]), ("python", PYTHON_CLI)):
            cwd = os.path.join(work, f"run{k}", who)
            os.makedirs(cwd, exist_ok=True)
            r = run(cmd, args, cwd, stdin)
            files = {name: normalised(open(os.path.join(cwd, name), errors="replace").read())
                     for name in sorted(os.listdir(cwd))}
            outs.append((r.returncode, normalised(r.stdout), normalised(r.stderr), files))
        shown = " ".join(os.path.basename(a) if os.sep in a else a for a in args)
        (status, out, err, files), py = outs
        check(outs[0] == py and (out or err),
              f"xlamem {shown}: the same output, files and exit status ({status}, {len(out)} + {len(err)} characters"
              f"{', ' + ', '.join(files) if files else ''})"
              + ("" if outs[0] == py else f"; tool {outs[0][0]} {outs[0][2][:120]!r}, python -m {py[0]} {py[2][:120]!r}"))


IN_PROCESS = textwrap.dedent("""
    import contextlib, io, json, sys
    import xlamem.__main__ as cli
    module, csv_text, missing, result = sys.argv[1:5]
    got = {}
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        got["plan"] = [cli.main(["plan", module]), out.getvalue(), err.getvalue()]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        got["missing"] = [cli.main(["plan", missing]), out.getvalue(), err.getvalue()]
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.StringIO(csv_text)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        got["stdin"] = [cli.main(["pack", "-", "--solver", "xla"]), out.getvalue(), err.getvalue()]
    sys.stdin = sys.__stdin__
    closed = io.StringIO()
    closed.close()
    with contextlib.redirect_stdout(closed), contextlib.redirect_stderr(err):
        got["closed"] = [cli.main(["plan", module]), "", err.getvalue()]
    with open(result, "w") as f:
        json.dump(got, f)
""")


def in_process(cli: str, root: str, work: str) -> None:
    """main() in a process of one's own: its output goes where sys.stdout and sys.stderr are
    redirected (nothing to the process's own descriptors), `-` reads sys.stdin."""
    module = os.path.join(root, "examples", "planning", "mlp_train_step.hlo")
    rows = "id,lower,upper,size\na,0,4,64\nb,2,6,32\n"
    missing = os.path.join(work, "missing.hlo")
    result = os.path.join(work, "in_process.json")
    child = subprocess.run([sys.executable, "-c", IN_PROCESS, module, rows, missing, result], capture_output=True,
                           text=True, timeout=120)
    check(child.returncode == 0 and child.stdout == "" and child.stderr == "",
          f"main() under redirect_stdout: nothing on the process's own stdout and stderr ({child.returncode}, "
          f"{child.stdout[:80]!r}, {child.stderr[-300:]!r})")
    if child.returncode != 0:
        return
    got = json.load(open(result))
    tool = run([cli], ["plan", module], work)
    check(got["plan"][0] == 0 and normalised(got["plan"][1]) == normalised(tool.stdout) and not got["plan"][2],
          "main(['plan', m]): the tool's summary, in the redirected sys.stdout")
    check(got["missing"][0] == 3 and not got["missing"][1] and got["missing"][2].startswith("xlamem plan: error: "),
          f"main(['plan', missing]): exit 3, the error in the redirected sys.stderr ({got['missing'][2][:80]!r})")
    tool = run([cli], ["pack", "-", "--solver", "xla"], work, rows)
    check(got["stdin"][0] == 0 and normalised(got["stdin"][1]) == normalised(tool.stdout),
          "main(['pack', '-']): reads sys.stdin, prints what the tool prints")
    check(got["closed"][0] == 3 and "cannot write standard output" in got["closed"][2],
          f"main() with a closed sys.stdout: exit 3, 'cannot write standard output' ({got['closed'][2][:100]!r})")


CTRL_C = textwrap.dedent("""
    import contextlib, io, sys, time
    import xlamem.__main__ as cli
    out = io.StringIO()
    print("started", flush=True)
    try:
        with contextlib.redirect_stdout(out):
            cli.main(["pack", sys.argv[1], "--time-limit", "inf"])
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic():.6f} printed {len(out.getvalue())}", flush=True)
    with contextlib.redirect_stdout(out):
        print("after", cli.main(["pack", sys.argv[2], "--json"]), file=sys.__stdout__, flush=True)
""")


def ctrl_c(cli: str, work: str) -> None:
    """Ctrl-C during a `pack` with no time limit: KeyboardInterrupt from main() within LATENCY,
    nothing printed, main() works after; `python -m xlamem` ends as the tool does (SIGINT)."""
    hard = os.path.join(work, "hard.csv")
    with open(hard, "w") as f:
        f.write("id,lower,upper,size\n")
        f.writelines(f"b{k},{lo},{hi},{size}\n" for k, (lo, hi, size) in enumerate(hard_rows()))
    small = os.path.join(work, "rows.csv")
    sent, child, out, _ = sigint_child([sys.executable, "-c", CTRL_C, hard, small], first_line=True)
    got = re.search(r"interrupted ([0-9.]+) printed (\d+)", out)
    latency = float(got.group(1)) - sent if got else float("inf")
    check(latency <= LATENCY and got and got.group(2) == "0",
          f"Ctrl-C in main(['pack', ...]): KeyboardInterrupt {latency:.3f} s after SIGINT (at most {LATENCY} s), "
          f"nothing printed ({out.strip()[:120]!r})")
    check("after 0" in out and child.returncode == 0, f"main() runs as usual after it (status {child.returncode})")
    for who, cmd in (("the tool", [cli]), ("python -m xlamem", PYTHON_CLI)):
        start = time.monotonic()
        sent, child, _, _ = sigint_child(cmd + ["pack", hard, "--time-limit", "inf"])
        check(child.returncode == -signal.SIGINT and time.monotonic() - sent < 1.0,
              f"Ctrl-C in {who} pack: ended by SIGINT ({child.returncode}) {time.monotonic() - sent:.3f} s after it "
              f"({time.monotonic() - start:.1f} s in all)")


def default_solvers(cli: str, work: str) -> None:
    """The rule in every front end, on a module whose heap `search` packs smaller than `xla`."""
    import xlamem

    module = os.path.join(work, "heap.hlo")
    with open(module, "w") as f:
        f.write(hard_module(120))
    temp = {}
    for solver in ("search", "xla"):
        r = run([cli], ["plan", module, "--json", "--solver", solver], work)
        temp[solver] = json.loads(r.stdout)["compiled_memory_stats"]["temp_size_in_bytes"] if r.returncode == 0 else None
    check(temp["search"] is not None and temp["xla"] is not None and temp["search"] < temp["xla"],
          f"a heap where the solvers differ: temp {temp['search']} (search) < {temp['xla']} (xla)")
    plan = json.loads(run([cli], ["plan", module, "--json"], work).stdout)["compiled_memory_stats"]["temp_size_in_bytes"]
    check(plan == temp["search"], f"xlamem plan (and python -m xlamem plan): search ({plan})")
    stats = json.loads(run([cli], ["diff", module, module, "--json"], work).stdout)["stats"]["temp"]["before"]
    check(stats == temp["xla"], f"xlamem diff (and python -m xlamem diff): xla ({stats})")
    report = xlamem.report(module).stats.temp_size_in_bytes
    check(report == temp["xla"], f"xlamem.report(): xla ({report})")
    d = xlamem.diff(module, module).to_dict()["stats"]["temp"]["before"]
    check(d == temp["xla"], f"xlamem.diff(): xla ({d})")
    p = xlamem.pack([(0, 4, 64), (2, 6, 32)])
    check(p.solver == "search", f"xlamem.pack(): search ({p.solver})")
    pack = json.loads(run([cli], ["pack", os.path.join(work, "rows.csv"), "--json"], work).stdout)["solver"]
    check(pack == "search", f"xlamem pack (and python -m xlamem pack): search ({pack})")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    root, work, cli = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    started = time.monotonic()
    if not os.access(cli, os.X_OK):
        check(False, f"the tool to compare with is not built: {cli} (meson compile -C build tools/xlamem/xlamem)")
        return summary("python command line", started)
    same_options(cli, work)
    same_runs(cli, root, work)
    in_process(cli, root, work)
    ctrl_c(cli, work)
    default_solvers(cli, work)
    return summary("python command line", started)


if __name__ == "__main__":
    sys.exit(main())
