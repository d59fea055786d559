# SPDX-License-Identifier: Apache-2.0
"""The IOPDDL problem in flat numpy arrays, and an evaluator of solutions that trusts no solver.

Shared by `xla_ilp.py` (XLA's formulation) and `side_by_side.py` (the runner); Python with
numpy only. The format is google/iopddl's (../shared/data/iopddl/README.md): per node a
half-open live interval [lo, hi), per strategy a cost and a usage; per edge a node pair and a
row-major |S_u| x |S_v| cost matrix; one usage limit. Costs of 10^18 or more mark forbidden
choices. Totals are summed as Python integers (exact; they can pass 64 bits).

Bad input raises ProblemError naming the file, the field and the index.
"""
import gzip
import itertools
import json

import numpy as np

FORBIDDEN = 10**18
# Values at or above 2^62 (far above FORBIDDEN) are clamped to it so they fit int64; they
# are forbidden either way and a total that includes one is reported as forbidden.
_CLAMP = 2**62


class ProblemError(ValueError):
    pass


class Problem:
    """Flat arrays: strategy j of node i is at node_offsets[i] + j; entry k of edge e's matrix is
    at edge_offsets[e] + k."""

    def __init__(self, name, lo, hi, node_offsets, costs, usages, edge_u, edge_v, edge_offsets,
                 edge_costs, usage_limit, clamped):
        self.name = name
        self.lo, self.hi = lo, hi
        self.node_offsets, self.costs, self.usages = node_offsets, costs, usages
        self.edge_u, self.edge_v = edge_u, edge_v
        self.edge_offsets, self.edge_costs = edge_offsets, edge_costs
        self.usage_limit = usage_limit
        self.clamped = clamped  # some cost was >= 2^62 and was clamped (forbidden anyway)

    @property
    def num_nodes(self):
        return len(self.lo)

    @property
    def num_edges(self):
        return len(self.edge_u)

    def num_strategies(self):
        return np.diff(self.node_offsets)

    def num_times(self):
        live = self.lo < self.hi
        return int(self.hi[live].max()) if live.any() else 0


def _open_text(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rt") if magic == b"\x1f\x8b" else open(path, "rt")


def _no_float(text):
    raise ProblemError(f"a non-integer number {text!r}")


def _flatten(lists, what, path):
    """Concatenates a list of integer lists into int64, clamping huge values; checks types."""
    total = 0
    for i, row in enumerate(lists):
        if not isinstance(row, list):
            raise ProblemError(f"{path}: {what}[{i}] is not a list")
        total += len(row)
    flat = itertools.chain.from_iterable(lists)
    try:
        return np.fromiter(flat, dtype=np.int64, count=total), False
    except (OverflowError, TypeError, ValueError):
        pass
    values = []
    for i, row in enumerate(lists):
        for j, x in enumerate(row):
            if type(x) is not int:  # noqa: E721 (bool is not a cost)
                raise ProblemError(f"{path}: {what}[{i}][{j}] is not an integer")
            if x < -_CLAMP:
                raise ProblemError(f"{path}: {what}[{i}][{j}] = {x} is out of range")
            values.append(min(x, _CLAMP))
    return np.array(values, dtype=np.int64), True


def _check_pairs(rows, what, path):
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 2:
            raise ProblemError(f"{path}: {what}[{i}] is not a pair [a, b]")


def _field(obj, key, where, path):
    if not isinstance(obj, dict) or key not in obj:
        raise ProblemError(f"{path}: missing field {where}{key}")
    return obj[key]


def load(path):
    """Reads a plain or gzipped IOPDDL JSON file into a Problem (raises ProblemError)."""
    try:
        with _open_text(path) as f:
            doc = json.load(f, parse_float=_no_float, parse_constant=_no_float)
    except ProblemError as e:
        raise ProblemError(f"{path}: {e}") from None
    except json.JSONDecodeError as e:
        raise ProblemError(f"{path}:{e.lineno}:{e.colno}: {e.msg}") from None
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ProblemError(f"{path}: {e}") from None
    prob = _field(doc, "problem", "", path)
    nodes = _field(prob, "nodes", "problem.", path)
    edges = _field(prob, "edges", "problem.", path)
    intervals = _field(nodes, "intervals", "problem.nodes.", path)
    node_costs = _field(nodes, "costs", "problem.nodes.", path)
    node_usages = _field(nodes, "usages", "problem.nodes.", path)
    pairs = _field(edges, "nodes", "problem.edges.", path)
    edge_cost_lists = _field(edges, "costs", "problem.edges.", path)
    limit = _field(prob, "usage_limit", "problem.", path)
    if type(limit) is not int or limit < 0:  # noqa: E721
        raise ProblemError(f"{path}: problem.usage_limit is not a non-negative integer")
    n = len(node_costs)
    if len(intervals) != n or len(node_usages) != n:
        raise ProblemError(f"{path}: {len(intervals)} intervals, {n} cost lists and {len(node_usages)} "
                           "usage lists (problem.nodes): they must be equal")
    if len(pairs) != len(edge_cost_lists):
        raise ProblemError(f"{path}: {len(pairs)} edges but {len(edge_cost_lists)} cost matrices (problem.edges)")

    _check_pairs(intervals, "problem.nodes.intervals", path)
    iv, _ = _flatten(intervals, "problem.nodes.intervals", path)
    lo, hi = iv[0::2].copy(), iv[1::2].copy()
    bad = np.nonzero((lo < 0) | (lo > hi))[0]
    if len(bad):
        raise ProblemError(f"{path}: problem.nodes.intervals[{bad[0]}] = [{lo[bad[0]]}, {hi[bad[0]]}]: "
                           "need 0 <= lo <= hi")
    sizes = np.fromiter((len(c) for c in node_costs), dtype=np.int64, count=n)
    usizes = np.fromiter((len(u) for u in node_usages), dtype=np.int64, count=n)
    bad = np.nonzero((sizes != usizes) | (sizes == 0))[0]
    if len(bad):
        i = bad[0]
        raise ProblemError(f"{path}: node {i} has {sizes[i]} costs and {usizes[i]} usages "
                           "(problem.nodes.costs/usages; need the same number, at least one)")
    costs, clamped_n = _flatten(node_costs, "problem.nodes.costs", path)
    usages, clamped_u = _flatten(node_usages, "problem.nodes.usages", path)
    if clamped_u:
        raise ProblemError(f"{path}: problem.nodes.usages holds a value of 2^62 or more")
    bad = np.nonzero(usages < 0)[0]
    if len(bad):
        raise ProblemError(f"{path}: problem.nodes.usages: a negative usage (strategy entry {bad[0]})")
    if (costs < 0).any():
        raise ProblemError(f"{path}: problem.nodes.costs: a negative cost")
    node_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_offsets[1:])

    m = len(pairs)
    _check_pairs(pairs, "problem.edges.nodes", path)
    uv, _ = _flatten(pairs, "problem.edges.nodes", path)
    eu, ev = uv[0::2].copy(), uv[1::2].copy()
    bad = np.nonzero((eu < 0) | (eu >= n) | (ev < 0) | (ev >= n))[0]
    if len(bad):
        e = bad[0]
        raise ProblemError(f"{path}: problem.edges.nodes[{e}] = [{eu[e]}, {ev[e]}]: node index out of range (0..{n - 1})")
    esizes = np.fromiter((len(c) for c in edge_cost_lists), dtype=np.int64, count=m)
    want = sizes[eu] * sizes[ev] if m else esizes
    bad = np.nonzero(esizes != want)[0]
    if len(bad):
        e = bad[0]
        raise ProblemError(f"{path}: problem.edges.costs[{e}] has {esizes[e]} entries, expected "
                           f"{sizes[eu[e]]} x {sizes[ev[e]]} = {want[e]}")
    edge_costs, clamped_e = _flatten(edge_cost_lists, "problem.edges.costs", path)
    if (edge_costs < 0).any():
        raise ProblemError(f"{path}: problem.edges.costs: a negative cost")
    edge_offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(esizes, out=edge_offsets[1:])
    name = prob.get("name", "") if isinstance(prob.get("name", ""), str) else ""
    del doc, prob, nodes, edges  # the JSON tree is the bulk of the memory; drop it now
    return Problem(name, lo, hi, node_offsets, costs, usages, eu, ev, edge_offsets, edge_costs, limit,
                   clamped_n or clamped_e)


def parse_solution(text, problem, where="solution"):
    """Parses '[s0, s1, ...]' into an int64 array; raises ProblemError on a bad vector."""
    try:
        vec = json.loads(text, parse_float=_no_float, parse_constant=_no_float)
    except (json.JSONDecodeError, ProblemError) as e:
        raise ProblemError(f"{where}: not a JSON list of integers ({e})") from None
    if not isinstance(vec, list) or any(type(x) is not int for x in vec):  # noqa: E721
        raise ProblemError(f"{where}: not a list of integers")
    if len(vec) != problem.num_nodes:
        raise ProblemError(f"{where}: {len(vec)} strategies for {problem.num_nodes} nodes")
    s = np.array(vec, dtype=np.int64)
    bad = np.nonzero((s < 0) | (s >= problem.num_strategies()))[0]
    if len(bad):
        i = bad[0]
        raise ProblemError(f"{where}: node {i} gets strategy {s[i]} of {problem.num_strategies()[i]}")
    return s


def evaluate(problem, s):
    """Exact cost, forbidden choices and the usage peak of a strategy vector (from parse_solution).

    Returns a dict: cost (Python int), forbidden (some chosen cost >= 10^18), peak (largest usage
    over all time steps), limit, feasible (peak <= limit), over_steps (time steps over the limit).
    """
    p = problem
    node_pick = p.costs[p.node_offsets[:-1] + s]
    if p.num_edges:
        nv = p.num_strategies()[p.edge_v]
        edge_pick = p.edge_costs[p.edge_offsets[:-1] + s[p.edge_u] * nv + s[p.edge_v]]
    else:
        edge_pick = np.zeros(0, dtype=np.int64)
    forbidden = bool((node_pick >= FORBIDDEN).any() or (edge_pick >= FORBIDDEN).any())
    cost = sum(node_pick.tolist()) + sum(edge_pick.tolist())
    use = p.usages[p.node_offsets[:-1] + s]
    live = p.lo < p.hi
    steps = p.num_times()
    if sum(use[live].tolist()) >= 2**62:
        raise ProblemError("usages too large to sum in 64 bits")
    delta = np.zeros(steps + 1, dtype=np.int64)
    np.add.at(delta, p.lo[live], use[live])
    np.subtract.at(delta, p.hi[live], use[live])
    usage = np.cumsum(delta[:-1]) if steps else np.zeros(0, dtype=np.int64)
    peak = int(usage.max()) if steps else 0
    return {
        "cost": cost,
        "forbidden": forbidden or bool(p.clamped and cost >= FORBIDDEN),
        "peak": peak,
        "limit": int(p.usage_limit),
        "feasible": peak <= p.usage_limit,
        "over_steps": int((usage > p.usage_limit).sum()),
    }


def format_solution(s):
    return "[" + ", ".join(str(int(x)) for x in s) + "]"
