# SPDX-License-Identifier: Apache-2.0
"""The XLA oracle programs: small JAX programs of our own, compiled by XLA:CPU.

For each program this script writes, into OUT/<name>/:
  <module>.cpu_after_optimizations.txt                    the optimised, scheduled HLO module
  <module>.cpu_after_optimizations-buffer-assignment.txt  XLA's allocation blocks
  <module>.cpu_after_optimizations-buffer-assignment-values.txt
                                                          "Total bytes used" and the used values
  <module>.cpu_after_optimizations-live-range.txt         HloLiveRange (schedule, ranges, peak)
  memory_analysis.json                                    compiled.memory_analysis() as JSON
and OUT/manifest.json lists every program with its instruction counts and XLA's figures.

Each program is compiled in a fresh Python process so that XLA_FLAGS (read once, when XLA
starts) can point the dump at that program alone. Run it through generate.sh, never by CI.

    python programs.py --out DIR [--only NAME ...]     # driver: all programs
    python programs.py --run NAME --dump DIR --json F  # child: one program (used by the driver)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

# --------------------------------------------------------------------------------------------
# The programs. Each builder returns (function, example arguments, jax.jit keyword arguments).
# Parameters come from numpy's seeded generator, never from jax.random, so that no other XLA
# module is compiled in the child process. Shapes are small on purpose: the corpus is committed.
# --------------------------------------------------------------------------------------------


def _rng():
    import numpy as np

    return np.random.default_rng(20261130)


def _normal(rng, *shape, scale=0.1):
    import numpy as np

    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _mlp_params(rng, sizes):
    return [(_normal(rng, a, b), _normal(rng, b)) for a, b in zip(sizes[:-1], sizes[1:])]


def _mlp_apply(params, x):
    import jax

    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i + 1 < len(params):
            x = jax.nn.relu(x)
    return x


def _xent(logits, labels):
    import jax
    import jax.numpy as jnp

    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(logp * labels, axis=-1))


def mlp_forward():
    """A three-layer MLP forward pass (dots, bias adds, relu)."""
    rng = _rng()
    params = _mlp_params(rng, [256, 512, 256, 10])
    x = _normal(rng, 32, 256, scale=1.0)

    def mlp_forward(params, x):
        return _mlp_apply(params, x)

    return mlp_forward, (params, x), {}


def mlp_train_step():
    """Loss, gradient and an SGD update of a three-layer MLP; returns new params and the loss."""
    import jax
    import numpy as np

    rng = _rng()
    params = _mlp_params(rng, [256, 512, 256, 10])
    x = _normal(rng, 32, 256, scale=1.0)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]

    def mlp_train_step(params, x, labels):
        loss, grads = jax.value_and_grad(lambda p: _xent(_mlp_apply(p, x), labels))(params)
        new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return new, loss

    return mlp_train_step, (params, x, labels), {}


def _layer_norm(x, g, b):
    import jax.numpy as jnp

    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def _attention_params(rng, d, heads, ff):
    return {
        "ln1": (_normal(rng, d) + 1.0, _normal(rng, d)),
        "qkv": _normal(rng, d, 3 * d),
        "out": _normal(rng, d, d),
        "ln2": (_normal(rng, d) + 1.0, _normal(rng, d)),
        "ff1": (_normal(rng, d, ff), _normal(rng, ff)),
        "ff2": (_normal(rng, ff, d), _normal(rng, d)),
    }


def _attention_apply(p, x, heads, causal):
    """Pre-norm transformer block: multi-head self-attention, then a GELU MLP, both residual."""
    import jax
    import jax.numpy as jnp

    b, t, d = x.shape
    hd = d // heads
    h = _layer_norm(x, *p["ln1"])
    q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
    q, k, v = (a.reshape(b, t, heads, hd).transpose(0, 2, 1, 3) for a in (q, k, v))
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(float(hd))
    if causal:
        mask = jnp.tril(jnp.ones((t, t), dtype=bool))
        s = jnp.where(mask, s, -1e9)
    a = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqk,bhkd->bhqd", a, v).transpose(0, 2, 1, 3).reshape(b, t, d)
    x = x + o @ p["out"]
    h = _layer_norm(x, *p["ln2"])
    w1, b1 = p["ff1"]
    w2, b2 = p["ff2"]
    return x + jax.nn.gelu(h @ w1 + b1) @ w2 + b2


def attention_block():
    """One pre-norm transformer block (4 heads, causal mask, softmax, GELU MLP) forward."""
    rng = _rng()
    p = _attention_params(rng, 64, 4, 256)
    x = _normal(rng, 2, 32, 64, scale=1.0)

    def attention_block(p, x):
        return _attention_apply(p, x, heads=4, causal=True)

    return attention_block, (p, x), {}


def _conv_params(rng):
    return {
        "c1": (_normal(rng, 3, 3, 3, 16), _normal(rng, 16)),
        "c2": (_normal(rng, 3, 3, 16, 32), _normal(rng, 32)),
        "fc": (_normal(rng, 32, 10), _normal(rng, 10)),
    }


def _conv_apply(p, x):
    """conv3x3-relu-avgpool2, conv3x3-relu, global mean, dense. NHWC / HWIO."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    dn = ("NHWC", "HWIO", "NHWC")
    w, b = p["c1"]
    x = jax.nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn) + b)
    x = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    w, b = p["c2"]
    x = jax.nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn) + b)
    x = jnp.mean(x, axis=(1, 2))
    w, b = p["fc"]
    return x @ w + b


def conv_net():
    """A small conv net forward: two 3x3 convolutions, average pooling (reduce-window), dense."""
    rng = _rng()
    p = _conv_params(rng)
    x = _normal(rng, 8, 16, 16, 3, scale=1.0)

    def conv_net(p, x):
        return _conv_apply(p, x)

    return conv_net, (p, x), {}


def conv_train_step():
    """Gradient step of the conv net with the parameters donated (input_output_alias)."""
    import jax
    import numpy as np

    rng = _rng()
    p = _conv_params(rng)
    x = _normal(rng, 8, 16, 16, 3, scale=1.0)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]

    def conv_train_step(p, x, labels):
        loss, g = jax.value_and_grad(lambda q: _xent(_conv_apply(q, x), labels))(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g), loss

    return conv_train_step, (p, x, labels), {"donate_argnums": (0,)}


def scan_rnn():
    """An Elman RNN over 24 steps with lax.scan; the stacked outputs are written by
    dynamic-update-slice inside the while loop that scan lowers to."""
    import jax.numpy as jnp
    from jax import lax

    rng = _rng()
    wx = _normal(rng, 32, 64)
    wh = _normal(rng, 64, 64)
    xs = _normal(rng, 24, 16, 32, scale=1.0)
    h0 = _normal(rng, 16, 64)

    def scan_rnn(wx, wh, h0, xs):
        def step(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, h

        return lax.scan(step, h0, xs)

    return scan_rnn, (wx, wh, h0, xs), {}


def while_dus():
    """lax.while_loop that fills a [64,128] buffer row by row with dynamic_update_slice,
    stopping on a data-dependent condition (so it cannot become a fixed-trip scan)."""
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = _rng()
    v = _normal(rng, 1, 128, scale=1.0)

    def while_dus(v, limit):
        buf = jnp.zeros((64, 128), jnp.float32)

        def cond(s):
            i, _, row = s
            return (i < 64) & (jnp.sum(row) < limit)

        def body(s):
            i, buf, row = s
            row = jnp.sin(row) + 0.5
            buf = lax.dynamic_update_slice(buf, row, (i, 0))
            return i + 1, buf, row

        return lax.while_loop(cond, body, (jnp.int32(0), buf, v))

    return while_dus, (v, np.float32(1e9)), {}


def donated_update():
    """An Adam update with params and both moments donated: every output aliases an input."""
    import jax
    import jax.numpy as jnp

    rng = _rng()
    params = {"w1": _normal(rng, 128, 256), "w2": _normal(rng, 256, 64), "b": _normal(rng, 64)}
    m = jax.tree_util.tree_map(lambda a: a * 0, params)
    v = jax.tree_util.tree_map(lambda a: a * 0, params)
    grads = jax.tree_util.tree_map(lambda a: a * 0.5, params)
    import numpy as np

    step = np.int32(3)

    def donated_update(params, m, v, grads, step):
        b1, b2, lr = 0.9, 0.999, 1e-3
        t = (step + 1).astype(jnp.float32)
        m = jax.tree_util.tree_map(lambda a, g: b1 * a + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda a, g: b2 * a + (1 - b2) * g * g, v, grads)
        upd = lambda p, a, b: p - lr * (a / (1 - b1**t)) / (jnp.sqrt(b / (1 - b2**t)) + 1e-8)
        params = jax.tree_util.tree_map(upd, params, m, v)
        return params, m, v, step + 1

    return donated_update, (params, m, v, grads, step), {"donate_argnums": (0, 1, 2, 4)}


def tuple_outputs():
    """Nested tuple outputs: a passed-through parameter, the same value twice, a scalar, a
    small and a large array (XLA copies duplicated and parameter outputs)."""
    import jax.numpy as jnp

    rng = _rng()
    a = _normal(rng, 64, 64, scale=1.0)
    b = _normal(rng, 64, 64, scale=1.0)

    def tuple_outputs(a, b):
        s = a + b
        p = a * b
        return (s, (s, p), a, jnp.sum(p), (jnp.max(a, axis=0), (b.T, jnp.int32(7))))

    return tuple_outputs, (a, b), {}


def constants():
    """Module constants: a 128x128 weight table and a 4096-entry lookup baked into the
    module (each gets its own constant allocation), plus scalar and iota constants."""
    import jax.numpy as jnp
    import numpy as np

    rng = _rng()
    table = _normal(rng, 128, 128)
    lut = np.linspace(-1.0, 1.0, 4096, dtype=np.float32)
    x = _normal(rng, 16, 128, scale=1.0)
    idx = rng.integers(0, 4096, (16, 8)).astype(np.int32)

    def constants(x, idx):
        y = jnp.tanh(x @ table) * 3.0 + jnp.arange(128, dtype=jnp.float32)
        return y, jnp.take(lut, idx) + 0.25, jnp.float32(2.5) * jnp.sum(y)

    return constants, (x, idx), {}


def host_offload():
    """Memory space 5: the second argument and output live in pinned host memory
    (memory_kind='pinned_host', S(5) in the entry layout) and an activation is offloaded to the
    host and brought back with device_put."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import SingleDeviceSharding

    dev = jax.devices()[0]
    host = SingleDeviceSharding(dev, memory_kind="pinned_host")
    devm = SingleDeviceSharding(dev, memory_kind="device")
    rng = _rng()
    x = _normal(rng, 64, 64, scale=1.0)
    w = _normal(rng, 64, 64)

    def host_offload(x, w):
        y = jnp.tanh(x @ w)
        y_host = jax.device_put(y, host)
        z = jnp.sin(x) * 2.0
        y_back = jax.device_put(y_host, devm)
        return y_back + z, y_host

    return host_offload, (x, w), {"in_shardings": (devm, host), "out_shardings": (devm, host)}


def cond_switch():
    """lax.switch over three branches of different cost (a conditional with called computations)."""
    import jax.numpy as jnp
    from jax import lax

    rng = _rng()
    x = _normal(rng, 32, 128, scale=1.0)
    w = _normal(rng, 128, 128)
    import numpy as np

    def cond_switch(k, x, w):
        return lax.switch(
            k,
            [
                lambda x: x * 2.0,
                lambda x: jnp.tanh(x @ w),
                lambda x: jnp.cumsum(x, axis=1) @ w @ w,
            ],
            x,
        )

    return cond_switch, (np.int32(1), x, w), {}


def sort_topk():
    """sort, top-k, cumsum and argmax: comparator and reducer computations (thread-local)."""
    import jax.numpy as jnp
    from jax import lax

    rng = _rng()
    x = _normal(rng, 16, 512, scale=1.0)

    def sort_topk(x):
        vals, idx = lax.top_k(x, 8)
        s = jnp.sort(x, axis=-1)
        return vals, idx, jnp.cumsum(s, axis=-1), jnp.argmax(x, axis=0)

    return sort_topk, (x,), {}


def remat_mlp_grad():
    """Gradient of a four-layer MLP whose layers are wrapped in jax.checkpoint (rematerialised)."""
    import jax
    import numpy as np

    rng = _rng()
    params = _mlp_params(rng, [128, 256, 256, 256, 10])
    x = _normal(rng, 64, 128, scale=1.0)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]

    def remat_mlp_grad(params, x, labels):
        def apply(params, x):
            for i, (w, b) in enumerate(params):
                layer = jax.checkpoint(lambda x, w, b: jax.nn.relu(x @ w + b))
                x = layer(x, w, b) if i + 1 < len(params) else x @ w + b
            return x

        return jax.grad(lambda p: _xent(apply(p, x), labels))(params)

    return remat_mlp_grad, (params, x, labels), {}


def transformer_train_step(layers=3):
    """The large model: embedding, three transformer blocks (unrolled), final layer norm,
    tied output projection, cross-entropy, gradient and an SGD update with the parameters
    donated. Above 1,000 instructions after optimisation. `layers` other than 3 only for
    bench/python/report_time.py (the corpus is the three-block model)."""
    import jax
    import numpy as np

    rng = _rng()
    vocab, d, t, b = 128, 64, 32, 4
    p = {
        "emb": _normal(rng, vocab, d),
        "pos": _normal(rng, t, d),
        "blocks": [_attention_params(rng, d, 4, 4 * d) for _ in range(layers)],
        "lnf": (_normal(rng, d) + 1.0, _normal(rng, d)),
    }
    tokens = rng.integers(0, vocab, (b, t)).astype(np.int32)
    targets = rng.integers(0, vocab, (b, t)).astype(np.int32)

    def forward(p, tokens):
        x = p["emb"][tokens] + p["pos"]
        for blk in p["blocks"]:
            x = _attention_apply(blk, x, heads=4, causal=True)
        x = _layer_norm(x, *p["lnf"])
        return x @ p["emb"].T

    def transformer_train_step(p, tokens, targets):
        def loss_fn(p):
            logits = forward(p, tokens)
            return _xent(logits, jax.nn.one_hot(targets, vocab))

        loss, g = jax.value_and_grad(loss_fn)(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), loss

    return transformer_train_step, (p, tokens, targets), {"donate_argnums": (0,)}


PROGRAMS = {
    f.__name__: f
    for f in [
        mlp_forward,
        mlp_train_step,
        attention_block,
        conv_net,
        conv_train_step,
        scan_rnn,
        while_dus,
        donated_update,
        tuple_outputs,
        constants,
        host_offload,
        cond_switch,
        sort_topk,
        remat_mlp_grad,
        transformer_train_step,
    ]
}

# The dump files kept per program (XLA writes more: LLVM IR, object files, debug options).
KEPT_SUFFIXES = (
    "cpu_after_optimizations.txt",
    "cpu_after_optimizations-buffer-assignment.txt",
    "cpu_after_optimizations-buffer-assignment-values.txt",
    "cpu_after_optimizations-live-range.txt",
)

MEMORY_FIELDS = (
    "argument_size_in_bytes",
    "output_size_in_bytes",
    "alias_size_in_bytes",
    "temp_size_in_bytes",
    "generated_code_size_in_bytes",
    "peak_memory_in_bytes",
    "host_argument_size_in_bytes",
    "host_output_size_in_bytes",
    "host_alias_size_in_bytes",
    "host_temp_size_in_bytes",
    "host_generated_code_size_in_bytes",
)

_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*\S")


def count_instructions(hlo_text: str) -> tuple[int, int]:
    """(all instructions in all computations, instructions in the ENTRY computation)."""
    total = entry = 0
    in_entry = False
    in_comp = False
    for line in hlo_text.splitlines():
        s = line.strip()
        if not in_comp and s.endswith("{") and not s.startswith("HloModule"):
            in_comp = True
            in_entry = s.startswith("ENTRY")
            continue
        if in_comp and s == "}":
            in_comp = False
            continue
        if in_comp and _INSTR.match(line):
            total += 1
            entry += in_entry
    return total, entry


def dump_flags(dump_dir: str, module: str) -> str:
    return " ".join(
        [
            f"--xla_dump_to={dump_dir}",
            "--xla_dump_hlo_as_text",
            "--xla_dump_buffer_assignment_analysis",
            "--xla_dump_disable_metadata",
            f"--xla_dump_hlo_module_re=^{re.escape(module)}$",
        ]
    )


def run_child(name: str, json_path: str) -> None:
    """Compile one program (XLA_FLAGS already set by the driver) and write memory_analysis()."""
    import jax

    fn, args, jit_kwargs = PROGRAMS[name]()
    compiled = jax.jit(fn, **jit_kwargs).lower(*args).compile()
    ma = compiled.memory_analysis()
    out = {f: int(getattr(ma, f)) for f in MEMORY_FIELDS if hasattr(ma, f)}
    with open(json_path, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)


def run_driver(out_dir: str, only: list[str]) -> int:
    import jax
    import jaxlib

    names = only or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        print(f"unknown program(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    manifest = {"programs": {}}
    if only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest.update(
        {
            "generator": "tools/xla-oracle/programs.py",
            "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "python": platform.python_version(),
            "backend": "cpu",
            # XLA:CPU partitions loops by the usable cores (backend_config
            # outer_dimension_partitions); buffers and memory figures do not depend on it.
            "host_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "xla_flags": dump_flags("<dir>", "jit_<program>"),
        }
    )
    failed = []
    for name in names:
        module = f"jit_{name}"
        with tempfile.TemporaryDirectory(prefix=f"xla-oracle-{name}-") as tmp:
            dump = os.path.join(tmp, "dump")
            ma_json = os.path.join(tmp, "memory_analysis.json")
            env = dict(os.environ, XLA_FLAGS=dump_flags(dump, module), JAX_PLATFORMS="cpu")
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--run", name, "--json", ma_json],
                env=env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                print(f"{name}: FAILED\n{proc.stderr[-4000:]}", file=sys.stderr)
                failed.append(name)
                continue
            dest = os.path.join(out_dir, name)
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            kept = []
            for suffix in KEPT_SUFFIXES:
                # XLA names it module_NNNN.jit_x.<suffix>; the corpus drops the module_NNNN.
                want = f"{module}.{suffix}"
                found = [f for f in os.listdir(dump) if f == want or f.endswith("." + want)]
                if len(found) == 1:
                    shutil.copyfile(os.path.join(dump, found[0]), os.path.join(dest, want))
                    kept.append(want)
            missing = [s for s in KEPT_SUFFIXES if f"{module}.{s}" not in kept]
            if missing:
                print(f"{name}: XLA did not write {', '.join(missing)}", file=sys.stderr)
                failed.append(name)
                continue
            shutil.copyfile(ma_json, os.path.join(dest, "memory_analysis.json"))
            with open(ma_json) as f:
                ma = json.load(f)
            with open(os.path.join(dest, f"{module}.cpu_after_optimizations.txt")) as f:
                total, entry = count_instructions(f.read())
            doc = (PROGRAMS[name].__doc__ or "").split("\n\n")[0]
            manifest["programs"][name] = {
                "module": module,
                "description": " ".join(doc.split()),
                "instructions": total,
                "entry_instructions": entry,
                "files": sorted(kept) + ["memory_analysis.json"],
                "memory_analysis": ma,
            }
            print(f"{name}: {total} instructions ({entry} in ENTRY), temp {ma['temp_size_in_bytes']} B")
    manifest["programs"] = dict(sorted(manifest["programs"].items()))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", help="corpus directory to (re)write")
    ap.add_argument("--only", nargs="*", default=[], help="programs to refresh (default: all)")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    a = ap.parse_args()
    if a.list:
        for n, f in PROGRAMS.items():
            print(f"{n}: {' '.join((f.__doc__ or '').split())}")
        return 0
    if a.run:
        run_child(a.run, a.json)
        return 0
    if not a.out:
        ap.error("--out is required")
    return run_driver(a.out, a.only)


if __name__ == "__main__":
    sys.exit(main())
