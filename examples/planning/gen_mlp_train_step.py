#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes examples/planning/mlp_train_step.hlo, the model `./run demo` plans: the
`mlp_train_step` program of tools/xla-oracle/programs.py (loss, gradient and an SGD update of a
256-512-256-10 MLP on a batch of 32) compiled by XLA:CPU, as `compiled.as_text()` gives it:
optimised, scheduled, with its metadata (op names and the stack-frame tables), so that the demo
names the lines of the model that hold the peak.

Paths in the metadata are made machine-independent: this repository's root is removed (the
model's lines read `tools/xla-oracle/programs.py:NN`) and so is everything up to
`site-packages/` (JAX's own frames read `jax/_src/...`).

Usage (in an environment with jax, CPU): python examples/planning/gen_mlp_train_step.py [OUT]
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "xla-oracle"))

import jax  # noqa: E402

import programs  # noqa: E402


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "mlp_train_step.hlo")
    fn, args, kwargs = programs.PROGRAMS["mlp_train_step"]()
    text = jax.jit(fn, **kwargs).lower(*args).compile().as_text()
    text = text.replace(ROOT + os.sep, "")
    text = re.sub(r'"[^"\n]*?site-packages/', '"', text)
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out}: jax {jax.__version__}, {text.count(chr(10))} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
