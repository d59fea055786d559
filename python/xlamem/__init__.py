# SPDX-License-Identifier: Apache-2.0
"""xlamem: the memory report of a compiled XLA program, where JAX users work.

    import jax, jax.numpy as jnp, xlamem
    compiled = jax.jit(step).lower(params, batch).compile()
    print(xlamem.report(compiled))     # peak, what is live then, which line made it

`report` returns a `MemoryReport` (statistics equal to `compiled.memory_analysis()`, the peak
and the instruction then, the buffers live then with shapes and sources, fragmentation, the
timeline, per memory space); in a notebook it shows as the interactive page. `diff` compares
two reports, `pack` places buffer intervals, `auto_shard` shards a JAX function over a mesh
within a per-device memory limit. docs/python.md has the whole story; the C++
library does the work (planning, packing and writing release the GIL).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional

from . import _arguments as _check
from . import _inputs
from ._autoshard import AutoShardResult, auto_shard
from ._report import Buffer, MemoryReport, MemorySpace, MemoryStats, PackResult, ReportDiff, Source, Transfer
from ._xlamem import XlamemError
from ._xlamem import __version__
from . import _xlamem

__all__ = [
    "report", "diff", "pack", "solvers", "auto_shard", "AutoShardResult", "MemoryReport", "ReportDiff", "PackResult", "Buffer", "MemorySpace",
    "MemoryStats", "Source", "Transfer", "XlamemError", "__version__",
]

_REPORT_OPTIONS = ("backend", "solver", "alignment", "module", "replan", "time_limit")

# report()'s and diff()'s default solver: XLA's own best-fit heap simulation, so that the
# statistics are the ones XLA reports (`memory_analysis()`); solver="search" shows how small the
# heap could be. The rule of every front end (README, "The command-line tool"): `search` where a
# plan stands alone (`xlamem plan`, `xlamem pack`, pack()), `xla` where it is set beside another
# answer (report() beside memory_analysis(), both sides of a diff).
DEFAULT_SOLVER = "xla"


def report(x: Any, *, backend: Optional[str] = None, solver: Optional[str] = None, alignment: int = 0,
           module: str = "", replan: bool = False, time_limit: float = 1.0) -> MemoryReport:
    """The memory report of `x`.

    x: a `jax.stages.Compiled` (its `as_text()`, the optimised and scheduled module, is
       planned), a `jax.stages.Lowered` (compiled for you, with a warning), HLO module text, or
       the path of a module file, of XLA's `*-buffer-assignment.txt` (XLA's own plan, read as
       it is) or of an `--xla_dump_to` folder (`module` picks one, else the largest).
    backend: "cpu" or "gpu": whose buffer rules plan a module (default: the Compiled's
       platform, else "cpu").
    solver: how temporaries are packed (default "xla": XLA's own heap simulator, so the
       statistics equal `memory_analysis()`); see `xlamem.solvers()`.
    alignment: of temporaries in bytes (0: the backend's, else a power of two); time_limit:
       seconds per heap for the search solver (0: the heuristics only; math.inf: no limit);
       replan: in a dump folder, plan the module even where XLA's plan is there.

    Raises TypeError for an object it cannot report or an argument of the wrong type,
    ValueError for an argument out of range or an empty string, FileNotFoundError for a
    missing path, XlamemError (a ValueError) for input it cannot read or plan, with the place,
    KeyboardInterrupt on Ctrl-C (the planning stops within 0.2 s).
    """
    b = _check.optional_text(backend, "xlamem.report: backend")
    s = _check.optional_text(solver, "xlamem.report: solver")
    align = _check.alignment(alignment, "xlamem.report: alignment", zero_means="the backend's")
    module = _check.text(module, "xlamem.report: module")
    replan = _check.flag(replan, "xlamem.report: replan")
    seconds = _check.seconds(time_limit, "xlamem.report: time_limit")
    src = _inputs.classify(x)
    if src.path is not None and (module or replan) and not os.path.isdir(src.path):
        given = f"module={module!r}" if module else "replan=True"
        raise ValueError(f"xlamem.report: {given} picks how to read an --xla_dump_to folder; {src.path!r} is not "
                         "a folder")
    b = b or src.backend or "cpu"
    s = s or DEFAULT_SOLVER
    if src.text is not None:
        native = _xlamem.report_of_text(src.text, src.name, b, s, align, seconds)
    else:
        native = _xlamem.report_of_path(src.path, b, s, align, seconds, module, replan)
    if not native.scheduled:
        where = src.path or src.name
        raise XlamemError(f"{where}: module '{native.module}' is not scheduled (is_scheduled=false): XLA did not "
                          "schedule it, so its memory over time is not XLA's; give the optimised module "
                          "(compiled.as_text(), or the *after_optimizations.txt of an --xla_dump_to folder)")
    return MemoryReport(native, src.note)


def diff(a: Any, b: Any, **options: Any) -> ReportDiff:
    """What changed between two compilations (`xlamem diff`): `a` and `b` are MemoryReports or
    anything `report` takes (with the same keyword options, checked as `report` checks them)."""
    for name in options:
        if name not in _REPORT_OPTIONS:
            raise TypeError(f"xlamem.diff: unknown option {name!r}; it takes report()'s: {', '.join(_REPORT_OPTIONS)}")
    ra = a if isinstance(a, MemoryReport) else report(a, **options)
    rb = b if isinstance(b, MemoryReport) else report(b, **options)
    return ReportDiff(_xlamem.diff(ra._native, rb._native), ra, rb)


def pack(intervals: Iterable[Any], *, solver: str = "search", capacity: Optional[int] = None,
         time_limit: float = 10.0, seed: int = 0) -> PackResult:
    """Places buffers live on [lower, upper) at offsets so that no two live at once overlap
    (`xlamem pack`). `intervals`: (lower, upper, size[, alignment]) tuples, dicts with those
    keys (and `id`), or a pandas DataFrame with those columns: integers, sizes 0 to 2**60,
    lower < upper, alignments powers of two. With `capacity` (bytes), decides whether
    everything fits under it. `time_limit`: wall-clock seconds, kept by every solver (a solver
    cut short gives its best placement, or the sweep's: status "time_limit"); 0: the quickest
    placement; math.inf: no limit. `seed` (0 to 2**64 - 1) varies the search.
    Raises TypeError or ValueError (naming the argument, and the interval) for a bad argument,
    XlamemError for an unknown solver, KeyboardInterrupt on Ctrl-C (within 0.2 s)."""
    rows, ids = _check.intervals(intervals)
    name = _check.text(solver, "xlamem.pack: solver")
    cap = -1 if capacity is None else _check.in_range(capacity, "xlamem.pack: capacity", 0, _check.MAX_CAPACITY)
    seconds = _check.seconds(time_limit, "xlamem.pack: time_limit")
    seed = _check.in_range(seed, "xlamem.pack: seed", 0, _check.MAX_SEED)
    return _pack_result(*_xlamem.pack_rows(rows, ids, name, cap, seconds, seed))


def _pack_result(document: str, text: str, offsets: list[int]) -> PackResult:
    import json

    d = json.loads(document)
    return PackResult(d["status"], list(offsets), d["peak"], int(d["lower_bound"]), bool(d["optimal"]), d["gap"],
                      float(d["seconds"]), float(d["seconds_to_first_feasible"]), float(d["seconds_to_best"]),
                      d["solver"], document, text)


def solvers() -> str:
    """The named solvers of the library's table (packing/solvers.hpp), with one line of help."""
    return _xlamem.solvers_help()
