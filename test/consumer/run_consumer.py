#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds and runs a tiny outside project against xlamem.

Modes: `subproject` (Meson dependency('xlamem') with xlamem under subprojects/),
`pkg-config` and `cmake` (xlamem installed to a temporary prefix first).
Usage: run_consumer.py MODE SOURCE_ROOT WORK_DIR
"""
import os
import shutil
import subprocess
import sys

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


def main():
    mode, source_root, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    consumer = os.path.join(HERE, "consumer.cpp")

    if mode == "subproject":
        project = os.path.join(work, "project")
        shutil.copytree(os.path.join(HERE, "meson"), project)
        shutil.copy(consumer, project)
        os.makedirs(os.path.join(project, "subprojects"))
        os.symlink(source_root, os.path.join(project, "subprojects", "xlamem"))
        build = os.path.join(work, "build")
        sh(["meson", "setup", build, project, "--wrap-mode=nodownload"])
        sh(["meson", "compile", "-C", build])
        sh([os.path.join(build, "consumer")])
    elif mode == "pkg-config":
        prefix = install(source_root, work)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "share", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "xlamem"], env=env, check=True,
                               stdout=subprocess.PIPE, text=True).stdout.split()
        print("pkg-config --cflags xlamem:", " ".join(flags))
        exe = os.path.join(work, "consumer")
        sh([os.environ.get("CXX", "c++"), "-std=c++20", *flags, consumer, "-o", exe])
        sh([exe])
    elif mode == "cmake":
        prefix = install(source_root, work)
        project = os.path.join(work, "project")
        shutil.copytree(os.path.join(HERE, "cmake"), project)
        shutil.copy(consumer, project)
        build = os.path.join(work, "build")
        sh(["cmake", "-S", project, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}"])
        sh(["cmake", "--build", build])
        sh([os.path.join(build, "consumer")])
    else:
        print(f"unknown mode {mode!r}: expected subproject, pkg-config or cmake", file=sys.stderr)
        return 2
    print(f"consumer {mode}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
