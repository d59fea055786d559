# SPDX-License-Identifier: Apache-2.0
"""What `xlamem.report` accepts, told apart without importing JAX: a jax.stages.Compiled, a
jax.stages.Lowered, HLO module text, XLA's buffer-assignment dump text, or a path."""

from __future__ import annotations

import errno
import os
import warnings
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class Source:
    """Text to plan (`text` with `name`) or a path to read (`path`); `backend` when the input
    says which XLA backend compiled it; `note` says what was done on the way."""
    text: Optional[str] = None
    name: str = ""
    path: Optional[str] = None
    backend: Optional[str] = None
    note: str = ""


def _is_jax_stage(x: Any, name: str) -> bool:
    t = type(x)
    return t.__name__ == name and t.__module__.startswith("jax")


def _platform_of(compiled: Any) -> Optional[str]:
    """"gpu" or "cpu" from the devices a Compiled runs on, when JAX tells; None otherwise."""
    try:
        devices = compiled.runtime_executable().local_devices()
        platform = devices[0].platform if devices else ""
    except Exception:  # noqa: BLE001 - older or newer JAX: fall back to the default backend
        return None
    if platform in ("gpu", "cuda", "rocm"):
        return "gpu"
    return "cpu" if platform == "cpu" else None


def _looks_like_text(s: str) -> bool:
    head = s.lstrip()[:64]
    return head.startswith("HloModule") or head.startswith("BufferAssignment:") or "\n" in s


def classify(x: Any) -> Source:
    """The Source of `x`, or TypeError naming what was given and what is accepted, ValueError
    for an empty string, FileNotFoundError for a path that is not there."""
    if _is_jax_stage(x, "Lowered"):
        warnings.warn("xlamem.report: got a jax.stages.Lowered and compiled it (lowered.compile()); "
                      "pass the Compiled to report what you run without compiling twice", stacklevel=3)
        x = x.compile()
        note = "compiled from a jax.stages.Lowered by xlamem.report"
    else:
        note = ""
    if _is_jax_stage(x, "Compiled"):
        text = x.as_text()
        if not isinstance(text, str) or not text.lstrip().startswith("HloModule"):
            raise TypeError("xlamem.report: this Compiled's as_text() is not an HLO module "
                            "(it should be XLA's optimised, scheduled module)")
        return Source(text=text, name="<compiled>", backend=_platform_of(x), note=note)
    if isinstance(x, bytes):
        x = x.decode("utf-8", errors="replace")
    if isinstance(x, str) and not x.strip():
        raise ValueError(f"xlamem.report: x is {'an empty' if not x else 'a blank'} string; give HLO module text "
                         "(starting 'HloModule'), or the path of a module, of XLA's *-buffer-assignment.txt or of "
                         "an --xla_dump_to folder")
    if isinstance(x, str) and _looks_like_text(x):
        return Source(text=x, name="<text>")
    if isinstance(x, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(x))
        if not os.path.exists(path):
            # What open() raises, naming the path (e.filename) and what was looked for.
            raise FileNotFoundError(errno.ENOENT, "xlamem.report: no such file or folder (x is neither HLO "
                                    "text nor an existing path)", path)
        return Source(path=path)
    raise TypeError(
        f"xlamem.report: cannot report a {type(x).__module__}.{type(x).__qualname__}; give a "
        "jax.stages.Compiled (jax.jit(f).lower(*args).compile()), a jax.stages.Lowered, HLO module "
        "text, or the path of a module, of XLA's *-buffer-assignment.txt or of an --xla_dump_to folder")
