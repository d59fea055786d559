#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes mlp_train_step.hlo: one SGD step of a two-layer perceptron (1024 -> 4096 -> 1024,
batch 256, float32), as JAX lowers it before SPMD partitioning. Its weights and their updates
take 64 MiB, so on 8 devices a limit of 20 MiB rules out replicating them (data parallelism).
Made with JAX 0.12.1: python gen_mlp_train_step.py > mlp_train_step.hlo"""
import jax
import jax.numpy as jnp


def loss(params, x, y):
    w1, w2 = params
    return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)


def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value


B, D, H = 256, 1024, 4096
f32 = jnp.float32
args = ((jax.ShapeDtypeStruct((D, H), f32), jax.ShapeDtypeStruct((H, D), f32)),
        jax.ShapeDtypeStruct((B, D), f32), jax.ShapeDtypeStruct((B, D), f32))
print(jax.jit(step).lower(*args).as_text(dialect="hlo"), end="")
