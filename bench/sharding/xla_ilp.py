#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""XLA's auto-sharding ILP on an IOPDDL instance, solved by OR-tools' CP-SAT as XLA solves it.

The formulation follows XLA's `FormulateAndSolveMIPFromProblem`
(xla/hlo/experimental/auto_sharding/auto_sharding_solver.cc, with the edge classification of
auto_sharding_iopddl.cc); the code is ours. What it reproduces:
- Edges are split as XLA does: a *follower* edge (|S_u| = |S_v|, 0 on the diagonal, exactly 10^18
  elsewhere) makes v share u's strategy variables; an *alias* edge (every entry 0 or exactly
  10^18, not a follower) becomes rows s[u][p] + s[v][q] <= 1 for its 10^18 entries (only the first
  alias edge per ordered pair counts, as in XLA); every other edge is merged with the others of the
  same ordered pair (costs summed) and gets one Boolean per matrix entry. Edges whose endpoints
  map to the same pair of shared variables share their edge variables.
- Variables: one Boolean per strategy of every node that follows no other (one-hot row each), one
  Boolean per entry of every edge, linked by e[p,q] >= s[u][p] + s[v][q] - 1 (coefficient 2 when
  both sides are the same variable). Costs of 10^18 or more are left out of the objective and
  their variables fixed to 0 by rows (XLA's "infinitycost" rows); a node or edge with nothing
  else left is an error, as in XLA.
- Memory: MemoryTermReducer over the node intervals [lo, hi - 1] (XLA's own call); here the
  reducer is xlamem's `xla_compatible_policy`, which reproduces XLA's reducer exactly, run as
  `xlamem reduce CSV --json` (see below). One continuous group variable per reduced group with
  row sum(m * s over its members) - g <= 0, one row per reduced time step over the primitives and
  groups live then, <= 10^6, with m = usage / (limit / 10^6) (XLA's kMemoryMultiplier).
  --overbudget-coeff C adds XLA's soft-budget variable (objective C * limit, -10^6 per time row);
  without it (the default, the contest's rule) the limit is hard.
- Solver: OR-tools' MP model solved by CP-SAT (XLA's MPSolver SAT_INTEGER_PROGRAMMING; here
  OR-tools' model_builder helper, which hands the same MPModelRequest to the same SatSolveProto),
  with XLA's parameter string "num_workers:32" (--workers) and the time limit as a solver time
  limit. Not reproduced: strategy shaving (off by default in XLA), hints and departures (none in
  an IOPDDL instance), deterministic mode (off by default).
Deviation: XLA copies a follower's variables one level (s[i] = s[followers[i]]), which leaves a
chain of followers without variables when the followed node comes later; here a follower takes
the variables of the end of its chain (the same constraint; reported as `follower_chains`).

Why `xlamem reduce`: it is the project's reducer behind the same CLI users have, exact to XLA
(the policy passes all of XLA's reducer test vectors), and it needs no extra build; the CSV of
node intervals is small next to the instance.

Time: --time-limit is the whole run's budget (the contest's rule): reading, reduction and model
building count, and CP-SAT gets what is left less 0.5 s for writing the answer. The time to the
first feasible answer is when CP-SAT logs its first solution (its log goes through a pipe read
here); the answer written is checked by iopddl_problem.evaluate, never taken from the solver.

Usage: xla_ilp.py FILE --time-limit S [--output SOL] [--json] [--xlamem PATH] [--workers N]
       [--overbudget-coeff C] [--log FILE]
Exit status: 0 an answer was written, 1 none (time-out, infeasible, model error), 2 usage, 3 bad input.
"""
import time

_T0 = time.monotonic()  # before the heavy imports: they count against the time limit

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse  # noqa: E402
from ortools import __version__ as ORTOOLS_VERSION  # noqa: E402
from ortools.linear_solver.python import model_builder_helper as mbh  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iopddl_problem as ip  # noqa: E402

INF_COST = 10**18  # XLA's kInfinityInt
MEMORY_MULTIPLIER = 1e6  # XLA's kMemoryMultiplier
XLA_NUM_WORKERS = 32  # XLA's num_workers for CP-SAT


def elapsed():
    return time.monotonic() - _T0


class ModelError(RuntimeError):
    pass


class Rows:
    """Constraint rows gathered as COO triplets (duplicates are summed, as XLA accumulates)."""

    def __init__(self):
        self.rows, self.cols, self.vals, self.lower, self.upper = [], [], [], [], []
        self.count = 0

    def add(self, row_of_term, cols, vals, lower, upper):
        """row_of_term: local row index per term (0..k-1); lower/upper: per local row."""
        lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
        self.rows.append(np.asarray(row_of_term, dtype=np.int64) + self.count)
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.vals.append(np.asarray(vals, dtype=np.float64))
        self.lower.append(lower)
        self.upper.append(upper)
        self.count += len(lower)

    def matrix(self, num_vars):
        cat = lambda xs, t: np.concatenate(xs).astype(t) if xs else np.zeros(0, dtype=t)  # noqa: E731
        a = scipy.sparse.coo_matrix((cat(self.vals, np.float64), (cat(self.rows, np.int64), cat(self.cols, np.int64))),
                                    shape=(self.count, num_vars)).tocsr()
        a.sum_duplicates()
        a.eliminate_zeros()  # MPSolver never stores a zero coefficient
        return a, cat(self.lower, np.float64), cat(self.upper, np.float64)


def entry_layout(sizes_u, sizes_v):
    """For matrices of sizes_u[k] x sizes_v[k] laid out one after the other: per entry its matrix
    k, its index inside the matrix, its row p and column q; and the matrices' offsets."""
    counts = sizes_u * sizes_v
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    local = np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][owner]
    b = sizes_v[owner]
    return owner, local, local // b, local % b, offsets


def classify_edges(p):
    """XLA's IsEdgeFollower / IsEdgeAlias per raw edge (exact comparisons with 10^18)."""
    sizes = p.num_strategies()
    su, sv = sizes[p.edge_u], sizes[p.edge_v]
    _, _, pp, qq, _ = entry_layout(su, sv)
    c = p.edge_costs
    m = p.num_edges
    starts = p.edge_offsets[:-1]
    nonempty = np.diff(p.edge_offsets) > 0

    def all_per_edge(flags):
        out = np.ones(m, dtype=bool)
        if m and len(flags):
            out[nonempty] = np.logical_and.reduceat(flags, starts[nonempty])
        return out

    diag = pp == qq
    follower_entry = (diag & (c == 0)) | (~diag & (c == INF_COST))
    follower = (su == sv) & all_per_edge(follower_entry)
    has_inf = ~all_per_edge(c != INF_COST)
    alias = ~follower & all_per_edge((c == INF_COST) | (c <= 0)) & has_inf
    return follower, alias


def follower_roots(p, follower):
    """XLA's GetFollowers (the last follower edge into v wins), resolved to the end of each chain."""
    n = p.num_nodes
    follows = np.full(n, -1, dtype=np.int64)
    idx = np.nonzero(follower)[0]
    follows[p.edge_v[idx]] = p.edge_u[idx]  # later edges overwrite earlier ones, as in XLA's loop
    root = np.arange(n, dtype=np.int64)
    chains = 0
    for i in np.nonzero(follows >= 0)[0]:
        seen, j = [int(i)], int(follows[i])
        while follows[j] >= 0 and j not in seen:
            seen.append(j)
            j = int(follows[j])
        if follows[j] >= 0:  # a cycle of followers: its smallest node keeps its own variables
            cycle = seen[seen.index(j):]
            j = min(cycle)
        if len(seen) > 1:
            chains += 1
        root[i] = j
    root[follows < 0] = np.nonzero(follows < 0)[0]
    return root, chains


def run_reducer(xlamem, p):
    """MemoryTermReducer over [lo, hi - 1] per node, through `xlamem reduce --json`."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("id,first,last\n")
        f.write("".join(f"{i},{a},{b - 1}\n" for i, (a, b) in enumerate(zip(p.lo.tolist(), p.hi.tolist()))))
        path = f.name
    try:
        out = subprocess.run([xlamem, "reduce", path, "--json"], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        raise ModelError(f"xlamem reduce failed ({out.returncode}): {out.stderr.strip()[:500]}")
    return json.loads(out.stdout)


def build_model(p, xlamem, overbudget_coeff):
    """Returns (ModelBuilderHelper, node variable base per node, stats)."""
    n = p.num_nodes
    sizes = p.num_strategies()
    follower, alias = classify_edges(p)
    root, chains = follower_roots(p, follower)
    if (sizes[root] != sizes).any():
        raise ModelError("a follower edge joins nodes with different strategy counts")

    # Node variables: one block per root.
    is_root = root == np.arange(n)
    node_base = np.full(n, -1, dtype=np.int64)
    root_ids = np.nonzero(is_root)[0]
    root_base = np.zeros(len(root_ids) + 1, dtype=np.int64)
    np.cumsum(sizes[root_ids], out=root_base[1:])
    node_base[root_ids] = root_base[:-1]
    node_base = node_base[root]
    num_vars = int(root_base[-1])

    # Regular edges merged per ordered pair, in the pair order of XLA's std::map.
    regular = np.nonzero(~follower & ~alias)[0]
    key = p.edge_u[regular] * n + p.edge_v[regular]
    order = np.argsort(key, kind="stable")
    regular, key = regular[order], key[order]
    uniq, dedup_of = np.unique(key, return_inverse=True)
    du, dv = uniq // n, uniq % n
    *_, d_off = entry_layout(sizes[du], sizes[dv])
    d_cost = np.zeros(int(d_off[-1]), dtype=np.int64)
    raw, local, _, _, _ = entry_layout(sizes[p.edge_u[regular]], sizes[p.edge_v[regular]])
    raw_pos = p.edge_offsets[:-1][regular][raw] + local
    # Saturate at 10^18 before summing (a merged entry >= 10^18 stays so; no int64 overflow).
    np.add.at(d_cost, d_off[:-1][dedup_of[raw]] + local, np.minimum(p.edge_costs[raw_pos], INF_COST))

    # Edge variables: shared among merged edges whose endpoints have the same root pair.
    rkey = root[du] * n + root[dv]
    _, first_idx, owner_of = np.unique(rkey, return_index=True, return_inverse=True)
    owners = first_idx  # the first merged edge (in pair order) with each root pair owns the variables
    own_sz = sizes[du[owners]] * sizes[dv[owners]]
    e_base = np.zeros(len(owners) + 1, dtype=np.int64)
    np.cumsum(own_sz, out=e_base[1:])
    e_base += num_vars
    num_vars = int(e_base[-1])

    obj = np.zeros(num_vars, dtype=np.float64)  # extended below for the group and overbudget variables
    infinite = np.zeros(num_vars, dtype=bool)
    # Node costs.
    node_of_entry = np.repeat(np.arange(n, dtype=np.int64), sizes)
    var = node_base[node_of_entry] + (np.arange(len(p.costs), dtype=np.int64) - p.node_offsets[:-1][node_of_entry])
    inf = p.costs >= INF_COST
    infinite[var[inf]] = True
    np.add.at(obj, var[~inf], p.costs[~inf].astype(np.float64))
    # Edge costs.
    d_entry, d_local, _, _, _ = entry_layout(sizes[du], sizes[dv])
    evar = e_base[:-1][owner_of[d_entry]] + d_local
    inf = d_cost >= INF_COST
    infinite[evar[inf]] = True
    np.add.at(obj, evar[~inf], d_cost[~inf].astype(np.float64))

    rows = Rows()
    # 0. infinity rows (var == 0), and the all-infinite check of XLA.
    fixed = np.nonzero(infinite)[0]
    rows.add(np.arange(len(fixed)), fixed, np.ones(len(fixed)), np.zeros(len(fixed)), np.zeros(len(fixed)))
    blocks = np.concatenate((root_base[:-1], e_base[:-1]))
    free = np.add.reduceat((~infinite).astype(np.int64), blocks) if len(blocks) else np.zeros(0)
    if (free[: len(root_ids)] == 0).any():
        raise ModelError(f"all strategies of node {root_ids[np.argmax(free[:len(root_ids)] == 0)]} have infinite cost")
    if (free[len(root_ids):] == 0).any():
        k = np.argmax(free[len(root_ids):] == 0)
        raise ModelError(f"all entries of edge ({du[owners[k]]}, {dv[owners[k]]}) have infinite cost")
    # b. one strategy per root node.
    row = np.repeat(np.arange(len(root_ids), dtype=np.int64), sizes[root_ids])
    rows.add(row, np.arange(root_base[-1], dtype=np.int64), np.ones(int(root_base[-1])),
             np.ones(len(root_ids)), np.ones(len(root_ids)))
    # e. linking rows of the owning edges: e - c*s_u[p] - c*s_v[q] >= -1.
    ou, ov = du[owners], dv[owners]
    own_entry, own_local, pp, qq, _ = entry_layout(sizes[ou], sizes[ov])
    su_var = node_base[ou][own_entry] + pp
    sv_var = node_base[ov][own_entry] + qq
    ev = e_base[:-1][own_entry] + own_local
    k = len(own_entry)
    r = np.arange(k, dtype=np.int64)
    # When s_u[p] and s_v[q] are one variable XLA sets -2 on it; the summed duplicates give -2 too.
    rows.add(np.concatenate((r, r, r)), np.concatenate((ev, su_var, sv_var)),
             np.concatenate((np.ones(k), -np.ones(k), -np.ones(k))), np.full(k, -1.0), np.full(k, np.inf))
    # f. alias rows: s_u[p] + s_v[q] <= 1 for each forbidden entry of the first alias edge per pair.
    alias_idx = np.nonzero(alias)[0]
    if len(alias_idx):
        akey = p.edge_u[alias_idx] * n + p.edge_v[alias_idx]
        _, first = np.unique(akey, return_index=True)
        alias_idx = alias_idx[np.sort(first)]
        a_entry, a_local, ap, aq, _ = entry_layout(sizes[p.edge_u[alias_idx]], sizes[p.edge_v[alias_idx]])
        cost = p.edge_costs[p.edge_offsets[:-1][alias_idx][a_entry] + a_local]
        pick = cost > 0.5
        x = node_base[p.edge_u[alias_idx]][a_entry][pick] + ap[pick]
        y = node_base[p.edge_v[alias_idx]][a_entry][pick] + aq[pick]
        same = x == y  # XLA sets 1 twice on one variable: a single coefficient 1
        k = len(x)
        r = np.arange(k, dtype=np.int64)
        rows.add(np.concatenate((r, r[~same])), np.concatenate((x, y[~same])), np.ones(k + int((~same).sum())),
                 np.full(k, -np.inf), np.ones(k))

    # c. memory rows from the reduced terms.
    t_red = time.monotonic()
    red = run_reducer(xlamem, p)
    reduce_seconds = time.monotonic() - t_red
    if p.usage_limit <= 0:
        raise ModelError("usage_limit must be positive for XLA's memory scaling")
    scale = p.usage_limit / MEMORY_MULTIPLIER
    m_coef = p.usages.astype(np.float64) / scale
    groups = red["groups"]
    ng = len(groups)
    g_base = num_vars
    num_vars += ng
    ob_var = num_vars if overbudget_coeff is not None else None
    if ob_var is not None:
        num_vars += 1

    def strategy_terms(prims):
        prims = np.asarray(prims, dtype=np.int64)
        cnt = sizes[prims]
        which = np.repeat(np.arange(len(prims), dtype=np.int64), cnt)
        j = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        node = prims[which]
        return which, node_base[node] + j, m_coef[p.node_offsets[:-1][node] + j]

    if ng:
        members = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
        gid = np.repeat(np.arange(ng, dtype=np.int64), [len(g) for g in groups])
        which, cols, vals = strategy_terms(members)
        rows.add(np.concatenate((gid[which], np.arange(ng))), np.concatenate((cols, g_base + np.arange(ng))),
                 np.concatenate((vals, -np.ones(ng))), np.full(ng, -np.inf), np.zeros(ng))
    times = np.array(sorted(set(red["reduced_times"])), dtype=np.int64)
    ivs = np.array(red["intervals"], dtype=np.int64).reshape(-1, 2)
    first = np.searchsorted(times, ivs[:, 0], side="left")
    last = np.searchsorted(times, ivs[:, 1], side="right")
    cover = np.maximum(last - first, 0)
    obj_idx = np.repeat(np.arange(len(ivs), dtype=np.int64), cover)
    t_idx = np.arange(int(cover.sum()), dtype=np.int64) - np.repeat(np.cumsum(cover) - cover - first, cover)
    used_times, t_row = np.unique(t_idx, return_inverse=True)  # rows only for times something covers
    is_prim = obj_idx < n
    which, cols, vals = strategy_terms(obj_idx[is_prim])
    prim_rows = t_row[is_prim][which]
    grp = obj_idx[~is_prim] - n
    nt = len(used_times)
    r_all = [prim_rows, t_row[~is_prim]]
    c_all = [cols, g_base + grp]
    v_all = [vals, np.ones(len(grp))]
    if ob_var is not None:
        r_all.append(np.arange(nt, dtype=np.int64))
        c_all.append(np.full(nt, ob_var, dtype=np.int64))
        v_all.append(np.full(nt, -MEMORY_MULTIPLIER))
    rows.add(np.concatenate(r_all), np.concatenate(c_all), np.concatenate(v_all), np.full(nt, -np.inf),
             np.full(nt, MEMORY_MULTIPLIER))

    a, lower, upper = rows.matrix(num_vars)
    obj = np.pad(obj, (0, num_vars - len(obj)))
    if ob_var is not None:
        obj[ob_var] = overbudget_coeff * p.usage_limit
    lb = np.zeros(num_vars)
    ub = np.ones(num_vars)
    ub[g_base:] = np.inf
    model = mbh.ModelBuilderHelper()
    model.fill_model_from_sparse_data(lb, ub, obj, lower, upper, a)
    for v in range(g_base):
        model.set_var_integrality(v, True)
    model.set_maximize(False)
    stats = {
        "num_variables": num_vars,
        "num_constraints": int(a.shape[0]),
        "num_nonzeros": int(a.nnz),
        "followers": int((root != np.arange(n)).sum()),
        "follower_chains": chains,
        "alias_edges": int(alias.sum()),
        "merged_edges": len(uniq),
        "edge_variable_blocks": len(owners),
        "infinite_variables": int(infinite.sum()),
        "terms_before": red["terms_before"],
        "terms_after": red["terms_after"],
        "reduced_groups": ng,
        "memory_rows": nt,
        "reduce_seconds": round(reduce_seconds, 3),
    }
    return model, node_base, stats


class SolutionLog:
    """Reads CP-SAT's log (written to file descriptor 1) through a pipe; timestamps solutions."""

    SOLUTION = re.compile(rb"^#(\d+)\s+[0-9.]+s\s+best:")

    def __init__(self, copy_to):
        self.first = self.last = None
        self.count = 0
        self.copy_to = copy_to
        self.read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        self.saved = os.dup(1)
        os.dup2(write_fd, 1)
        os.close(write_fd)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with os.fdopen(self.read_fd, "rb") as f:
            for line in f:
                if self.SOLUTION.match(line):
                    now = elapsed()
                    self.first = self.first if self.first is not None else now
                    self.last = now
                    self.count += 1
                if self.copy_to:
                    self.copy_to.write(line)
                    self.copy_to.flush()

    def close(self):
        sys.stdout.flush()
        os.dup2(self.saved, 1)  # closes the pipe's last write end: the reader sees the end
        os.close(self.saved)
        self.thread.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--time-limit", type=float, required=True, help="seconds for the whole run")
    ap.add_argument("--output", help="write the strategy vector [s0, s1, ...] here")
    ap.add_argument("--json", action="store_true", help="print one JSON object with the figures")
    ap.add_argument("--xlamem", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "build", "tools", "xlamem", "xlamem"))
    ap.add_argument("--workers", type=int, default=XLA_NUM_WORKERS, help="CP-SAT num_workers (XLA: 32)")
    ap.add_argument("--overbudget-coeff", type=float, default=None,
                    help="XLA's soft memory budget (XLA's option default is 1e6); default: hard limit")
    ap.add_argument("--log", help="copy CP-SAT's log to this file")
    args = ap.parse_args()
    if args.time_limit <= 0 or args.workers < 1:
        ap.error("--time-limit must be positive and --workers at least 1")

    result = {"command": "xla_ilp", "file": args.file, "ortools": ORTOOLS_VERSION, "workers": args.workers,
              "overbudget_coeff": args.overbudget_coeff, "cost": None, "feasible": False}
    try:
        p = ip.load(args.file)
    except ip.ProblemError as e:
        print(f"xla_ilp: error: {e}", file=sys.stderr)
        return 3
    result["load_seconds"] = round(elapsed(), 3)
    try:
        model, node_base, stats = build_model(p, args.xlamem, args.overbudget_coeff)
    except ModelError as e:
        print(f"xla_ilp: error: {e}", file=sys.stderr)
        result.update(status="MODEL_ERROR", error=str(e), seconds=round(elapsed(), 3))
        if args.json:
            print(json.dumps(result))
        return 1
    result.update(stats)
    result["build_seconds"] = round(elapsed(), 3)
    remaining = args.time_limit - elapsed() - 0.5
    if remaining <= 0.05:
        result.update(status="TIME_LIMIT_BEFORE_SOLVE", seconds=round(elapsed(), 3))
        if args.json:
            print(json.dumps(result))
        return 1
    solver = mbh.ModelSolverHelper("sat")
    solver.set_solver_specific_parameters(f"num_workers:{args.workers}")
    solver.set_time_limit_in_seconds(remaining)
    solver.enable_output(True)
    log_file = open(args.log, "wb") if args.log else None
    log = SolutionLog(log_file)
    try:
        solver.solve(model)
    finally:
        log.close()
        if log_file:
            log_file.close()
    status = solver.status()
    result["status"] = status.name
    result["solver_time_limit"] = round(remaining, 3)
    result["solutions_logged"] = log.count
    if status not in (mbh.SolveStatus.OPTIMAL, mbh.SolveStatus.FEASIBLE) or not solver.has_solution():
        result["seconds"] = round(elapsed(), 3)
        if args.json:
            print(json.dumps(result))
        return 1
    values = solver.variable_values()
    sizes = p.num_strategies()
    # XLA's GetChosenNodeStrategy: the first strategy whose variable is > 0.5, else 0.
    node_of_entry = np.repeat(np.arange(p.num_nodes, dtype=np.int64), sizes)
    local = np.arange(len(node_of_entry), dtype=np.int64) - p.node_offsets[:-1][node_of_entry]
    on = np.nonzero(values[node_base[node_of_entry] + local] > 0.5)[0]
    none = np.iinfo(np.int64).max
    chosen = np.full(p.num_nodes, none, dtype=np.int64)
    np.minimum.at(chosen, node_of_entry[on], local[on])
    result["nodes_without_strategy"] = int((chosen == none).sum())
    chosen[chosen == none] = 0
    ev = ip.evaluate(p, chosen)
    if args.output:
        with open(args.output, "w") as f:
            f.write(ip.format_solution(chosen) + "\n")
    objective = solver.objective_value()
    bound = solver.best_objective_bound()
    result.update(
        cost=str(ev["cost"]), feasible=ev["feasible"] and not ev["forbidden"], forbidden=ev["forbidden"],
        peak=ev["peak"], limit=ev["limit"], objective=objective, lower_bound=bound,
        gap=(objective - bound) / objective if objective > 0 else 0.0,
        seconds_to_first_feasible=round(log.first, 3) if log.first is not None else None,
        seconds_to_best=round(log.last, 3) if log.last is not None else None,
        seconds=round(elapsed(), 3))
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.file}: cost {ev['cost']} peak {ev['peak']} / {ev['limit']} status {status.name} "
              f"first solution {result['seconds_to_first_feasible']} s, total {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
