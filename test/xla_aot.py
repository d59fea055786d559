#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""XLA's own buffer assignments in AOT executables against `xlamem plan --backend B` (the
GPU backend checked on what XLA:GPU really did).

    xla_aot.py XLAMEM SHARED_DATA WORK

Every `B.*.executable.pbtxt` under SHARED_DATA/hlo/xla-aot (B: gpu or cpu) is a module XLA
compiled for that backend, with the buffer assignment it made. tools/xla-oracle/aot_to_hlo.py
turns each into HLO text and XLA's figures; xlamem plans the text with that backend's rules and
XLA's heap (`--solver xla`), and argument, output, temp and constant bytes must be XLA's
exactly. Exits 77 (a skip) when there is no GPU executable (the shared data folder is absent),
1 on any difference.
"""
import json
import pathlib
import subprocess
import sys

FIELDS = ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes", "constant_size_in_bytes")


def main():
    exe, shared, work = (pathlib.Path(a).resolve() for a in sys.argv[1:4])
    aot = shared / "hlo" / "xla-aot"
    files = sorted(aot.glob("gpu.*.executable.pbtxt")) + sorted(aot.glob("cpu.*.executable.pbtxt"))
    if not any(f.name.startswith("gpu.") for f in files):
        print(f"skip: no XLA:GPU executables under {aot} (the shared data folder is absent)")
        return 77
    converter = pathlib.Path(__file__).resolve().parent.parent / "tools" / "xla-oracle" / "aot_to_hlo.py"
    work.mkdir(parents=True, exist_ok=True)
    failed = 0
    for f in files:
        name = f.name.removesuffix(".executable.pbtxt")
        hlo, expected = work / f"{name}.hlo", work / f"{name}.json"
        subprocess.run([sys.executable, str(converter), str(f), str(hlo), "--stats", str(expected)], check=True)
        xla = json.loads(expected.read_text())
        backend = name.split(".")[0]
        p = subprocess.run([str(exe), "plan", str(hlo), "--backend", backend, "--solver", "xla", "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED  {name}: xlamem plan exited {p.returncode}: {p.stderr.strip()}")
            failed += 1
            continue
        plan = json.loads(p.stdout)
        ours = dict(plan["compiled_memory_stats"])
        ours["constant_size_in_bytes"] = sum(a["size"] for a in plan["allocations"] if a["is_constant"])
        diff = {k: (xla[k], ours[k]) for k in FIELDS if xla[k] != ours[k]}
        figures = ", ".join(f"{k.split('_')[0]} {ours[k]}" for k in FIELDS)
        if diff:
            print(f"FAILED  {name}: (XLA, xlamem) differ in {diff}")
            failed += 1
        else:
            print(f"ok      {name}: {figures} B, as XLA:{backend.upper()} (--backend {backend})")
    print(f"xla-aot: {len(files) - failed} of {len(files)} executables exact")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
