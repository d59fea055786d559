# SPDX-License-Identifier: Apache-2.0
"""Single-device programs of the shapes users compile most: rematerialisation under a
jax.checkpoint policy in a train step (our own and flax linen's nn.remat), a KV-cache decode
loop, int8 quantised matmuls, lax.switch inside lax.scan; and, group "sharing", one program per
row of docs/hlo.md's "Sharing an operand's buffer" table that JAX reaches on XLA:CPU: sort with
one and with several operands, dynamic-update-slice, scatter, triangular-solve and an
elementwise loop fusion. Each sharing program makes the operand an intermediate value (an entry
parameter's buffer is never shared unless donated), so buffer assignment may reuse it."""

from __future__ import annotations

from registry import normal, program, rng


# ------------------------------------------------------------------------------------------
# (a) rematerialisation under a checkpoint policy
# ------------------------------------------------------------------------------------------


@program("shapes")
def remat_scan_checkpoint_dots():
    """Train step of a 6-layer residual MLP scanned over stacked weights, each layer under
    jax.checkpoint(policy=checkpoint_dots): the backward pass keeps the dot outputs and
    recomputes the elementwise ops; SGD update of donated weights."""
    import jax
    import jax.numpy as jnp

    r = rng()
    ws = normal(r, 6, 128, 128)
    bs = normal(r, 6, 128)
    x = normal(r, 32, 128, scale=1.0)
    y = normal(r, 32, 128, scale=1.0)

    def f(ws, bs, x, y):
        def layer(h, wb):
            w, b = wb
            return h + jax.nn.gelu(h @ w + b), None

        layer = jax.checkpoint(layer, policy=jax.checkpoint_policies.checkpoint_dots)

        def loss(ws, bs):
            h, _ = jax.lax.scan(layer, x, (ws, bs))
            return jnp.mean((h - y) ** 2)

        l, (gw, gb) = jax.value_and_grad(loss, argnums=(0, 1))(ws, bs)
        return ws - 0.01 * gw, bs - 0.01 * gb, l

    return f, (ws, bs, x, y), {"donate_argnums": (0, 1)}


@program("shapes", needs=("flax", "optax"))
def flax_linen_remat_train():
    """flax linen transformer-style MLP blocks wrapped in nn.remat with
    policy=dots_with_no_batch_dims_saveable, trained one optax adam step."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            h = nn.Dense(256)(h)
            h = nn.gelu(h)
            return x + nn.Dense(64)(h)

    RematBlock = nn.remat(Block, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(4):
                x = RematBlock()(x)
            return nn.Dense(8)(x)

    r = rng()
    x = normal(r, 16, 64, scale=1.0)
    y = normal(r, 16, 8, scale=1.0)
    net = Net()
    params = net.init(jax.random.PRNGKey(0), x)
    opt = optax.adam(1e-3)
    state = opt.init(params)

    def step(params, state, x, y):
        def loss(p):
            return jnp.mean((net.apply(p, x) - y) ** 2)

        l, g = jax.value_and_grad(loss)(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, l

    return step, (params, state, x, y), {"donate_argnums": (0, 1)}


# ------------------------------------------------------------------------------------------
# (b) KV-cache decode loop
# ------------------------------------------------------------------------------------------


@program("shapes", metadata=True)
def kv_cache_decode():
    """Greedy decode of 16 tokens with a single-layer attention model: a lax.fori_loop whose
    carry holds a preallocated [layers=2, batch, heads, 32, head_dim] K/V cache (donated); each
    step writes one token's K and V with dynamic_update_slice and attends over the masked cache."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    vocab, d, heads, hd, tmax, b = 64, 64, 4, 16, 32, 2
    p = {"emb": normal(r, vocab, d), "wq": normal(r, d, d), "wk": normal(r, d, d),
         "wv": normal(r, d, d), "wo": normal(r, d, d), "head": normal(r, d, vocab)}
    kcache = __import__("numpy").zeros((2, b, heads, tmax, hd), "float32")
    vcache = __import__("numpy").zeros((2, b, heads, tmax, hd), "float32")
    tok0 = __import__("numpy").array([3, 7], "int32")

    def f(p, kcache, vcache, tok0):
        def step(t, carry):
            kc, vc, tok, out = carry
            x = p["emb"][tok]  # [b, d]
            for layer in range(2):
                q = (x @ p["wq"]).reshape(b, heads, 1, hd)
                k = (x @ p["wk"]).reshape(1, b, heads, 1, hd)
                v = (x @ p["wv"]).reshape(1, b, heads, 1, hd)
                kc = lax.dynamic_update_slice(kc, k, (layer, 0, 0, t, 0))
                vc = lax.dynamic_update_slice(vc, v, (layer, 0, 0, t, 0))
                s = jnp.einsum("bhqd,bhkd->bhqk", q, kc[layer]) / 4.0
                s = jnp.where(jnp.arange(tmax)[None, None, None, :] <= t, s, -1e9)
                o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), vc[layer])
                x = x + o.reshape(b, d) @ p["wo"]
            nxt = jnp.argmax(x @ p["head"], axis=-1).astype(jnp.int32)
            out = lax.dynamic_update_slice(out, nxt[:, None], (0, t))
            return kc, vc, nxt, out

        out = jnp.zeros((b, 16), jnp.int32)
        return lax.fori_loop(0, 16, step, (kcache, vcache, tok0, out))

    return f, (p, kcache, vcache, tok0), {"donate_argnums": (1, 2)}


# ------------------------------------------------------------------------------------------
# (c) quantised matmul
# ------------------------------------------------------------------------------------------


@program("shapes")
def int8_quantized_matmul():
    """Two int8 matmuls: weight-only (int8 weights dequantised by a per-column scale before an
    f32 dot) and fully quantised (activations quantised per row, an s8 x s8 dot with
    preferred_element_type=int32, then both scales applied)."""
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    r = rng()
    x = normal(r, 64, 256, scale=1.0)
    w = normal(r, 256, 512)
    scale = (np.abs(w).max(axis=0) / 127.0).astype(np.float32)
    wq = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    w2q = wq[:, :256].T.copy()  # [256, 256] int8
    s2 = scale[:256].copy()

    def f(x, wq, scale, w2q, s2):
        y = x @ (wq.astype(jnp.float32) * scale)  # weight-only
        h = jnp.maximum(y[:, :256], 0.0)
        hs = jnp.max(jnp.abs(h), axis=1, keepdims=True) / 127.0 + 1e-8
        hq = jnp.clip(jnp.round(h / hs), -127, 127).astype(jnp.int8)
        acc = lax.dot_general(hq, w2q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        return y, acc.astype(jnp.float32) * hs * s2

    return f, (x, wq, scale, w2q, s2), {}


# ------------------------------------------------------------------------------------------
# (d) lax.switch inside lax.scan
# ------------------------------------------------------------------------------------------


@program("shapes", metadata=True)
def scan_switch():
    """lax.scan over 24 steps whose body picks one of three branches with lax.switch on a
    per-step index (a conditional with three branch computations inside a while loop), each
    branch with its own temporaries, plus its gradient."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    w = normal(r, 3, 64, 64)
    x = normal(r, 8, 64, scale=1.0)
    idx = (__import__("numpy").arange(24) % 3).astype("int32")

    def f(w, x, idx):
        def loss(w):
            def body(h, i):
                h = lax.switch(i, [
                    lambda h: jnp.tanh(h @ w[0]),
                    lambda h: h + jax.nn.relu(h @ w[1]) * 0.5,
                    lambda h: jnp.sin(h) @ w[2] + jnp.cumsum(h, axis=1) * 0.01,
                ], h)
                return h, jnp.sum(h)

            h, ys = lax.scan(body, x, idx)
            return jnp.mean(h**2) + jnp.mean(ys)

        return jax.value_and_grad(loss)(w)

    return f, (w, x, idx), {}


# ------------------------------------------------------------------------------------------
# (f) one program per row of "Sharing an operand's buffer" (docs/hlo.md)
# ------------------------------------------------------------------------------------------


@program("sharing")
def sharing_sort_single():
    """A one-operand sort of an intermediate (jnp.sort of a computed [64, 512] array along
    rows and of its transpose): the sort may take its operand's buffer."""
    import jax.numpy as jnp

    r = rng()
    x = normal(r, 64, 512, scale=1.0)

    def f(x):
        a = jnp.sort(jnp.sin(x) * 3.0 + x, axis=1)
        b = jnp.sort((x * x).T, axis=1)
        return a[:, :8], b[:, -8:]

    return f, (x,), {}


@program("sharing")
def sharing_sort_multi():
    """Multi-operand sorts: lax.sort of (keys, values, payload) with num_keys=1 and an argsort
    (a sort of the keys and an iota); operand k may share output {k}'s buffer."""
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    k = normal(r, 16, 1024, scale=1.0)
    v = normal(r, 16, 1024, scale=1.0)

    def f(k, v):
        ks, vs, ps = lax.sort((k * 2.0 + 1.0, v + k, jnp.exp(v)), dimension=1, num_keys=1)
        order = jnp.argsort(jnp.abs(v - k), axis=1)
        return ks[:, :4], vs[:, :4] + ps[:, :4], order[:, :4]

    return f, (k, v), {}


@program("sharing")
def sharing_dynamic_update_slice():
    """dynamic_update_slice into computed buffers at run-time offsets: a [256, 128] buffer made
    by a dot (updated outside any fusion or by an in-place fusion) and a chain of updates."""
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    a = normal(r, 256, 64, scale=1.0)
    w = normal(r, 64, 128)
    u = normal(r, 8, 128, scale=1.0)
    i = __import__("numpy").array(40, "int32")

    def f(a, w, u, i):
        h = a @ w
        h = lax.dynamic_update_slice(h, u, (i, 0))
        h = lax.dynamic_update_slice(h, u * 2.0, (i + 64, 0))
        g = jnp.tanh(h)
        g = lax.dynamic_update_slice(g, jnp.tanh(u), (2 * i, 0))
        return h.sum(axis=0), g

    return f, (a, w, u, i), {}


@program("sharing")
def sharing_scatter():
    """Scatters (set, add, max) into intermediate tables: a segment-sum of rows into a
    zero-initialised [128, 64] table, then updates of a computed table at gathered rows."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    r = rng()
    x = normal(r, 512, 64, scale=1.0)
    seg = np.sort(r.integers(0, 128, (512,))).astype(np.int32)
    idx = r.integers(0, 128, (32,)).astype(np.int32)

    def f(x, seg, idx):
        t = jax.ops.segment_sum(x, seg, num_segments=128)
        t = (t @ x[:64].T).at[idx].add(1.0)
        t = t.at[idx[:8]].max(jnp.sin(t[idx[8:16]]))
        return t.at[idx[16:]].set(0.0)

    return f, (x, seg, idx), {}


@program("sharing")
def sharing_triangular_solve():
    """jax.scipy.linalg.solve_triangular on intermediates: f32 (XLA:CPU lowers it to a LAPACK
    trsm custom call that aliases b into its result) and f16 (no LAPACK routine: the HLO
    triangular-solve op), lower and upper, left and right."""
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    import numpy as np

    r = rng()
    a = normal(r, 32, 32, scale=0.1) + 4.0 * np.eye(32, dtype=np.float32)
    b = normal(r, 32, 16, scale=1.0)

    def f(a, b):
        lo, up = jnp.tril(a), jnp.triu(a)
        x1 = jsl.solve_triangular(lo, b * 2.0, lower=True)
        x2 = jsl.solve_triangular(up, b + 1.0, lower=False, trans=1)
        h = a.astype(jnp.float16)
        x3 = jsl.solve_triangular(jnp.tril(h), (b * 3.0).astype(jnp.float16), lower=True)
        return x1 + x2, x3

    return f, (a, b), {}


@program("sharing")
def sharing_loop_fusion():
    """Loop fusions over dot outputs: elementwise on their operand (may reuse its buffer) and
    one that also reads the operand transposed and broadcast (may not)."""
    import jax
    import jax.numpy as jnp

    r = rng()
    x = normal(r, 128, 128, scale=1.0)
    w = normal(r, 128, 128)
    v = normal(r, 128, scale=1.0)

    def f(x, w, v):
        h = x @ w
        a = jnp.tanh(h) * 2.0 + jax.nn.sigmoid(h)  # elementwise in h
        g = a @ w
        b = g * g.T + g[0:1, :] + v  # transposed and broadcast uses of g
        return a @ b, b

    return f, (x, w, v), {}
