#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes examples/sharding/mlp_block.json: a small auto-sharding problem in IOPDDL's format.

An MLP block's forward and backward steps on a 4-device mesh: every instruction may be
replicated (no communication, full memory), split by batch (a quarter of the memory, an
all-reduce of the weights' gradients where the weights meet the batch) or split by the hidden
dimension (a quarter of the weights, resharding where a batch-split neighbour meets it). The
numbers are round, of this script's own making: they make a problem where the cheapest choice
per instruction does not fit in the memory limit, so the solver has to trade cost for memory.

Usage: gen_mlp_block.py [OUT]   (default: mlp_block.json beside this script)
"""
import json
import os
import sys

# (name, live interval, bytes when replicated, flops-ish cost when replicated)
LAYERS = 6
nodes = []
for i in range(LAYERS):  # forward: activations live until their backward step
    nodes.append((f"fwd{i}", [2 * i, 4 * LAYERS - 2 * i], 64 + 16 * (i % 3), 40 + 5 * i))
for i in reversed(range(LAYERS)):  # backward: short-lived gradients
    nodes.append((f"bwd{i}", [4 * LAYERS - 2 * i - 1, 4 * LAYERS - 2 * i + 2], 48, 60 + 5 * i))
for i in range(LAYERS):  # weights: live for the whole step
    nodes.append((f"w{i}", [0, 4 * LAYERS + 2], 96, 0))

intervals, costs, usages, labels = [], [], [], []
for name, interval, size, cost in nodes:
    intervals.append(interval)
    if name.startswith("w"):  # replicated or split by hidden (a batch split keeps weights whole)
        labels.append("RH")
        costs.append([0, 8])
        usages.append([size, size // 4])
    else:  # replicated, split by batch, split by hidden
        labels.append("RBH")
        costs.append([4 * cost, cost, cost + 12])
        usages.append([size, size // 4, size // 2])

index = {name: k for k, (name, _, _, _) in enumerate(nodes)}
edge_nodes, edge_costs = [], []


def reshard(a, b):
    """Resharding cost between two strategies: none when they agree, data parallelism
    (replicated weights, batch-split activations) pays a gradient all-reduce, anything else
    from or to replicated an all-gather or a slice, batch against hidden an all-to-all."""
    if a == b:
        return 0
    if {a, b} == {"R", "B"}:
        return 20
    if "R" in (a, b):
        return 30
    return 50


def connect(a, b):
    la, lb = labels[index[a]], labels[index[b]]
    edge_nodes.append([index[a], index[b]])
    edge_costs.append([reshard(x, y) for x in la for y in lb])


for i in range(LAYERS):
    if i + 1 < LAYERS:
        connect(f"fwd{i}", f"fwd{i + 1}")
        connect(f"bwd{i + 1}", f"bwd{i}")
    connect(f"fwd{i}", f"bwd{i}")
    connect(f"w{i}", f"fwd{i}")
    connect(f"w{i}", f"bwd{i}")

problem = {"problem": {
    "name": "mlp_block",
    "nodes": {"intervals": intervals, "costs": costs, "usages": usages},
    "edges": {"nodes": edge_nodes, "costs": edge_costs},
    "usage_limit": 350,
}}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_block.json")
with open(out, "w") as f:
    json.dump(problem, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {out}: {len(nodes)} nodes, {len(edge_nodes)} edges, usage limit 350")
