# SPDX-License-Identifier: Apache-2.0
"""xlamem.auto_shard: shardings for a JAX function on a device mesh under a per-device memory
limit, from the library's auto-sharding (`xlamem autoshard`), applied the way a JAX user would.

How the answer reaches XLA: the function is traced once (`jax.make_jaxpr`); a second version of
it marks every array an equation of the jaxpr makes with an open sharding constraint
(`P.UNCONSTRAINED` in every dimension), which lowers to a `Sharding` custom call right after the
value, inside a name scope `xlamem_mark_K` that reaches the call's metadata. The library reads
the lowered module, treats each open marker as the value it marks, and gives every instruction a
layout; marker K's layout is value K's. The function `AutoShardResult.jit()` returns evaluates
the jaxpr with each value constrained to its layout, under the arguments' and results'
shardings: XLA partitions the plan, not one of its own.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from . import _arguments as _check
from . import _xlamem

_MARKER = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*custom_call_target="Sharding".*op_name="[^"]*xlamem_mark_(\d+)')


def _jax():
    try:
        import jax  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - the package works without JAX
        raise ImportError("xlamem.auto_shard needs JAX (pip install jax)") from e
    return jax


def _mesh_text(mesh: Any) -> str:
    names = getattr(mesh, "axis_names", None)
    shape = getattr(mesh, "shape", None)
    if names is None or shape is None:
        raise TypeError(f"xlamem.auto_shard: mesh must be a jax.sharding.Mesh, not {type(mesh).__name__}")
    return ",".join(f"{n}={shape[n]}" for n in names)


def _auto_mesh(jax: Any, mesh: Any) -> Any:
    """The mesh with every axis of type Auto, so that open constraints are allowed on it."""
    from jax.sharding import AxisType, Mesh  # noqa: PLC0415
    return Mesh(mesh.devices, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.axis_names))


def _spec(jax: Any, text: str) -> Any:
    """A PartitionSpec from the library's text: P(), P('x', None), P(('x', 'y'), None)."""
    from jax.sharding import PartitionSpec  # noqa: PLC0415
    if not (text.startswith("P(") and text.endswith(")")):
        raise _xlamem.XlamemError(f"xlamem.auto_shard: unexpected layout {text!r}")
    body = text[2:-1].strip()
    if not body:
        return PartitionSpec()
    entries, depth, start = [], 0, 0
    for i, c in enumerate(body + ","):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            entries.append(body[start:i].strip())
            start = i + 1
    out = []
    for e in entries:
        if e == "None":
            out.append(None)
        elif e.startswith("("):
            out.append(tuple(a.strip().strip("'") for a in e[1:-1].split(",") if a.strip()))
        else:
            out.append(e.strip("'"))
    return PartitionSpec(*out)


def _evaluate(jax: Any, jaxpr: Any, consts: list[Any], args: list[Any], constrain: Callable[[Any, Any], Any]) -> list[Any]:
    """Runs `jaxpr` equation by equation, passing each array an equation makes through
    `constrain(var, value)`."""
    from jax.extend import core  # noqa: PLC0415
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, core.Literal) else env[v]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        bound = eqn.primitive.get_bind_params(eqn.params)  # (subfuns, params) before JAX 0.8, params since
        subfuns, params = bound if isinstance(bound, tuple) else ([], bound)
        ctx = getattr(getattr(eqn, "ctx", None), "manager", None)
        if ctx is not None:
            with ctx:
                outs = eqn.primitive.bind(*subfuns, *[read(v) for v in eqn.invars], **params)
        else:
            outs = eqn.primitive.bind(*subfuns, *[read(v) for v in eqn.invars], **params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs):
            if type(v).__name__ != "DropVar":
                env[v] = constrain(v, x) if hasattr(x, "shape") and hasattr(v, "aval") else x
    return [read(v) for v in jaxpr.outvars]


class AutoShardResult:
    """The answer of `xlamem.auto_shard`: `in_shardings` and `out_shardings` (pytrees of
    `NamedSharding` matching the arguments and results, on the mesh given with its axes made
    `AxisType.Auto`, which sharding constraints need), `jit()` (the function compiled with
    the whole plan applied), `report` (xlamem's memory report of that compilation), `summary`
    (the library's text), `document` (its JSON, as a dict), and where XLA checked the plan
    `compiled_bytes` (its `memory_analysis()`: argument + output + temp per device) and
    `rounds` (each solve: the model's limit, the predicted and the compiled bytes)."""

    def __init__(self, jax: Any, fn: Callable[..., Any], args: tuple[Any, ...], mesh: Any, closed: Any,
                 in_tree: Any, out_tree: Any, document: dict[str, Any], summary: str,
                 layouts: dict[Any, Any]) -> None:
        from jax.sharding import NamedSharding  # noqa: PLC0415
        self._jax, self._fn, self._args, self._mesh = jax, fn, args, mesh
        self._closed, self._in_tree, self._out_tree = closed, in_tree, out_tree
        self._layouts = layouts
        self.document, self.summary = document, summary
        params = [NamedSharding(mesh, _spec(jax, p["spec"])) for p in document["parameters"]]
        outputs = [NamedSharding(mesh, _spec(jax, p["spec"])) for p in document["outputs"]]
        self.in_shardings = jax.tree.unflatten(in_tree, params)
        self.out_shardings = jax.tree.unflatten(out_tree, outputs)
        self._report: Optional[Any] = None
        self._compiled: Optional[Any] = None
        self._model_limit: int = -1
        self.memory_limit: Optional[int] = None
        self.compiled_bytes: Optional[int] = None
        self.rounds: list[dict[str, Any]] = []

    @property
    def fits(self) -> bool:
        """Whether the plan is within the limit: XLA's word where it compiled the plan, else
        the model's."""
        if self.compiled_bytes is not None and self.memory_limit is not None:
            return self.compiled_bytes <= self.memory_limit
        return bool(self.document.get("fits"))

    @property
    def predicted_peak(self) -> int:
        return int(self.document["peak_bytes"])

    def jit(self) -> Any:
        """`jax.jit` of the function with every layout of the answer applied (the arguments',
        the results' and, as sharding constraints, every value's inside)."""
        jax = self._jax
        from jax.sharding import NamedSharding  # noqa: PLC0415
        closed, layouts, mesh = self._closed, self._layouts, self._mesh

        def constrain(v: Any, x: Any) -> Any:
            spec = layouts.get(v)
            return x if spec is None else jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))

        def planned(*args: Any) -> Any:
            flat = jax.tree.leaves(args)
            outs = _evaluate(jax, closed.jaxpr, closed.consts, flat, constrain)
            return jax.tree.unflatten(self._out_tree, outs)

        return jax.jit(planned, in_shardings=self.in_shardings, out_shardings=self.out_shardings, keep_unused=True)

    def compile(self) -> Any:
        """The plan compiled by XLA (once; later calls return the same object)."""
        if self._compiled is None:
            self._compiled = self.jit().lower(*self._args).compile()
        return self._compiled

    @property
    def report(self) -> Any:
        """xlamem's memory report of the compiled plan (compiled on first use)."""
        if self._report is None:
            from . import report  # noqa: PLC0415
            self._report = report(self.compile())
        return self._report

    def __repr__(self) -> str:
        if not self.rounds:
            return self.summary
        mib = lambda b: "unknown" if b is None else f"{b / 2**20:.1f} MiB"  # noqa: E731
        lines = [f"checked by XLA against the limit {mib(self.memory_limit)} (memory_analysis: argument + output + temp):"]
        for k, r in enumerate(self.rounds, 1):
            lines.append(f"  solve {k}: model limit {mib(r['model_limit'])}, predicted {mib(r['predicted_bytes'])}, "
                         f"compiled {mib(r['compiled_bytes'])}{'  <- chosen' if r['chosen'] else ''}")
        return self.summary + "\n".join(lines) + "\n"


def _compiled_bytes(compiled: Any) -> Optional[int]:
    """XLA's per-device memory of a compiled plan: argument + output + temp, as
    `memory_analysis()` reports it (None where the backend gives no analysis)."""
    m = compiled.memory_analysis()
    if m is None:
        return None
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes)


class _Traced:
    """The function traced once and lowered with every value marked: what each solve reads."""

    def __init__(self, jax: Any, fn: Callable[..., Any], example_args: tuple[Any, ...], mesh: Any) -> None:
        self.jax, self.fn, self.args = jax, fn, example_args
        self.closed = jax.make_jaxpr(fn)(*example_args)
        flat_args, self.in_tree = jax.tree.flatten(example_args)
        self.out_tree = jax.tree.structure(jax.eval_shape(fn, *example_args))
        self.mesh = _auto_mesh(jax, mesh)
        from jax.sharding import NamedSharding, PartitionSpec  # noqa: PLC0415
        self.marked: list[Any] = []
        auto, marked, closed = self.mesh, self.marked, self.closed

        def mark(v: Any, x: Any) -> Any:
            # The name scope reaches the custom call's metadata: marker k is found by name, not order.
            with jax.named_scope(f"xlamem_mark_{len(marked)}"):
                marked.append(v)
                open_spec = PartitionSpec(*([PartitionSpec.UNCONSTRAINED] * x.ndim))
                return jax.lax.with_sharding_constraint(x, NamedSharding(auto, open_spec))

        def instrumented(*flat: Any) -> Any:
            marked.clear()
            return _evaluate(jax, closed.jaxpr, closed.consts, list(flat), mark)

        specs = [a if isinstance(a, jax.ShapeDtypeStruct) else jax.ShapeDtypeStruct(jax.numpy.shape(a), jax.numpy.result_type(a))
                 for a in flat_args]
        # keep_unused: every argument stays a parameter, so parameter k is flat argument k.
        self.text = jax.jit(instrumented, keep_unused=True).lower(*specs).as_text(dialect="hlo", debug_info=True)
        # Marker k (its name scope in the custom call's metadata) is the k-th marked value.
        entry = self.text[self.text.find("\nENTRY"):]
        self.markers = {int(m.group(2)): m.group(1) for line in entry.splitlines() if (m := _MARKER.match(line))}

    def solve(self, mesh_text: str, machine: str, limit: int, seconds: float, threads: int, seed: int) -> AutoShardResult:
        jax = self.jax
        document_text, summary = _xlamem.auto_shard_text(self.text, getattr(self.fn, "__name__", "fn"), mesh_text, machine,
                                                          limit, seconds, threads, seed)
        import json  # noqa: PLC0415
        document = json.loads(document_text)
        by_name = {i["name"]: i["spec"] for i in document.get("instructions", [])}
        layouts: dict[Any, Any] = {}
        for k, v in enumerate(self.marked):
            name = self.markers.get(k)
            if name in by_name:
                layouts[v] = _spec(jax, by_name[name])
        if len(layouts) < len(self.marked):  # a value the lowering dropped (unused): XLA places it
            import warnings  # noqa: PLC0415
            warnings.warn(f"xlamem.auto_shard: {len(self.marked) - len(layouts)} of {len(self.marked)} values have no layout "
                          "in the module (unused values the lowering dropped); XLA places them", stacklevel=3)
        return AutoShardResult(jax, self.fn, self.args, self.mesh, self.closed, self.in_tree, self.out_tree, document,
                               summary, layouts)


def _verified(traced: _Traced, solve: Callable[[int], AutoShardResult], limit: int, rounds: int) -> AutoShardResult:
    """Solves, compiles and measures up to `rounds` times (see `auto_shard`): each new model
    limit is the real limit in the model's units, `limit x predicted / measured` of the last
    plan (1 % under it when XLA found that plan too large)."""
    tried: list[AutoShardResult] = []
    model_limit = limit
    limits_seen: set[int] = set()
    for _ in range(rounds):
        limits_seen.add(model_limit)
        r = solve(model_limit)
        r._model_limit = model_limit
        measured = _compiled_bytes(r.compile())
        r.compiled_bytes = measured
        tried.append(r)
        if measured is None:  # no analysis on this backend: the model's word is all there is
            break
        if measured <= limit and r.document.get("fits"):
            break  # XLA and the model agree that it fits
        scale = r.predicted_peak / max(measured, 1) * (0.99 if measured > limit else 1.0)
        model_limit = max(1, int(limit * scale))
        if model_limit in limits_seen:
            break
    fitting = [r for r in tried if r.compiled_bytes is not None and r.compiled_bytes <= limit]
    best = (min(fitting, key=lambda r: float(r.document["cost_ns"])) if fitting
            else min(tried, key=lambda r: r.compiled_bytes if r.compiled_bytes is not None else r.predicted_peak))
    best.rounds = [{"model_limit": r._model_limit, "predicted_bytes": r.predicted_peak, "compiled_bytes": r.compiled_bytes,
                    "chosen": r is best} for r in tried]
    best.memory_limit = limit
    return best


def auto_shard(fn: Callable[..., Any], *example_args: Any, mesh: Any, memory_limit: Optional[int] = None,
               machine: str = "cpu-host-8", time_limit: float = 10.0, threads: int = 1, seed: int = 1,
               verify: bool = True, rounds: int = 3) -> AutoShardResult:
    """Shardings for `fn` on `mesh` within `memory_limit` bytes per device (None: no limit) at
    the least predicted time on `machine` (a preset: h100-8-nvlink, h100-2x8-ib, tpu-v5e-256,
    cpu-host-8). `example_args`: arrays, `jax.ShapeDtypeStruct`s, pytrees of them, or scalars.
    `time_limit` bounds each solve (seconds, from the start of the library call: reading the
    module and building the problem count; tracing and XLA's compiles do not).

    With a limit and `verify` (the default), XLA is the judge: each answer is compiled and its
    `memory_analysis()` (argument + output + temp) read; when XLA's figure is above the limit,
    or the model found nothing within it but XLA's figure of its least-memory plan is, the
    problem is solved again with the limit translated into the model's units (the limit times
    predicted / compiled of the last plan), at most `rounds` solves and compiles in all. The
    answer is the plan of least predicted time among those XLA found within the limit, else
    the one XLA found smallest; `r.compiled_bytes` is XLA's figure for it, `r.rounds` the
    history. Raises TypeError for a mesh that is not a `jax.sharding.Mesh`, ValueError for bad
    numbers, XlamemError for a module or mesh the library refuses (an unknown machine, a mesh
    larger than it), naming what is wrong."""
    jax = _jax()
    mesh_text = _mesh_text(mesh)
    limit = -1 if memory_limit is None else _check.count(memory_limit, "xlamem.auto_shard: memory_limit")
    seconds = _check.seconds(time_limit, "xlamem.auto_shard: time_limit")
    machine = _check.text(machine, "xlamem.auto_shard: machine")
    threads = _check.in_range(threads, "xlamem.auto_shard: threads", 1, 1024)
    seed = _check.in_range(seed, "xlamem.auto_shard: seed", 0, (1 << 63) - 1)
    if not isinstance(verify, bool):
        raise TypeError(f"xlamem.auto_shard: verify must be True or False, not {type(verify).__name__}")
    rounds = _check.in_range(rounds, "xlamem.auto_shard: rounds", 1, 100)

    traced = _Traced(jax, fn, example_args, mesh)

    def solve(model_limit: int) -> AutoShardResult:
        return traced.solve(mesh_text, machine, model_limit, seconds, threads, seed)

    if limit < 0 or not verify:
        return solve(limit)
    return _verified(traced, solve, limit, rounds)
