# SPDX-License-Identifier: Apache-2.0
"""Prints the per-program table of docs/xla-fidelity.md from the corpus manifest.

    python3 tools/xla-oracle/fidelity_table.py [test/data/xla-oracle/manifest.json]

Standard library only (no JAX needed). xlamem's columns read "pending" until `xlamem plan`
exists; the lead fills them from the planner's output.
"""

import json
import os
import re
import sys


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../test/data/xla-oracle/manifest.json")
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
    for name, p in sorted(m["programs"].items()):
        ma = p["memory_analysis"]
        row = [
            f"`{name}`",
            f"{p['instructions']:,} ({p['entry_instructions']})",
            f"{ma['argument_size_in_bytes']:,}",
            f"{ma['output_size_in_bytes']:,}",
            f"{ma['alias_size_in_bytes']:,}",
            f"{ma['temp_size_in_bytes']:,}",
            f"{ma['generated_code_size_in_bytes']:,}",
        ] + [pending] * 6
        print("| " + " | ".join(row) + " |")

    # What XLA allocates beyond the four CompiledMemoryStats fields, from the dumps.
    print()
    cols = ["program", "allocations", "constant", "thread-local", "Total bytes used",
            "XLA peak_memory_in_bytes", "HloLiveRange peak (time)"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    root = os.path.dirname(path)
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
