# SPDX-License-Identifier: Apache-2.0
"""TensorFlow programs through tf.function(jit_compile=True): another front end's HLO (TF's
bridge names modules a_inference_<function>_<id>__.<n>, passes resource variables as parameters
and lowers tf.while_loop itself). No memory_analysis() exists here: XLA's figures are the sums
over its own allocation blocks, which equal memory_analysis() on every JAX program."""

from __future__ import annotations

from registry import normal, program, rng


def _tf():
    import tensorflow as tf

    tf.config.set_visible_devices([], "GPU")
    return tf


def _named(name, fn):
    fn.__name__ = fn.__qualname__ = name
    return fn


@program("tf", frontend="tf", needs=("tensorflow",))
def tf_mlp_train():
    """An MLP train step written with tf.GradientTape over tensors (not variables) and an SGD
    update."""
    tf = _tf()
    r = rng()
    ws = [tf.constant(normal(r, 64, 128)), tf.constant(normal(r, 128, 128)), tf.constant(normal(r, 128, 10))]
    x = tf.constant(normal(r, 32, 64, scale=1.0))
    y = tf.constant(r.integers(0, 10, (32,)).astype("int32"))

    def tf_mlp_train(w1, w2, w3, x, y):
        with tf.GradientTape() as tape:
            tape.watch([w1, w2, w3])
            h = tf.nn.relu(x @ w1)
            h = tf.nn.relu(h @ w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, h @ w3))
        g = tape.gradient(loss, [w1, w2, w3])
        return [w - 0.1 * gi for w, gi in zip([w1, w2, w3], g)] + [loss]

    return tf.function(tf_mlp_train, jit_compile=True), (*ws, x, y)


@program("tf", frontend="tf", needs=("tensorflow",))
def tf_conv_bn():
    """tf.nn conv2d, fused batch norm (training), max pool and a dense head, forward."""
    tf = _tf()
    r = rng()
    w1, w2 = tf.constant(normal(r, 3, 3, 3, 16)), tf.constant(normal(r, 3, 3, 16, 32))
    scale, offset = tf.constant(normal(r, 16) + 1.0), tf.constant(normal(r, 16))
    fc = tf.constant(normal(r, 32, 10))
    x = tf.constant(normal(r, 8, 16, 16, 3, scale=1.0))

    def tf_conv_bn(x, w1, w2, scale, offset, fc):
        h = tf.nn.conv2d(x, w1, 1, "SAME")
        mean, var = tf.nn.moments(h, [0, 1, 2])
        h = tf.nn.relu(tf.nn.batch_normalization(h, mean, var, offset, scale, 1e-5))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, w2, 2, "SAME"))
        return tf.reduce_mean(h, [1, 2]) @ fc

    return tf.function(tf_conv_bn, jit_compile=True), (x, w1, w2, scale, offset, fc)


@program("tf", frontend="tf", needs=("tensorflow",))
def tf_while_rnn():
    """An RNN written with tf.while_loop and a TensorArray (TF's own while lowering)."""
    tf = _tf()
    r = rng()
    wx, wh = tf.constant(normal(r, 16, 32)), tf.constant(normal(r, 32, 32))
    xs = tf.constant(normal(r, 20, 8, 16, scale=1.0))

    def tf_while_rnn(wx, wh, xs):
        ta = tf.TensorArray(tf.float32, size=20)

        def body(i, h, ta):
            h = tf.tanh(xs[i] @ wx + h @ wh)
            return i + 1, h, ta.write(i, h)

        _, h, ta = tf.while_loop(lambda i, h, ta: i < 20, body, (0, tf.zeros((8, 32)), ta))
        return h, ta.stack()

    return tf.function(tf_while_rnn, jit_compile=True), (wx, wh, xs)


@program("tf", frontend="tf", needs=("tensorflow",))
def tf_attention_grad():
    """Multi-head self-attention with layer norm, einsum and softmax, and its gradient."""
    tf = _tf()
    r = rng()
    wqkv, wo = tf.constant(normal(r, 32, 96)), tf.constant(normal(r, 32, 32))
    x = tf.constant(normal(r, 2, 16, 32, scale=1.0))

    def tf_attention_grad(wqkv, wo, x):
        with tf.GradientTape() as tape:
            tape.watch([wqkv, wo])
            mu, var = tf.nn.moments(x, [-1], keepdims=True)
            h = (x - mu) * tf.math.rsqrt(var + 1e-5)
            q, k, v = tf.split(tf.einsum("btd,de->bte", h, wqkv), 3, axis=-1)
            q, k, v = (tf.transpose(tf.reshape(a, (2, 16, 4, 8)), (0, 2, 1, 3)) for a in (q, k, v))
            a = tf.nn.softmax(tf.einsum("bhqd,bhkd->bhqk", q, k) / 8.0 ** 0.5)
            o = tf.reshape(tf.transpose(tf.einsum("bhqk,bhkd->bhqd", a, v), (0, 2, 1, 3)), (2, 16, 32))
            loss = tf.reduce_mean((x + o @ wo) ** 2)
        return tape.gradient(loss, [wqkv, wo])

    return tf.function(tf_attention_grad, jit_compile=True), (wqkv, wo, x)


@program("tf", frontend="tf", needs=("tensorflow", "keras"))
def tf_keras_model_variables():
    """A keras Sequential model (Dense, LayerNormalization, Dropout inactive) called inside a
    jit-compiled tf.function: its variables enter as resource parameters."""
    tf = _tf()
    import keras

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="gelu"),
                              keras.layers.LayerNormalization(), keras.layers.Dropout(0.1), keras.layers.Dense(8)])
    x = tf.constant(normal(rng(), 16, 32, scale=1.0))

    def tf_keras_model_variables(x):
        return tf.nn.softmax(model(x, training=False))

    return tf.function(tf_keras_model_variables, jit_compile=True), (x,)


@program("tf", frontend="tf", needs=("tensorflow",))
def tf_scatter_gather():
    """tf.gather, tf.tensor_scatter_nd_add, tf.math.top_k and tf.sort: TF's own scatter and sort
    lowerings."""
    tf = _tf()
    r = rng()
    table = tf.constant(normal(r, 512, 32))
    idx = tf.constant(r.integers(0, 512, (64, 1)).astype("int32"))
    upd = tf.constant(normal(r, 64, 32))

    def tf_scatter_gather(table, idx, upd):
        t = tf.tensor_scatter_nd_add(table, idx, upd)
        g = tf.gather(t, idx[:, 0])
        vals, ind = tf.math.top_k(tf.reduce_sum(g, -1), 8)
        return t, tf.sort(g, axis=-1), vals, ind

    return tf.function(tf_scatter_gather, jit_compile=True), (table, idx, upd)
