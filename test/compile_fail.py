#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compile-fail check: a translation unit must fail to compile, with a given message.

usage: compile_fail.py --cxx CXX --include DIR --source FILE --define NAME=VALUE --expect TEXT
       compile_fail.py --cxx CXX --include DIR --source FILE --define NAME=VALUE --must-compile

Exits 0 only when the compiler rejects the source and its output contains TEXT (so a failure
for another reason, such as a typo in the test, does not count as passing). With
--must-compile it is the control: the same source without the planted mistake compiles.
"""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--expect")
    ap.add_argument("--must-compile", action="store_true")
    args = ap.parse_args()
    cmd = [args.cxx, "-std=c++20", "-fsyntax-only", "-I", args.include]
    cmd += [f"-D{d}" for d in args.define] + [args.source]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if args.must_compile:
        if proc.returncode != 0:
            print(f"FAILED: the control {args.source} {' '.join(args.define)} does not compile:")
            print(proc.stdout[-4000:])
            return 1
        print(f"ok: the control {args.source} {' '.join(args.define)} compiles")
        return 0
    if not args.expect:
        ap.error("--expect or --must-compile is required")
    if proc.returncode == 0:
        print(f"FAILED: {args.source} {' '.join(args.define)} compiled; it must not")
        return 1
    if args.expect not in proc.stdout:
        print(f"FAILED: {args.source} {' '.join(args.define)} was rejected, but not with '{args.expect}':")
        print(proc.stdout[-4000:])
        return 1
    print(f"ok: {args.source} {' '.join(args.define)} is rejected with '{args.expect}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
