# SPDX-License-Identifier: Apache-2.0
"""The program registry of the differential corpus (tools/xla-oracle/corpus.py).

A program is a builder that returns (function, example arguments, jax.jit keyword arguments),
or for TensorFlow (tf.function, example arguments). The decorator records what the builder
needs: host devices for SPMD programs, whether the dump keeps metadata (source lines for the
diagnosis front end), the Python modules it imports (so a library that cannot be installed in
one JAX version is recorded as unavailable there instead of failing the run), and the front end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Program:
    name: str
    builder: Callable
    group: str  # oracle, models, spmd, hard, tf
    devices: int = 1
    metadata: bool = False
    needs: tuple[str, ...] = ()
    frontend: str = "jax"  # jax or tf
    description: str = ""
    extra_flags: tuple[str, ...] = field(default_factory=tuple)


PROGRAMS: dict[str, Program] = {}


def program(group: str, *, devices: int = 1, metadata: bool = False, needs: tuple[str, ...] = (),
            frontend: str = "jax", extra_flags: tuple[str, ...] = ()):
    """Registers a builder under its function name."""

    def wrap(fn):
        if fn.__name__ in PROGRAMS:
            raise ValueError(f"duplicate program {fn.__name__}")
        doc = " ".join((fn.__doc__ or "").split("\n\n")[0].split())
        PROGRAMS[fn.__name__] = Program(fn.__name__, fn, group, devices, metadata, tuple(needs),
                                        frontend, doc, tuple(extra_flags))
        return fn

    return wrap


def rng(seed: int = 20261201):
    import numpy as np

    return np.random.default_rng(seed)


def normal(r, *shape, scale=0.1, dtype="float32"):
    import numpy as np

    return (r.standard_normal(shape) * scale).astype(np.dtype(dtype))
