#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python package as a JAX user meets it, run inside a virtual environment where
`pip install .` and `jax` (CPU) are installed (test/python/run.sh makes it).

Checks: README's Python lines print the report; every program of the project's own program
files (tools/xla-oracle: the oracle, hard and SPMD programs that need no model library) compiled
live, `report(compiled)`'s statistics equal to `compiled.memory_analysis()` (argument, output,
alias, temp, the host fields and total_allocation_bytes where JAX has them); a Lowered compiled
for you with a warning; bad inputs raise exceptions that name the problem; `diff`, `pack`,
`to_json`, `buffers`, per memory space; `python -m xlamem plan` prints what the C++ tool prints;
planning releases the GIL; a notebook executed headless (nbclient) whose outputs, saved as HTML,
render in Chromium with the chart and a working hover in every report (two on one page).

Usage: python_test.py SOURCE_ROOT WORK_DIR [--xlamem-cli PATH] [--programs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings

# SPMD programs need host devices; XLA reads its flags once, before jax is imported.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok      " if cond else "FAILED  ") + what, flush=True)
    if not cond:
        failures.append(what)


def raises(exc: type, needle: str, fn, what: str) -> None:
    try:
        fn()
    except exc as e:  # noqa: PERF203
        check(needle in str(e), f"{what}: {exc.__name__} naming '{needle}' ({str(e)[:150]})")
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: expected {exc.__name__}, got {type(e).__name__}: {e}")
        return
    check(False, f"{what}: expected {exc.__name__}, nothing raised")


def summary(name: str, started: float) -> int:
    """Prints the failures and returns the exit status."""
    print(f"{name}: {len(failures)} failed, {time.monotonic() - started:.0f} s")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


def readme_lines(root: str) -> str:
    """The Python code block of README's Python section."""
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    section = text.split("## Python", 1)
    if len(section) < 2:
        return ""
    m = re.search(r"```python\n(.*?)```", section[1], re.S)
    return m.group(1) if m else ""


def programs(root: str):
    """(name, builder) of every program of tools/xla-oracle that needs no model library."""
    sys.path.insert(0, os.path.join(root, "tools", "xla-oracle"))
    import importlib

    import programs as oracle  # noqa: E402
    import registry  # noqa: E402

    for m in ("programs_hard", "programs_spmd"):
        importlib.import_module(m)
    out = list(oracle.PROGRAMS.items())
    out += [(p.name, p.builder) for p in registry.PROGRAMS.values()
            if not p.needs and p.frontend == "jax" and p.group in ("hard", "spmd") and p.devices <= 8]
    return out


STAT_FIELDS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
               "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
               "host_temp_size_in_bytes", "total_allocation_bytes")


def live_programs(root: str, limit: int) -> None:
    import jax

    import xlamem

    done = equal = 0
    for name, builder in programs(root)[:limit]:
        try:
            fn, args, kwargs = builder()
            compiled = jax.jit(fn, **kwargs).lower(*args).compile()
        except Exception as e:  # noqa: BLE001 - a program JAX cannot compile here is not ours to judge
            print(f"skip    {name}: JAX could not compile it here ({type(e).__name__}: {str(e)[:120]})")
            continue
        ma = compiled.memory_analysis()
        r = xlamem.report(compiled)
        ours = r.stats.as_dict()
        diffs = [f"{f}: ours {ours[f]:,}, JAX {int(getattr(ma, f)):,}" for f in STAT_FIELDS
                 if hasattr(ma, f) and ours[f] != int(getattr(ma, f))]
        done += 1
        equal += not diffs
        check(not diffs, f"live {name}: statistics equal memory_analysis()" + (f" ({'; '.join(diffs)})" if diffs else ""))
    print(f"live programs: {equal} of {done} equal memory_analysis() (jax {jax.__version__})")
    check(done >= 30, f"at least 30 programs compiled live ({done})")


def api(root: str, cli: str | None, work: str) -> None:
    import jax
    import jax.numpy as jnp

    import xlamem

    def step(w, x):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h), h

    w = jnp.ones((256, 256), jnp.float32)
    x = jnp.ones((64, 256), jnp.float32)
    lowered = jax.jit(step).lower(w, x)
    compiled = lowered.compile()
    r = xlamem.report(compiled)
    text = str(r)
    check("peak" in text and r.module in text, "str(report) is the summary")
    check(r.peak_bytes > 0 and r.peak_instruction != "", f"the peak and the instruction then ({r.peak_instruction})")
    check(r.buffers and all(isinstance(b, xlamem.Buffer) for b in r.buffers), "buffers are plain Python objects")
    check(r.buffers == sorted(r.buffers, key=lambda b: -b.size), "buffers live at the peak, largest first")
    check(any(b.location.endswith(".py:" + b.location.rsplit(":", 1)[-1]) for b in r.buffers if b.location),
          "buffers name their source lines (file.py:N)")
    doc = json.loads(r.to_json())
    check(doc["command"] == "plan" and doc["compiled_memory_stats"]["temp_size_in_bytes"] == r.stats.temp_size_in_bytes,
          "to_json() is xlamem plan --json")
    check([m.name for m in r.memory_spaces] == ["device"], "one memory space (device) for a plain program")
    check("<iframe" in r._repr_html_() and "srcdoc=" in r._repr_html_(), "_repr_html_ is the page in an iframe")
    check(r.svg().lstrip().startswith("<svg") or "<svg" in r.svg()[:200], "svg() draws the memory")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rl = xlamem.report(lowered)
    check(any("Lowered" in str(c.message) for c in caught) and rl.stats == r.stats,
          "a Lowered is compiled for you, with a warning, to the same report")
    check(xlamem.report(compiled.as_text()).stats == r.stats, "HLO text gives the same report")
    path = os.path.join(work, "step.hlo")
    with open(path, "w") as f:
        f.write(compiled.as_text())
    check(xlamem.report(path).stats == r.stats, "a module path gives the same report")

    # pandas is installed by test/python/run.sh, so to_pandas is always exercised here.
    import pandas  # noqa: F401
    df = r.to_pandas()
    check(len(df) == len(r.buffers) and "location" in df.columns, "to_pandas() has a row per buffer at the peak")
    every = r.to_pandas("all")
    check(len(every) == len(r.timeline) and set(df["name"]) <= set(every["name"]),
          "to_pandas('all') has a row per buffer of the timeline, the peak's among them")

    # Per memory space: XLA's host offloading as its host offloader leaves it (hand-written,
    # test/data/memory-spaces/), planned with XLA:GPU's rules.
    spaces = os.path.join(root, "test", "data", "memory-spaces")
    off = xlamem.report(os.path.join(spaces, "offloaded.hlo"), backend="gpu")
    kept = xlamem.report(os.path.join(spaces, "kept.hlo"), backend="gpu")
    check(sorted(m.name for m in off.memory_spaces) == ["device", "host"] and off.host_peak_bytes >= 1 << 20,
          f"offloading: device and host memory with their own peaks ({[(m.name, m.peak_bytes) for m in off.memory_spaces]})")
    check(off.bytes_to_host == (1 << 20) + 1024 and off.bytes_to_device == (1 << 20) + 1024
          and [t.opcode for t in off.transfers] == ["copy-start", "dynamic-update-slice", "dynamic-slice", "copy-start"],
          f"offloading: the transfers each way ({off.bytes_to_host} to host, {off.bytes_to_device} back)")
    check("to host memory" in str(off) and "host" in {b.memory_space for b in off.timeline},
          "offloading: the summary and the buffers name host memory")
    dus = xlamem.report(os.path.join(spaces, "dus_ds.hlo"), backend="gpu")  # XLA's BasicDusDs, offloaded
    check(dus.bytes_to_host == 16 << 20 and dus.bytes_to_device == 16 << 20 and dus.host_peak_bytes == 32 << 20,
          f"XLA's BasicDusDs: 16 MiB each way, a 32 MiB host buffer ({dus.bytes_to_host}, {dus.host_peak_bytes})")
    od = json.loads(xlamem.diff(kept, off).to_json())
    check(od["stats"]["to_host"]["after"] == off.bytes_to_host and od["stats"]["host_peak"]["before"] == 0,
          "offloading: the diff shows the bytes moved and the host peak")

    # Two versions of one program: the diff names the growth.
    bigger = jax.jit(step).lower(jnp.ones((256, 256), jnp.float32), jnp.ones((128, 256), jnp.float32)).compile()
    d = xlamem.diff(compiled, bigger)
    dd = json.loads(d.to_json())
    check(dd["stats"]["peak"]["after"] > dd["stats"]["peak"]["before"] and "peak" in str(d),
          "diff(a, b) shows the peak growing")

    p = xlamem.pack([(0, 4, 64), (2, 6, 32), (5, 8, 64), (0, 8, 16)])
    check(p.status == "optimal" and len(p.offsets) == 4 and p.peak == p.lower_bound == 112,
          f"pack() places four intervals at the bound ({p.peak})")
    check(p.gap == 0.0 and 0 <= p.seconds_to_first_feasible <= p.seconds_to_best <= p.seconds,
          f"pack() gives the gap and the times to the first and best placement ({p.gap}, {p.seconds_to_best})")
    cut = xlamem.pack([(0, 4, 64), (2, 6, 32)], capacity=10)
    check(cut.status == "infeasible" and cut.gap is None and cut.seconds_to_best == -1,
          f"pack() under a capacity nothing fits: no gap, no times ({cut.status})")
    raises(xlamem.XlamemError, "solver", lambda: xlamem.pack([(0, 1, 8)], solver="nope"), "pack with an unknown solver")
    raises(ValueError, "interval 0", lambda: xlamem.pack([(0, 1)]), "pack with a short interval")

    # Bad inputs: an exception that names the problem.
    raises(TypeError, "cannot report a builtins.int", lambda: xlamem.report(42), "report(42)")
    raises(FileNotFoundError, "no/such", lambda: xlamem.report(os.path.join(work, "no", "such.hlo")), "a missing path")
    unscheduled = compiled.as_text().replace("is_scheduled=true", "is_scheduled=false")
    raises(xlamem.XlamemError, "not scheduled", lambda: xlamem.report(unscheduled), "a module XLA never scheduled")
    raises(xlamem.XlamemError, "<text>:", lambda: xlamem.report("HloModule m\n\nENTRY e {\n  p = f32[2 parameter(0)\n}\n"),
           "malformed HLO names the place")
    raises(xlamem.XlamemError, "backend", lambda: xlamem.report(compiled, backend="tpu"), "an unknown backend")

    # python -m xlamem is the CLI.
    example = os.path.join(root, "examples", "planning", "mlp_train_step.hlo")
    py = subprocess.run([sys.executable, "-m", "xlamem", "plan", example], capture_output=True, text=True)
    check(py.returncode == 0 and "peak" in py.stdout, "python -m xlamem plan prints the summary")
    if cli and os.path.exists(cli):
        native = subprocess.run([cli, "plan", example], capture_output=True, text=True)
        strip = lambda s: re.sub(r"planned in [0-9.]+ ?m?s", "", s)  # noqa: E731
        check(strip(py.stdout) == strip(native.stdout), "python -m xlamem plan prints what the C++ tool prints")
    bad = subprocess.run([sys.executable, "-m", "xlamem", "plan", os.path.join(work, "missing.hlo")],
                         capture_output=True, text=True)
    check(bad.returncode == 3 and bad.stderr.startswith("xlamem plan: error: "), "python -m xlamem: bad input exits 3")

    # Planning releases the GIL: while a worker thread plans a module, this thread keeps running
    # Python (with the GIL held, it could not until the call ended). The module is a straight
    # line of 3x10^5 instructions, so that the call lasts far longer than the 10 ms this thread
    # waits before counting (the corpus's largest transformer now plans in about 10 ms).
    line = ["HloModule gil_release, is_scheduled=true", "", "ENTRY main {", "  v0 = f32[16]{0} parameter(0)"]
    line += [f"  v{k} = f32[16]{{0}} negate(v{k - 1})" for k in range(1, 300_000)]
    long_module = "\n".join(line + ["}", ""])
    done = threading.Event()
    took = [0.0]

    def work_thread():
        t0 = time.perf_counter()
        xlamem.report(long_module)
        took[0] = time.perf_counter() - t0
        done.set()

    worker = threading.Thread(target=work_thread)
    worker.start()
    time.sleep(0.01)
    ticks = 0
    while not done.is_set():
        ticks += 1
    worker.join()
    check(ticks > 1000, f"another thread ran while planning ({ticks} loop turns during a {took[0]:.2f} s report)")
    big = corpus_module(root, work, "transformer_train_step")
    t0 = time.perf_counter()
    xlamem.report(big)
    print(f"report() of transformer_train_step (the corpus's largest transformer, jax 0.12): "
          f"{time.perf_counter() - t0:.3f} s")


def corpus_module(root: str, work: str, program: str) -> str:
    """The optimised module of `program` in the jax-0.12.0.1 corpus archive, unpacked to `work`."""
    import tarfile

    out = os.path.join(work, f"{program}.hlo")
    if not os.path.exists(out):
        archive = os.path.join(root, "test", "data", "xla-corpus", "jax-0.12.0.1.tar.xz")
        with tarfile.open(archive) as tar:
            for m in tar.getmembers():
                if m.isfile() and f"/{program}/" in m.name and m.name.endswith("cpu_after_optimizations.txt"):
                    with open(out, "wb") as f:
                        f.write(tar.extractfile(m).read())
                    break
    return out


def auto_sharding(root: str) -> None:
    """xlamem.auto_shard on the bundled example's training step, on 8 host devices (2x4): the
    shardings match the arguments' and results' pytrees, the plan compiles with every layout
    applied, and the memory XLA reports is within a limit that data parallelism does not meet;
    bad arguments raise what a Python user expects."""
    import jax
    import jax.numpy as jnp
    import xlamem

    def loss(params, x, y):
        w1, w2 = params
        return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)

    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    f32 = jnp.float32
    args = ((jax.ShapeDtypeStruct((1024, 4096), f32), jax.ShapeDtypeStruct((4096, 1024), f32)),
            jax.ShapeDtypeStruct((256, 1024), f32), jax.ShapeDtypeStruct((256, 1024), f32))
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    limit = 40 << 20
    dp = jax.jit(step, in_shardings=((None, None), None, None)).lower(*args).compile().memory_analysis()
    dp_bytes = dp.argument_size_in_bytes + dp.output_size_in_bytes + dp.temp_size_in_bytes
    check(dp_bytes > limit, f"auto_shard: replicated weights take {dp_bytes} bytes, above the 40 MiB limit")
    r = xlamem.auto_shard(step, *args, mesh=mesh, memory_limit=limit, time_limit=3)
    check(r.fits and r.predicted_peak <= limit, "auto_shard: the predicted peak is within the limit")
    check(isinstance(r.in_shardings, tuple) and isinstance(r.in_shardings[0], tuple) and
          len(jax.tree.leaves(r.in_shardings)) == 4, "auto_shard: in_shardings match the arguments' pytree")
    check(len(jax.tree.leaves(r.out_shardings)) == 3, "auto_shard: out_shardings match the results' pytree")
    compiled = r.compile()
    m = compiled.memory_analysis()
    used = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    check(used <= limit, f"auto_shard: XLA's memory of the compiled plan, {used} bytes, is within the limit")
    check("peak:" in repr(r) and "arguments:" in repr(r), "auto_shard: print(r) is the summary")
    check(r.compiled_bytes == used and r.rounds and r.rounds[-1]["chosen"] and "checked by XLA" in repr(r),
          f"auto_shard: the answer carries XLA's figure ({r.compiled_bytes}) and the solves it took ({r.rounds})")
    unchecked = xlamem.auto_shard(step, *args, mesh=mesh, memory_limit=limit, time_limit=3, verify=False)
    check(unchecked.compiled_bytes is None and not unchecked.rounds, "auto_shard: verify=False compiles nothing")
    raises(TypeError, "verify must be True or False",
           lambda: xlamem.auto_shard(step, *args, mesh=mesh, verify="yes"), "auto_shard: verify is a bool")
    raises(TypeError, "mesh must be a jax.sharding.Mesh", lambda: xlamem.auto_shard(step, *args, mesh="2x4"),
           "auto_shard: a mesh that is not a Mesh is a TypeError")
    raises(ValueError, "time_limit is NaN", lambda: xlamem.auto_shard(step, *args, mesh=mesh, time_limit=float("nan")),
           "auto_shard: a NaN time limit is a ValueError")
    raises(ValueError, "memory_limit", lambda: xlamem.auto_shard(step, *args, mesh=mesh, memory_limit=-1),
           "auto_shard: a negative limit is a ValueError")
    raises(xlamem.XlamemError, "no machine called 'dgx'",
           lambda: xlamem.auto_shard(step, *args, mesh=mesh, machine="dgx"), "auto_shard: an unknown machine is named")


class _StandIn:
    """A solve's answer as `_verified` sees it: the model's peak and fit, a cost, and a compile
    whose `memory_analysis()` gives `compiled` bytes (None: no analysis)."""

    def __init__(self, predicted: int, fits: bool, cost: float, compiled: int | None) -> None:
        self.predicted_peak, self.document, self._bytes = predicted, {"fits": fits, "cost_ns": str(cost)}, compiled

    def compile(self):
        size = self._bytes

        class Analysis:
            argument_size_in_bytes, output_size_in_bytes, temp_size_in_bytes = size, 0, 0
        return type("Compiled", (), {"memory_analysis": lambda _: None if size is None else Analysis()})()


def auto_shard_verification() -> None:
    """auto_shard's XLA check on stand-in models, no JAX: a model that under-counts is solved
    again under a smaller limit, one that over-counts (and finds nothing) under a larger one,
    a plan XLA never finds within the limit gives the smallest, and no analysis stops at once."""
    from xlamem._autoshard import _verified

    def run(model, limit: int, rounds: int = 3):
        asked: list[int] = []

        def solve(model_limit: int):
            asked.append(model_limit)
            return model(model_limit)
        return _verified(None, solve, limit, rounds), asked

    def under(model_limit: int):  # predicts 98 % of its limit, XLA compiles 10 % more
        predicted = model_limit * 98 // 100
        return _StandIn(predicted, True, 1000 - predicted, predicted * 11 // 10)
    r, asked = run(under, 1000)
    check(asked == [1000, 899] and r.compiled_bytes == 969 and [x["chosen"] for x in r.rounds] == [False, True],
          f"verify: an under-counting model is solved again below the limit ({asked}, {r.rounds})")

    def over(model_limit: int):  # a floor of 1500 in the model, XLA compiles half of it
        predicted = max(1500, model_limit * 98 // 100)
        return _StandIn(predicted, predicted <= model_limit, 1000 - predicted / 10, predicted // 2)
    r, asked = run(over, 1000)
    check(asked == [1000, 2000] and r.compiled_bytes == 980 and r.rounds[1]["chosen"],
          f"verify: an over-counting model that found nothing is solved again above the limit ({asked}, {r.rounds})")

    def never(model_limit: int):  # XLA's figure is always twice the model's, and never below 2400
        predicted = max(1200, model_limit * 98 // 100)
        return _StandIn(predicted, predicted <= model_limit, 0, predicted * 2)
    r, asked = run(never, 1000)
    check(len(asked) == 2 and r.compiled_bytes == 2400 and r.rounds[0]["chosen"],
          f"verify: with no plan within the limit the smallest is the answer ({asked}, {r.rounds})")
    r, asked = run(lambda m: _StandIn(m, True, 0, None), 1000)
    check(asked == [1000] and r.compiled_bytes is None, "verify: no memory analysis, no second solve")


def import_time() -> None:
    t = subprocess.run([sys.executable, "-X", "importtime", "-c", "import xlamem"], capture_output=True, text=True)
    total = 0
    for line in t.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)", line)
        if m and m.group(2).strip() == "xlamem":
            total = int(m.group(1))
    print(f"import xlamem: {total / 1e6:.3f} s cumulative (python -X importtime)")


def readme(root: str) -> None:
    code = readme_lines(root)
    check(code.count("\n") >= 3, "README has a Python section with a code block")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    check(run.returncode == 0 and "peak" in run.stdout, "README's Python lines print the report"
          + ("" if run.returncode == 0 else f": {run.stderr[-500:]}"))


NOTEBOOK_CELLS = [
    "import jax, jax.numpy as jnp, xlamem",
    "def mlp(w1, w2, x):\n    return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2))\n"
    "w1 = jnp.ones((256, 512)); w2 = jnp.ones((512, 128)); x = jnp.ones((64, 256))\n"
    "forward = jax.jit(mlp).lower(w1, w2, x).compile()\n"
    "grad = jax.jit(jax.grad(mlp)).lower(w1, w2, x).compile()",
    "xlamem.report(forward)",
    "xlamem.report(grad)",
]

HARNESS = """<pre id="results"></pre>
<script>
window.addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('iframe.xlamem-report').forEach(f => {
    try {
      f.contentWindow.selftest();
      out.push(JSON.parse(f.contentDocument.getElementById('selftest').textContent.slice(9)));
    } catch (e) { out.push({ok: false, errors: [String(e)]}); }
  });
  document.getElementById('results').textContent = 'RESULTS ' + JSON.stringify(out);
});
</script>
"""


def cell_output(cell, kind: str) -> str:
    """A notebook cell's output: the text of its `stdout` or `stderr` stream, or its value."""
    outputs = cell.get("outputs", [])
    if kind == "value":
        return "".join(o["data"].get("text/plain", "") for o in outputs if o.get("output_type") == "execute_result")
    return "".join(o["text"] for o in outputs if o.get("output_type") == "stream" and o.get("name") == kind)


def notebook(root: str, work: str) -> None:
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError as e:
        check(False, f"the notebook test needs nbclient, nbformat and ipykernel ({e})")
        return
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS]
    # The command line in a cell: what it prints is the cell's output, not the kernel's terminal.
    example = os.path.join(root, "examples", "planning", "mlp_train_step.hlo")
    for args in (["plan", example], ["plan", os.path.join(work, "missing.hlo")]):
        nb.cells.append(nbformat.v4.new_code_cell(f"import xlamem.__main__\nxlamem.__main__.main({args!r})"))
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    plan, missing = nb.cells[-2], nb.cells[-1]
    check(cell_output(plan, "value") == "0" and "peak" in cell_output(plan, "stdout"),
          f"xlamem.__main__.main(['plan', m]) in a cell: the summary is the cell's output "
          f"({cell_output(plan, 'value')!r}, {cell_output(plan, 'stdout')[:60]!r})")
    check(cell_output(missing, "value") == "3" and cell_output(missing, "stderr").startswith("xlamem plan: error: "),
          f"main(['plan', missing]) in a cell: exit 3, the error on the cell's stderr "
          f"({cell_output(missing, 'stderr')[:60]!r})")
    htmls = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
             if o.get("output_type") == "execute_result" and "text/html" in o.get("data", {})]
    check(len(htmls) == 2, f"the notebook shows two reports as HTML ({len(htmls)})")
    page = os.path.join(work, "notebook_outputs.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><head><meta charset='utf-8'><title>notebook outputs</title></head><body>\n")
        for h in htmls:
            f.write(f"<div class='output'>{h}</div>\n")
        f.write(HARNESS + "</body></html>\n")
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        check(False, "Chromium is needed to render the notebook's outputs (apt-get install chromium)")
        return
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                          "--disable-extensions", "--disable-background-networking", "--window-size=1280,2000",
                          "--virtual-time-budget=8000", "--dump-dom", "file://" + page],
                         capture_output=True, text=True, timeout=180)
    m = re.search(r"RESULTS (\[.*?\])</pre>", run.stdout, re.S)
    results = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                         .replace("&gt;", ">")) if m else []
    check(len(results) == 2, f"Chromium ran both reports' self-tests ({len(results)})")
    for k, rec in enumerate(results):
        check(bool(rec.get("ok")) and rec.get("chart_rects", 0) > 0,
              f"notebook report {k + 1}: chart drawn ({rec.get('chart_rects')} rectangles), hover shows "
              f"{rec.get('expected')!r}, no script error ({rec.get('errors')})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("work")
    ap.add_argument("--xlamem-cli", default=None)
    ap.add_argument("--programs", type=int, default=1000)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    started = time.monotonic()
    import_time()
    readme(a.root)
    api(a.root, a.xlamem_cli, a.work)
    auto_shard_verification()
    auto_sharding(a.root)
    live_programs(a.root, a.programs)
    notebook(a.root, a.work)
    return summary("python", started)


if __name__ == "__main__":
    sys.exit(main())
