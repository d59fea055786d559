#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The public functions' arguments and Ctrl-C, as a new user meets them (needs the installed
package only, not JAX; test/python/run.sh runs it in the wheel's virtual environment).

Checks: every argument of `report`, `diff`, `pack`, the MemoryReport and ReportDiff methods
and `python -m xlamem` raises the exception a Python user expects (TypeError for the wrong
kind, ValueError out of range, FileNotFoundError for a missing path) with the argument (and
the interval) named; `time_limit=math.inf` is no limit and 0 the quickest answer; Ctrl-C
(SIGINT) stops a long `pack` and a long `report` with KeyboardInterrupt within 0.2 s of the
signal, in a child process that then exits cleanly and in this one, where resident memory
does not grow over repeated interrupted calls.

Usage: arguments_test.py SOURCE_ROOT WORK_DIR
"""

from __future__ import annotations

import _thread
import math
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

from python_test import check, summary  # noqa: E402 - the same report of checks

LATENCY = 0.2  # seconds from SIGINT to KeyboardInterrupt


def raises(exc: type, needles: tuple[str, ...], fn, what: str) -> None:
    try:
        fn()
    except exc as e:  # noqa: PERF203
        check(all(n in str(e) for n in needles), f"{what}: {exc.__name__} naming {needles} ({str(e)[:140]})")
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: expected {exc.__name__}, got {type(e).__name__}: {e}")
        return
    check(False, f"{what}: expected {exc.__name__}, nothing raised")


def hard_rows(n: int = 2000, horizon: int = 400, seed: int = 11) -> list[tuple[int, int, int]]:
    """Random intervals whose optimum the search cannot prove for minutes."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        lo = rng.randrange(horizon)
        rows.append((lo, lo + 1 + rng.randrange(horizon // 3), 1 + rng.randrange(1000)))
    return rows


def hard_module(n: int = 600, seed: int = 3) -> str:
    """A scheduled module of `n` temporaries of random sizes and lifetimes: a heap the search
    cannot close for minutes."""
    rng = random.Random(seed)
    lines = ["HloModule hard_heap, is_scheduled=true", "", "ENTRY main {", "  c = f32[] constant(1)"]
    ends: dict[int, list[int]] = {}
    for k in range(n):
        lines.append(f"  v{k} = f32[{16 * (1 + rng.randrange(256))}]{{0}} broadcast(c), dimensions={{}}")
        ends.setdefault(k + 1 + rng.randrange(n // 6), []).append(k)
        lines += [f"  s{j} = f32[1]{{0}} slice(v{j}), slice={{[0:1]}}" for j in ends.pop(k, [])]
    lines += [f"  s{j} = f32[1]{{0}} slice(v{j}), slice={{[0:1]}}" for js in ends.values() for j in js]
    lines.append("  ROOT t = (" + ", ".join(["f32[1]{0}"] * n) + ") tuple(" + ", ".join(f"s{j}" for j in range(n)) + ")")
    return "\n".join(lines + ["}", ""])


def validation(root: str, work: str) -> None:
    import xlamem

    rows = [(0, 4, 64), (2, 6, 32)]
    nan, inf = float("nan"), math.inf
    pack_cases = [
        (ValueError, ("time_limit", "NaN"), dict(time_limit=nan)),
        (ValueError, ("time_limit", "negative"), dict(time_limit=-1)),
        (TypeError, ("time_limit",), dict(time_limit="3")),
        (TypeError, ("time_limit",), dict(time_limit=None)),
        (ValueError, ("capacity", "-3"), dict(capacity=-3)),
        (ValueError, ("capacity",), dict(capacity=2**80)),
        (TypeError, ("capacity", "float"), dict(capacity=1.5)),
        (ValueError, ("seed",), dict(seed=-1)),
        (ValueError, ("seed",), dict(seed=2**64)),
        (TypeError, ("seed",), dict(seed=0.5)),
        (TypeError, ("solver",), dict(solver=3)),
        (xlamem.XlamemError, ("solver", "nope"), dict(solver="nope")),
    ]
    for exc, needles, kw in pack_cases:
        raises(exc, needles, lambda kw=kw: xlamem.pack(rows, **kw), f"pack({kw})")
    row_cases = [
        (TypeError, ("interval 1", "size", "float"), [(0, 4, 8), (0, 4, 1.5)]),
        (TypeError, ("interval 0", "size", "str"), [(0, 4, "3")]),
        (TypeError, ("interval 0", "lower"), [(None, 4, 8)]),
        (TypeError, ("interval 0", "size", "bool"), [(0, 4, True)]),
        (ValueError, ("interval 0", "size", "2**60"), [(0, 4, 2**80)]),
        (ValueError, ("interval 0", "size"), [(0, 4, -1)]),
        (ValueError, ("interval 0", "upper"), [(0, 2**61, 8)]),
        (ValueError, ("interval 2", "lower 4", "upper 4"), [(0, 4, 8), (0, 4, 8), (4, 4, 8)]),
        (ValueError, ("interval 0", "alignment", "power of two"), [(0, 4, 8, 3)]),
        (ValueError, ("interval 0", "alignment"), [(0, 4, 8, 0)]),
        (ValueError, ("interval 0", "(0, 1)"), [(0, 1)]),
        (TypeError, ("interval 0", "int"), [7]),
        (ValueError, ("interval 0", "'aligment'"), [{"lower": 0, "upper": 4, "size": 8, "aligment": 4}]),
        (ValueError, ("interval 0", "'size'"), [{"lower": 0, "upper": 4}]),
        (TypeError, ("intervals", "int"), 5),
        (TypeError, ("intervals", "str"), "0,4,8"),
        (TypeError, ("intervals", "NoneType"), None),
    ]
    for exc, needles, given in row_cases:
        raises(exc, needles, lambda given=given: xlamem.pack(given), f"pack({given!r:.60})")

    # What inf and 0 mean: no limit, and the quickest answer.
    p = xlamem.pack(rows, time_limit=inf)
    check(p.status in ("optimal", "feasible") and p.peak == 96, f"pack(time_limit=math.inf): no limit, solved ({p.status}, {p.peak})")
    q = xlamem.pack(hard_rows(400, 100), time_limit=0)
    check(q.placed and q.status == "time_limit" and "stopped by the time limit" in q.text,
          f"pack(time_limit=0): the quickest placement, status time_limit ({q.status})")
    import numpy as np  # noqa: F401 - installed with jax and pandas; numpy integers are integers
    r = xlamem.pack([(np.int64(0), np.int32(4), np.int64(64))], capacity=np.int64(64), seed=np.uint64(3))
    check(r.placed, f"pack takes numpy integers ({r.status})")

    example = os.path.join(root, "examples", "planning", "mlp_train_step.hlo")
    report_cases = [
        (ValueError, ("x", "empty string"), "", {}),
        (ValueError, ("x", "blank string"), "   ", {}),
        (FileNotFoundError, ("no such file", "no/such.hlo"), os.path.join(work, "no", "such.hlo"), {}),
        (TypeError, ("cannot report a builtins.int",), 42, {}),
        (ValueError, ("time_limit", "NaN"), example, dict(time_limit=nan)),
        (ValueError, ("time_limit", "negative"), example, dict(time_limit=-0.5)),
        (TypeError, ("time_limit",), example, dict(time_limit="1")),
        (ValueError, ("alignment", "power of two"), example, dict(alignment=3)),
        (ValueError, ("alignment",), example, dict(alignment=-64)),
        (ValueError, ("alignment",), example, dict(alignment=2**80)),
        (TypeError, ("alignment", "float"), example, dict(alignment=64.0)),
        (TypeError, ("backend",), example, dict(backend=1)),
        (xlamem.XlamemError, ("backend",), example, dict(backend="tpu")),
        (TypeError, ("solver",), example, dict(solver=b"search")),
        (TypeError, ("module",), example, dict(module=None)),
        (TypeError, ("replan",), example, dict(replan="yes")),
        (ValueError, ("module='mlp'", "not a folder"), example, dict(module="mlp")),
    ]
    for exc, needles, x, kw in report_cases:
        raises(exc, needles, lambda x=x, kw=kw: xlamem.report(x, **kw), f"report({x!r:.30}, {kw})")
    try:
        xlamem.report(os.path.join(work, "missing.hlo"))
    except FileNotFoundError as e:
        check(e.filename == os.path.join(work, "missing.hlo"), "FileNotFoundError.filename is the path")
    r = xlamem.report(example, solver="search", time_limit=inf)
    check(r.peak_bytes > 0, "report(time_limit=math.inf): no limit")
    raises(ValueError, ("summary", "top"), lambda: r.summary(-1), "MemoryReport.summary(-1)")
    raises(TypeError, ("page", "top"), lambda: r.page(2.5), "MemoryReport.page(2.5)")
    raises(TypeError, ("save_html", "top"), lambda: r.save_html(os.path.join(work, "r.html"), "5"), "save_html(top='5')")
    check("peak" in r.summary(10**30), "summary(10**30) lists every buffer")
    d = xlamem.diff(r, r)
    raises(ValueError, ("text", "top"), lambda: d.text(-2), "ReportDiff.text(-2)")
    raises(TypeError, ("diff", "'alignmnt'"), lambda: xlamem.diff(example, example, alignmnt=64), "diff with a misspelt option")
    raises(ValueError, ("alignment",), lambda: xlamem.diff(example, example, alignment=5), "diff checks report's options")

    # python -m xlamem: the C++ tool's messages and exit status 3.
    csv = os.path.join(work, "rows.csv")
    with open(csv, "w") as f:
        f.write("id,lower,upper,size\na,0,4,64\nb,2,6,32\n")
    for args, needle in [(["pack", csv, "--time-limit", "nan"], "--time-limit nan is not a number of seconds"),
                         (["pack", csv, "--time-limit", "-1"], "--time-limit -1 is negative"),
                         (["pack", csv, "--capacity", "-5"], "--capacity -5 is negative"),
                         (["pack", csv, "--seed", "-1"], "--seed"),
                         (["plan", example, "--alignment", "3"], "alignment"),
                         (["plan", example, "--top", "-1"], "top")]:
        run = subprocess.run([sys.executable, "-m", "xlamem", *args], capture_output=True, text=True)
        check(run.returncode == 3 and needle in run.stderr, f"python -m xlamem {' '.join(args[:1] + args[2:])}: exit 3, "
              f"'{needle}' ({run.returncode}, {run.stderr.strip()[:100]})")
    run = subprocess.run([sys.executable, "-m", "xlamem", "pack", csv, "--time-limit", "0"], capture_output=True, text=True)
    check(run.returncode == 0 and "status=optimal" in run.stdout,
          f"python -m xlamem pack --time-limit 0: the quickest placement, as the tool ({run.stdout.strip()[-60:]!r})")


CHILD = textwrap.dedent("""
    import math, sys, time
    sys.path.insert(0, sys.argv[1])
    import arguments_test as t
    import xlamem
    call = sys.argv[2]
    work = (lambda: xlamem.pack(t.hard_rows(), time_limit=math.inf)) if call == "pack" else \\
           (lambda: xlamem.report(t.hard_module(), solver="search", time_limit=math.inf))
    print("started", flush=True)
    try:
        work()
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic():.6f}", flush=True)
    # The package still works after the interruption.
    print("after", xlamem.pack([(0, 4, 64), (2, 6, 32)]).status, flush=True)
""")


def sigint_child(cmd: list[str], first_line: bool = False,
                 after: float = 1.0) -> tuple[float, subprocess.Popen, str, str]:
    """Runs `cmd` in a child process and sends it SIGINT `after` seconds in (after its first
    line, when `first_line`): (when SIGINT was sent, the child, its stdout, its stderr). A child
    still running 30 s later is killed (returncode -SIGKILL)."""
    # A harness started in the background (nohup, `cmd &` without job control) ignores SIGINT,
    # and a child inherits that: Python then installs no KeyboardInterrupt handler. The child
    # starts with SIGINT's default action, as a terminal's or a notebook's process does.
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = child.stdout.readline() if first_line else ""
    time.sleep(after)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    return sent, child, line + out, err


def ctrl_c_child(call: str) -> None:
    """SIGINT one second into a long call in a child process: KeyboardInterrupt within
    LATENCY of the signal (CLOCK_MONOTONIC is one clock for both processes), a clean exit."""
    here = os.path.dirname(os.path.abspath(__file__))
    sent, child, out, err = sigint_child([sys.executable, "-c", CHILD, here, call], first_line=True)
    if child.returncode == -signal.SIGKILL:
        check(False, f"Ctrl-C in a child's {call}(): it did not stop within 30 s")
        return
    got = [w for w in out.split() if w.replace(".", "").isdigit()]
    latency = float(got[0]) - sent if out.startswith("started") and "interrupted" in out and got else math.inf
    check(latency <= LATENCY, f"Ctrl-C in a child's {call}(): KeyboardInterrupt {latency:.3f} s after SIGINT "
          f"(at most {LATENCY} s)" + ("" if "interrupted" in out else f"; stdout {out!r}, stderr {err[-300:]!r}"))
    check(child.returncode == 0 and "after optimal" in out and not err.strip(),
          f"the child went on and exited cleanly (status {child.returncode}, stderr {err.strip()[-200:]!r})")


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def interrupted(call, how: str, after: float = 0.3) -> float:
    """Runs `call` while another thread interrupts this one after `after` seconds; the seconds
    from the interruption to KeyboardInterrupt (inf when the call finished instead)."""
    sent = [0.0]

    def fire() -> None:
        sent[0] = time.monotonic()
        if how == "kill":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            _thread.interrupt_main()

    timer = threading.Timer(after, fire)
    timer.start()
    try:
        call()
    except KeyboardInterrupt:
        return time.monotonic() - sent[0]
    finally:
        timer.join()
    return math.inf


def ctrl_c_here() -> None:
    import xlamem

    rows = hard_rows()
    module = hard_module()
    pack = lambda: xlamem.pack(rows, time_limit=math.inf)  # noqa: E731
    report = lambda: xlamem.report(module, solver="search", time_limit=math.inf)  # noqa: E731
    # auto_shard's solve (the layer under the JAX front end): the example's search never proves
    # its answer, so without a limit only Ctrl-C ends it.
    from xlamem import _xlamem
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "examples", "autoshard", "mlp_train_step.hlo")) as f:
        mlp = f.read()
    shard = lambda: _xlamem.auto_shard_text(mlp, "mlp", "2x4", "cpu-host-8", -1, math.inf, 1, 1)  # noqa: E731
    for name, call, how in [("pack", pack, "kill"), ("report", report, "kill"), ("pack", pack, "interrupt_main"),
                            ("auto_shard", shard, "kill")]:
        latency = interrupted(call, how)
        check(latency <= LATENCY, f"in-process {name}() stopped by {how}: KeyboardInterrupt {latency:.3f} s after it")
    # No leak: resident memory after 8 more interrupted calls of each is what it was after 2.
    for _ in range(2):
        interrupted(pack, "kill", 0.1)
        interrupted(report, "kill", 0.1)
    before = resident_bytes()
    for _ in range(8):
        interrupted(pack, "kill", 0.1)
        interrupted(report, "kill", 0.1)
    grown = resident_bytes() - before
    check(grown < 16 << 20, f"16 more interrupted calls: resident memory grew {grown / 2**20:.1f} MiB (under 16 MiB)")
    check(xlamem.pack([(0, 4, 64)]).status == "optimal", "a call after the interruptions runs as usual")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    root, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    started = time.monotonic()
    validation(root, work)
    ctrl_c_child("pack")
    ctrl_c_child("report")
    ctrl_c_here()
    return summary("python arguments", started)


if __name__ == "__main__":
    sys.exit(main())
