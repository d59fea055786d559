#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Side by side: xlamem.auto_shard against the shardings a JAX user writes by hand, on JAX
programs of the shapes people train and serve, every candidate compiled by XLA on 8 host devices.

For each program, mesh (8 and 2x4) and per-device limit (a fraction of what data parallelism
needs, so that it does not fit):
  - candidates: data parallel (weights replicated, batch split over every axis), FSDP (each
    weight split along its largest dimension the devices divide, batch split), 2-D on 2x4
    (weights split over 'y', batch over 'x'), Megatron-style tensor parallelism written for
    each program (column- then row-split matmul pairs, attention by heads, vocabularies split;
    over the last axis, the batch over 'x' on 2x4), and xlamem (`xlamem.auto_shard`, the whole
    plan applied);
  - memory: `compiled.memory_analysis()`, argument + output + temp (no donation anywhere);
  - communication: every collective of `compiled.as_text()` with its bytes and group size,
    priced on the same machine preset for all (cpu-host-8: 1 us and 38.4 GB/s per step, ring
    formulas of docs/autoshard.md); the programs have no loops, so no trip counts apply.

Usage: python bench/sharding/real_programs.py [--fraction 0.5] [--time-limit 5] [--only NAME]
       python bench/sharding/real_programs.py --scale 24 --time-limit 10   (the 10^4-instruction timing)
Needs JAX (pip install jax) and the xlamem package (pip install .).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

import xlamem  # noqa: E402

F32 = jnp.float32
LATENCY, BANDWIDTH = 1e-6, 38.4e9  # cpu-host-8, the preset every candidate is priced on


def sds(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


# --- programs: (function, (params, *data), description); params is the first argument ---

def mlp_train():
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def step(p, x, y):
        v, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 1e-3 * b, p, g), v
    params = {"w1": sds(2048, 8192), "b1": sds(8192), "w2": sds(8192, 2048)}
    return step, (params, sds(512, 2048), sds(512, 2048)), "2-layer MLP, SGD step"


def _layer_norm(x, g):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g


def transformer_train():
    return _transformer(2, 1024, 8, 4096, 8192, 256, 8)


def _transformer(layers, d, heads, ff, vocab, seq, batch):

    def block(p, x):
        h = _layer_norm(x, p["ln1"])
        q, k, v = (jnp.einsum("bsd,dhk->bhsk", h, p[n]) for n in ("wq", "wk", "wv"))
        a = jax.nn.softmax(jnp.einsum("bhsk,bhtk->bhst", q, k) / 8.0, axis=-1)
        x = x + jnp.einsum("bhst,bhtk,hkd->bsd", a, v, p["wo"])
        h = _layer_norm(x, p["ln2"])
        return x + jax.nn.gelu(h @ p["w_in"]) @ p["w_out"]

    def loss(p, tokens, targets):
        x = p["embed"][tokens]
        for layer in p["layers"]:
            x = block(layer, x)
        logits = _layer_norm(x, p["ln_f"]) @ p["embed"].T
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), targets[..., None], -1))

    def step(state, tokens, targets):
        p, m, v = state
        value, g = jax.value_and_grad(loss)(p, tokens, targets)
        m = jax.tree.map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree.map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = jax.tree.map(lambda w, a, b: w - 1e-3 * (a / (jnp.sqrt(b) + 1e-8) + 0.01 * w), p, m, v)
        return (p, m, v), value
    layer = {"ln1": sds(d), "wq": sds(d, heads, d // heads), "wk": sds(d, heads, d // heads),
             "wv": sds(d, heads, d // heads), "wo": sds(heads, d // heads, d), "ln2": sds(d),
             "w_in": sds(d, ff), "w_out": sds(ff, d)}
    params = {"embed": sds(vocab, d), "layers": [dict(layer) for _ in range(layers)], "ln_f": sds(d)}
    state = (params, params, params)
    ints = jnp.int32
    return step, (state, sds(batch, seq, dtype=ints), sds(batch, seq, dtype=ints)), \
        f"{layers}-layer transformer LM, AdamW step"


def moe_layer():
    experts, d, ff, tokens, k = 8, 1024, 4096, 2048, 2

    def fwd(p, x):
        logits = x @ p["router"]
        top, idx = jax.lax.top_k(logits, k)
        gates = jax.nn.softmax(top, -1)
        dispatch = jax.nn.one_hot(idx, experts).sum(1) * gates.sum(-1, keepdims=True)  # [t, e]
        h = jax.nn.relu(jnp.einsum("td,te,edf->etf", x, dispatch, p["w_in"]))
        return jnp.einsum("etf,efd->td", h, p["w_out"])

    params = {"router": sds(d, experts), "w_in": sds(experts, d, ff), "w_out": sds(experts, ff, d)}
    return fwd, (params, sds(tokens, d)), "mixture-of-experts layer (8 experts, top-2), forward"


def conv_train():
    def loss(p, img, y):
        x = img
        for w in p["convs"]:
            x = jax.nn.relu(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                          dimension_numbers=("NHWC", "HWIO", "NHWC")))
        return jnp.mean((x.mean((1, 2)) @ p["head"] - y) ** 2)

    def step(p, img, y):
        v, g = jax.value_and_grad(loss)(p, img, y)
        return jax.tree.map(lambda a, b: a - 1e-3 * b, p, g), v
    params = {"convs": [sds(3, 3, 64, 256), sds(3, 3, 256, 256), sds(3, 3, 256, 256)], "head": sds(256, 1000)}
    return step, (params, sds(32, 32, 32, 64), sds(32, 1000)), "3-layer conv net, SGD step"


def recommender_train():
    def loss(p, ids, y):
        e = p["table"][ids].reshape(ids.shape[0], -1)
        h = jax.nn.relu(e @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def step(p, ids, y):
        v, g = jax.value_and_grad(loss)(p, ids, y)
        return jax.tree.map(lambda a, b: a - 1e-3 * b, p, g), v
    params = {"table": sds(262144, 64), "w1": sds(8 * 64, 1024), "w2": sds(1024, 1)}
    return step, (params, sds(4096, 8, dtype=jnp.int32), sds(4096, 1)), "embedding-table recommender, SGD step"


def decode_step():
    layers_n, heads, hd, d, ctx, batch = 2, 16, 64, 1024, 4096, 8

    def fwd(p, cache, x, pos):
        new_cache = []
        for layer, (kc, vc) in zip(p, cache):
            q = jnp.einsum("bd,dhk->bhk", x, layer["wq"])
            k = jnp.einsum("bd,dhk->bhk", x, layer["wk"])
            v = jnp.einsum("bd,dhk->bhk", x, layer["wv"])
            kc = jax.lax.dynamic_update_slice(kc, k[:, :, None, :], (0, 0, pos, 0))
            vc = jax.lax.dynamic_update_slice(vc, v[:, :, None, :], (0, 0, pos, 0))
            a = jax.nn.softmax(jnp.einsum("bhk,bhtk->bht", q, kc) / 8.0, -1)
            x = x + jnp.einsum("bht,bhtk,hkd->bd", a, vc, layer["wo"])
            new_cache.append((kc, vc))
        return x, new_cache
    layer = {n: sds(d, heads, hd) for n in ("wq", "wk", "wv")} | {"wo": sds(heads, hd, d)}
    cache = [(sds(batch, heads, ctx, hd), sds(batch, heads, ctx, hd)) for _ in range(layers_n)]
    return fwd, ([layer, dict(layer)], cache, sds(batch, d), sds(dtype=jnp.int32)), \
        "decode step with a KV cache (2 layers, 4k context)"


def _adam(loss):
    """An AdamW step of `loss` over a (params, m, v) state, as the transformer's."""
    def step(state, *data):
        p, m, v = state
        value, g = jax.value_and_grad(loss)(p, *data)
        m = jax.tree.map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree.map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = jax.tree.map(lambda w, a, b: w - 1e-3 * (a / (jnp.sqrt(b) + 1e-8) + 0.01 * w), p, m, v)
        return (p, m, v), value
    return step


def _sgd(loss):
    def step(p, *data):
        v, g = jax.value_and_grad(loss)(p, *data)
        return jax.tree.map(lambda a, b: a - 1e-3 * b, p, g), v
    return step


def autoencoder_train():
    dims = [4096, 2048, 512, 2048, 4096]

    def loss(p, x):
        h = x
        for i, (w, b) in enumerate(p):
            h = h @ w + b
            if i < len(p) - 1:
                h = jax.nn.gelu(h)
        return jnp.mean((h - x) ** 2)
    params = [(sds(a, b), sds(b)) for a, b in zip(dims, dims[1:])]
    return _adam(loss), ((params, params, params), sds(1024, 4096)), "4-layer autoencoder, AdamW step"


def gnn_train():
    nodes, feat, hidden, classes = 4096, 512, 1024, 64

    def loss(p, adj, x, y):
        h = jax.nn.relu(adj @ (x @ p["w1"]))
        h = jax.nn.relu(adj @ (h @ p["w2"]))
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ p["w3"]) * y, -1))
    params = {"w1": sds(feat, hidden), "w2": sds(hidden, hidden), "w3": sds(hidden, classes)}
    return _sgd(loss), (params, sds(nodes, nodes), sds(nodes, feat), sds(nodes, classes)), \
        "2-layer graph convolutional network (dense adjacency), SGD step"


def lm_head_train():
    d, vocab, tokens = 1024, 65536, 1024

    def loss(p, h, targets):
        logits = h @ p["w"] + p["b"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), targets[:, None], -1))
    params = {"w": sds(d, vocab), "b": sds(vocab)}
    return _sgd(loss), (params, sds(tokens, d), sds(tokens, dtype=jnp.int32)), \
        "64k-vocabulary softmax head, SGD step"


def rnn_train():
    hidden, inputs, steps, batch, out = 1024, 512, 64, 64, 256

    def loss(p, xs, y):
        def cell(h, x):
            return jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None
        h, _ = jax.lax.scan(cell, jnp.zeros((xs.shape[0], hidden)), jnp.swapaxes(xs, 0, 1))
        return jnp.mean((h @ p["wo"] - y) ** 2)
    params = {"wx": sds(inputs, hidden), "wh": sds(hidden, hidden), "b": sds(hidden), "wo": sds(hidden, out)}
    return _sgd(loss), (params, sds(batch, steps, inputs), sds(batch, out)), \
        "recurrent network over 64 steps (lax.scan: a while loop), SGD step"


PROGRAMS = {"mlp_train": mlp_train, "transformer_train": transformer_train, "moe_layer": moe_layer,
            "conv_train": conv_train, "recommender_train": recommender_train, "decode_step": decode_step,
            "autoencoder_train": autoencoder_train, "gnn_train": gnn_train, "lm_head_train": lm_head_train,
            "rnn_train": rnn_train}


# Megatron-style tensor parallelism as its users write it for each program (over the axis `t`):
# the first matmul of each pair split by columns, the second by rows, attention by heads,
# embeddings and vocabulary by rows or columns; returns the parameters' specs and, where a data
# argument holds per-head state (the KV cache), its spec (else None: the batch split as usual).
def _tp_transformer(t):
    layer = {"ln1": P(), "wq": P(None, t, None), "wk": P(None, t, None), "wv": P(None, t, None),
             "wo": P(t, None, None), "ln2": P(), "w_in": P(None, t), "w_out": P(t, None)}
    params = {"embed": P(t, None), "layers": [layer, dict(layer)], "ln_f": P()}
    return (params, params, params), None


def _tp_decode(t):
    layer = {"wq": P(None, t, None), "wk": P(None, t, None), "wv": P(None, t, None), "wo": P(t, None, None)}
    cache = [(P(None, t, None, None), P(None, t, None, None))] * 2
    return [layer, dict(layer)], {0: cache}


def _tp_autoencoder(t):
    pairs = [(P(None, t), P(t)), (P(t, None), P()), (P(None, t), P(t)), (P(t, None), P())]
    return (pairs, pairs, pairs), None


MEGATRON = {
    "mlp_train": lambda t: ({"w1": P(None, t), "b1": P(t), "w2": P(t, None)}, None),
    "transformer_train": _tp_transformer,
    "moe_layer": lambda t: ({"router": P(), "w_in": P(None, None, t), "w_out": P(None, t, None)}, None),
    "conv_train": lambda t: ({"convs": [P(None, None, None, t), P(None, None, t, None), P(None, None, None, t)],
                              "head": P(t, None)}, None),
    "recommender_train": lambda t: ({"table": P(t, None), "w1": P(None, t), "w2": P(t, None)}, None),
    "decode_step": _tp_decode,
    "autoencoder_train": _tp_autoencoder,
    "gnn_train": lambda t: ({"w1": P(None, t), "w2": P(t, None), "w3": P()}, None),
    "lm_head_train": lambda t: ({"w": P(None, t), "b": P(t)}, None),
    "rnn_train": lambda t: ({"wx": P(None, t), "wh": P(None, t), "b": P(t), "wo": P(t, None)}, None),
}


# --- baselines, written as a JAX user writes them ---

def _batch_spec(x, axes):
    return P(axes) if len(x.shape) >= 1 and x.shape[0] % _size(axes) == 0 else P()


MESH_SIZES = {}


def _size(axes):
    axes = axes if isinstance(axes, tuple) else (axes,)
    n = 1
    for a in axes:
        n *= MESH_SIZES[a]
    return n


def _largest_split(x, axes):
    """The spec splitting the largest dimension of x that `axes` divide (else replicated)."""
    dims = sorted(range(len(x.shape)), key=lambda d: -x.shape[d])
    for d in dims:
        if x.shape[d] % _size(axes) == 0:
            return P(*([None] * d + [axes]))
    return P()


def baselines(name, args, mesh):
    params, data = args[0], args[1:]
    every = tuple(mesh.axis_names)
    out = {
        "data parallel": (jax.tree.map(lambda x: P(), params), [jax.tree.map(lambda x: _batch_spec(x, every), d) for d in data]),
        "FSDP": (jax.tree.map(lambda x: _largest_split(x, every), params),
                 [jax.tree.map(lambda x: _batch_spec(x, every), d) for d in data]),
    }
    if len(every) == 2:
        out["2-D (FSDP over y, data over x)"] = (jax.tree.map(lambda x: _largest_split(x, every[1]), params),
                                                 [jax.tree.map(lambda x: _batch_spec(x, every[0]), d) for d in data])
    # Megatron: tensor parallel over the last axis, the batch over the first on 2x4 (on 8: all
    # eight devices tensor parallel, the batch replicated).
    t = every[-1]
    param_specs, data_over = MEGATRON[name](t)
    batch = (lambda x: _batch_spec(x, every[0])) if len(every) == 2 else (lambda x: P())
    data_specs = [data_over[k] if data_over and k in data_over else jax.tree.map(batch, d) for k, d in enumerate(data)]
    out["Megatron (tensor parallel over " + t + (", data over " + every[0] if len(every) == 2 else "") + ")"] = \
        (param_specs, data_specs)
    return out


# --- measuring a compiled candidate ---

_COLLECTIVE = re.compile(r"=\s*(\(?[^=]*?\)?)\s+(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
                         r"(?:-start)?\(")
_ARRAY = re.compile(r"(pred|s8|u8|s16|u16|bf16|f16|s32|u32|f32|s64|u64|f64)\[([0-9,]*)\]")
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "bf16": 2, "f16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8}


def _shape_bytes(text):
    total = 0
    for t, dims in _ARRAY.findall(text):
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += n * _BYTES[t]
    return total


def _group_size(line):
    m = re.search(r"replica_groups=\{\{([0-9,]*)\}", line)
    if m:
        return len(m.group(1).split(","))
    m = re.search(r"replica_groups=\[([0-9]+),([0-9]+)\]", line)
    if m:
        return int(m.group(2))
    return 8


def communication(compiled):
    """Seconds and bytes of every collective in the compiled module, priced on cpu-host-8."""
    seconds, sent, count = 0.0, 0.0, 0
    for line in compiled.as_text().splitlines():
        m = _COLLECTIVE.search(line)
        if not m or "-done" in line:
            continue
        kind, result = m.group(2), _shape_bytes(m.group(1))
        n = _group_size(line)
        if n <= 1 and kind != "collective-permute":
            continue
        if kind == "all-reduce":
            s, b = 2 * (n - 1) * LATENCY + 2 * (n - 1) / n * result / BANDWIDTH, 2 * (n - 1) / n * result
        elif kind == "all-gather":
            s, b = (n - 1) * LATENCY + (n - 1) / n * result / BANDWIDTH, (n - 1) / n * result
        elif kind == "reduce-scatter":
            s, b = (n - 1) * LATENCY + (n - 1) * result / BANDWIDTH, (n - 1) * result
        elif kind == "all-to-all":
            s, b = (n - 1) * LATENCY + (n - 1) / n * result / BANDWIDTH, (n - 1) / n * result
        else:
            s, b = LATENCY + result / BANDWIDTH, result
        seconds, sent, count = seconds + s, sent + b, count + 1
    return seconds, sent, count


def measure(compiled):
    m = compiled.memory_analysis()
    memory = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    return memory, communication(compiled)


def compile_with(fn, args, mesh, param_specs, data_specs):
    named = lambda s: NamedSharding(mesh, s)  # noqa: E731
    shardings = (jax.tree.map(named, param_specs, is_leaf=lambda x: isinstance(x, P)),
                 *[jax.tree.map(named, d, is_leaf=lambda x: isinstance(x, P)) for d in data_specs])
    return jax.jit(fn, in_shardings=shardings).lower(*args).compile()


def run(name, mesh_shape, fraction, time_limit):
    fn, args, what = PROGRAMS[name]()
    names = ("d",) if len(mesh_shape) == 1 else ("x", "y")
    mesh = jax.make_mesh(mesh_shape, names, axis_types=(AxisType.Auto,) * len(names))
    MESH_SIZES.clear()
    MESH_SIZES.update(dict(zip(names, mesh_shape)))
    rows = []
    skipped = []
    for label, (ps, ds) in baselines(name, args, mesh).items():
        t = time.monotonic()
        try:
            memory, (comm, sent, count) = measure(compile_with(fn, args, mesh, ps, ds))
        except Exception as e:  # noqa: BLE001 - a layout JAX refuses for this program is a note, not the end
            skipped.append(f"{label}: {type(e).__name__}: {str(e)[:160]}")
            continue
        rows.append([label, memory, comm, sent, count, time.monotonic() - t])
    limit = int(rows[0][1] * fraction)  # rows[0]: data parallel
    t = time.monotonic()
    r = xlamem.auto_shard(fn, *args, mesh=mesh, memory_limit=limit, time_limit=time_limit)
    solve = time.monotonic() - t
    memory, (comm, sent, count) = measure(r.compile())
    rows.append(["xlamem", memory, comm, sent, count, time.monotonic() - t])
    mesh_text = "x".join(map(str, mesh_shape))
    print(f"\n{name} ({what}), mesh {mesh_text}, limit {limit / 2**20:.1f} MiB "
          f"({fraction:.0%} of data parallel); xlamem predicted {r.predicted_peak / 2**20:.1f} MiB, "
          f"auto_shard took {solve:.1f} s (its solves and XLA checks)")
    for k, rd in enumerate(r.rounds, 1):
        compiled = "-" if rd["compiled_bytes"] is None else f"{rd['compiled_bytes'] / 2**20:.1f}"
        print(f"  solve {k}: model limit {rd['model_limit'] / 2**20:.1f} MiB, predicted {rd['predicted_bytes'] / 2**20:.1f}, "
              f"compiled {compiled}{' (chosen)' if rd['chosen'] else ''}")
    for note in skipped:
        print(f"  not compiled: {note}")
    print(f"  {'candidate':48} {'memory MiB':>11} {'fits':>5} {'comm ms':>9} {'sent MiB':>9} {'colls':>6}")
    for label, memory, comm, sent, count, _ in rows:
        print(f"  {label:48} {memory / 2**20:11.1f} {'yes' if memory <= limit else 'no':>5} {comm * 1e3:9.3f} "
              f"{sent / 2**20:9.1f} {count:6d}")
    fitting = [row for row in rows[:-1] if row[1] <= limit]
    best = min(fitting, key=lambda row: row[2]) if fitting else None
    return {"program": name, "mesh": mesh_text, "limit": limit, "rows": rows, "best_baseline": best,
            "predicted": r.predicted_peak}


def scale(layers, fraction, time_limit):
    """The acceptance on size: `auto_shard` of a transformer step of `layers` unrolled layers
    (d 256, 4 heads; about 430 HLO instructions a layer) on 2x4, end to end (trace, solves, XLA's
    compiles), with the time of each solve call against its limit."""
    import xlamem._autoshard as impl  # noqa: PLC0415 - timing the solve calls the public call makes
    fn, args, what = _transformer(layers, 256, 4, 1024, 2048, 128, 8)
    text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
    instructions = sum(1 for line in text.splitlines() if re.match(r"\s*(ROOT )?%?[\w.-]+ = ", line))
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    limit = int(measure(jax.jit(fn).lower(*args).compile())[0] * fraction)
    solves = []
    native = impl._xlamem.auto_shard_text

    def timed(*a):
        t = time.monotonic()
        try:
            return native(*a)
        finally:
            solves.append(time.monotonic() - t)
    impl._xlamem.auto_shard_text = timed
    try:
        t = time.monotonic()
        r = xlamem.auto_shard(fn, *args, mesh=mesh, memory_limit=limit, time_limit=time_limit)
        total = time.monotonic() - t
    finally:
        impl._xlamem.auto_shard_text = native
    compiled = r.compiled_bytes
    print(f"{what}: {instructions} HLO instructions, mesh 2x4, limit {limit / 2**20:.1f} MiB "
          f"({fraction:.0%} of replicated), time limit {time_limit:g} s")
    print(f"  auto_shard end to end {total:.1f} s; solve calls {', '.join(f'{x:.2f} s' for x in solves)} "
          f"(each within its limit: {'yes' if all(x <= time_limit * 1.05 for x in solves) else 'NO'})")
    print(f"  predicted {r.predicted_peak / 2**20:.1f} MiB, compiled {compiled / 2**20:.1f} MiB "
          f"({(r.predicted_peak - compiled) / compiled:+.1%}), fits: {'yes' if compiled <= limit else 'NO'}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fraction", type=float, default=0.5, help="the limit as a fraction of data parallel's memory")
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--scale", type=int, default=None, metavar="LAYERS",
                    help="time auto_shard on a transformer step of LAYERS layers instead (24: about 10^4 instructions)")
    a = ap.parse_args()
    if a.scale is not None:
        return scale(a.scale, 0.4 if a.fraction == 0.5 else a.fraction, a.time_limit)
    results = []
    for name in PROGRAMS:
        if a.only and name != a.only:
            continue
        for mesh_shape in ((8,), (2, 4)):
            try:
                results.append(run(name, mesh_shape, a.fraction, a.time_limit))
            except Exception as e:  # noqa: BLE001 - one program's failure is a row, not the end
                print(f"\n{name} on {mesh_shape}: FAILED {type(e).__name__}: {str(e)[:300]}")
    print("\nsummary: program, mesh, xlamem fits, xlamem memory / limit, xlamem comm / best fitting baseline's")
    for r in results:
        x = r["rows"][-1]
        best = r["best_baseline"]
        ratio = f"{x[2] / best[2]:.2f}" if best and best[2] > 0 else "no baseline fits" if not best else "-"
        print(f"  {r['program']:20} {r['mesh']:4} {'yes' if x[1] <= r['limit'] else 'NO':>4} "
              f"{x[1] / r['limit']:.2f}  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
