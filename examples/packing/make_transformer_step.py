#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes transformer_step.csv: the temporaries of one training step of a small transformer.

A decoder-only model (6 layers, hidden 512, 8 heads, FFN 2048, sequence 512, batch 8, vocab
8192, bf16 activations, fp32 gradients) is written as a list of operations in execution order:
the forward pass, the loss, the backward pass in reverse and an optimizer update per weight.
Every tensor an operation produces is a buffer, live from its producer until its last consumer
(half-open [lower, upper) in operation steps); saved activations therefore live from the
forward pass into the backward pass. Operations may also need a scratch workspace live for
their own step only. Parameters and optimizer state are persistent and not part of the heap,
so they are left out. Sizes are rounded up to 256 bytes. The output is deterministic.

Usage: make_transformer_step.py [OUT.csv]   (default: transformer_step.csv beside this file)
"""
import os
import sys

LAYERS, HIDDEN, HEADS, FFN, SEQ, BATCH, VOCAB = 6, 512, 8, 2048, 512, 8, 8192
BF16, FP32 = 2, 4


def rounded(n):
    return (n + 255) // 256 * 256


class Graph:
    def __init__(self):
        self.ops = []        # (name, inputs, outputs, workspace bytes)
        self.sizes = {}

    def tensor(self, name, elements, dtype):
        self.sizes[name] = rounded(elements * dtype)
        return name

    def op(self, name, inputs, outputs, workspace=0):
        self.ops.append((name, list(inputs), list(outputs), workspace))


def build():
    g = Graph()
    tok = BATCH * SEQ
    x = g.tensor("embed.out", tok * HIDDEN, BF16)
    g.op("embed", [], [x])
    saved = []  # per layer: tensors the backward pass reads
    for l in range(LAYERS):
        p = f"l{l}."
        ln1 = g.tensor(p + "ln1.out", tok * HIDDEN, BF16)
        ln1_stats = g.tensor(p + "ln1.stats", tok * 2, FP32)
        g.op(p + "ln1", [x], [ln1, ln1_stats])
        qkv = g.tensor(p + "qkv", tok * 3 * HIDDEN, BF16)
        g.op(p + "qkv_matmul", [ln1], [qkv], workspace=4 << 20)
        scores = g.tensor(p + "scores", BATCH * HEADS * SEQ * SEQ, BF16)
        g.op(p + "qk_matmul", [qkv], [scores], workspace=2 << 20)
        probs = g.tensor(p + "probs", BATCH * HEADS * SEQ * SEQ, BF16)
        g.op(p + "softmax", [scores], [probs])
        ctx = g.tensor(p + "ctx", tok * HIDDEN, BF16)
        g.op(p + "pv_matmul", [probs, qkv], [ctx], workspace=2 << 20)
        attn = g.tensor(p + "attn_out", tok * HIDDEN, BF16)
        g.op(p + "out_proj", [ctx], [attn], workspace=1 << 20)
        res1 = g.tensor(p + "res1", tok * HIDDEN, BF16)
        g.op(p + "residual1", [x, attn], [res1])
        ln2 = g.tensor(p + "ln2.out", tok * HIDDEN, BF16)
        ln2_stats = g.tensor(p + "ln2.stats", tok * 2, FP32)
        g.op(p + "ln2", [res1], [ln2, ln2_stats])
        up = g.tensor(p + "ffn_up", tok * FFN, BF16)
        g.op(p + "ffn_up_matmul", [ln2], [up], workspace=4 << 20)
        act = g.tensor(p + "gelu", tok * FFN, BF16)
        g.op(p + "gelu", [up], [act])
        down = g.tensor(p + "ffn_down", tok * HIDDEN, BF16)
        g.op(p + "ffn_down_matmul", [act], [down], workspace=4 << 20)
        out = g.tensor(p + "res2", tok * HIDDEN, BF16)
        g.op(p + "residual2", [res1, down], [out])
        saved.append(dict(x=x, ln1=ln1, ln1_stats=ln1_stats, qkv=qkv, probs=probs, ctx=ctx, res1=res1,
                          ln2=ln2, ln2_stats=ln2_stats, up=up, act=act))
        x = out
    lnf = g.tensor("lnf.out", tok * HIDDEN, BF16)
    g.op("final_ln", [x], [lnf])
    logits = g.tensor("logits", tok * VOCAB, BF16)
    g.op("lm_head", [lnf], [logits], workspace=8 << 20)
    loss_stats = g.tensor("loss.stats", tok * 2, FP32)
    g.op("cross_entropy", [logits], [loss_stats])
    dlogits = g.tensor("d.logits", tok * VOCAB, BF16)
    g.op("d_cross_entropy", [logits, loss_stats], [dlogits])
    dlnf = g.tensor("d.lnf", tok * HIDDEN, BF16)
    dw = [g.tensor("dw.lm_head", HIDDEN * VOCAB, FP32)]
    g.op("d_lm_head", [dlogits, lnf], [dlnf, dw[-1]], workspace=8 << 20)
    dx = g.tensor("d.final", tok * HIDDEN, BF16)
    g.op("d_final_ln", [dlnf, x], [dx])
    for l in reversed(range(LAYERS)):
        p, s = f"l{l}.", saved[l]
        d_down = g.tensor(p + "d.act", tok * FFN, BF16)
        dw.append(g.tensor(p + "dw.ffn_down", FFN * HIDDEN, FP32))
        g.op(p + "d_ffn_down", [dx, s["act"]], [d_down, dw[-1]], workspace=4 << 20)
        d_up = g.tensor(p + "d.up", tok * FFN, BF16)
        g.op(p + "d_gelu", [d_down, s["up"]], [d_up])
        d_ln2 = g.tensor(p + "d.ln2", tok * HIDDEN, BF16)
        dw.append(g.tensor(p + "dw.ffn_up", HIDDEN * FFN, FP32))
        g.op(p + "d_ffn_up", [d_up, s["ln2"]], [d_ln2, dw[-1]], workspace=4 << 20)
        d_res1 = g.tensor(p + "d.res1", tok * HIDDEN, BF16)
        g.op(p + "d_ln2", [d_ln2, s["res1"], s["ln2_stats"], dx], [d_res1])
        d_ctx = g.tensor(p + "d.ctx", tok * HIDDEN, BF16)
        dw.append(g.tensor(p + "dw.out_proj", HIDDEN * HIDDEN, FP32))
        g.op(p + "d_out_proj", [d_res1, s["ctx"]], [d_ctx, dw[-1]], workspace=1 << 20)
        d_probs = g.tensor(p + "d.probs", BATCH * HEADS * SEQ * SEQ, BF16)
        d_v = g.tensor(p + "d.v", tok * HIDDEN, BF16)
        g.op(p + "d_pv_matmul", [d_ctx, s["probs"], s["qkv"]], [d_probs, d_v], workspace=2 << 20)
        d_scores = g.tensor(p + "d.scores", BATCH * HEADS * SEQ * SEQ, BF16)
        g.op(p + "d_softmax", [d_probs, s["probs"]], [d_scores])
        d_qkv = g.tensor(p + "d.qkv", tok * 3 * HIDDEN, BF16)
        g.op(p + "d_qk_matmul", [d_scores, s["qkv"], d_v], [d_qkv], workspace=2 << 20)
        d_ln1 = g.tensor(p + "d.ln1", tok * HIDDEN, BF16)
        dw.append(g.tensor(p + "dw.qkv", HIDDEN * 3 * HIDDEN, FP32))
        g.op(p + "d_qkv_matmul", [d_qkv, s["ln1"]], [d_ln1, dw[-1]], workspace=4 << 20)
        d_x = g.tensor(p + "d.x", tok * HIDDEN, BF16)
        g.op(p + "d_ln1", [d_ln1, s["x"], s["ln1_stats"], d_res1], [d_x])
        dx = d_x
    dw.append(g.tensor("dw.embed", VOCAB * HIDDEN, FP32))
    g.op("d_embed", [dx], [dw[-1]], workspace=1 << 20)
    for w in dw:  # the optimizer reads every weight gradient once, in production order
        g.op("adam." + w, [w], [], workspace=rounded(g.sizes[w] // 4))
    return g


def intervals(g):
    born, last = {}, {}
    rows = []
    for t, (name, inputs, outputs, workspace) in enumerate(g.ops):
        for x in inputs:
            last[x] = t
        for x in outputs:
            born[x] = t
            last.setdefault(x, t)
        if workspace:
            rows.append((name + ".workspace", t, t + 1, rounded(workspace)))
    for x, t in born.items():
        rows.append((x, t, last[x] + 1, g.sizes[x]))
    rows.sort(key=lambda r: (r[1], r[0]))
    return rows


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "transformer_step.csv")
    rows = intervals(build())
    with open(out, "w") as f:
        f.write("id,lower,upper,size\n")
        for name, lo, hi, size in rows:
            f.write(f"{name},{lo},{hi},{size}\n")
    print(f"wrote {out}: {len(rows)} buffers")


if __name__ == "__main__":
    main()
