#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""IOPDDL side by side: XLA's ILP, the contest winner's solver and `xlamem shard`, in one run.

On every chosen instance of ../shared/data/iopddl, at the contest's time limit for its letter
(times --scale), one solver after the other (never two at once):
  xla     bench/sharding/xla_ilp.py: XLA's auto-sharding ILP, memory rows from xlamem's
          MemoryTermReducer, solved by OR-tools' CP-SAT with XLA's settings (32 workers);
  winner  the contest winner's solver (ti2-group/iopddl_experiments, built by build_winner.sh) at
          its defaults: `iopddl FILE LIMIT` (8 forks, WCSP time-out 12 s), on the decompressed JSON;
  xlamem  `xlamem shard FILE --time-limit S --output SOL --json`.
Every answer is checked here by iopddl_problem.evaluate (exact cost, every time step against the
limit, forbidden choices), never taken from the solver. Per instance and solver: cost, points
(best known / cost; 0 when infeasible, with a forbidden choice or without an answer), time to
the first feasible answer, time to the best, wall time, peak memory of the process tree.

Times: wall is from the start of the process to its exit. The winner's first feasible answer is
the first strategy vector it prints that our evaluator accepts, timed when the line arrives here;
for xla and xlamem it is the time they report (CP-SAT's first logged solution; xlamem's own
clock), counted only when their final answer passes our check. Memory: the process tree is
sampled every 0.5 s (the sum of RSS, and the sum of PSS, which counts the pages the winner's
forks share once); peak RSS is the larger of that sum and the sum of each process's VmHWM (its
peak RSS since exec, /proc/PID/status). Not wait4's ru_maxrss: Linux carries the parent's peak
RSS through fork and exec into the child's, so every run would show at least this script's
size. A run gets the limit plus a grace (max(5 s, 10 %)); then its
process group is terminated and the run counts as over time (its last answer, if any, still
counts: the table says so).

Usage:
  bench/sharding/side_by_side.py [--instances B,G|all] [--solvers xla,winner,xlamem] [--scale 1]
      [--xlamem build/tools/xlamem/xlamem] [--winner /tmp/iopddl-winner/build/iopddl]
      [--python /tmp/shard-bench-venv/bin/python] [--out DIR] [--data ../shared/data/iopddl]
Writes DIR/results.json and DIR/results.md (the table for docs/benchmarks.md), solutions and
logs under DIR/<instance>/. Exit status 1 when a run failed to give a checked answer, 2 on usage.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iopddl_problem as ip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SOLVERS = ("xla", "winner", "xlamem")
PAGE = os.sysconf("SC_PAGE_SIZE")


def read_readme(data):
    """Contest limit and best known cost per letter, from the data folder's README table."""
    table = {}
    with open(os.path.join(data, "README.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 6 and re.fullmatch(r"[A-Z]", cells[0]) and cells[1].isdigit():
                best = cells[-1].replace(",", "")
                table[cells[0]] = {"limit": int(cells[1]), "best_known": int(best)}
    if not table:
        raise SystemExit(f"side_by_side: no instance table in {data}/README.md")
    return table


class TreeMonitor(threading.Thread):
    """Samples the memory of a process group every 0.5 s; kills it above a memory cap."""

    def __init__(self, pgid, cap_bytes):
        super().__init__(daemon=True)
        self.pgid, self.cap = pgid, cap_bytes
        self.peak_rss = self.peak_pss = 0
        self.peak_procs = 0
        self.hwm = {}  # pid -> the largest VmHWM seen (peak RSS of its address space since exec)
        self.killed_for_memory = False
        self.stop = threading.Event()

    def members(self):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                # Fields after the command name (which may hold spaces) start after the last ')'.
                fields = stat[stat.rindex(")") + 2:].split()
                if int(fields[2]) == self.pgid:
                    pids.append(entry)
            except (OSError, ValueError, IndexError):
                continue
        return pids

    def sample(self):
        rss = pss = 0
        pids = self.members()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/statm") as f:
                    rss += int(f.read().split()[1]) * PAGE
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.hwm[pid] = max(self.hwm.get(pid, 0), int(line.split()[1]) * 1024)
                            break
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            pss += int(line.split()[1]) * 1024
                            break
            except (OSError, ValueError, IndexError):
                continue
        self.peak_rss = max(self.peak_rss, rss, sum(self.hwm.values()))
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_procs = max(self.peak_procs, len(pids))
        if self.cap and rss > self.cap and not self.killed_for_memory:
            self.killed_for_memory = True
            kill_group(self.pgid, signal.SIGKILL)

    def run(self):
        while not self.stop.wait(0.5):
            self.sample()
        self.sample()  # once more at the end: VmHWM catches a peak between samples


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class LineRecorder(threading.Thread):
    """Copies a child's stdout to a file; notes when each line of interest arrived."""

    def __init__(self, stream, path, t0, interesting):
        super().__init__(daemon=True)
        self.stream, self.path, self.t0, self.interesting = stream, path, t0, interesting
        self.marks = []  # (seconds since start, offset, length) of interesting lines

    def run(self):
        offset = 0
        with open(self.path, "wb") as out:
            for line in self.stream:
                if self.interesting(line):
                    self.marks.append((time.monotonic() - self.t0, offset, len(line)))
                out.write(line)
                offset += len(line)


def run_child(cmd, cwd, limit, grace, log_dir, name, cap_bytes, interesting=lambda line: False):
    """Runs cmd in its own process group under a deadline; returns the run's record."""
    out_path = os.path.join(log_dir, f"{name}.stdout")
    err_path = os.path.join(log_dir, f"{name}.stderr")
    t0 = time.monotonic()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
    recorder = LineRecorder(proc.stdout, out_path, t0, interesting)
    recorder.start()
    monitor = TreeMonitor(proc.pid, cap_bytes)
    monitor.start()
    deadline = t0 + limit + grace
    over_time = False
    usage = None
    status = None
    while status is None:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status, usage = st, ru
            break
        if time.monotonic() > deadline and not over_time:
            over_time = True
            kill_group(proc.pid, signal.SIGTERM)
            deadline = time.monotonic() + 2  # then SIGKILL below
        elif over_time and time.monotonic() > deadline:
            kill_group(proc.pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.05)
    wall = time.monotonic() - t0
    kill_group(proc.pid, signal.SIGKILL)  # forks left behind by the solver
    monitor.stop.set()
    monitor.join()
    recorder.join(timeout=10)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": proc.returncode,
        "wall_s": round(wall, 3),
        "over_time": over_time,
        "killed_for_memory": monitor.killed_for_memory,
        # Not wait4's ru_maxrss: Linux carries the parent's peak RSS through fork and exec into it,
        # so every child would show at least this script's own size.
        "peak_rss_mib": round(monitor.peak_rss / 2**20, 1),
        "peak_pss_mib": round(monitor.peak_pss / 2**20, 1) if monitor.peak_procs else None,  # None: never sampled
        "max_processes": monitor.peak_procs,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "stdout": out_path,
        "stderr": err_path,
        "marks": recorder.marks,
    }


def last_json(path):
    """The whole file as one JSON object (xlamem's indented --json), else the last line that
    parses as one, or None."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    try:
        whole = json.loads(text)
        if isinstance(whole, dict):
            return whole
    except json.JSONDecodeError:
        pass
    lines = text.splitlines()
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def check(problem, text, where):
    """Our verdict on a solution text: (evaluation dict or None, error message or None)."""
    try:
        s = ip.parse_solution(text, problem, where)
    except ip.ProblemError as e:
        return None, str(e)
    return ip.evaluate(problem, s), None


def run_winner(args, problem, inst, limit, grace, work, log_dir):
    plain = os.path.join(work, f"{inst['name']}.json")
    if not os.path.exists(plain):
        with gzip.open(inst["path"], "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    cmd = [args.winner, plain, f"{limit:g}"]
    rec = run_child(cmd, work, limit, grace, log_dir, "winner", args.max_rss_bytes,
                    interesting=lambda line: line.startswith(b"[") or line.startswith(b"# Cost"))
    # The winner prints "# Cost: C (pid: P) T s (iteration: I)" and then the vector on its own line
    # every time its best improves; the final answer is the last vector.
    vectors, reported = [], []
    with open(rec["stdout"], "rb") as f:
        for t, off, length in rec["marks"]:
            f.seek(off)
            line = f.read(length).decode(errors="replace").strip()
            if line.startswith("["):
                vectors.append((t, off, length))
            else:
                m = re.search(r"([0-9.]+) s \(iteration", line)
                reported.append(float(m.group(1)) if m else None)
        rec["answers"] = len(vectors)
        first = None
        for i, (t, off, length) in enumerate(vectors):
            f.seek(off)
            ev, err = check(problem, f.read(length).decode(errors="replace"), "winner")
            if ev and ev["feasible"] and not ev["forbidden"]:
                first = (t, reported[i] if i < len(reported) else None)
                break
        final_text = None
        if vectors:
            t, off, length = vectors[-1]
            f.seek(off)
            final_text = f.read(length).decode(errors="replace")
            rec["seconds_to_best"] = round(t, 3)
    rec["seconds_to_first_feasible"] = round(first[0], 3) if first else None
    rec["solver_reported_first_s"] = first[1] if first else None
    sol = os.path.join(log_dir, "winner.sol")
    if final_text is not None:
        with open(sol, "w") as f:
            f.write(final_text.strip() + "\n")
    return rec, final_text


def run_flagged(args, which, problem, inst, limit, grace, work, log_dir):
    """xla_ilp.py or xlamem shard: both take --time-limit, --output and --json."""
    sol = os.path.join(log_dir, f"{which}.sol")
    if which == "xla":
        cmd = [args.python, os.path.join(HERE, "xla_ilp.py"), inst["path"], "--time-limit", f"{limit:g}",
               "--output", sol, "--json", "--xlamem", args.xlamem, "--workers", str(args.xla_workers),
               "--log", os.path.join(log_dir, "xla.cpsat.log")]
    else:
        cmd = [args.xlamem, "shard", inst["path"], "--time-limit", f"{limit:g}", "--output", sol, "--json"]
        if args.xlamem_threads:
            cmd += ["--threads", str(args.xlamem_threads)]
    if os.path.exists(sol):
        os.unlink(sol)
    rec = run_child(cmd, work, limit, grace, log_dir, which, args.max_rss_bytes)
    claim = last_json(rec["stdout"]) or {}
    rec["claim"] = {k: claim.get(k) for k in ("cost", "feasible", "peak", "limit", "lower_bound", "gap", "status",
                                              "seconds_to_first_feasible", "seconds_to_best", "seconds")
                    if k in claim}
    rec["seconds_to_first_feasible"] = claim.get("seconds_to_first_feasible")
    rec["seconds_to_best"] = claim.get("seconds_to_best")
    if which == "xla":
        for k in ("num_variables", "num_constraints", "terms_before", "terms_after", "build_seconds",
                  "follower_chains", "solver_time_limit", "workers"):
            if k in claim:
                rec.setdefault("model", {})[k] = claim[k]
    text = None
    if os.path.exists(sol):
        with open(sol) as f:
            text = f.read()
    return rec, text


def tool_versions(args):
    v = {"python": platform.python_version()}
    try:
        v["ortools"] = subprocess.run([args.python, "-c", "import ortools; print(ortools.__version__)"],
                                      capture_output=True, text=True, timeout=60).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        v["ortools"] = None
    commit_file = os.path.join(os.path.dirname(os.path.abspath(args.winner)), "COMMIT")
    v["winner_commit"] = open(commit_file).read().strip() if os.path.exists(commit_file) else None
    try:
        v["xlamem"] = subprocess.run([args.xlamem, "--version"], capture_output=True, text=True,
                                     timeout=60).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        v["xlamem"] = None
    try:
        v["xlamem_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                            text=True, timeout=60).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        v["xlamem_commit"] = None
    return v


def machine():
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "memory_gib": mem, "kernel": platform.release()}


def fmt_int(x):
    return f"{int(x):,}" if x is not None else "-"


def fmt_s(x):
    return f"{x:.1f}" if isinstance(x, (int, float)) else "-"


def totals_of(results, solvers):
    """Points, feasible answers, first answers within 10 % of the limit and peak memory per solver."""
    totals = {}
    for s in solvers:
        rows = [r for r in results if r["solver"] == s]
        totals[s] = {
            "points": round(sum(r["points"] for r in rows), 4),
            "instances": len(rows),
            "feasible": sum(r["feasible"] for r in rows),
            "first_within_10pct": sum(1 for r in rows if r.get("seconds_to_first_feasible") is not None
                                      and r["seconds_to_first_feasible"] <= 0.1 * r["limit_s"]),
            "max_peak_rss_mib": max((r.get("peak_rss_mib") or 0 for r in rows), default=0),
        }
    return totals


def retable(out):
    """Re-reads the solvers' own claims (times to the first and the best answer) from the output
    saved in OUT/<letter>/<solver>.stdout and rewrites OUT/results.json and results.md; costs,
    points and feasibility stay as the run's evaluator found them."""
    path = os.path.join(out, "results.json")
    with open(path) as f:
        report = json.load(f)
    for row in report["results"]:
        if row["solver"] == "winner":
            continue  # its times are taken when its lines arrive, not claimed
        claim = last_json(os.path.join(out, row["instance"], f"{row['solver']}.stdout")) or {}
        row["claim"] = {k: claim.get(k) for k in ("cost", "feasible", "peak", "limit", "lower_bound", "gap", "status",
                                                  "seconds_to_first_feasible", "seconds_to_best", "seconds")
                        if k in claim}
        row["seconds_to_best"] = claim.get("seconds_to_best")
        row["seconds_to_first_feasible"] = claim.get("seconds_to_first_feasible") if row["feasible"] else None
        if row["claim"].get("cost") not in (None, str(row["cost"])):
            row["claim_mismatch"] = f"claimed cost {row['claim'].get('cost')}, evaluated {row['cost']}"
    report["totals"] = totals_of(report["results"], list(report["totals"]))
    report["retabled"] = "claims re-read from the saved output (side_by_side.py --retable)"
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    md = markdown(report)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    print(md)
    return 0


def markdown(report):
    m, v = report["machine"], report["versions"]
    lines = [
        f"IOPDDL side by side, {report['date']}: {m['cores']} cores ({m['cpu_model']}), {m['memory_gib']} GiB; "
        f"OR-tools {v.get('ortools')}, winner ti2-group/iopddl_experiments {str(v.get('winner_commit'))[:7]}, "
        f"xlamem {v.get('xlamem_commit')}; "
        + (f"time limit {report['time_limit']:g} s on every instance (a smoke run, not the contest's limits)."
           if report.get("time_limit") else f"time limits = contest limit x {report['scale']:g}."),
        "",
        f"Command: `{report['command']}`",
        "",
        "| inst | limit s | solver | cost | points | feasible | first feasible s | best s | wall s | peak RSS MiB (PSS) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        feas = "yes" if r["feasible"] else ("forbidden" if r.get("forbidden") else "no")
        if r.get("error") and r["cost"] is None:
            feas = "no answer"
        note = " (killed at limit + grace)" if r.get("over_time") else ""
        if not note and (r.get("wall_s") or 0) > r["limit_s"] + 0.5:
            note = f" (ended {r['wall_s'] - r['limit_s']:.1f} s past the limit)"
        lines.append(
            f"| {r['instance']} | {fmt_s(r['limit_s'])} | {r['solver']} | {fmt_int(r['cost'])} | {r['points']:.4f} | "
            f"{feas}{note} | {fmt_s(r.get('seconds_to_first_feasible'))} | {fmt_s(r.get('seconds_to_best'))} | "
            f"{fmt_s(r.get('wall_s'))} | {fmt_s(r.get('peak_rss_mib'))} ({fmt_s(r.get('peak_pss_mib'))}) |")
    lines += ["", "| solver | points | of | feasible | first feasible within 10 % of the limit | max peak RSS MiB |",
              "|---|---|---|---|---|---|"]
    for s, t in report["totals"].items():
        lines.append(f"| {s} | {t['points']:.4f} | {t['instances']} | {t['feasible']} | {t['first_within_10pct']} | "
                     f"{fmt_s(t['max_peak_rss_mib'])} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "iopddl")))
    ap.add_argument("--instances", default="all", help="letters, comma-separated, or 'all'")
    ap.add_argument("--solvers", default=",".join(SOLVERS), help="xla, winner, xlamem (run in this order)")
    ap.add_argument("--scale", type=float, default=1.0, help="time limit = contest limit x SCALE")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="the same limit in seconds for every instance instead (smoke runs; overrides --scale)")
    ap.add_argument("--xlamem", default=os.path.join(ROOT, "build", "tools", "xlamem", "xlamem"))
    ap.add_argument("--xlamem-threads", type=int, default=0,
                    help="xlamem shard --threads (default 0: the tool's default, one per CPU it may use)")
    ap.add_argument("--winner", default="/tmp/iopddl-winner/build/iopddl", help="build_winner.sh's binary")
    ap.add_argument("--python", default=sys.executable, help="Python for xla_ilp.py, with ortools and scipy "
                    "(default: this one)")
    ap.add_argument("--xla-workers", type=int, default=32, help="CP-SAT workers for xla (XLA's setting: 32)")
    ap.add_argument("--out", default=None, help="results folder (default /tmp/shard-bench-<time>)")
    ap.add_argument("--work", default=None, help="scratch folder for decompressed instances (default OUT/work)")
    ap.add_argument("--max-rss-gb", type=float, default=12.0, help="kill a run whose tree RSS passes this (0: never)")
    ap.add_argument("--pause", type=float, default=2.0, help="seconds of rest between runs")
    ap.add_argument("--retable", metavar="OUT", help="only re-read the solvers' claims in OUT and rewrite its tables")
    args = ap.parse_args()
    if args.retable:
        return retable(args.retable)
    args.max_rss_bytes = int(args.max_rss_gb * 2**30)
    solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    if not solvers or any(s not in SOLVERS for s in solvers) or args.scale <= 0 or (args.time_limit or 1) <= 0:
        ap.error(f"--solvers takes {', '.join(SOLVERS)}; --scale and --time-limit must be positive")
    args.xlamem = os.path.abspath(args.xlamem)
    args.winner = os.path.abspath(args.winner)
    need = {"xla": [args.python, args.xlamem], "winner": [args.winner], "xlamem": [args.xlamem]}
    for s in solvers:
        for path in need[s]:
            if not os.access(path, os.X_OK):
                ap.error(f"{s} needs {path}, which is not an executable here")
    table = read_readme(args.data)
    letters = sorted(table) if args.instances == "all" else [x.strip() for x in args.instances.split(",")]
    instances = []
    for letter in letters:
        path = os.path.join(args.data, f"asplos-2025-iopddl-{letter}.json.gz")
        if letter not in table or not os.path.exists(path):
            ap.error(f"no instance {letter} in {args.data} (or not in its README table)")
        instances.append({"letter": letter, "name": f"asplos-2025-iopddl-{letter}", "path": path, **table[letter]})
    out = args.out or f"/tmp/shard-bench-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    work = args.work or os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)

    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": tool_versions(args),
        "command": " ".join([os.path.relpath(sys.argv[0], ROOT) if sys.argv[0].startswith(ROOT) else sys.argv[0]]
                            + sys.argv[1:]),
        "scale": args.scale,
        "time_limit": args.time_limit,
        "solvers": solvers,
        "results": [],
    }
    failed = False
    for inst in instances:
        limit = args.time_limit if args.time_limit else inst["limit"] * args.scale
        grace = max(5.0, 0.1 * limit)
        problem = ip.load(inst["path"])
        log_dir = os.path.join(out, inst["letter"])
        os.makedirs(log_dir, exist_ok=True)
        for solver in solvers:
            time.sleep(args.pause)
            load_before = os.getloadavg()[0]
            print(f"[{inst['letter']}] {solver}: limit {limit:g} s ...", file=sys.stderr, flush=True)
            if solver == "winner":
                rec, text = run_winner(args, problem, inst, limit, grace, work, log_dir)
            else:
                rec, text = run_flagged(args, solver, problem, inst, limit, grace, work, log_dir)
            ev, err = check(problem, text, solver) if text is not None else (None, "no answer")
            feasible = bool(ev and ev["feasible"] and not ev["forbidden"])
            row = {
                "instance": inst["letter"], "solver": solver, "limit_s": limit, "best_known": inst["best_known"],
                "cost": ev["cost"] if ev else None,
                "points": round(inst["best_known"] / ev["cost"], 6) if feasible and ev["cost"] > 0 else 0.0,
                "feasible": feasible, "forbidden": bool(ev and ev["forbidden"]),
                "peak": ev["peak"] if ev else None, "usage_limit": ev["limit"] if ev else None,
                "error": err,
                "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
            }
            for k in ("seconds_to_first_feasible", "seconds_to_best", "solver_reported_first_s", "wall_s",
                      "over_time", "killed_for_memory", "exit_code", "peak_rss_mib", "peak_pss_mib",
                      "max_processes", "cpu_s", "claim", "model", "answers"):
                if k in rec:
                    row[k] = rec[k]
            if not feasible:
                row["seconds_to_first_feasible"] = None
            if "claim" in rec and ev and rec["claim"].get("cost") not in (None, str(ev["cost"])):
                row["claim_mismatch"] = f"claimed cost {rec['claim'].get('cost')}, evaluated {ev['cost']}"
            failed |= not feasible
            report["results"].append(row)
            print(f"[{inst['letter']}] {solver}: cost {row['cost']} points {row['points']:.4f} feasible {feasible} "
                  f"first {row.get('seconds_to_first_feasible')} s wall {row.get('wall_s')} s "
                  f"rss {row.get('peak_rss_mib')} MiB{' (' + err + ')' if err else ''}", file=sys.stderr, flush=True)
        plain = os.path.join(work, f"{inst['name']}.json")
        if os.path.exists(plain):
            os.unlink(plain)
        del problem

    report["totals"] = totals_of(report["results"], solvers)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(report, f, indent=1)
    md = markdown(report)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    print(md)
    print(f"results: {out}/results.json, {out}/results.md", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
