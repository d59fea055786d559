# SPDX-License-Identifier: Apache-2.0
"""Programs built from model libraries that users run (installed from PyPI into the generator's
environment only): flax (nnx and linen), dm-haiku, equinox + optax, keras-hub backbones on the
JAX backend (random initialisation from a config, no weight download), an LLM train step,
numpyro, diffrax, mujoco-mjx / brax, jax-md. The model code is the libraries'; ours is only the
tiny configuration and the functional wrapper that jax.jit compiles (parameters in, results out),
so that the module is named jit_<program> and nothing stateful leaks into the trace."""

from __future__ import annotations

from registry import normal, program, rng


def _optax_step(loss_fn, opt):
    """A train step over a parameter pytree with an optax optimiser (state donated)."""
    import jax
    import optax

    def step(params, opt_state, *batch):
        loss, g = jax.value_and_grad(loss_fn)(params, *batch)
        updates, opt_state = opt.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


# --------------------------------------------------------------------------------------------
# flax
# --------------------------------------------------------------------------------------------


@program("models", needs=("flax", "optax"), metadata=True)
def flax_nnx_mlp_train():
    """flax.nnx MLP (Linear, LayerNorm, Dropout off) and an optax AdamW step on nnx.split state."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(32, 64, rngs=rngs)
            self.ln = nnx.LayerNorm(64, rngs=rngs)
            self.l2 = nnx.Linear(64, 10, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.gelu(self.ln(self.l1(x))))

    graphdef, params = nnx.split(MLP(nnx.Rngs(0)), nnx.Param)
    r = rng()
    x, y = normal(r, 16, 32, scale=1.0), r.integers(0, 10, (16,)).astype("int32")

    def loss(p, x, y):
        logits = nnx.merge(graphdef, p)(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    opt = optax.adamw(1e-3)
    step = _optax_step(loss, opt)
    return step, (params, opt.init(params), x, y), {"donate_argnums": (0, 1)}


@program("models", needs=("flax",))
def flax_nnx_cnn_bn():
    """flax.nnx CNN with Conv, BatchNorm (batch statistics in eval mode) and avg_pool, forward."""
    from flax import nnx

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.c1 = nnx.Conv(3, 16, (3, 3), rngs=rngs)
            self.bn = nnx.BatchNorm(16, use_running_average=True, rngs=rngs)
            self.c2 = nnx.Conv(16, 32, (3, 3), strides=2, rngs=rngs)
            self.fc = nnx.Linear(32, 10, rngs=rngs)

        def __call__(self, x):
            x = nnx.relu(self.bn(self.c1(x)))
            x = nnx.avg_pool(x, (2, 2), (2, 2))
            x = nnx.relu(self.c2(x))
            return self.fc(x.mean((1, 2)))

    graphdef, state = nnx.split(CNN(nnx.Rngs(0)))
    x = normal(rng(), 4, 16, 16, 3, scale=1.0)

    def f(state, x):
        return nnx.merge(graphdef, state)(x)

    return f, (state, x), {}


@program("models", needs=("flax", "optax"), metadata=True)
def flax_nnx_transformer_lm():
    """A 2-layer decoder LM in flax.nnx (Embed, MultiHeadAttention with a causal mask, LayerNorm,
    MLP) and an optax Adam train step: an LLM train step at a tiny config."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    vocab, d, t = 64, 32, 16

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.ln1 = nnx.LayerNorm(d, rngs=rngs)
            self.attn = nnx.MultiHeadAttention(num_heads=4, in_features=d, decode=False, rngs=rngs)
            self.ln2 = nnx.LayerNorm(d, rngs=rngs)
            self.ff1 = nnx.Linear(d, 4 * d, rngs=rngs)
            self.ff2 = nnx.Linear(4 * d, d, rngs=rngs)

        def __call__(self, x, mask):
            x = x + self.attn(self.ln1(x), mask=mask)
            return x + self.ff2(nnx.gelu(self.ff1(self.ln2(x))))

    class LM(nnx.Module):
        def __init__(self, rngs):
            self.emb = nnx.Embed(vocab, d, rngs=rngs)
            blocks = [Block(rngs) for _ in range(2)]
            self.blocks = nnx.List(blocks) if hasattr(nnx, "List") else blocks
            self.lnf = nnx.LayerNorm(d, rngs=rngs)

        def __call__(self, tok):
            x = self.emb(tok)
            mask = nnx.make_causal_mask(tok)
            for b in self.blocks:
                x = b(x, mask)
            return self.emb.attend(self.lnf(x))

    graphdef, params = nnx.split(LM(nnx.Rngs(0)), nnx.Param)
    r = rng()
    tok = r.integers(0, vocab, (4, t)).astype("int32")

    def loss(p, tok):
        logits = nnx.merge(graphdef, p)(tok[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tok[:, 1:]).mean()

    opt = optax.adam(1e-3)
    return _optax_step(loss, opt), (params, opt.init(params), tok), {"donate_argnums": (0, 1)}


@program("models", needs=("flax",))
def flax_linen_lstm_scan():
    """flax.linen nn.RNN over an OptimizedLSTMCell (nn.scan: a while loop) and a Dense head."""
    import jax
    import flax.linen as nn

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.RNN(nn.OptimizedLSTMCell(32))(x)
            return nn.Dense(4)(h[:, -1])

    x = normal(rng(), 8, 20, 16, scale=1.0)
    m = Model()
    params = jax.jit(m.init)(jax.random.PRNGKey(0), x)

    def f(params, x):
        return m.apply(params, x)

    return f, (params, x), {}


@program("models", needs=("flax", "optax"))
def flax_linen_resnet_train():
    """flax.linen ResNet-style blocks with BatchNorm in training mode (mutable batch_stats) and an
    optax SGD-momentum step."""
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        ch: int

        @nn.compact
        def __call__(self, x, train):
            y = nn.Conv(self.ch, (3, 3))(x)
            y = nn.BatchNorm(use_running_average=not train)(y)
            y = nn.relu(y)
            y = nn.Conv(self.ch, (3, 3))(y)
            y = nn.BatchNorm(use_running_average=not train)(y)
            if x.shape[-1] != self.ch:
                x = nn.Conv(self.ch, (1, 1))(x)
            return nn.relu(x + y)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x, train=True):
            x = Block(8)(x, train)
            x = nn.max_pool(x, (2, 2), (2, 2))
            x = Block(16)(x, train)
            return nn.Dense(10)(x.mean((1, 2)))

    r = rng()
    x = normal(r, 8, 16, 16, 3, scale=1.0)
    y = r.integers(0, 10, (8,)).astype("int32")
    net = Net()
    v = jax.jit(net.init)(jax.random.PRNGKey(0), x)
    opt = optax.sgd(0.1, momentum=0.9)

    def step(params, stats, opt_state, x, y):
        def loss(p):
            logits, upd = net.apply({"params": p, "batch_stats": stats}, x, mutable=["batch_stats"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), upd["batch_stats"]

        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(params)
        u, opt_state = opt.update(g, opt_state, params)
        return optax.apply_updates(params, u), stats, opt_state, l

    p = v["params"]
    return step, (p, v["batch_stats"], opt.init(p), x, y), {"donate_argnums": (0, 1, 2)}


# --------------------------------------------------------------------------------------------
# dm-haiku
# --------------------------------------------------------------------------------------------


@program("models", needs=("haiku", "optax"))
def haiku_mlp_train():
    """dm-haiku hk.nets.MLP classifier and an optax Adam step (hk.transform, init outside)."""
    import jax
    import haiku as hk
    import optax

    net = hk.without_apply_rng(hk.transform(lambda x: hk.nets.MLP([64, 64, 10])(x)))
    r = rng()
    x, y = normal(r, 32, 28, scale=1.0), r.integers(0, 10, (32,)).astype("int32")
    params = jax.jit(net.init)(jax.random.PRNGKey(0), x)

    def loss(p, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(net.apply(p, x), y).mean()

    opt = optax.adam(1e-3)
    return _optax_step(loss, opt), (params, opt.init(params), x, y), {"donate_argnums": (0, 1)}


@program("models", needs=("haiku",), metadata=True)
def haiku_resnet_forward():
    """dm-haiku hk.nets.ResNet (one block per group, narrow channels) forward in eval mode with
    batch-norm state."""
    import jax
    import haiku as hk

    def fwd(x, is_training):
        return hk.nets.ResNet(blocks_per_group=(1, 1, 1, 1), num_classes=10, bottleneck=False,
                              channels_per_group=(8, 16, 32, 64), use_projection=(True, True, True, True))(x, is_training)

    net = hk.without_apply_rng(hk.transform_with_state(fwd))
    x = normal(rng(), 2, 32, 32, 3, scale=1.0)
    params, state = jax.jit(net.init, static_argnums=2)(jax.random.PRNGKey(0), x, True)

    def f(params, state, x):
        return net.apply(params, state, x, False)[0]

    return f, (params, state, x), {}


@program("models", needs=("haiku",))
def haiku_lstm_unroll():
    """dm-haiku hk.LSTM under hk.dynamic_unroll (a scan) with a linear readout."""
    import jax
    import haiku as hk

    def fwd(x):
        core = hk.LSTM(32)
        out, _ = hk.dynamic_unroll(core, x, core.initial_state(x.shape[1]))
        return hk.Linear(4)(out)

    net = hk.without_apply_rng(hk.transform(fwd))
    x = normal(rng(), 16, 8, 12, scale=1.0)  # time-major
    params = jax.jit(net.init)(jax.random.PRNGKey(0), x)
    return (lambda p, x: net.apply(p, x)), (params, x), {}


@program("models", needs=("haiku",))
def haiku_transformer_block():
    """dm-haiku hk.MultiHeadAttention + hk.LayerNorm + MLP block, gradient of a mean loss."""
    import jax
    import jax.numpy as jnp
    import haiku as hk

    def fwd(x):
        h = hk.LayerNorm(-1, True, True)(x)
        x = x + hk.MultiHeadAttention(num_heads=4, key_size=8, w_init=hk.initializers.VarianceScaling(1.0))(h, h, h)
        h = hk.LayerNorm(-1, True, True)(x)
        return x + hk.nets.MLP([128, 32])(h)

    net = hk.without_apply_rng(hk.transform(fwd))
    x = normal(rng(), 4, 16, 32, scale=1.0)
    params = jax.jit(net.init)(jax.random.PRNGKey(0), x)
    return (lambda p, x: jax.grad(lambda q: jnp.mean(net.apply(q, x) ** 2))(p)), (params, x), {}


# --------------------------------------------------------------------------------------------
# equinox + optax
# --------------------------------------------------------------------------------------------


def _eqx_split(model):
    import equinox as eqx

    return eqx.partition(model, eqx.is_array)


@program("models", needs=("equinox", "optax"), metadata=True)
def equinox_mlp_adamw():
    """equinox eqx.nn.MLP under eqx.filter_value_and_grad with an optax chain (global-norm clip +
    AdamW) step."""
    import jax
    import jax.numpy as jnp
    import equinox as eqx
    import optax

    model = eqx.nn.MLP(16, 4, 64, 3, key=jax.random.PRNGKey(0))
    params, static = _eqx_split(model)
    r = rng()
    x, y = normal(r, 32, 16, scale=1.0), normal(r, 32, 4, scale=1.0)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))

    def step(params, opt_state, x, y):
        @eqx.filter_value_and_grad
        def loss(m):
            return jnp.mean((jax.vmap(m)(x) - y) ** 2)

        l, g = loss(eqx.combine(params, static))
        g, _ = _eqx_split(g)
        u, opt_state = opt.update(g, opt_state, params)
        return eqx.apply_updates(params, u), opt_state, l

    return step, (params, opt.init(params), x, y), {"donate_argnums": (0, 1)}


@program("models", needs=("equinox",))
def equinox_cnn():
    """equinox Conv2d, MaxPool2d, GroupNorm and Linear, vmapped over a batch, forward."""
    import jax
    import equinox as eqx

    k = jax.random.split(jax.random.PRNGKey(0), 3)
    model = eqx.nn.Sequential([
        eqx.nn.Conv2d(3, 8, 3, padding=1, key=k[0]),
        eqx.nn.GroupNorm(2, 8),
        eqx.nn.Lambda(jax.nn.relu),
        eqx.nn.MaxPool2d(2, 2),
        eqx.nn.Conv2d(8, 16, 3, padding=1, key=k[1]),
        eqx.nn.Lambda(jax.nn.relu),
        eqx.nn.Lambda(lambda z: z.mean((1, 2))),
        eqx.nn.Linear(16, 10, key=k[2]),
    ])
    params, static = _eqx_split(model)
    x = normal(rng(), 8, 3, 16, 16, scale=1.0)
    return (lambda p, x: jax.vmap(eqx.combine(p, static))(x)), (params, x), {}


@program("models", needs=("equinox",))
def equinox_attention_gru():
    """equinox MultiheadAttention and a GRUCell scanned over time, with gradients."""
    import jax
    import jax.numpy as jnp
    import equinox as eqx

    k = jax.random.split(jax.random.PRNGKey(0), 2)
    model = (eqx.nn.MultiheadAttention(4, 32, key=k[0]), eqx.nn.GRUCell(32, 32, key=k[1]))
    params, static = _eqx_split(model)
    x = normal(rng(), 12, 32, scale=1.0)

    def f(params, x):
        def loss(p):
            attn, gru = eqx.combine(p, static)
            h = attn(x, x, x)
            hN, _ = jax.lax.scan(lambda c, xi: (gru(xi, c), None), jnp.zeros(32), h)
            return jnp.sum(hN**2)

        return jax.grad(loss)(params)

    return f, (params, x), {}


@program("models", needs=("optax",))
def optax_optimizers():
    """One update each of optax lion, lamb, adafactor and a schedule-driven sgd on a parameter
    pytree (optimiser states donated)."""
    import jax
    import optax

    r = rng()
    params = {"w": normal(r, 64, 128), "b": normal(r, 128), "v": normal(r, 32, 32)}
    grads = jax.tree_util.tree_map(lambda a: a * 0.5, params)
    opts = [optax.lion(1e-4), optax.lamb(1e-3), optax.adafactor(1e-3),
            optax.sgd(optax.warmup_cosine_decay_schedule(0.0, 0.1, 10, 100))]
    states = [o.init(params) for o in opts]

    def f(params, states, grads):
        outs, new = [], []
        for o, s in zip(opts, states):
            u, s = o.update(grads, s, params)
            outs.append(optax.apply_updates(params, u))
            new.append(s)
        return outs, new

    return f, (params, states, grads), {"donate_argnums": (1,)}


# --------------------------------------------------------------------------------------------
# keras-hub backbones on the JAX backend (random init from a config; no weights downloaded)
# --------------------------------------------------------------------------------------------


def _keras_stateless(model):
    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]
    return tv, ntv


@program("models", needs=("keras", "keras_hub"), metadata=True)
def keras_hub_gpt2_forward():
    """keras-hub GPT2Backbone (2 layers, 4 heads, hidden 32) forward via stateless_call."""
    import numpy as np
    import keras_hub

    model = keras_hub.models.GPT2Backbone(vocabulary_size=128, num_layers=2, num_heads=4, hidden_dim=32,
                                          intermediate_dim=64, max_sequence_length=32)
    tv, ntv = _keras_stateless(model)
    inputs = {"token_ids": np.arange(32, dtype="int32").reshape(2, 16) % 128,
              "padding_mask": np.ones((2, 16), dtype="int32")}

    def f(tv, ntv, inputs):
        return model.stateless_call(tv, ntv, inputs)[0]

    return f, (tv, ntv, inputs), {}


@program("models", needs=("keras", "keras_hub", "optax"))
def keras_hub_llama_train():
    """LLM train step: keras-hub LlamaBackbone (2 layers, GQA 4/2 heads, hidden 32), a tied
    logits projection, cross-entropy and an optax AdamW update of every trainable variable."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import keras_hub
    import optax

    model = keras_hub.models.LlamaBackbone(vocabulary_size=128, num_layers=2, num_query_heads=4,
                                           num_key_value_heads=2, hidden_dim=32, intermediate_dim=64)
    tv, ntv = _keras_stateless(model)
    emb_index = [i for i, v in enumerate(model.trainable_variables) if "embeddings" in v.path][0]
    tok = (np.arange(2 * 17, dtype="int32").reshape(2, 17) * 7) % 128
    opt = optax.adamw(1e-3)

    def step(tv, opt_state, ntv, tok):
        def loss(tv):
            h = model.stateless_call(tv, ntv, {"token_ids": tok[:, :-1],
                                               "padding_mask": jnp.ones_like(tok[:, :-1])})[0]
            logits = h @ tv[emb_index].T
            return optax.softmax_cross_entropy_with_integer_labels(logits, tok[:, 1:]).mean()

        l, g = jax.value_and_grad(loss)(tv)
        u, opt_state = opt.update(g, opt_state, tv)
        return optax.apply_updates(tv, u), opt_state, l

    return step, (tv, opt.init(tv), ntv, tok), {"donate_argnums": (0, 1)}


@program("models", needs=("keras", "keras_hub"))
def keras_hub_bert_forward():
    """keras-hub BertBackbone (2 layers, hidden 32) forward: sequence and pooled outputs."""
    import numpy as np
    import keras_hub

    model = keras_hub.models.BertBackbone(vocabulary_size=128, num_layers=2, num_heads=2, hidden_dim=32,
                                          intermediate_dim=64, max_sequence_length=32)
    tv, ntv = _keras_stateless(model)
    inputs = {"token_ids": (np.arange(32, dtype="int32").reshape(2, 16) * 3) % 128,
              "segment_ids": np.zeros((2, 16), dtype="int32"), "padding_mask": np.ones((2, 16), dtype="int32")}
    return (lambda tv, ntv, inputs: model.stateless_call(tv, ntv, inputs)[0]), (tv, ntv, inputs), {}


@program("models", needs=("keras", "keras_hub"))
def keras_hub_gemma_forward():
    """keras-hub GemmaBackbone (2 layers, head_dim 8, hidden 32) forward."""
    import numpy as np
    import keras_hub

    model = keras_hub.models.GemmaBackbone(vocabulary_size=128, num_layers=2, num_query_heads=4, num_key_value_heads=1,
                                           hidden_dim=32, intermediate_dim=64, head_dim=8)
    tv, ntv = _keras_stateless(model)
    inputs = {"token_ids": (np.arange(32, dtype="int32").reshape(2, 16) * 5) % 128,
              "padding_mask": np.ones((2, 16), dtype="int32")}
    return (lambda tv, ntv, inputs: model.stateless_call(tv, ntv, inputs)[0]), (tv, ntv, inputs), {}


@program("models", needs=("keras", "keras_hub"))
def keras_hub_resnet_forward():
    """keras-hub ResNetBackbone (basic blocks, two stages of one block; keras-hub requires 64
    filters in the first stage) forward on 32x32 images."""
    import keras_hub

    model = keras_hub.models.ResNetBackbone(input_conv_filters=[64], input_conv_kernel_sizes=[3],
                                            stackwise_num_filters=[64, 64], stackwise_num_blocks=[1, 1],
                                            stackwise_num_strides=[1, 2], block_type="basic_block",
                                            image_shape=(32, 32, 3))
    tv, ntv = _keras_stateless(model)
    x = normal(rng(), 2, 32, 32, 3, scale=1.0)
    return (lambda tv, ntv, x: model.stateless_call(tv, ntv, x)[0]), (tv, ntv, x), {}


@program("models", needs=("keras",))
def keras_functional_train():
    """A keras 3 functional model (Conv1D, LSTM, Dense) trained one step by the JAX backend's
    stateless API and keras.optimizers.Adam's stateless_apply."""
    import jax
    import numpy as np
    import keras

    inp = keras.Input((20, 8))
    h = keras.layers.Conv1D(16, 3, activation="relu")(inp)
    h = keras.layers.LSTM(16)(h)
    out = keras.layers.Dense(3)(h)
    model = keras.Model(inp, out)
    opt = keras.optimizers.Adam(1e-3)
    opt.build(model.trainable_variables)
    tv, ntv = _keras_stateless(model)
    ov = [v.value for v in opt.variables]
    r = rng()
    x, y = normal(r, 8, 20, 8, scale=1.0), normal(r, 8, 3, scale=1.0)

    def step(tv, ntv, ov, x, y):
        def loss(tv):
            pred, ntv2 = model.stateless_call(tv, ntv, x, training=True)
            return jax.numpy.mean((pred - y) ** 2), ntv2

        (l, ntv2), g = jax.value_and_grad(loss, has_aux=True)(tv)
        tv, ov = opt.stateless_apply(ov, g, tv)
        return tv, ntv2, ov, l

    return step, (tv, ntv, ov, x, y), {"donate_argnums": (0, 2)}


# --------------------------------------------------------------------------------------------
# numpyro, diffrax
# --------------------------------------------------------------------------------------------


def _numpyro_model(x, y=None):
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    s = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("obs", dist.Normal(x @ w + b, s), obs=y)


@program("models", needs=("numpyro",))
def numpyro_svi_step():
    """numpyro SVI with an AutoNormal guide on a Bayesian linear regression: one ELBO update."""
    import jax
    import numpyro
    from numpyro.infer import SVI, Trace_ELBO, autoguide

    r = rng()
    x, y = normal(r, 64, 5, scale=1.0), normal(r, 64, scale=1.0)
    guide = autoguide.AutoNormal(_numpyro_model)
    svi = SVI(_numpyro_model, guide, numpyro.optim.Adam(1e-2), Trace_ELBO())
    state = svi.init(jax.random.PRNGKey(0), x, y)
    return (lambda state, x, y: svi.update(state, x, y)), (state, x, y), {}


@program("models", needs=("numpyro",), metadata=True)
def numpyro_nuts_steps():
    """numpyro NUTS (init from a potential, then 5 sample_kernel steps in a fori_loop): nested
    while loops of the tree building."""
    import jax
    from numpyro.infer import NUTS
    from numpyro.infer.util import initialize_model

    r = rng()
    x, y = normal(r, 32, 3, scale=1.0), normal(r, 32, scale=1.0)
    info = initialize_model(jax.random.PRNGKey(0), _numpyro_model, model_args=(x, y))
    kernel = NUTS(potential_fn=info.potential_fn, max_tree_depth=4)
    state = kernel.init(jax.random.PRNGKey(1), 0, info.param_info.z, (), {})

    def f(state):
        return jax.lax.fori_loop(0, 5, lambda i, s: kernel.sample(s, (), {}), state)

    return f, (state,), {}


@program("models", needs=("diffrax",), metadata=True)
def diffrax_ode_tsit5():
    """diffrax diffeqsolve of a Lotka-Volterra system with Tsit5 and a PID step-size controller,
    saving at 16 times (bounded while loop)."""
    import jax.numpy as jnp
    import diffrax

    def vf(t, y, args):
        a, b, c, d = args
        return jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])

    def f(y0, args):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(vf), diffrax.Tsit5(), 0.0, 10.0, 0.1, y0, args=args,
                                  saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 10.0, 16)),
                                  stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5), max_steps=256)
        return sol.ys

    import numpy as np

    return f, (np.array([10.0, 5.0], "float32"), np.array([1.1, 0.4, 0.4, 0.1], "float32")), {}


@program("models", needs=("diffrax", "equinox"))
def diffrax_neural_ode_grad():
    """Gradient through a diffrax neural ODE (equinox MLP vector field, Dopri5, constant steps,
    RecursiveCheckpointAdjoint)."""
    import jax
    import jax.numpy as jnp
    import diffrax
    import equinox as eqx

    mlp = eqx.nn.MLP(4, 4, 32, 2, activation=jnp.tanh, key=jax.random.PRNGKey(0))
    params, static = _eqx_split(mlp)
    y0 = normal(rng(), 8, 4, scale=1.0)

    def f(params, y0):
        def loss(p):
            m = eqx.combine(p, static)
            term = diffrax.ODETerm(lambda t, y, a: jax.vmap(m)(y))
            sol = diffrax.diffeqsolve(term, diffrax.Dopri5(), 0.0, 1.0, 0.1, y0, max_steps=16)
            return jnp.mean(sol.ys**2)

        return jax.grad(loss)(params)

    return f, (params, y0), {}


@program("models", needs=("diffrax", "lineax"))
def diffrax_sde_euler():
    """diffrax SDE (Ornstein-Uhlenbeck, diagonal noise as a lineax operator) with Euler-Maruyama
    over a VirtualBrownianTree."""
    import jax
    import jax.numpy as jnp
    import diffrax
    import lineax as lx

    def f(y0):
        bm = diffrax.VirtualBrownianTree(0.0, 1.0, tol=1e-3, shape=(16,), key=jax.random.PRNGKey(0))
        terms = diffrax.MultiTerm(diffrax.ODETerm(lambda t, y, a: -y),
                                  diffrax.ControlTerm(lambda t, y, a: lx.DiagonalLinearOperator(0.3 * jnp.ones_like(y)), bm))
        return diffrax.diffeqsolve(terms, diffrax.Euler(), 0.0, 1.0, 0.05, y0, max_steps=32).ys

    return f, (normal(rng(), 16, scale=1.0),), {}


# --------------------------------------------------------------------------------------------
# mujoco-mjx / brax, jax-md
# --------------------------------------------------------------------------------------------

_PENDULUM = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="pole" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/>
      <body name="pole2" pos="0 0 -0.5">
        <joint name="hinge2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="hinge" gear="1"/></actuator>
</mujoco>
"""


@program("models", needs=("mujoco", "mujoco.mjx"), metadata=True)
def mjx_double_pendulum_rollout():
    """mujoco-mjx: a double pendulum's mjx.step scanned over 10 steps with a control input."""
    import jax
    import mujoco
    from mujoco import mjx

    m = mjx.put_model(mujoco.MjModel.from_xml_string(_PENDULUM))
    d = mjx.make_data(m)

    def f(d, ctrl):
        def body(d, u):
            d = mjx.step(m, d.replace(ctrl=u))
            return d, d.qpos

        return jax.lax.scan(body, d, ctrl)[1]

    return f, (d, normal(rng(), 10, 1, scale=1.0)), {}


@program("models", needs=("brax",))
def brax_pendulum_step():
    """brax: one step of the generalized-pipeline inverted pendulum environment (envs.get_environment)."""
    import jax
    from brax import envs

    env = envs.get_environment("inverted_pendulum", backend="generalized")
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    return (lambda s, a: env.step(s, a)), (state, normal(rng(), env.action_size, scale=0.5)), {}


@program("models", needs=("jax_md",), metadata=True)
def jax_md_lj_nve():
    """jax-md: Lennard-Jones pair energy in a periodic box, forces, and 20 NVE velocity-Verlet
    steps in a fori_loop."""
    import jax
    import jax.numpy as jnp
    from jax_md import energy, simulate, space

    box = 6.0
    displacement, shift = space.periodic(box)
    energy_fn = energy.lennard_jones_pair(displacement, sigma=1.0, epsilon=1.0)
    init, apply = simulate.nve(energy_fn, shift, dt=1e-3)
    pos = (rng().uniform(0.0, box, (64, 2))).astype("float32")
    state = jax.jit(init)(jax.random.PRNGKey(0), pos, kT=0.1)

    def f(state):
        return jax.lax.fori_loop(0, 20, lambda i, s: apply(s), state), energy_fn(state.position)

    return f, (state,), {}


@program("models", needs=("jax_md",))
def jax_md_neighbor_soft_sphere():
    """jax-md: soft-sphere energy through a cell-list neighbour list (allocate outside, update
    and energy inside), and its force."""
    import jax
    from jax_md import energy, partition, quantity, space

    box = 10.0
    displacement, _ = space.periodic(box)
    pos = (rng().uniform(0.0, box, (128, 2))).astype("float32")
    nfn, efn = energy.soft_sphere_neighbor_list(displacement, box, sigma=1.0)
    nbrs = nfn.allocate(pos)

    def f(pos, nbrs):
        nbrs = nbrs.update(pos)
        return efn(pos, nbrs), quantity.force(efn)(pos, nbrs)

    return f, (pos, nbrs), {}
