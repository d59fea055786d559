#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds and runs a small outside project against xlamem, and compiles every public header
with the flags that project gets.

Modes: `subproject` (Meson dependency('xlamem') with xlamem under subprojects/),
`pkg-config` and `cmake` (xlamem installed to a temporary prefix first, then found through
`pkg-config --cflags xlamem` or CMake's `find_package(xlamem)`).

In every mode it
  1. builds consumer.cpp (a pool, a plan of an HLO module read from text, a packing) the way
     that mode's users would, and runs it;
  2. takes the compile flags that build gave consumer.cpp (pkg-config's output, or the
     consumer's entry in compile_commands.json), and compiles one generated translation unit
     that includes every header under SOURCE_ROOT/include (twice each) with those flags
     alone (`-fsyntax-only`); if it fails, each header alone, to name the failures. The list comes
     from the source tree, not from the prefix, so a header that was not installed fails by
     name, and so does one that includes it. cuda/ headers also get the CUDA
     toolkit's include directory and llvm/ headers LLVM's, when given; otherwise they are
     reported as skipped, never as compiled.
Usage: run_consumer.py MODE SOURCE_ROOT WORK_DIR [--cuda-include DIR] [--llvm-include DIR]
Exits 0 only when the consumer ran and every header that was tried compiled.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, cwd=None, env=None):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True)


def install(source_root, work):
    """Installs the headers, .pc and CMake files of xlamem into WORK/prefix."""
    build, prefix = os.path.join(work, "install-build"), os.path.join(work, "prefix")
    sh(["meson", "setup", build, source_root, "--prefix", prefix, "--wrap-mode=nodownload",
        "-Dtests=disabled", "-Dbenchmarks=disabled", "-Dexamples=disabled", "-Dtools=disabled",
        "-Dcuda=disabled", "-Dllvm=disabled"])
    sh(["meson", "install", "-C", build, "--quiet"])
    return prefix


def flags_from_compile_commands(build, source_name):
    """The compiler and the include / define / standard flags a build gave `source_name`."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    for e in entries:
        if os.path.basename(e["file"]) != source_name:
            continue
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        keep, i = [], 1
        while i < len(args):
            a = args[i]
            if a in ("-I", "-isystem", "-D", "-include"):
                keep += [a, args[i + 1]]
                i += 2
                continue
            if a.startswith(("-I", "-isystem", "-D", "-std=")):
                # Meson's include dirs are relative to the build directory.
                if a.startswith("-I") and not os.path.isabs(a[2:]):
                    a = "-I" + os.path.normpath(os.path.join(e["directory"], a[2:]))
                keep.append(a)
            i += 1
        # A relative -isystem DIR, likewise.
        fixed, j = [], 0
        while j < len(keep):
            if keep[j] == "-isystem" and not os.path.isabs(keep[j + 1]):
                fixed += ["-isystem", os.path.normpath(os.path.join(e["directory"], keep[j + 1]))]
                j += 2
                continue
            fixed.append(keep[j])
            j += 1
        return args[0], fixed
    raise SystemExit(f"no compile command for {source_name} in {build}/compile_commands.json")


def public_headers(source_root):
    """Every header under SOURCE_ROOT/include, as names relative to it (xlamem/...)."""
    root = os.path.join(source_root, "include")
    names = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".hpp", ".h")):
                names.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(names)


def compile_every_header(mode, cxx, flags, source_root, work, cuda_include, llvm_include):
    """Compiles every header, each included twice, in one translation unit with the consumer's
    flags; if that fails, each header alone, so that the failures are named. Returns (failed
    header names, headers compiled, skipped names). That each header is self-contained is
    header isolation's check (test/header_isolation.py); this one is that the consumer's flags
    find them all. One translation unit instead of one per header: 3 modes x 118 headers were
    a third of the consumer tests' time."""
    tus = os.path.join(work, "headers")
    os.makedirs(tus, exist_ok=True)
    names, extra, skipped = [], [], []
    for name in public_headers(source_root):
        if name.startswith("xlamem/cuda/"):
            if not cuda_include:
                skipped.append(name)
                continue
            if cuda_include not in extra:
                extra += ["-isystem", cuda_include]
        elif name.startswith("xlamem/llvm/"):
            if not llvm_include:
                skipped.append(name)
                continue
            if llvm_include not in extra:
                extra += ["-isystem", llvm_include]
        names.append(name)

    def command(tu_name, headers):
        tu = os.path.join(tus, tu_name + ".cpp")
        with open(tu, "w") as f:
            f.write("".join(f"#include <{n}>\n#include <{n}>\n" for n in headers)
                    + "int xlamem_consumer_anchor;\n")
        return [cxx, "-std=c++20", *flags, *extra, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", tu]

    def run(job):
        label, cmd = job
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return label, cmd, p.returncode, p.stdout

    failures = []
    label, cmd, rc, out = run(("every header", command("every-header", names)))
    if rc != 0:
        print(f"FAIL {mode}: the headers do not all compile with the consumer's flags:")
        print("  " + " ".join(cmd))
        print(out.rstrip())
        print(f"consumer {mode}: each header alone, to name the ones that fail:")
        jobs = [(n, command(n.replace("/", "__"), [n])) for n in names]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for name, cmd, rc, out in pool.map(run, jobs):
                if rc != 0:
                    failures.append(name)
                    print(f"FAIL {mode}: <{name}> does not compile with the consumer's flags:")
                    print(out.rstrip())
        if not failures:
            failures.append("(the headers together; each compiles alone)")
    if skipped:
        why = []
        if any(n.startswith("xlamem/cuda/") for n in skipped):
            why.append("cuda/ (no CUDA toolkit found)")
        if any(n.startswith("xlamem/llvm/") for n in skipped):
            why.append("llvm/ (no LLVM found)")
        print(f"consumer {mode}: skipped {len(skipped)} headers: " + ", ".join(why))
    return failures, len(names), skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["subproject", "pkg-config", "cmake"])
    ap.add_argument("source_root")
    ap.add_argument("work")
    ap.add_argument("--cuda-include", default="")
    ap.add_argument("--llvm-include", default="")
    args = ap.parse_args()
    mode, source_root, work = args.mode, os.path.abspath(args.source_root), os.path.abspath(args.work)
    start = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    consumer = os.path.join(HERE, "consumer.cpp")

    # Configure the way the mode's users would; the flags come from that configuration, the
    # headers are compiled with them first, then the program is built and run.
    if mode == "subproject":
        project = os.path.join(work, "project")
        shutil.copytree(os.path.join(HERE, "meson"), project)
        shutil.copy(consumer, project)
        os.makedirs(os.path.join(project, "subprojects"))
        os.symlink(source_root, os.path.join(project, "subprojects", "xlamem"))
        build = os.path.join(work, "build")
        sh(["meson", "setup", build, project, "--wrap-mode=nodownload"])
        cxx, flags = flags_from_compile_commands(build, "consumer.cpp")
        program = [["meson", "compile", "-C", build], [os.path.join(build, "consumer")]]
    elif mode == "pkg-config":
        prefix = install(source_root, work)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "share", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "xlamem"], env=env, check=True,
                               stdout=subprocess.PIPE, text=True).stdout.split()
        print("pkg-config --cflags xlamem:", " ".join(flags))
        cxx = os.environ.get("CXX", "c++")
        exe = os.path.join(work, "consumer")
        program = [[cxx, "-std=c++20", *flags, consumer, "-o", exe], [exe]]
    else:
        prefix = install(source_root, work)
        project = os.path.join(work, "project")
        shutil.copytree(os.path.join(HERE, "cmake"), project)
        shutil.copy(consumer, project)
        build = os.path.join(work, "build")
        sh(["cmake", "-S", project, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
        cxx, flags = flags_from_compile_commands(build, "consumer.cpp")
        program = [["cmake", "--build", build], [os.path.join(build, "consumer")]]

    print(f"consumer {mode}: headers compiled with {cxx} {' '.join(flags)}", flush=True)
    failures, compiled, _ = compile_every_header(mode, cxx, flags, source_root, work,
                                                 args.cuda_include, args.llvm_include)
    ran = True
    for cmd in program:
        try:
            sh(cmd)
        except subprocess.CalledProcessError as e:
            print(f"consumer {mode}: FAILED: `{' '.join(e.cmd)}` exited {e.returncode}")
            ran = False
            break
    elapsed = time.monotonic() - start
    if failures:
        print(f"consumer {mode}: {len(failures)} of {compiled} headers failed: "
              + ", ".join(failures))
    if failures or not ran:
        return 1
    print(f"consumer {mode}: ok (program ran; {compiled} headers compiled with its flags; {elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"consumer {sys.argv[1]}: FAILED: `{' '.join(e.cmd)}` exited {e.returncode}")
        sys.exit(1)
