#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every command of the tool over every input, written to a folder, to compare two builds.

    python test/cli_snapshot.py BINARY OUT_DIR [--data ../shared/data] [--jobs 2]
    python test/cli_snapshot.py --compare OUT_A OUT_B

Runs `plan` (text, --json, --dump xla, --html, --svg, both backends, every solver), `diff`
(neighbouring modules, text and --json), `pack` (every solver, --json, --output, --svg),
`propagate` (text, --json, --short), `reduce` (text, --json), `shard` (one thread and a work
limit, so the answer is reproducible; --json, --evaluate) and `autoshard` (text, --json,
--output) over the inputs under test/data, examples/ and the shared corpus. Each run's exit
status, standard output and standard error, and every file it writes, go to one file per run.
Timings are normalised ("0.013 s" -> "<t> s", JSON keys naming seconds -> 0), so two builds of
the same behaviour give identical folders. A refactoring that must not change behaviour is
checked by running this with the binary before and after and diffing the two folders.
"""
import argparse
import concurrent.futures
import gzip
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLVERS = ["search", "heuristic", "xla", "first-fit", "skyline", "stack", "sweep"]

# Timings and machine-dependent counts: a number followed by a unit of time, and JSON keys that
# hold seconds, steps taken or a thread count (the search's pace depends on the machine).
TIME_TEXT = re.compile(r"\b\d+(\.\d+)?(e-?\d+)?( ?)(s|ms|us|µs|seconds)\b")
TIME_KEYS = re.compile(r'("[a-z_]*(seconds|_time|time_to_|elapsed|steps|threads)[a-z_]*"\s*:\s*)(-?[\d.e+-]+)')
TIME_FIELDS = re.compile(r"\b(seconds[a-z_]*)=[\d.e+-]+")
# A run the clock cut short (a solver's time limit) may end elsewhere on another run: its
# differences are listed apart from the others.
CUT_SHORT = re.compile(r'"status":\s*"(time_limit|no_answer|timed_out)"|status[=:] *(time_limit|no_answer|timed_out)\b|"fallback":\s*"')


def normalise(text):
    text = TIME_KEYS.sub(lambda m: m.group(1) + "0", text)
    text = TIME_FIELDS.sub(lambda m: m.group(1) + "=<t>", text)
    return TIME_TEXT.sub(lambda m: "<t>" + m.group(3) + m.group(4), text)


def compare(before, after):
    """Prints the runs whose outputs differ between two snapshot folders (normalised again, so
    folders written by an older normaliser compare too): first those where neither side was cut
    short by the clock (behaviour changed), then those where one was. Exits 1 on the first kind."""
    names = sorted(set(os.listdir(before)) | set(os.listdir(after)))
    changed, clocked, missing = [], [], []
    for name in names:
        pa, pb = os.path.join(before, name), os.path.join(after, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            missing.append(name)
            continue
        a, b = normalise(open(pa).read()), normalise(open(pb).read())
        if a != b:
            (clocked if CUT_SHORT.search(a) or CUT_SHORT.search(b) else changed).append(name)
    for title, group in (("differ", changed), ("differ, a side cut short by its time limit", clocked),
                         ("in one folder only", missing)):
        print(f"cli_snapshot: {len(group)} runs {title}")
        for name in group:
            print(f"  {name}")
    print(f"cli_snapshot: {len(names) - len(changed) - len(clocked) - len(missing)} of {len(names)} runs identical")
    return 1 if changed or missing else 0


def hlo_inputs(data, scratch):
    """Text HLO modules: the shared corpus, the oracle's dumps, the bundled examples, and the
    XLA corpus's archives unpacked into `scratch` (their modules and dump folders)."""
    out = []
    for base in [os.path.join(data, "hlo"), os.path.join(ROOT, "test/data/xla-oracle"),
                 os.path.join(ROOT, "test/data/memory-spaces"), os.path.join(ROOT, "examples")]:
        for d, _, files in os.walk(base):
            out += [os.path.join(d, f) for f in files if f.endswith(".hlo") or f.endswith("after_optimizations.txt")]
    for archive in sorted(os.listdir(os.path.join(ROOT, "test/data/xla-corpus"))):
        if archive.endswith(".tar.xz"):
            target = os.path.join(scratch, archive[:-len(".tar.xz")])
            with tarfile.open(os.path.join(ROOT, "test/data/xla-corpus", archive)) as t:
                t.extractall(target, filter="data")
            for d, _, files in os.walk(target):
                out += [os.path.join(d, f) for f in files if f.endswith("after_optimizations.txt")]
    return sorted(out)


def dump_folders(hlo):
    return sorted({os.path.dirname(p) for p in hlo if p.endswith("after_optimizations.txt")})


def csv_inputs(data):
    out = [os.path.join(ROOT, "test/data/packing/D-max-live-windows.csv"),
           os.path.join(ROOT, "examples/packing/transformer_step.csv")]
    for base in [os.path.join(data, "minimalloc"), os.path.join(data, "packing-traces")]:
        for d, _, files in os.walk(base):
            out += [os.path.join(d, f) for f in files if f.endswith(".csv")]
    return sorted(out)


def interval_inputs(csvs, scratch):
    """reduce's id,first,last files made from the packing inputs' live ranges."""
    out = []
    for path in csvs:
        lines = open(path).read().split("\n")
        rows = ["id,first,last"]
        for line in lines[1:]:
            cells = line.split(",")
            if len(cells) >= 3 and cells[1].strip().lstrip("-").isdigit():
                rows.append(f"{cells[0]},{cells[1]},{int(cells[2]) - 1}")
        target = os.path.join(scratch, "intervals-" + os.path.basename(path))
        open(target, "w").write("\n".join(rows) + "\n")
        out.append(target)
    return out


def jobs(data, scratch):
    """(name, argv, files the run writes) for every run."""
    hlo = hlo_inputs(data, scratch)
    csvs = csv_inputs(data)
    runs = []

    def add(name, argv, outputs=()):
        runs.append((name, argv, list(outputs)))

    for path in hlo:
        key = os.path.relpath(path, scratch if path.startswith(scratch) else ROOT if path.startswith(ROOT) else data)
        key = key.replace("/", "_")
        add(f"plan.{key}", ["plan", path])
        add(f"plan.{key}.json", ["plan", path, "--json"])
        add(f"plan.{key}.dump", ["plan", path, "--dump", "xla"])
        add(f"plan.{key}.gpu", ["plan", path, "--backend", "gpu", "--json"])
        add(f"plan.{key}.html", ["plan", path, "--html", "{out}/page.html", "--svg", "{out}/picture.svg"],
            ["page.html", "picture.svg"])
        for solver in SOLVERS:
            add(f"plan.{key}.{solver}", ["plan", path, "--solver", solver, "--time-limit", "30", "--json"])
        add(f"propagate.{key}", ["propagate", path])
        add(f"propagate.{key}.json", ["propagate", path, "--json", "--short"])
        add(f"autoshard.{key}", ["autoshard", path, "--mesh", "2x4", "--threads", "1", "--json",
                                 "--output", "{out}/sharded.hlo"], ["sharded.hlo"])
    folders = dump_folders(hlo)
    folder_key = {f: os.path.relpath(f, scratch if f.startswith(scratch) else ROOT).replace("/", "_") for f in folders}
    for folder in folders:
        key = folder_key[folder]
        add(f"plan-folder.{key}", ["plan", folder])
        add(f"plan-folder.{key}.replan", ["plan", folder, "--replan", "--json"])
    for a, b in zip(folders, folders[1:]):
        key = folder_key[a] + "--" + folder_key[b]
        add(f"diff.{key}", ["diff", a, b])
        add(f"diff.{key}.json", ["diff", a, b, "--json", "--top", "5"])
    for path in csvs:
        key = os.path.relpath(path, ROOT if path.startswith(ROOT) else data).replace("/", "_")
        for solver in SOLVERS:
            # The search is given room to finish: a placement cut short by the clock is not
            # reproducible. Inputs it cannot finish show up as differences in the timed-out runs.
            add(f"pack.{key}.{solver}", ["pack", path, "--solver", solver, "--time-limit", "20", "--json"])
        add(f"pack.{key}", ["pack", path, "--solver", "heuristic", "--output", "{out}/placed.csv",
                            "--svg", "{out}/placed.svg"], ["placed.csv", "placed.svg"])
    for path in interval_inputs(csvs, scratch):
        key = os.path.basename(path)
        add(f"reduce.{key}", ["reduce", path])
        add(f"reduce.{key}.json", ["reduce", path, "--json"])
    iopddl = sorted(os.path.join(data, "iopddl", f) for f in os.listdir(os.path.join(data, "iopddl"))
                    if f.endswith(".json") or f.endswith(".json.gz"))
    for path in iopddl:
        key = os.path.basename(path)
        add(f"shard.{key}", ["shard", path, "--threads", "1", "--work-limit", "3000", "--time-limit", "600",
                             "--quiet", "--output", "{out}/solution.txt"], ["solution.txt"])
        add(f"shard.{key}.json", ["shard", path, "--threads", "1", "--work-limit", "3000", "--time-limit", "600",
                                  "--quiet", "--json"])
    for sol in sorted(os.listdir(os.path.join(ROOT, "test/data/sharding"))):
        problem = os.path.join(data, "iopddl", f"asplos-2025-iopddl-{sol.split('.')[0]}.json.gz")
        if os.path.exists(problem):
            add(f"shard-evaluate.{sol}", ["shard", problem, "--evaluate", os.path.join(ROOT, "test/data/sharding", sol)])
    return runs


def run_one(binary, out_dir, scratch, name, argv, outputs):
    with tempfile.TemporaryDirectory() as out:
        args = [a.replace("{out}", out) for a in argv]
        p = subprocess.run([binary] + args, capture_output=True, timeout=900)
        text = f"exit {p.returncode}\n--- stdout\n" + p.stdout.decode(errors="replace")
        text += "--- stderr\n" + p.stderr.decode(errors="replace")
        for f in outputs:
            path = os.path.join(out, f)
            body = open(path, errors="replace").read() if os.path.exists(path) else "(not written)\n"
            text += f"--- {f}\n" + body
        text = normalise(text.replace(out, "<out>").replace(scratch, "<scratch>"))
    # Long names are shortened with a digest so every run has its own file.
    safe = name if len(name) < 200 else name[:150] + "." + hashlib.sha1(name.encode()).hexdigest()[:12]
    open(os.path.join(out_dir, safe), "w").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="the tool to run, or with --compare the first snapshot folder")
    ap.add_argument("out_dir", help="where to write, or with --compare the second snapshot folder")
    ap.add_argument("--compare", action="store_true", help="compare two snapshot folders instead of running")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the runs whose name starts with this")
    a = ap.parse_args()
    if a.compare:
        sys.exit(compare(a.binary, a.out_dir))
    if not os.path.isdir(a.data):
        sys.exit(f"cli_snapshot: {a.data} is not a folder (the shared corpus)")
    os.makedirs(a.out_dir, exist_ok=True)
    binary = os.path.abspath(a.binary)
    with tempfile.TemporaryDirectory() as scratch:
        runs = [r for r in jobs(os.path.abspath(a.data), scratch) if r[0].startswith(a.only)]
        print(f"cli_snapshot: {len(runs)} runs of {binary}", flush=True)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            futures = [pool.submit(run_one, binary, a.out_dir, scratch, *r) for r in runs]
            for n, f in enumerate(concurrent.futures.as_completed(futures), 1):
                f.result()
                if n % 200 == 0:
                    print(f"cli_snapshot: {n} of {len(runs)}", flush=True)
    print(f"cli_snapshot: wrote {len(runs)} files to {a.out_dir}")


if __name__ == "__main__":
    main()
