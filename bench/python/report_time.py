#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long `xlamem.report()` takes on a large compiled JAX program, and `import xlamem`
(the target: both under 0.3 s for an 8k-instruction transformer).

The program is the corpus's transformer train step (tools/xla-oracle/programs.py) with more
blocks, compiled live by XLA:CPU, so the module is JAX's own, not one we wrote to be easy. It
prints the instruction count of the optimised module, `compiled.memory_analysis()`'s time and
`xlamem.report(compiled)`'s (the best and the median of --repeat runs, each from the compiled
object: text, parse, plan, report), the two reports' statistics side by side, and the
import time (in fresh processes).

    python bench/python/report_time.py [--layers 5] [--repeat 7]
Run it in an environment with xlamem and jax (test/python/run.sh leaves one in
build/python/venv).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=5, help="transformer blocks (3 in the corpus: 4,787 instructions; 5: 9,358)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "xla-oracle"))
    import jax
    import programs
    import xlamem

    fn, example, jit_kwargs = programs.transformer_train_step(layers=args.layers)
    t0 = time.perf_counter()
    compiled = jax.jit(fn, **jit_kwargs).lower(*example).compile()
    compile_s = time.perf_counter() - t0
    text = compiled.as_text()
    instructions = sum(1 for line in text.splitlines() if re.match(r"\s+(ROOT )?%?[\w.\-]+ = ", line))
    print(f"jax {jax.__version__}, {args.layers} blocks: {instructions} instructions in the optimised module "
          f"(compiled in {compile_s:.1f} s)")

    ma, rep, txt = [], [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        compiled.as_text()
        txt.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        stats = compiled.memory_analysis()
        ma.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        r = xlamem.report(compiled)
        rep.append(time.perf_counter() - t0)
    fields = ["argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes"]
    equal = all(getattr(stats, f) == getattr(r.stats, f) for f in fields)
    print(f"compiled.memory_analysis(): best {min(ma) * 1e3:.2f} ms, median {statistics.median(ma) * 1e3:.2f} ms")
    print(f"compiled.as_text():         best {min(txt):.3f} s, median {statistics.median(txt):.3f} s "
          "(XLA prints the module; report() starts with it)")
    print(f"xlamem.report(compiled):    best {min(rep):.3f} s, median {statistics.median(rep):.3f} s "
          f"({args.repeat} runs; {len(r.timeline)} buffers; statistics equal memory_analysis(): {equal})")

    # In fresh processes, the clock around the import statement alone (the suite's
    # test/python/python_test.py reports `-X importtime`'s figure).
    took = []
    for _ in range(args.repeat):
        t = subprocess.run([sys.executable, "-c", "import time; t = time.perf_counter(); import xlamem; "
                            "print(time.perf_counter() - t)"], capture_output=True, text=True, check=True)
        took.append(float(t.stdout.split()[-1]))
    print(f"import xlamem: best {min(took):.3f} s, median {statistics.median(took):.3f} s (fresh processes)")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
