# SPDX-License-Identifier: Apache-2.0
"""Differential measurement of `xlamem plan` against XLA:CPU over the corpus (every program x
version). Standard library only: CI runs it (test/corpus_fidelity.py) without JAX or network.

For each program it runs `xlamem plan FILE --solver xla --json` and `xlamem plan FILE --json`
(the default solver) and checks five properties against XLA's own answers:

  read          both runs exit 0 (the reader, dataflow and planning accept the module)
  bytes         argument, output and alias bytes equal XLA's (and total_allocation_bytes where
                memory_analysis() reports it: JAX >= 0.11)
  temp_xla      temp with --solver xla equals XLA's temp
  temp_default  temp with the default solver is at most XLA's
  live_ranges   every value's live range equals XLA's HloLiveRange (as sets of name{index}:s-e)

and one property of XLA itself, which needs no xlamem:

  xla_consistent  compiled.memory_analysis() equals the sums over XLA's allocation blocks

Each failing property gets a cause: a class (reader, dataflow, planning, accounting, definition:
a figure XLA versions define differently) and the
precise detail (the error message; the fields and bytes; the differing live ranges with their
instructions and opcodes).

    python3 differential.py --xlamem build/tools/xlamem/xlamem --corpus DIR [--jobs 2] [--json OUT]
        [--markdown OUT.md]

DIR holds <version>/<program>/... as unpacked from test/data/xla-corpus/<version>.tar.xz.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PROPERTIES = ("read", "bytes", "temp_xla", "temp_default", "live_ranges", "xla_consistent")
FIELDS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes")


def allocation_figures(ba_text: str) -> dict[str, int]:
    """XLA's CompiledMemoryStats summed from its allocation blocks (memory space 0)."""
    arg = out = alias = temp = 0
    for size, flags in re.findall(r"^allocation \d+: size (\d+)(.*):$", ba_text, re.M):
        size = int(size)
        m = re.search(r", color (\d+)", flags)
        if m and m.group(1) != "0":
            continue
        p, o = ", parameter " in flags, ", maybe-live-out" in flags
        arg += size if p else 0
        out += size if o else 0
        alias += size if p and o else 0
        temp += size if ", preallocated-temp" in flags else 0
    return {"argument_size_in_bytes": arg, "output_size_in_bytes": out, "alias_size_in_bytes": alias,
            "temp_size_in_bytes": temp}


_ALLOC = re.compile(r"^allocation \d+: size \d+(.*):$")
_VALUE = re.compile(r"^ value: <\d+ (\S+) @\d+> \(size=\d+,offset=\d+\): (.*)$")


def _kind(flags: str) -> str:
    for k, tag in (("preallocated-temp", "temp"), ("constant", "constant"), ("thread-local", "thread-local")):
        if f", {k}" in flags:
            return tag
    p, o = ", parameter " in flags, ", maybe-live-out" in flags
    return "parameter+output" if p and o else "parameter" if p else "output" if o else "other"


def xla_value_kinds(ba_text: str) -> dict[str, tuple[str, str]]:
    """value name (without an empty {}) -> (kind of XLA's allocation holding it, its shape)."""
    out, kind = {}, None
    for line in ba_text.splitlines():
        m = _ALLOC.match(line)
        if m:
            kind = _kind(m.group(1))
            continue
        v = _VALUE.match(line)
        if v and kind:
            out[v.group(1).removesuffix("{}")] = (kind, v.group(2))
    return out


def our_value_kinds(plan: dict) -> dict[str, str]:
    out = {}
    for a in plan["allocations"]:
        if a["is_preallocated_temp"]:
            k = "temp"
        elif a["is_constant"]:
            k = "constant"
        elif a["is_thread_local"]:
            k = "thread-local"
        else:
            p, o = a["is_entry_parameter"], a["maybe_live_out"]
            k = "parameter+output" if p and o else "parameter" if p else "output" if o else "other"
        for v in a["values"]:
            out[v["name"].removesuffix("{}")] = k
    return out


def kind_differences(ba_text: str, plan: dict, hlo_ops: dict[str, str]) -> str:
    """Values that XLA and xlamem put in different kinds of allocation, e.g. a value XLA keeps
    in the temp allocation that xlamem lets share a live-out buffer."""
    theirs, ours = xla_value_kinds(ba_text), our_value_kinds(plan)
    diffs = []
    # Only values both sides have: XLA has no value of its own for a loop body's parameter (a
    # position of the while's value) where xlamem's SSA dataflow may.
    for n in sorted(set(theirs) & set(ours)):
        t, o = theirs[n], ours[n]
        if t[0] != o:
            op = hlo_ops.get(n.split("{")[0], "?")
            diffs.append(f"{n} ({op} {t[1]}): XLA {t[0]}, ours {o}".replace("  ", " "))
    if not diffs:
        return ""
    return f"; {len(diffs)} value(s) in another kind of allocation: " + "; ".join(diffs[:6]) + (
        " ..." if len(diffs) > 6 else "")


def xla_live_ranges(text: str) -> set[str]:
    out, inside = set(), False
    for line in text.splitlines():
        if "BufferLiveRange:" in line:
            inside = True
        elif "Live ranges at" in line:
            inside = False
        elif inside and line.strip():
            out.add(line.strip())
    return out


_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([^\s=]+)\s*=\s*(.*)$")


def opcodes(hlo_text: str) -> dict[str, str]:
    """instruction name -> opcode, for naming what a differing live range belongs to."""
    out = {}
    for line in hlo_text.splitlines():
        m = _DEF.match(line)
        if not m:
            continue
        rest = m.group(2)
        # skip the shape: balanced parentheses for tuples, else up to the first space
        i = 0
        if rest.startswith("("):
            depth = 0
            for i, c in enumerate(rest):
                depth += c == "("
                depth -= c == ")"
                if depth == 0:
                    break
            i += 1
        else:
            i = rest.find(" ")
        op = re.match(r"\s*([\w\-]+)\(", rest[i:])
        if op:
            out[m.group(1)] = op.group(1)
    return out


def classify_error(msg: str) -> str:
    low = msg.lower()
    if re.search(r"\.txt:\d+:\d+:", msg) and not re.search(r"subshape|dataflow|alias", low):
        return "reader"
    if re.search(r"subshape|dataflow|operand .* of|value", low):
        return "dataflow"
    return "planning"


def run_plan(tool: str, hlo: str, *extra: str, timeout: int = 120) -> tuple[dict | None, str]:
    try:
        p = subprocess.run([tool, "plan", hlo, "--json", *extra], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if p.returncode != 0:
        err = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()
        return None, f"exit {p.returncode}: " + (err[-1] if err else "")
    try:
        return json.loads(p.stdout), ""
    except json.JSONDecodeError as e:
        return None, f"exit 0 but not JSON: {e}"


def relpath(path: str, root: str) -> str:
    return os.path.relpath(path, root)


def measure(tool: str, corpus: str, version: str, name: str, entry: dict) -> dict:
    d = os.path.join(corpus, version, name)
    stem = os.path.join(d, entry["module"] + ".cpu_after_optimizations")
    hlo = stem + ".txt"
    with open(stem + "-buffer-assignment.txt") as f:
        alloc = allocation_figures(f.read())
    ma = entry.get("memory_analysis") or {}
    ref = {k: ma[k] for k in FIELDS + ("temp_size_in_bytes",)} if ma else alloc
    res = {"version": version, "program": name, "xla": ref, "ours_xla": None, "ours_default": None,
           "props": {}, "causes": {}}

    cons = [f"{k}: memory_analysis {ma[k]:,}, allocation blocks {alloc[k]:,}"
            for k in alloc if ma and ma.get(k) != alloc[k]]
    if "total_allocation_bytes" in ma:  # JAX 0.12's CompiledMemoryStats has it; 0.10's does not
        with open(stem + "-buffer-assignment.txt") as f:
            heads = re.findall(r"^allocation \d+: size (\d+)(.*):$", f.read(), re.M)
        every = sum(int(a) for a, _ in heads)
        tl = sum(int(a) for a, fl in heads if ", thread-local" in fl)
        t = ma["total_allocation_bytes"]
        if t != every:
            why = f" = all allocations {every:,} - thread-local {tl:,}" if t == every - tl else ""
            cons.append(f"total_allocation_bytes {t:,}, sum of all allocation blocks {every:,}{why}")
    res["props"]["xla_consistent"] = not cons
    if cons:
        res["causes"]["xla_consistent"] = {"class": "accounting", "detail": "; ".join(cons)}

    x, ex = run_plan(tool, hlo, "--solver", "xla")
    dflt, ed = run_plan(tool, hlo)
    res["props"]["read"] = x is not None and dflt is not None
    if not res["props"]["read"]:
        msg = ex or ed
        msg = msg.replace(corpus.rstrip("/") + "/", "")
        at = re.search(r"([^\s:]+\.txt):(\d+):(\d+):", msg)
        if at:  # quote the text the reader stopped at
            try:
                with open(os.path.join(corpus, at.group(1))) as f:
                    line = f.read().splitlines()[int(at.group(2)) - 1]
                col = int(at.group(3)) - 1
                msg += f" | at: `{line[max(0, col - 30):col + 30].strip()}`"
            except (OSError, IndexError):
                pass
        res["causes"]["read"] = {"class": classify_error(msg), "detail": msg,
                                 "solver": "xla" if ex else "default"}
        for p in ("bytes", "temp_xla", "temp_default", "live_ranges"):
            res["props"][p] = False
            res["causes"][p] = {"class": "not-read", "detail": "not planned: see read"}
        return res
    sx, sd = x["compiled_memory_stats"], dflt["compiled_memory_stats"]
    res["ours_xla"] = {k: sx[k] for k in FIELDS + ("temp_size_in_bytes",)}
    res["ours_default"] = {k: sd[k] for k in FIELDS + ("temp_size_in_bytes",)}

    bad = [f"{k.replace('_size_in_bytes', '')}: ours {sx[k]:,}, XLA {ref[k]:,} ({sx[k] - ref[k]:+,})"
           for k in FIELDS if sx[k] != ref[k]]
    # JAX >= 0.11 also reports the total of the allocations. JAX 0.11 counts the thread-local
    # ones in it (the sum of every allocation block); 0.12 leaves them out, and so does xlamem
    # (it follows the newest). A total that differs by exactly that is a difference of
    # definition between XLA versions: still a failure of `bytes`, with its own class.
    definition = False
    if "total_allocation_bytes" in ma and sx["total_allocation_bytes"] != ma["total_allocation_bytes"]:
        t, o = ma["total_allocation_bytes"], sx["total_allocation_bytes"]
        with open(stem + "-buffer-assignment.txt") as f:
            heads = re.findall(r"^allocation \d+: size (\d+)(.*):$", f.read(), re.M)
        every = sum(int(a) for a, _ in heads)
        tl = sum(int(a) for a, fl in heads if ", thread-local" in fl)
        definition = not bad and t == every and o == t - tl
        why = (f" = XLA's total less its thread-local {tl:,}: this XLA counts thread-local allocations"
               " in total_allocation_bytes and the newest JAX and xlamem do not") if definition else ""
        bad.append(f"total_allocation_bytes: ours {o:,}, XLA {t:,} ({o - t:+,}){why}")
    res["props"]["bytes"] = not bad
    if bad:
        res["causes"]["bytes"] = {"class": "definition" if definition else "planning", "detail": "; ".join(bad)}

    xt, ot, dt = ref["temp_size_in_bytes"], sx["temp_size_in_bytes"], sd["temp_size_in_bytes"]
    res["props"]["temp_xla"] = ot == xt
    with open(hlo) as f:
        ops = opcodes(f.read())
    with open(stem + "-buffer-assignment.txt") as f:
        kinds = kind_differences(f.read(), x, ops)
    if bad:
        res["causes"]["bytes"]["detail"] += kinds
    if ot != xt:
        pct = f" ({100.0 * (ot - xt) / xt:+.2f} %)" if xt else ""
        res["causes"]["temp_xla"] = {"class": "planning",
                                     "detail": f"--solver xla temp {ot:,}, XLA {xt:,}{pct}" + kinds}
    res["props"]["temp_default"] = dt <= xt
    if dt > xt:
        res["causes"]["temp_default"] = {"class": "planning",
                                         "detail": f"default-solver temp {dt:,} above XLA's {xt:,} ({dt - xt:+,})"}

    lr_file = stem + "-live-range.txt"
    if not os.path.exists(lr_file):  # the older single-file layout (TF's XLA)
        lr_file = stem + "-buffer-assignment.txt"
    with open(lr_file) as f:
        theirs = xla_live_ranges(f.read())
    ours = {f"{r['name']}:{r['start']}-{r['end']}" for r in x["live_ranges"]}
    if not theirs:
        res["props"]["live_ranges"] = True  # XLA printed none: nothing to compare
    else:
        res["props"]["live_ranges"] = ours == theirs
        if ours != theirs:
            only_x = sorted(theirs - ours)
            only_o = sorted(ours - theirs)
            by_name_x = {s.rsplit(":", 1)[0]: s.rsplit(":", 1)[1] for s in only_x}
            by_name_o = {s.rsplit(":", 1)[0]: s.rsplit(":", 1)[1] for s in only_o}
            parts = []
            for n in sorted(set(by_name_x) | set(by_name_o)):
                op = ops.get(n.split("{")[0], "?")
                parts.append(f"{n} ({op}): XLA {by_name_x.get(n, 'none')}, ours {by_name_o.get(n, 'none')}")
            res["causes"]["live_ranges"] = {
                "class": "dataflow",
                "detail": f"{len(set(by_name_x) | set(by_name_o))} of {len(theirs)} differ: " + "; ".join(parts[:6])
                + (" ..." if len(parts) > 6 else ""),
            }
    return res


def load_corpus(corpus: str) -> list[tuple[str, str, dict]]:
    items = []
    for version in sorted(os.listdir(corpus)):
        mp = os.path.join(corpus, version, "manifest.json")
        if not os.path.isfile(mp):
            continue
        with open(mp) as f:
            m = json.load(f)
        for name, entry in sorted(m["programs"].items()):
            items.append((version, name, entry))
    return items


def run_all(tool: str, corpus: str, jobs: int) -> list[dict]:
    items = load_corpus(corpus)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        return list(ex.map(lambda it: measure(tool, corpus, *it), items))


def fmt_n(v) -> str:
    return f"{v:,}" if isinstance(v, int) else "-"


def markdown(results: list[dict], corpus: str) -> str:
    lines = []
    cols = ["version", "program", "XLA argument", "XLA output", "XLA alias", "XLA temp", "xlamem argument",
            "xlamem output", "xlamem alias", "xlamem temp (xla)", "xlamem temp (default)", "verdict"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for r in results:
        x, o, d = r["xla"], r["ours_xla"] or {}, r["ours_default"] or {}
        failed = [p for p in PROPERTIES if not r["props"].get(p, True)]
        verdict = "exact" if not failed else ", ".join(failed)
        lines.append("| " + " | ".join([
            r["version"], f"`{r['program']}`", fmt_n(x["argument_size_in_bytes"]), fmt_n(x["output_size_in_bytes"]),
            fmt_n(x["alias_size_in_bytes"]), fmt_n(x["temp_size_in_bytes"]),
            fmt_n(o.get("argument_size_in_bytes")), fmt_n(o.get("output_size_in_bytes")),
            fmt_n(o.get("alias_size_in_bytes")), fmt_n(o.get("temp_size_in_bytes")),
            fmt_n(d.get("temp_size_in_bytes")), verdict]) + " |")
    return "\n".join(lines) + "\n"


def summary(results: list[dict]) -> str:
    by_v: dict[str, list[dict]] = {}
    for r in results:
        by_v.setdefault(r["version"], []).append(r)
    lines = ["| version | programs | " + " | ".join(PROPERTIES) + " | all five xlamem properties |",
             "|" + "---|" * (len(PROPERTIES) + 3)]
    for v, rs in sorted(by_v.items()) + [("all", results)]:
        n = len(rs)
        cells = [f"{sum(r['props'][p] for r in rs)} / {n}" for p in PROPERTIES]
        five = sum(all(r["props"][p] for p in PROPERTIES[:5]) for r in rs)
        lines.append(f"| {v} | {n} | " + " | ".join(cells) + f" | {five} / {n} |")
    return "\n".join(lines) + "\n"


def _pattern(c: dict) -> str:
    """The cause without its location and figures, to group the same defect across programs."""
    d = c["detail"]
    d = re.sub(r"\S+\.txt:\d+:\d+: ", "", d)
    d = re.sub(r" \| at: .*$", "", d)
    if c["class"] in ("planning", "accounting", "definition") or d.startswith(("--solver", "default-solver")):
        d = d.split("; ")[0] if c["class"] == "planning" else d
        d = re.sub(r"[-+]?[\d,]+(\.\d+)?", "N", d)
    if c["class"] == "dataflow" and "differ:" in d:
        d = "live ranges differ"
    return d


def findings(results: list[dict]) -> str:
    """Every failing property, grouped by cause class and pattern, each program listed with its
    own detail (where the reader stopped, which bytes, which live ranges)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in results:
        for p in PROPERTIES:
            c = r["causes"].get(p)
            if c and c["class"] != "not-read":
                key = (c["class"], p, _pattern(c))
                groups.setdefault(key, []).append(f"{r['version']} `{r['program']}`: {c['detail']}")
    order = {"reader": 0, "dataflow": 1, "planning": 2, "accounting": 3, "definition": 4}
    lines = []
    for (cls, prop, pat), items in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0][1], -len(kv[1]))):
        lines.append(f"### [{cls}] {prop}: {pat} ({len(items)})\n")
        lines.extend(f"- {i}" for i in items)
        lines.append("")
    return "\n".join(lines) + "\n"


def replace_docs(path: str, text: str) -> None:
    """Puts text between the corpus markers of docs/xla-fidelity.md."""
    with open(path) as f:
        doc = f.read()
    begin, end = "<!-- corpus:begin -->", "<!-- corpus:end -->"
    if begin not in doc or end not in doc:
        raise SystemExit(f"{path}: markers {begin} / {end} not found")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--xlamem", required=True)
    ap.add_argument("--corpus", required=True, help="unpacked corpus root: <version>/<program>/")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write every result as JSON")
    ap.add_argument("--markdown", help="write the per-program table, summary and findings")
    ap.add_argument("--docs", help="put them between the corpus markers of this file (docs/xla-fidelity.md)")
    a = ap.parse_args()
    results = run_all(a.xlamem, a.corpus, a.jobs)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
    text = ("### Summary (program x version counts where the property holds)\n\n" + summary(results)
            + "\n### Per program and version\n\n" + markdown(results, a.corpus)
            + "\n## Findings: every mismatch, by cause\n\n" + findings(results))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.docs:
        replace_docs(a.docs, text)
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
