# SPDX-License-Identifier: Apache-2.0
"""The memory report as Python values: built from the JSON the library writes (io/codec/json.hpp's
field visitors, the same document as `xlamem plan --json`), never recomputed here."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, fields
from typing import Any, Optional

from . import _arguments as _check
from . import _xlamem

# compiled_memory_stats' fields, in XLA's order (passes/memory_stats.hpp).
STAT_FIELDS = (
    "generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
    "alias_size_in_bytes", "temp_size_in_bytes", "host_generated_code_size_in_bytes",
    "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
    "host_temp_size_in_bytes", "peak_memory_in_bytes", "total_allocation_bytes",
)


@dataclass(frozen=True)
class MemoryStats:
    """XLA's CompiledMemoryStats as `compiled.memory_analysis()` names them, plus the peak.

    `peak_memory_in_bytes` is xlamem's one peak (the most device bytes in use at one time),
    not XLA:CPU's figure of the same name (argument + output - alias + constants)."""
    generated_code_size_in_bytes: int = 0
    argument_size_in_bytes: int = 0
    output_size_in_bytes: int = 0
    alias_size_in_bytes: int = 0
    temp_size_in_bytes: int = 0
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0
    peak_memory_in_bytes: int = 0
    total_allocation_bytes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Source:
    """Where an instruction came from: the op's name and its Python file and line."""
    op_name: str = ""
    file: str = ""
    line: int = 0

    def __str__(self) -> str:
        if not self.file:
            return self.op_name
        return f"{self.file}:{self.line}" if self.line > 0 else self.file


@dataclass(frozen=True)
class Buffer:
    """One buffer of the program: what it holds, where it sits and when it is live (closed)."""
    name: str
    shape: str
    size: int
    kind: str            # parameter, output, temp, constant, thread_local, ...
    start: int           # first time step live
    end: int             # last time step live
    allocation: int
    offset: int
    color: int           # memory space: XLA's colour (5 is host memory)
    memory_space: str    # "device" or "host"
    source: Optional[Source]

    @property
    def location(self) -> str:
        """"file.py:42" (the file's last component), or the op's name, or ""."""
        if self.source is None:
            return ""
        if self.source.file:
            base = self.source.file.rsplit("/", 1)[-1]
            return f"{base}:{self.source.line}" if self.source.line > 0 else base
        return self.source.op_name


@dataclass(frozen=True)
class MemorySpace:
    """The peak of one memory space (a device colour, or host memory)."""
    color: int
    host: bool
    peak_bytes: int
    peak_time: int
    peak_instruction: str

    @property
    def name(self) -> str:
        return "host" if self.host else ("device" if self.color == 0 else f"device:{self.color}")


def _source(src: Optional[dict[str, Any]]) -> Optional[Source]:
    return Source(src.get("op_name", ""), src.get("source_file", ""), int(src.get("source_line", 0))) if src else None


def _buffer(d: dict[str, Any], host_colors: frozenset[int]) -> Buffer:
    color = int(d.get("color", 0))
    return Buffer(d["name"], d["shape"], int(d["size"]), d["kind"], int(d["start"]), int(d["end"]),
                  int(d["allocation"]), int(d["offset"]), color, "host" if color in host_colors else "device",
                  _source(d.get("source")))


@dataclass(frozen=True)
class Transfer:
    """One instruction that moves bytes between memory spaces (host offloading)."""
    instruction: str
    opcode: str
    from_color: int
    to_color: int
    bytes: int
    time: int  # its step in the schedule; -1 inside a loop body
    source: Optional[Source]


class MemoryReport:
    """The memory report of one compiled program (docs/python.md).

    `str(report)` is `xlamem plan`'s summary; in a notebook the report shows as the interactive
    page; `to_json()` is `xlamem plan --json`; `buffers` are the buffers live at the peak,
    largest first; `timeline` every buffer of the program."""

    def __init__(self, native, note: str = ""):
        self._native = native
        self.note = note  # what report() did for you (a Lowered compiled), or ""
        self._doc: Optional[dict[str, Any]] = None

    # --- what the library wrote --------------------------------------------------------------
    @property
    def _json(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = json.loads(self._native.json())
        return self._doc

    def to_json(self) -> str:
        """The report as `xlamem plan --json` prints it."""
        return self._native.json()

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._native.json())

    def __str__(self) -> str:
        return (f"note: {self.note}\n" if self.note else "") + self._native.summary(10)

    def summary(self, top: int = 10) -> str:
        """The summary with the `top` largest buffers live at the peak."""
        return self._native.summary(_check.count(top, "MemoryReport.summary: top"))

    def __repr__(self) -> str:
        return (f"<xlamem.MemoryReport {self.module!r}: peak {_xlamem.human_bytes(self.peak_bytes)} at step "
                f"{self.peak_time} ({self.peak_instruction}), temp {_xlamem.human_bytes(self.stats.temp_size_in_bytes)}>")

    def page(self, top: int = 20) -> str:
        """The self-contained interactive page (`xlamem plan --html`)."""
        return self._native.page(_check.count(top, "MemoryReport.page: top"))

    def save_html(self, path: str, top: int = 20) -> None:
        page = self._native.page(_check.count(top, "MemoryReport.save_html: top"))
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)

    def svg(self) -> str:
        """The whole device memory over time as an SVG picture (`xlamem plan --svg`)."""
        return self._native.svg()

    def _repr_html_(self) -> str:
        # The page in an iframe of its own: its ids, styles and script cannot clash with the
        # notebook's or with another report's on the same page.
        return ('<iframe class="xlamem-report" title="xlamem memory report of '
                f'{html.escape(self.module, quote=True)}" style="width:100%;height:820px;border:0" '
                f'srcdoc="{html.escape(self.page(), quote=True)}"></iframe>')

    @property
    def xla_table(self) -> str:
        """The allocation table in XLA's buffer-assignment dump format (`--dump xla`)."""
        return self._native.xla_table

    # --- typed views ------------------------------------------------------------------------
    @property
    def file(self) -> str:
        return self._native.file

    @property
    def module(self) -> str:
        return self._native.module

    @property
    def description(self) -> str:
        return self._native.description

    @property
    def from_xla(self) -> bool:
        """True when this is XLA's own plan (a buffer-assignment dump), not one xlamem made."""
        return self._native.from_xla

    @property
    def stats(self) -> MemoryStats:
        s = self._json["compiled_memory_stats"]
        return MemoryStats(**{k: int(s.get(k, 0)) for k in STAT_FIELDS})

    @property
    def peak_bytes(self) -> int:
        return int(self._json["peak"]["bytes"])

    @property
    def peak_time(self) -> int:
        return int(self._json["peak"]["time"])

    @property
    def peak_instruction(self) -> str:
        return self._json["peak"]["instruction"]

    @property
    def peak_bytes_by_kind(self) -> dict[str, int]:
        return {k: int(v) for k, v in self._json["peak"]["bytes_by_kind"].items()}

    @property
    def _host_colors(self) -> frozenset[int]:
        spaces = self._json["memory_spaces"]
        return frozenset(int(m["color"]) for m in spaces if m["host"]) or frozenset({5})

    @property
    def buffers(self) -> list[Buffer]:
        """The buffers live at the peak, largest first."""
        host = self._host_colors
        live = [_buffer(b, host) for b in self._json["peak"]["buffers"]]
        return sorted(live, key=lambda b: -b.size)

    @property
    def timeline(self) -> list[Buffer]:
        """Every buffer of the program with its live range, in the report's order."""
        host = self._host_colors
        return [_buffer(b, host) for b in self._json["buffers"]]

    @property
    def transfers(self) -> list[Transfer]:
        """The instructions that move bytes between memory spaces, in module order."""
        return [Transfer(t["instruction"], t["opcode"], int(t["from_color"]), int(t["to_color"]), int(t["bytes"]),
                         int(t["time"]), _source(t.get("source"))) for t in self._json.get("transfers", [])]

    @property
    def bytes_to_host(self) -> int:
        """Bytes the transfers move into host memory (each instruction once)."""
        return self._native.bytes_to_host

    @property
    def bytes_to_device(self) -> int:
        """Bytes the transfers move out of host memory (each instruction once)."""
        return self._native.bytes_to_device

    @property
    def host_peak_bytes(self) -> int:
        """The peak of host memory (0 when nothing lives there)."""
        return self._native.host_peak

    @property
    def memory_spaces(self) -> list[MemorySpace]:
        schedule = self._json["schedule"]
        out = []
        for m in self._json["memory_spaces"]:
            t = int(m["time"])
            out.append(MemorySpace(int(m["color"]), bool(m["host"]), int(m["bytes"]), t,
                                   schedule[t] if 0 <= t < len(schedule) else ""))
        return out

    @property
    def fragmentation(self) -> list[dict[str, int]]:
        """Of each temporary heap at the peak: heap_size, live_bytes, wasted, largest_hole."""
        return [dict(f) for f in self._json["fragmentation_at_peak"]]

    @property
    def temp_heaps(self) -> list[dict[str, Any]]:
        return [dict(h) for h in self._json["temp_heaps"]]

    def to_pandas(self, which: str = "peak"):
        """The buffers live at the peak (`which="peak"`) or every buffer (`"all"`) as a pandas
        DataFrame, one row a buffer. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("MemoryReport.to_pandas needs pandas (pip install pandas)") from e
        if which not in ("peak", "all"):
            raise ValueError(f"which={which!r}: expected 'peak' or 'all'")
        rows = self.buffers if which == "peak" else self.timeline
        return pd.DataFrame([{
            "name": b.name, "shape": b.shape, "size": b.size, "kind": b.kind, "start": b.start, "end": b.end,
            "memory_space": b.memory_space, "allocation": b.allocation, "offset": b.offset,
            "location": b.location, "op_name": b.source.op_name if b.source else "",
        } for b in rows])


class ReportDiff:
    """What changed between two reports: `str()` is `xlamem diff`'s text, `to_json()` its JSON."""

    def __init__(self, native, before: MemoryReport, after: MemoryReport):
        self._native, self.before, self.after = native, before, after

    def __str__(self) -> str:
        return self._native.text(12)

    def text(self, top: int = 12) -> str:
        return self._native.text(_check.count(top, "ReportDiff.text: top"))

    def to_json(self) -> str:
        return self._native.json()

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._native.json())

    def __repr__(self) -> str:
        peak = self.to_dict().get("stats", {}).get("peak")
        change = f": peak {peak['before']:,} -> {peak['after']:,} bytes" if peak else ""
        return f"<xlamem.ReportDiff {self.before.module!r} vs {self.after.module!r}{change}>"


@dataclass(frozen=True)
class PackResult:
    """What `xlamem.pack` found: the status, in the words of every solver ("optimal": placed at
    the lower bound; "feasible": placed, the solver finished; "time_limit": placed, but the time
    limit ended the work, the best placement found; "infeasible": proven not to fit the
    capacity; "no_answer": no placement under the capacity), the offsets (one per buffer, empty
    when not placed), the peak, the best lower bound and the gap between them ((peak -
    lower_bound) / peak, None when not placed), and the seconds from the start to the first
    placement and to the one returned (-1: none), as `xlamem shard` reports them."""
    status: str
    offsets: list[int]
    peak: Optional[int]
    lower_bound: int
    optimal: bool
    gap: Optional[float]
    seconds: float
    seconds_to_first_feasible: float
    seconds_to_best: float
    solver: str
    json: str
    text: str  # `xlamem pack`'s report and its last line

    @property
    def placed(self) -> bool:
        """Whether `offsets` is a placement (status "optimal", "feasible" or "time_limit")."""
        return self.status in ("optimal", "feasible", "time_limit")

    def to_json(self) -> str:
        return self.json

    def __str__(self) -> str:
        return self.text
