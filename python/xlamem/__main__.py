# SPDX-License-Identifier: Apache-2.0
"""`python -m xlamem plan|diff|pack ...`: the CLI's report commands from the Python package.

The same options, output and exit status as the C++ tool's `plan`, `diff` and `pack` (README,
"The command-line tool"): 0 done, 1 a capacity proven infeasible (pack), 2 a usage error,
3 bad input (`xlamem CMD: error: ...` on standard error). Everything is computed by the library.
"""

from __future__ import annotations

import argparse
import math
import sys

from . import _arguments as _check
from . import _xlamem, diff, report
from . import _pack_result


def _fail(command: str, message: str) -> int:
    # The CLI's one error format; messages quote input text, so never raw to the terminal.
    print(f"xlamem {command}: error: {_xlamem.terminal_text(message)}", file=sys.stderr)
    return 3


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _time_limit(a: argparse.Namespace) -> float:
    """--time-limit checked as the C++ tool checks it (tools/xlamem/commands.hpp)."""
    t = a.time_limit
    if math.isnan(t):
        raise ValueError("--time-limit nan is not a number of seconds")
    if math.isinf(t):
        raise ValueError("--time-limit must be a finite number of seconds, not infinite")
    if t < 0:
        raise ValueError(f"--time-limit {t:g} is negative; give 0 or more seconds")
    return t


def _report_options(a: argparse.Namespace) -> dict:
    return {"backend": a.backend, "solver": a.solver, "alignment": a.alignment, "time_limit": _time_limit(a),
            "module": a.module, "replan": a.replan}


def _report_of(path: str, a: argparse.Namespace):
    return report(_read(path) if path == "-" else path, **_report_options(a))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cmd_plan(a: argparse.Namespace) -> int:
    r = _report_of(a.file, a)
    if a.svg:
        _write(a.svg, r.svg())
    if a.html:
        _write(a.html, r.page(max(a.top, 20)))
    if a.json:
        print(r.to_json())
    elif a.dump == "xla":
        sys.stdout.write(r.xla_table)
    else:
        sys.stdout.write(r.summary(a.top))
        if a.html:
            print(f"wrote {a.html} (open it in a browser)")
        if a.svg:
            print(f"wrote {a.svg}")
    return 0


def cmd_diff(a: argparse.Namespace) -> int:
    d = diff(_report_of(a.before, a), _report_of(a.after, a))
    print(d.to_json() if a.json else d.text(), end="\n" if a.json else "")
    return 0


def cmd_pack(a: argparse.Namespace) -> int:
    name = "<stdin>" if a.file == "-" else a.file
    seconds = _time_limit(a) or math.inf  # the tool's --time-limit 0: no limit
    if a.capacity is not None and a.capacity < 0:
        raise ValueError(f"--capacity {a.capacity} is negative; give 0 or more bytes")
    cap = -1 if a.capacity is None else _check.in_range(a.capacity, "--capacity", 0, _check.MAX_CAPACITY)
    seed = _check.in_range(a.seed, "--seed", 0, _check.MAX_SEED)
    result = _pack_result(*_xlamem.pack_csv(_read(a.file), name, a.solver, cap, seconds, seed))
    if a.json:
        print(result.to_json())
    else:
        sys.stdout.write(result.text)
    if result.status == "infeasible":
        return 1
    return 0 if result.placed else 2


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m xlamem", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)

    def report_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--backend", default=None, help="cpu (XLA:CPU, default) or gpu (XLA:GPU)")
        p.add_argument("--solver", default="search", help="how temporaries are packed (default search; xla: "
                       "XLA's own heap simulator)")
        p.add_argument("--alignment", type=int, default=0, help="of temporaries, bytes (0: the backend's)")
        p.add_argument("--time-limit", type=float, default=1.0, help="seconds per heap for the search solver")
        p.add_argument("--module", default="", help="in a dump folder: the module whose file name contains this")
        p.add_argument("--replan", action="store_true", help="in a dump folder: plan even where XLA's plan is there")

    p = sub.add_parser("plan", help="the memory of a compiled program")
    p.add_argument("file", help="HLO module ('-': standard input), XLA's *-buffer-assignment.txt or a dump folder")
    report_options(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--html", default="", help="write the interactive page here")
    p.add_argument("--svg", default="", help="write the memory picture here")
    p.add_argument("--top", type=int, default=10, help="buffers live at the peak to list")
    p.add_argument("--dump", choices=["xla"], default=None, help="print XLA's allocation table instead")
    p.set_defaults(run=cmd_plan)

    p = sub.add_parser("diff", help="two compilations of one program")
    p.add_argument("before")
    p.add_argument("after")
    report_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_diff)

    p = sub.add_parser("pack", help="place buffer intervals (MiniMalloc's CSV)")
    p.add_argument("file")
    p.add_argument("--capacity", type=int, default=None)
    p.add_argument("--time-limit", type=float, default=10.0)
    p.add_argument("--solver", default="search")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_pack)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        return a.run(a)
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError, TypeError) as e:  # XlamemError too
        return _fail(a.command, str(e))
    except OSError as e:
        return _fail(a.command, f"{getattr(e, 'filename', '')}: {e.strerror or e}")


if __name__ == "__main__":
    sys.exit(main())
