#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs examples/custom_graph/plan_layers and holds its plan to figures computed by hand.

usage: check_output.py PLAN_LAYERS OUT_DIR

The decoder step (layer_graph.hpp): inputs tokens 16 KiB, kv_cache 256 KiB, w_qkv 4 MiB;
activations of 16 KiB each; result = (logits, kv_new) with kv_cache donated to element 1.
  argument = 4 MiB + 256 KiB + 16 KiB                      = 4472832
  output   = kv_cache's allocation (live out through kv_new) 262144
           + logits 16384 + the result's pointer table 16   = 278544
  alias    = the donated cache                              = 262144
  temp     = attn [6,7] and proj [7,8] overlap at step 7    = 32768 (the lower bound)
  peak     = arguments + the heap at step 7                 = 4505600
"""
import os
import subprocess
import sys


def main():
    exe, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    svg = os.path.join(out_dir, "decoder_step.svg")
    proc = subprocess.run([exe, "--svg", svg], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    expect(proc.returncode == 0, f"exit status {proc.returncode}")
    expect("CompiledMemoryStats(generated_code_size_in_bytes=0, argument_size_in_bytes=4472832, "
           "output_size_in_bytes=278544, alias_size_in_bytes=262144, temp_size_in_bytes=32768," in out,
           "the statistics line")
    expect("peak_memory_in_bytes=4505600" in out, "the peak")
    expect("HloLiveRange (max 10):" in out and "    kv_cache{}:0-5\n" in out and "    kv_new{}:5-10\n" in out,
           "the live ranges (the donated cache dies where the update starts)")
    expect("    decoder_step (100.0%" in out, "the computation name from graph_traits::computation_name")
    expect("allocation 1: size 262144, parameter 1, shape |f32[64,1024]| at ShapeIndex {}, maybe-live-out:\n"
           " value: <1 kv_cache @0> (size=262144,offset=0): f32[64,1024]\n"
           " value: <5 kv_new @0> (size=262144,offset=0): f32[64,1024]\n" in out,
           "the donated cache's allocation holds the updated cache (input/output alias + in-place update)")
    expect("kv_new in kv_cache's allocation: yes" in out, "kv_new placed over kv_cache")
    expect("act over embed's bytes: yes" in out, "the relu written over its dying operand")
    expect("temporary heap: 32768 bytes, lower bound 32768, 2 items" in out, "the temporary heap")
    expect(f"picture: {svg} (2 buffers)" in out, "the picture line")
    try:
        with open(svg) as f:
            text = f.read()
        expect(text.startswith("<svg") or "<svg " in text, "an SVG document")
        expect(text.rstrip().endswith("</svg>"), "a complete SVG document")
        expect("attn" in text and "proj" in text, "the heap's buffers in the picture")
    except OSError as e:
        failures.append(f"no picture: {e}")
    if failures:
        print(out)
        for f in failures:
            print(f"FAILED: {f}")
        return 1
    print(f"ok: plan_layers planned the decoder step as computed by hand; picture {svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
