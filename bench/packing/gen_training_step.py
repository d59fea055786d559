#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Synthetic packing instances shaped like one training step (forward, backward, optimizer).

gen_trace_like.py copies the IOPDDL traces' statistics and caps long lifetimes, so its live set
stays small. A training step does not: every activation the backward pass needs is held from
its forward op to the mirrored backward op, so the live set grows through the forward pass and
peaks where it turns (tens of thousands of buffers at 10^5). Generated, step by step:

- parameters and optimizer state (two moments per parameter): live the whole step;
- forward ops, layer by layer: each saves its output for the backward pass with the model's
  probability (the rematerialisation policy), live to the mirrored backward op; and makes short
  temporaries (1-4 steps);
- backward ops, layers in reverse, two per forward op: temporaries, and per layer the parameter
  gradients, live to the optimizer update at the end (or, with --apply-per-layer, a few steps);
- the optimizer update: a temporary per parameter.

Models (--model) set the proportions: `transformer` (attention scores seq x seq beside
seq x hidden activations, MLP hidden 4x, most outputs saved), `cnn` (spatial size halving and
channels doubling every stage, so early activations are the largest), `mlp` (widths drawn per
layer, fewer temporaries). Sizes take a small per-buffer jitter so equal shapes are not all
equal. The layer count is chosen so that about N buffers come out. Deterministic for a seed.

Writes MiniMalloc's CSV (id,lower,upper,size; live on [lower, upper)) to stdout and, to stderr,
the buffer count, the horizon and the number of buffers live at the peak of the live set.
Usage: gen_training_step.py N [--model transformer|cnn|mlp] [--seed S] [--apply-per-layer]
"""
import argparse
import random
import sys

MODELS = {
    # ops per layer, probability a forward output is saved, temporaries per forward op,
    # temporaries per backward op, parameters per layer
    "transformer": dict(ops=12, save=0.8, fwd_temps=1.5, bwd_temps=2.0, params=4),
    "cnn": dict(ops=6, save=0.9, fwd_temps=1.0, bwd_temps=1.5, params=2),
    "mlp": dict(ops=4, save=0.7, fwd_temps=0.5, bwd_temps=1.0, params=2),
}


def activation_size(model, rng, layer, layers, op):
    if model == "transformer":
        batch, seq, hidden, heads = 4, 512, 1024, 16
        if op in (3, 4):  # attention scores and probabilities
            return batch * heads * seq * seq * 2
        if op in (7, 8):  # MLP hidden
            return batch * seq * 4 * hidden * 2
        return batch * seq * hidden * 2
    if model == "cnn":
        stage = min(4, layer * 5 // max(1, layers))
        side, channels = 112 >> stage, 64 << stage
        return 32 * side * side * channels * 2
    width = [512, 1024, 2048, 4096][layer % 4] if op % 2 else 1024
    return 256 * width * 4


def parameter_size(model, rng, layer, layers, k):
    if model == "transformer":
        return (3 if k == 0 else 4 if k >= 2 else 1) * 1024 * 1024 * 4
    if model == "cnn":
        stage = min(4, layer * 5 // max(1, layers))
        channels = 64 << stage
        return 9 * channels * channels * 4
    return 1024 * [512, 1024, 2048, 4096][(layer + k) % 4] * 4


def jitter(rng, size):
    return max(1, int(size * rng.uniform(0.9, 1.1)))


def count_whole(rng, mean):
    whole = int(mean)
    return whole + (1 if rng.random() < mean - whole else 0)


def generate(n, model, seed, apply_per_layer):
    spec = MODELS[model]
    per_layer = (spec["ops"] * (spec["save"] + spec["fwd_temps"] + 2 * spec["bwd_temps"]) + 4 * spec["params"])
    layers = max(2, round(n / per_layer))
    rng = random.Random(seed)
    fwd_steps = layers * spec["ops"]
    bwd_start = fwd_steps
    horizon = fwd_steps * 3 + spec["params"] * layers + 2
    rows = []  # (lower, upper, size)

    def mirror(t):  # the first of the two backward ops of forward op t
        return bwd_start + 2 * (fwd_steps - 1 - t)

    for layer in range(layers):
        for k in range(spec["params"]):
            size = parameter_size(model, rng, layer, layers, k)
            for _ in range(3):  # the parameter and the optimizer's two moments
                rows.append((0, horizon, size))
    for t in range(fwd_steps):
        layer, op = divmod(t, spec["ops"])
        size = activation_size(model, rng, layer, layers, op)
        if rng.random() < spec["save"]:
            rows.append((t, mirror(t) + 1 + rng.randint(0, 1), jitter(rng, size)))
        for _ in range(count_whole(rng, spec["fwd_temps"])):
            rows.append((t, min(horizon, t + rng.randint(1, 4)), jitter(rng, size // rng.choice((1, 2, 4)))))
    for b in range(2 * fwd_steps):
        t = bwd_start + b
        layer, op = divmod(fwd_steps - 1 - b // 2, spec["ops"])
        size = activation_size(model, rng, layer, layers, op)
        for _ in range(count_whole(rng, spec["bwd_temps"])):
            rows.append((t, min(horizon, t + rng.randint(1, 4)), jitter(rng, size // rng.choice((1, 2, 4)))))
        if op == 0 and b % 2 == 1:  # a layer's backward pass ends: its parameter gradients
            for k in range(spec["params"]):
                end = t + 1 + rng.randint(1, 3) if apply_per_layer else horizon - 1
                rows.append((t, min(horizon, end), parameter_size(model, rng, layer, layers, k)))
    update = bwd_start + 2 * fwd_steps
    for layer in range(layers):
        for k in range(spec["params"]):
            t = update + layer * spec["params"] + k
            rows.append((t, min(horizon, t + 1), parameter_size(model, rng, layer, layers, k)))
    return rows, horizon


def live_at_peak(rows, horizon):
    delta = [0] * (horizon + 2)
    for lower, upper, _ in rows:
        delta[lower] += 1
        delta[upper] -= 1
    live = best = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int, help="about how many buffers")
    ap.add_argument("--model", choices=sorted(MODELS), default="transformer")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--apply-per-layer", action="store_true",
                    help="apply each layer's gradients as soon as they exist (short-lived gradients)")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("N must be at least 1")
    rows, horizon = generate(a.n, a.model, a.seed, a.apply_per_layer)
    out = sys.stdout
    out.write("id,lower,upper,size\n")
    out.writelines(f"{i},{lo},{max(hi, lo + 1)},{size}\n" for i, (lo, hi, size) in enumerate(rows))
    print(f"gen_training_step: {len(rows)} buffers ({a.model}), horizon {horizon} steps, "
          f"{live_at_peak(rows, horizon)} live at the peak", file=sys.stderr)


if __name__ == "__main__":
    main()
