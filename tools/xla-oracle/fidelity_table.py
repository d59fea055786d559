# SPDX-License-Identifier: Apache-2.0
"""Prints the per-program table of docs/xla-fidelity.md from the corpus manifest.

    python3 tools/xla-oracle/fidelity_table.py [--xlamem build/tools/xlamem/xlamem] [MANIFEST]

Standard library only (no JAX needed). With `--xlamem`, xlamem's columns come from
`xlamem plan --json` on each program (XLA best fit and the default solver); without it they
read "pending".
"""

import json
import os
import re
import subprocess
import sys


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    tool = None
    if len(args) >= 2 and args[0] == "--xlamem":
        tool, args = args[1], args[2:]
    path = args[0] if args else os.path.join(here, "../../test/data/xla-oracle/manifest.json")
    with open(path) as f:
        m = json.load(f)
    print(f"XLA figures: JAX {m['jax']} / jaxlib {m['jaxlib']}, backend {m['backend']}; bytes.\n")
    cols = [
        "program", "instructions (entry)", "XLA argument", "XLA output", "XLA alias", "XLA temp",
        "XLA generated code", "xlamem argument", "xlamem output", "xlamem alias",
        "xlamem temp (XLA best fit)", "xlamem temp (default solver)", "temp saving vs XLA",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    pending = "pending"
    root = os.path.dirname(path)

    def plan(module, *extra):
        out = subprocess.run([tool, "plan", module, "--json", *extra], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)["compiled_memory_stats"]

    for name, p in sorted(m["programs"].items()):
        ma = p["memory_analysis"]
        ours = [pending] * 6
        if tool:
            module = os.path.join(root, name, p["module"] + ".cpu_after_optimizations.txt")
            x, d = plan(module, "--solver", "xla"), plan(module)
            xt, ours_xla, ours_default = ma["temp_size_in_bytes"], x["temp_size_in_bytes"], d["temp_size_in_bytes"]
            rel = f" ({100.0 * (ours_xla - xt) / xt:+.2f} %)" if xt else ""
            saving = f"{100.0 * (xt - ours_default) / xt:+.1f} %" if xt else "-"
            ours = [f"{x['argument_size_in_bytes']:,}", f"{x['output_size_in_bytes']:,}",
                    f"{x['alias_size_in_bytes']:,}", f"{ours_xla:,}{rel}", f"{ours_default:,}", saving]
        row = [
            f"`{name}`",
            f"{p['instructions']:,} ({p['entry_instructions']})",
            f"{ma['argument_size_in_bytes']:,}",
            f"{ma['output_size_in_bytes']:,}",
            f"{ma['alias_size_in_bytes']:,}",
            f"{ma['temp_size_in_bytes']:,}",
            f"{ma['generated_code_size_in_bytes']:,}",
        ] + ours
        print("| " + " | ".join(row) + " |")

    # What XLA allocates beyond the four CompiledMemoryStats fields, from the dumps.
    print()
    cols = ["program", "allocations", "constant", "thread-local", "Total bytes used",
            "XLA peak_memory_in_bytes", "HloLiveRange peak (time)"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for name, p in sorted(m["programs"].items()):
        stem = os.path.join(root, name, p["module"] + ".cpu_after_optimizations")
        with open(stem + "-buffer-assignment.txt") as f:
            ba = f.read()
        with open(stem + "-buffer-assignment-values.txt") as f:
            total = int(re.search(r"^Total bytes used: (\d+)", f.read(), re.M).group(1))
        with open(stem + "-live-range.txt") as f:
            lr = f.read()
        heads = re.findall(r"^allocation \d+: size (\d+)(.*):$", ba, re.M)
        const = sum(int(a) for a, fl in heads if ", constant" in fl)
        tl = sum(int(a) for a, fl in heads if ", thread-local" in fl)
        t = re.search(r"Live ranges at (\d+) \(peak\)", lr)
        cum = re.findall(r"cumulative: (\d+) bytes", lr)
        peak = f"{int(cum[-1]):,} (t={t.group(1)})" if t and cum else "-"
        row = [f"`{name}`", str(len(heads)), f"{const:,}", f"{tl:,}", f"{total:,}",
               f"{p['memory_analysis']['peak_memory_in_bytes']:,}", peak]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
