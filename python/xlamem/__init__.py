# SPDX-License-Identifier: Apache-2.0
"""xlamem: the memory report of a compiled XLA program, where JAX users work.

    import jax, jax.numpy as jnp, xlamem
    compiled = jax.jit(step).lower(params, batch).compile()
    print(xlamem.report(compiled))     # peak, what is live then, which line made it

`report` returns a `MemoryReport` (statistics equal to `compiled.memory_analysis()`, the peak
and the instruction then, the buffers live then with shapes and sources, fragmentation, the
timeline, per memory space); in a notebook it shows as the interactive page. `diff` compares
two reports, `pack` places buffer intervals. docs/python.md has the whole story; the C++
library does the work (planning, packing and writing release the GIL).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional

from . import _inputs
from ._report import Buffer, MemoryReport, MemorySpace, MemoryStats, PackResult, ReportDiff, Source, Transfer
from ._xlamem import XlamemError
from ._xlamem import __version__
from . import _xlamem

__all__ = [
    "report", "diff", "pack", "solvers", "MemoryReport", "ReportDiff", "PackResult", "Buffer", "MemorySpace",
    "MemoryStats", "Source", "Transfer", "XlamemError", "__version__",
]

# report()'s default solver: XLA's own best-fit heap simulation, so that the statistics are the
# ones XLA reports (`memory_analysis()`); solver="search" shows how small the heap could be.
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
    alignment: of temporaries in bytes (0: the backend's); time_limit: seconds per heap for the
       search solver; replan: in a dump folder, plan the module even where XLA's plan is there.

    Raises TypeError for an object it cannot report, FileNotFoundError for a missing path,
    XlamemError (a ValueError) for input it cannot read or plan, with the place.
    """
    src = _inputs.classify(x)
    b = backend or src.backend or "cpu"
    s = solver or DEFAULT_SOLVER
    if src.text is not None:
        native = _xlamem.report_of_text(src.text, src.name, b, s, int(alignment), float(time_limit))
    else:
        native = _xlamem.report_of_path(src.path, b, s, int(alignment), float(time_limit), module, bool(replan))
    if not native.scheduled:
        where = src.path or src.name
        raise XlamemError(f"{where}: module '{native.module}' is not scheduled (is_scheduled=false): XLA did not "
                          "schedule it, so its memory over time is not XLA's; give the optimised module "
                          "(compiled.as_text(), or the *after_optimizations.txt of an --xla_dump_to folder)")
    return MemoryReport(native, src.note)


def diff(a: Any, b: Any, **options: Any) -> ReportDiff:
    """What changed between two compilations (`xlamem diff`): `a` and `b` are MemoryReports or
    anything `report` takes (with the same keyword options)."""
    ra = a if isinstance(a, MemoryReport) else report(a, **options)
    rb = b if isinstance(b, MemoryReport) else report(b, **options)
    return ReportDiff(_xlamem.diff(ra._native, rb._native), ra, rb)


def _rows(intervals: Any) -> tuple[list[tuple[int, int, int, int]], list[str]]:
    """(lower, upper, size, alignment) rows and ids from tuples, dicts or a pandas DataFrame."""
    if hasattr(intervals, "to_dict") and hasattr(intervals, "columns"):  # a pandas DataFrame
        intervals = intervals.to_dict("records")
    rows, ids = [], []
    for k, item in enumerate(intervals):
        if isinstance(item, dict):
            try:
                lower, upper, size = item["lower"], item["upper"], item["size"]
            except KeyError as e:
                raise ValueError(f"xlamem.pack: interval {k} has no {e.args[0]!r} (keys: lower, upper, size, "
                                 "optional alignment and id)") from None
            rows.append((int(lower), int(upper), int(size), int(item.get("alignment", 1))))
            ids.append(str(item.get("id", k)))
        else:
            t = tuple(item)
            if len(t) not in (3, 4):
                raise ValueError(f"xlamem.pack: interval {k} is {t!r}; give (lower, upper, size) or "
                                 "(lower, upper, size, alignment)")
            rows.append((int(t[0]), int(t[1]), int(t[2]), int(t[3]) if len(t) == 4 else 1))
            ids.append(str(k))
    return rows, ids


def pack(intervals: Iterable[Any], *, solver: str = "search", capacity: Optional[int] = None,
         time_limit: float = 10.0, seed: int = 0) -> PackResult:
    """Places buffers live on [lower, upper) at offsets so that no two live at once overlap
    (`xlamem pack`). `intervals`: (lower, upper, size[, alignment]) tuples, dicts with those
    keys (and `id`), or a pandas DataFrame with those columns. With `capacity`, decides
    whether everything fits under it. `time_limit`: wall-clock seconds, kept by every solver
    (a solver cut short gives its best placement, or the sweep's: status "time_limit").
    Raises XlamemError for an impossible problem."""
    rows, ids = _rows(intervals)
    cap = -1 if capacity is None else int(capacity)
    return _pack_result(*_xlamem.pack_rows(rows, ids, solver, cap, float(time_limit), int(seed)))


def _pack_result(document: str, text: str, offsets: list[int]) -> PackResult:
    import json

    d = json.loads(document)
    return PackResult(d["status"], list(offsets), d["peak"], int(d["lower_bound"]), bool(d["optimal"]),
                      float(d["seconds"]), d["solver"], document, text)


def solvers() -> str:
    """The named solvers of the library's table (packing/solvers.hpp), with one line of help."""
    return _xlamem.solvers_help()
