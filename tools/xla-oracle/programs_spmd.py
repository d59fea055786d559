# SPDX-License-Identifier: Apache-2.0
"""SPMD programs on 4 or 8 host devices (--xla_force_host_platform_device_count): NamedSharding
under jit (XLA's SPMD partitioner inserts the collectives) and shard_map (the program names them),
covering all-reduce, all-gather, reduce-scatter (psum_scatter), all-to-all, collective-permute,
pmax/pmin and axis_index, some inside loops."""

from __future__ import annotations

from registry import normal, program, rng


def _mesh(shape, names):
    import jax
    import numpy as np
    from jax.sharding import Mesh

    n = int(np.prod(shape))
    return Mesh(np.array(jax.devices()[:n]).reshape(shape), names)


def _shard_map():
    import jax

    if hasattr(jax, "shard_map"):
        return jax.shard_map
    from jax.experimental.shard_map import shard_map

    return shard_map


def _named(mesh, *spec):
    from jax.sharding import NamedSharding, PartitionSpec as P

    return NamedSharding(mesh, P(*spec))


def _put(x, sharding):
    import jax

    return jax.device_put(x, sharding)


@program("spmd", devices=4, metadata=True)
def spmd_dp_mlp_train():
    """Data-parallel MLP train step on 4 devices: batch sharded over 'data', parameters
    replicated; the gradient all-reduce comes from the SPMD partitioner."""
    import jax
    import jax.numpy as jnp

    mesh = _mesh((4,), ("data",))
    r = rng()
    params = {"w1": normal(r, 64, 128), "b1": normal(r, 128), "w2": normal(r, 128, 16)}
    x = normal(r, 32, 64, scale=1.0)
    y = normal(r, 32, 16, scale=1.0)
    rep, bat = _named(mesh), _named(mesh, "data")
    params = jax.tree_util.tree_map(lambda a: _put(a, rep), params)

    def step(p, x, y):
        def loss(p):
            h = jax.nn.relu(x @ p["w1"] + p["b1"])
            return jnp.mean((h @ p["w2"] - y) ** 2)

        l, g = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), l

    return step, (params, _put(x, bat), _put(y, bat)), {"donate_argnums": (0,)}


@program("spmd", devices=4)
def spmd_tp_mlp():
    """Megatron-style tensor-parallel MLP on a 2x2 ('data', 'model') mesh: first weight
    column-sharded, second row-sharded; replica groups print as a mesh."""
    import jax

    mesh = _mesh((2, 2), ("data", "model"))
    r = rng()
    w1 = _put(normal(r, 64, 256), _named(mesh, None, "model"))
    w2 = _put(normal(r, 256, 64), _named(mesh, "model", None))
    x = _put(normal(r, 16, 64, scale=1.0), _named(mesh, "data", None))

    def f(w1, w2, x):
        return jax.nn.gelu(x @ w1) @ w2

    return f, (w1, w2, x), {"out_shardings": _named(mesh, "data", None)}


@program("spmd", devices=8)
def spmd_fsdp_train():
    """FSDP-style train step on 8 devices: parameters and batch sharded over one axis, so the
    partitioner all-gathers weights and reduce-scatters gradients."""
    import jax
    import jax.numpy as jnp

    mesh = _mesh((8,), ("fsdp",))
    r = rng()
    params = [normal(r, 128, 128) for _ in range(3)]
    x = normal(r, 64, 128, scale=1.0)
    sh = _named(mesh, "fsdp", None)
    params = [_put(p, sh) for p in params]

    def step(ps, x):
        def loss(ps):
            h = x
            for w in ps:
                h = jnp.tanh(h @ w)
            return jnp.mean(h**2)

        g = jax.grad(loss)(ps)
        return [p - 0.01 * gi for p, gi in zip(ps, g)]

    return step, (params, _put(x, sh)), {"out_shardings": [sh] * 3, "donate_argnums": (0,)}


@program("spmd", devices=4)
def spmd_reshard():
    """Resharding between layouts on a 2x2 mesh (rows to columns, replicated to sharded):
    the partitioner emits all-to-all and all-gather."""
    import jax.numpy as jnp

    mesh = _mesh((2, 2), ("a", "b"))
    r = rng()
    x = _put(normal(r, 64, 64, scale=1.0), _named(mesh, ("a", "b"), None))

    def f(x):
        return jnp.sin(x) * 2.0, x.T + 1.0

    return f, (x,), {"out_shardings": (_named(mesh, None, ("a", "b")), _named(mesh))}


@program("spmd", devices=4)
def shard_map_collectives():
    """shard_map over 4 devices naming psum, all_gather, ppermute (a ring shift) and pmax."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((4,), ("i",))
    r = rng()
    x = _put(normal(r, 32, 64, scale=1.0), _named(mesh, "i", None))

    def body(x):
        s = jax.lax.psum(jnp.sum(x, axis=0), "i")
        g = jax.lax.all_gather(x, "i", tiled=True)
        shifted = jax.lax.ppermute(x, "i", [(k, (k + 1) % 4) for k in range(4)])
        m = jax.lax.pmax(jnp.max(x), "i")
        return x * m + shifted + s, jnp.sum(g, axis=0, keepdims=True)

    f = _shard_map()(body, mesh=mesh, in_specs=P("i", None), out_specs=(P("i", None), P("i", None)))
    return f, (x,), {}


@program("spmd", devices=4)
def shard_map_psum_scatter():
    """shard_map reduce-scatter (psum_scatter, tiled) followed by an all_gather back."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((4,), ("i",))
    r = rng()
    x = _put(normal(r, 4 * 32, 64, scale=1.0), _named(mesh, "i", None))
    w = _put(normal(r, 64, 64), _named(mesh))

    def body(x, w):
        y = jnp.tanh(x @ w)
        part = jax.lax.psum_scatter(y, "i", scatter_dimension=0, tiled=True)
        return jax.lax.all_gather(part * 2.0, "i", axis=0, tiled=True)

    f = _shard_map()(body, mesh=mesh, in_specs=(P("i", None), P()), out_specs=P("i", None))
    return f, (x, w), {}


@program("spmd", devices=4)
def shard_map_all_to_all():
    """Expert-parallel mixture of experts with shard_map: tokens dispatched to 4 experts with
    all_to_all, each device's expert MLP, and all_to_all back."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((4,), ("e",))
    r = rng()
    tokens = _put(normal(r, 4 * 4 * 8, 32, scale=1.0), _named(mesh, "e", None))
    w_in = _put(normal(r, 4, 32, 64), _named(mesh, "e", None, None))
    w_out = _put(normal(r, 4, 64, 32), _named(mesh, "e", None, None))

    def body(t, wi, wo):
        t = t.reshape(4, 8, 32)  # [expert, capacity, d] on each device
        t = jax.lax.all_to_all(t, "e", split_axis=0, concat_axis=0, tiled=True)
        h = jax.nn.relu(jnp.einsum("ecd,edf->ecf", t.reshape(1, 32, 32), wi))
        o = jnp.einsum("ecf,efd->ecd", h, wo).reshape(4, 8, 32)
        o = jax.lax.all_to_all(o, "e", split_axis=0, concat_axis=0, tiled=True)
        return o.reshape(32, 32)

    f = _shard_map()(body, mesh=mesh, in_specs=(P("e", None), P("e", None, None), P("e", None, None)),
                     out_specs=P("e", None))
    return f, (tokens, w_in, w_out), {}


@program("spmd", devices=4)
def shard_map_ring_loop():
    """Ring all-reduce written by hand: a fori_loop of collective-permute steps inside shard_map
    (collectives inside a while body), with axis_index selecting the chunk."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((4,), ("i",))
    r = rng()
    x = _put(normal(r, 4 * 16, 128, scale=1.0), _named(mesh, "i", None))
    perm = [(k, (k + 1) % 4) for k in range(4)]

    def body(x):
        idx = jax.lax.axis_index("i")

        def step(k, carry):
            acc, cur = carry
            cur = jax.lax.ppermute(cur, "i", perm)
            return acc + cur * (idx + k).astype(jnp.float32), cur

        acc, _ = jax.lax.fori_loop(0, 3, step, (x, x))
        return acc

    f = _shard_map()(body, mesh=mesh, in_specs=P("i", None), out_specs=P("i", None))
    return f, (x,), {}


@program("spmd", devices=8, metadata=True)
def spmd_2d_transformer_block():
    """A transformer block forward on a 2x4 ('data', 'model') mesh: heads and MLP sharded over
    'model', batch over 'data'."""
    import jax
    import jax.numpy as jnp

    mesh = _mesh((2, 4), ("data", "model"))
    r = rng()
    d, h, ff = 64, 4, 256
    p = {
        "qkv": _put(normal(r, d, 3 * d), _named(mesh, None, "model")),
        "out": _put(normal(r, d, d), _named(mesh, "model", None)),
        "ff1": _put(normal(r, d, ff), _named(mesh, None, "model")),
        "ff2": _put(normal(r, ff, d), _named(mesh, "model", None)),
    }
    x = _put(normal(r, 4, 16, d, scale=1.0), _named(mesh, "data", None, None))

    def f(p, x):
        b, t, _ = x.shape
        q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
        q, k, v = (a.reshape(b, t, h, d // h) for a in (q, k, v))
        s = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", s, v).reshape(b, t, d)
        x = x + o @ p["out"]
        return x + jax.nn.gelu(x @ p["ff1"]) @ p["ff2"]

    return f, (p, x), {"out_shardings": _named(mesh, "data", None, None)}


@program("spmd", devices=4)
def spmd_scan_layers():
    """Data-parallel scan over stacked layers (a while loop with sharded carries) and a gradient:
    the all-reduce sits after the loop."""
    import jax
    import jax.numpy as jnp

    mesh = _mesh((4,), ("data",))
    r = rng()
    ws = _put(normal(r, 6, 64, 64), _named(mesh))
    x = _put(normal(r, 32, 64, scale=1.0), _named(mesh, "data", None))

    def f(ws, x):
        def loss(ws):
            h, _ = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
            return jnp.mean(h**2)

        return jax.value_and_grad(loss)(ws)

    return f, (ws, x), {}


@program("spmd", devices=4)
def shard_map_pmin_argmax():
    """shard_map with pmin/pmax reductions of distributed argmax and a psum over two axes of a
    2x2 mesh (replica groups over one axis and over both)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((2, 2), ("x", "y"))
    r = rng()
    a = _put(normal(r, 32, 32, scale=1.0), _named(mesh, "x", "y"))

    def body(a):
        lo = jax.lax.pmin(jnp.min(a), ("x", "y"))
        hi = jax.lax.pmax(jnp.max(a, axis=0), "x")
        tot = jax.lax.psum(a, "y")
        return (a - lo) / (hi - lo + 1e-6) + tot

    f = _shard_map()(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return f, (a,), {}


@program("spmd", devices=8, metadata=True)
def shard_map_2d_mlp_train():
    """A data- and tensor-parallel MLP train step written with shard_map on a 2x4 ('data',
    'model') mesh: weights split over 'model' (column then row), the batch over 'data'; the
    program names the psum over 'model' in the forward pass and the gradient pmean over 'data'."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = _mesh((2, 4), ("data", "model"))
    r = rng()
    w1 = _put(normal(r, 64, 256), _named(mesh, None, "model"))
    w2 = _put(normal(r, 256, 64), _named(mesh, "model", None))
    x = _put(normal(r, 32, 64, scale=1.0), _named(mesh, "data", None))
    y = _put(normal(r, 32, 64, scale=1.0), _named(mesh, "data", None))

    def body(w1, w2, x, y):
        def loss(w1, w2):
            h = jax.nn.gelu(x @ w1)  # [b/2, 256/4]
            out = jax.lax.psum(h @ w2, "model")
            return jnp.mean((out - y) ** 2)

        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
        g1, g2, l = (jax.lax.pmean(a, "data") for a in (g1, g2, l))
        return w1 - 0.1 * g1, w2 - 0.1 * g2, l

    f = _shard_map()(body, mesh=mesh, in_specs=(P(None, "model"), P("model", None), P("data", None), P("data", None)),
                     out_specs=(P(None, "model"), P("model", None), P()))
    return f, (w1, w2, x, y), {"donate_argnums": (0, 1)}
