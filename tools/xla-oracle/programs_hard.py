# SPDX-License-Identifier: Apache-2.0
"""Single-device JAX programs of ours for the hard cases: LAPACK custom calls, FFT,
scatter-add into a donated table, per-example gradients, associative scans, top-k routing,
batch norm, bf16 mixed precision, nested loops (scan over while and cond with fori_loop),
reverse scans."""

from __future__ import annotations

from registry import normal, program, rng


@program("hard", metadata=True)
def linalg_lapack():
    """LAPACK custom calls on XLA:CPU: Cholesky, triangular solve, eigh and SVD (tuple-returning
    custom calls whose results are column-major)."""
    import jax.numpy as jnp

    r = rng()
    a = normal(r, 32, 32, scale=1.0)
    spd = a @ a.T + 32.0 * __import__("numpy").eye(32, dtype="float32")
    b = normal(r, 32, 8, scale=1.0)

    def f(spd, b):
        c = jnp.linalg.cholesky(spd)
        x = jnp.linalg.solve(spd, b)
        w, v = jnp.linalg.eigh(spd)
        s = jnp.linalg.svd(b, compute_uv=False)
        return c, x, w, v, s

    return f, (spd, b), {}


@program("hard")
def linalg_qr_lu():
    """QR and LU decompositions and a determinant (geqrf/orgqr/getrf custom calls)."""
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    r = rng()
    a = normal(r, 48, 24, scale=1.0)
    m = normal(r, 24, 24, scale=1.0)

    def f(a, m):
        q, rr = jnp.linalg.qr(a)
        p, l, u = jsl.lu(m)
        return q, rr, p @ l @ u, jnp.linalg.slogdet(m)[1]

    return f, (a, m), {}


@program("hard")
def fft_conv():
    """FFT-based circular convolution and a spectral filter (fft / ifft / rfft / irfft)."""
    import jax.numpy as jnp

    r = rng()
    x = normal(r, 16, 256, scale=1.0)
    k = normal(r, 256, scale=1.0)

    def f(x, k):
        y = jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(k), n=256)
        z = jnp.fft.ifft(jnp.fft.fft(x.astype(jnp.complex64)) * 0.5).real
        return y, z

    return f, (x, k), {}


@program("hard")
def scatter_add_donated():
    """Embedding-gradient scatter-add into a donated [1024, 64] table (in-place scatter into a
    buffer that also holds the parameter)."""
    import numpy as np

    r = rng()
    table = normal(r, 1024, 64)
    idx = r.integers(0, 1024, (256,)).astype(np.int32)
    upd = normal(r, 256, 64)

    def f(table, idx, upd):
        t = table.at[idx].add(upd)
        return t.at[idx[:16]].set(0.0), (t[idx] * 2.0).sum()

    return f, (table, idx, upd), {"donate_argnums": (0,)}


@program("hard")
def per_example_grads():
    """vmap of the gradient of a small MLP loss: one gradient per example, then clipped and
    averaged (DP-SGD style)."""
    import jax
    import jax.numpy as jnp

    r = rng()
    p = {"w1": normal(r, 32, 64), "w2": normal(r, 64, 4)}
    x = normal(r, 16, 32, scale=1.0)
    y = normal(r, 16, 4, scale=1.0)

    def f(p, x, y):
        def loss(p, xi, yi):
            return jnp.sum((jnp.tanh(xi @ p["w1"]) @ p["w2"] - yi) ** 2)

        g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(p, x, y)
        norms = jnp.sqrt(sum(jnp.sum(v.reshape(16, -1) ** 2, axis=1) for v in g.values()))
        scale = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
        return jax.tree_util.tree_map(lambda v: jnp.mean(v * scale.reshape((16,) + (1,) * (v.ndim - 1)), 0), g)

    return f, (p, x, y), {}


@program("hard")
def associative_scan():
    """lax.associative_scan of a linear recurrence (pairs of multipliers and offsets) and a
    cumulative max: a log-depth tree of slices, pads and concatenates."""
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    a = normal(r, 512, 32, scale=0.5)
    b = normal(r, 512, 32, scale=1.0)

    def f(a, b):
        def comb(l, rr):
            return l[0] * rr[0], rr[0] * l[1] + rr[1]

        _, h = lax.associative_scan(comb, (a, b))
        return h, lax.associative_scan(jnp.maximum, b, reverse=True)

    return f, (a, b), {}


@program("hard", metadata=True)
def moe_topk():
    """Mixture-of-experts layer with top-2 routing: TopK custom call, one-hot dispatch,
    per-expert MLPs by einsum, weighted combine."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    e, d, f_ = 8, 32, 64
    p = {"router": normal(r, d, e), "w1": normal(r, e, d, f_), "w2": normal(r, e, f_, d)}
    x = normal(r, 64, d, scale=1.0)

    def f(p, x):
        logits = x @ p["router"]
        vals, idx = lax.top_k(logits, 2)
        gates = jax.nn.softmax(vals, axis=-1)
        disp = jax.nn.one_hot(idx, e) * gates[..., None]  # [t, 2, e]
        w = disp.sum(1)  # [t, e]
        h = jax.nn.relu(jnp.einsum("td,edf->tef", x, p["w1"]))
        o = jnp.einsum("tef,efd->ted", h, p["w2"])
        return jnp.einsum("ted,te->td", o, w)

    return f, (p, x), {}


@program("hard")
def batch_norm_train():
    """Conv + batch norm (batch statistics, running averages updated) + relu, with gradients."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    p = {"w": normal(r, 3, 3, 8, 16), "g": normal(r, 16) + 1.0, "b": normal(r, 16)}
    state = {"mean": normal(r, 16) * 0, "var": normal(r, 16) * 0 + 1.0}
    x = normal(r, 8, 12, 12, 8, scale=1.0)

    def f(p, state, x):
        def loss(p):
            y = lax.conv_general_dilated(x, p["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            mu, var = jnp.mean(y, (0, 1, 2)), jnp.var(y, (0, 1, 2))
            y = jax.nn.relu((y - mu) / jnp.sqrt(var + 1e-5) * p["g"] + p["b"])
            return jnp.mean(y**2), (mu, var)

        (l, (mu, var)), g = jax.value_and_grad(loss, has_aux=True)(p)
        new_state = {"mean": 0.9 * state["mean"] + 0.1 * mu, "var": 0.9 * state["var"] + 0.1 * var}
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), new_state, l

    return f, (p, state, x), {"donate_argnums": (1,)}


@program("hard")
def bf16_mixed_precision():
    """bf16 compute with f32 master weights: casts, bf16 dots accumulating in f32, loss scaling
    and an update of the f32 weights."""
    import jax
    import jax.numpy as jnp

    r = rng()
    p = [normal(r, 128, 128) for _ in range(3)]
    x = normal(r, 32, 128, scale=1.0)

    def f(p, x):
        def loss(p):
            h = x.astype(jnp.bfloat16)
            for w in p:
                h = jax.nn.gelu(jnp.dot(h, w.astype(jnp.bfloat16), preferred_element_type=jnp.float32)).astype(jnp.bfloat16)
            return jnp.mean(h.astype(jnp.float32) ** 2) * 1024.0

        g = jax.grad(loss)(p)
        return [w - 1e-3 * (gi / 1024.0) for w, gi in zip(p, g)]

    return f, (p, x), {"donate_argnums": (0,)}


@program("hard", metadata=True)
def scan_while_cond():
    """A scan whose body runs a data-dependent while loop and a cond whose branch holds a
    fori_loop: loop-carried buffers with dead gaps."""
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    xs = normal(r, 12, 16, 32, scale=1.0)
    w = normal(r, 32, 32)

    def f(xs, w):
        def step(h, x):
            def cond(s):
                return (s[0] < 4) & (jnp.max(jnp.abs(s[1])) < 100.0)

            def body(s):
                return s[0] + 1, jnp.tanh(s[1] @ w) + x

            _, h2 = lax.while_loop(cond, body, (0, h))
            h3 = lax.cond(jnp.sum(h2) > 0, lambda v: lax.fori_loop(0, 3, lambda i, a: a * 0.9 + 0.1, v),
                          lambda v: v - 1.0, h2)
            return h3, jnp.sum(h3, axis=0)

        return lax.scan(step, jnp.zeros((16, 32), jnp.float32), xs)

    return f, (xs, w), {}


@program("hard")
def reverse_scan_grad():
    """Gradient through a scan (the backward pass is a reverse while loop with pass-through
    carries), plus a reverse=True scan."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    w = normal(r, 32, 32)
    xs = normal(r, 20, 8, 32, scale=1.0)

    def f(w, xs):
        def loss(w):
            h, ys = lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h), jnp.zeros((8, 32)), xs)
            return jnp.sum(h**2) + jnp.sum(ys)

        _, back = lax.scan(lambda c, x: (c * 0.5 + x, c), jnp.zeros((8, 32)), xs, reverse=True)
        return jax.grad(loss)(w), back

    return f, (w, xs), {}


@program("hard")
def gather_sort_unique():
    """Gathers with computed indices, argsort, a stable sort by key and searchsorted."""
    import jax.numpy as jnp

    r = rng()
    x = normal(r, 4096, scale=1.0)
    q = normal(r, 512, scale=1.0)

    def f(x, q):
        order = jnp.argsort(x)
        s = x[order]
        pos = jnp.searchsorted(s, q)
        return s, pos, jnp.take(order, jnp.clip(pos, 0, 4095))

    return f, (x, q), {}


@program("hard")
def conv_transpose_pool():
    """Strided and dilated convolutions, a transposed convolution, max pooling and its gradient
    (select-and-scatter)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = rng()
    w1 = normal(r, 3, 3, 4, 8)
    w2 = normal(r, 3, 3, 8, 4)
    x = normal(r, 4, 16, 16, 4, scale=1.0)
    dn = ("NHWC", "HWIO", "NHWC")

    def f(w1, w2, x):
        def loss(w1):
            y = lax.conv_general_dilated(x, w1, (2, 2), "SAME", rhs_dilation=(2, 2), dimension_numbers=dn)
            y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
            z = lax.conv_transpose(y, w2, (2, 2), "SAME", dimension_numbers=dn)
            return jnp.mean(z**2)

        return jax.grad(loss)(w1)

    return f, (w1, w2, x), {}


@program("hard")
def rng_dropout():
    """Threefry random bits drawn inside the program (jax.random), dropout and a categorical
    sample: rng-bit-generator and bit manipulation."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    r = rng()
    x = normal(r, 64, 128, scale=1.0)
    key = np.array([0, 42], dtype=np.uint32)

    def f(key, x):
        k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
        keep = jax.random.bernoulli(k1, 0.9, x.shape)
        y = jnp.where(keep, x / 0.9, 0.0)
        return y, jax.random.categorical(k2, y, axis=-1)

    return f, (key, x), {}
