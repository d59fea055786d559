# SPDX-License-Identifier: Apache-2.0
"""CI test over the differential corpus: every program x version of
test/data/xla-corpus/*.tar.xz through the built `xlamem plan`, checked against XLA's answers.

    python3 test/corpus_fidelity.py XLAMEM SOURCE_ROOT [--jobs 2] [--update] [--keep DIR]

The properties (tools/xla-oracle/differential.py): read, bytes (argument/output/alias), temp_xla
(--solver xla temp equals XLA's), temp_default (default solver at most XLA's), live_ranges, and
xla_consistent (memory_analysis() equals XLA's allocation sums). The corpus has known failures
until the reader and planning fixes land, so test/data/xla-corpus/expected.json records, per
program x version, which properties hold today and the cause of each that does not. The test
fails when any result differs from it in either direction: a regression, or an improvement not
yet recorded (then rerun with --update and commit expected.json). It never passes a mismatch
that expected.json does not name. Needs no network and no JAX: standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("xlamem")
    ap.add_argument("source_root")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--update", action="store_true", help="rewrite expected.json from today's results")
    ap.add_argument("--keep", help="unpack into this directory and keep it")
    ap.add_argument("--json", help="write every result here")
    a = ap.parse_args()

    sys.path.insert(0, os.path.join(a.source_root, "tools", "xla-oracle"))
    import differential  # noqa: E402

    data = os.path.join(a.source_root, "test", "data", "xla-corpus")
    archives = sorted(f for f in os.listdir(data) if f.endswith(".tar.xz"))
    if not archives:
        print(f"FAIL: no corpus archives in {data}")
        return 1
    total = sum(os.path.getsize(os.path.join(data, f)) for f in archives)
    failures = []
    if total > 10 * 1024 * 1024:
        failures.append(f"the committed archives are {total:,} bytes, above the 10 MB limit")

    tmp = None
    if a.keep:
        root = a.keep
        os.makedirs(root, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="xlamem-corpus-")
        root = tmp.name
    for f in archives:
        with tarfile.open(os.path.join(data, f), "r:xz") as t:
            for m in t.getmembers():
                # Our own archives hold plain files and directories under one top folder.
                if not (m.isfile() or m.isdir()) or m.name.startswith(("/", "..")) or "/../" in m.name:
                    print(f"FAIL: {f}: unexpected member {m.name!r}")
                    return 1
            t.extractall(root)

    results = differential.run_all(a.xlamem, root, a.jobs)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    got = {f"{r['version']}/{r['program']}": r for r in results}
    if len(got) < 120:
        failures.append(f"the corpus holds {len(got)} program x version entries, fewer than 120")

    exp_path = os.path.join(data, "expected.json")
    if a.update:
        doc = {"comment": "per program x version: which properties hold today and why each other does not "
                          "(written by test/corpus_fidelity.py --update; see docs/xla-fidelity.md)",
               "properties": list(differential.PROPERTIES),
               "entries": {k: {"holds": {p: r["props"][p] for p in differential.PROPERTIES},
                               "causes": {p: c for p, c in r["causes"].items()}}
                           for k, r in sorted(got.items())}}
        with open(exp_path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {exp_path}")
    with open(exp_path) as f:
        expected = json.load(f)["entries"]

    for k in sorted(set(expected) - set(got)):
        failures.append(f"{k}: in expected.json but not in the corpus")
    for k in sorted(set(got) - set(expected)):
        failures.append(f"{k}: in the corpus but not in expected.json")
    for k in sorted(set(got) & set(expected)):
        r, e = got[k], expected[k]
        for p in differential.PROPERTIES:
            want, have = e["holds"].get(p), r["props"][p]
            if want is None:
                failures.append(f"{k}: {p}: no expectation recorded")
            elif want and not have:
                c = r["causes"].get(p, {})
                failures.append(f"{k}: {p}: REGRESSION, held before, now fails [{c.get('class')}]: {c.get('detail')}")
            elif have and not want:
                failures.append(f"{k}: {p}: IMPROVEMENT not recorded (was [{e['causes'].get(p, {}).get('class')}] "
                                f"{e['causes'].get(p, {}).get('detail')}); rerun with --update")

    print(differential.summary(results))
    if tmp:
        tmp.cleanup()
    if failures:
        print(f"FAIL: {len(failures)} difference(s) from test/data/xla-corpus/expected.json:")
        for f in failures:
            print("  " + f)
        return 1
    print(f"ok: {len(got)} program x version entries match expected.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
