#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Header isolation: every public header compiles alone, and core headers stay toolkit-free.

Given the header lists that meson installs, this compiles one translation unit per header:
  * every header with g++ -std=c++20 -Wall -Wextra -Wpedantic -Werror;
  * all core headers together in one translation unit with clang++ (same flags) and, as a .cu
    file, with nvcc -std=c++20: that every header is self-contained is g++'s check above, these
    two check that the code is accepted by the other front ends (an nvcc run costs 4-6 s even
    for a small header; one per header was most of this test's time);
  * every core header with a check that no CUDA or LLVM include guard is defined afterwards,
    with the toolkits' include paths visible, so a stray #include <cuda.h> is caught by name;
  * every header against the layering table LAYERS: a header in folder F may include xlamem
    headers only from the folders LAYERS[F] allows (passes/ never includes hlo/ or io/, for
    example), and a folder missing from the table is an error, so a new folder states its place.
    A row or an allowed entry may also name one header ("packing/solvers.hpp"): it then holds
    for that header alone. io/ has a row per subfolder (io/codec, io/xla, io/sharding, ...),
    and a header straight in io/ has none.
  * that the xlamem headers include each other without a cycle (hlo/ once closed one through
    includes at the ends of files);
  * with --tool DIR, the command-line tool's sources against the row TOOL_ROW: the tool reaches
    the library only through its front door (io/, report/, packing/solvers.hpp, hlo/backend.hpp,
    ...), never through a detail/ header or a `detail::` name.
It prints one line per check and a count; it exits 1 if any check failed.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

# Include guards of headers a core header must never pull in.
FORBIDDEN_GUARDS = {
    "__cuda_cuda_h__": "cuda.h",
    "__CUDA_RUNTIME_H__": "cuda_runtime.h",
    "__CUDA_RUNTIME_API_H__": "cuda_runtime_api.h",
    "__DRIVER_TYPES_H__": "driver_types.h",
    "LLVM_CONFIG_H": "llvm/Config/llvm-config.h",
    "LLVM_ABI_BREAKING_CHECKS_H": "llvm/Config/abi-breaking.h",
    "LLVM_SUPPORT_COMPILER_H": "llvm/Support/Compiler.h",
    "LLVM_ADT_STRINGREF_H": "llvm/ADT/StringRef.h",
    "LLVM_EXECUTIONENGINE_RTDYLDMEMORYMANAGER_H": "llvm/ExecutionEngine/RTDyldMemoryManager.h",
}


# Which xlamem folders a header in each folder may include (besides its own folder). "core" is
# the top-level headers (error.hpp, align.hpp, config.hpp, version.hpp). docs/design.md shows
# this table; keep the two in step.
LAYERS = {
    "core": set(),
    "alloc": {"core"},
    "graph": {"core"},
    "packing": {"core"},
    "memory_terms": {"core"},
    "sharding": {"core", "memory_terms"},
    "jit": {"core", "alloc"},
    "passes": {"core", "graph", "packing"},
    "hlo": {"core", "graph"},
    "autoshard": {"core", "passes", "hlo", "sharding"},
    "report": {"core", "graph", "packing", "passes", "hlo"},
    # io/ is one row per subfolder: the codecs over the core only, XLA's dump formats over the
    # passes they print, then each subject's formats over that subject and the codecs.
    "io/codec": {"core"},
    "io/xla": {"core", "io/codec", "graph", "passes"},
    "io/packing": {"core", "io/codec", "packing"},
    "io/sharding": {"core", "io/codec", "sharding"},
    "io/autoshard": {"core", "io/codec", "autoshard", "sharding"},
    "io/memory_terms": {"core", "io/codec", "memory_terms"},
    "io/report": {"core", "io/codec", "io/xla", "report", "hlo"},
    "cuda": {"core", "alloc"},
    "llvm": {"core", "alloc", "jit"},
}
# The command-line tool (tools/xlamem, checked with --tool): the front door only. Packing is
# reached through its named solvers, HLO through the reader, printer, graph model and backend
# presets, memory terms through the named policies; never a detail/ header.
TOOL_ROW = {"core", "io", "report", "packing/solvers.hpp", "hlo/backend.hpp", "hlo/graph_model.hpp",
            "hlo/printer.hpp", "hlo/reader.hpp", "passes/memory_space_propagation.hpp",
            "memory_terms/named_policies.hpp", "sharding/solver.hpp", "sharding/evaluate.hpp",
            "sharding/mesh.hpp", "autoshard/autoshard.hpp"}
# The umbrella header may include anything it documents.
LAYER_EXEMPT = {"xlamem/xlamem.hpp"}


def folder_of(name):
    """The layer of an include name like xlamem/passes/liveness.hpp: its first folder, or for
    io/ its first two (xlamem/io/codec/json.hpp -> io/codec)."""
    parts = name.split("/")
    if len(parts) > 3 and parts[1] == "io":
        return "io/" + parts[2]
    return parts[1] if len(parts) > 2 else "core"


def allows_folder(row, folder):
    """Whether `row` names `folder` or, for io/ subfolders, io/ as a whole (the tool's row)."""
    return folder in row or (folder.startswith("io/") and "io" in row)


def header_key(name):
    """`xlamem/packing/solvers.hpp` -> `packing/solvers.hpp` (a row key naming one header)."""
    return name.split("/", 1)[1] if name.startswith("xlamem/") else name


def allowed(target, row, own):
    """Whether include name `target` is allowed by `row` for a header in folder `own`."""
    folder = folder_of(target)
    return folder == own or allows_folder(row, folder) or header_key(target) in row


def include_violations(who, layer, row, text):
    """Messages for each xlamem include in `text` (of `who`, in folder `layer`) `row` forbids."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*[<"](xlamem/[^>"]+)[>"]', line)
        if m and not allowed(m.group(1), row, layer):
            out.append(f"{who}:{number}: layering: {layer}/ may not include {m.group(1)} "
                       f"({layer}/ may include {', '.join(sorted(row)) or 'only the standard library'})")
    return out


def layering_violations(name, text):
    """Messages for each xlamem include of header `name` (text `text`) that LAYERS forbids."""
    if name in LAYER_EXEMPT:
        return []
    layer = folder_of(name)
    if header_key(name) in LAYERS:
        return include_violations(name, layer, LAYERS[header_key(name)], text)
    if layer not in LAYERS:
        return [f"{name}: folder '{layer}' is not in the layering table (test/header_isolation.py LAYERS)"]
    return include_violations(name, layer, LAYERS[layer], text)


def include_cycles(texts):
    """One message per include cycle among headers `texts` (include name -> text)."""
    edges = {name: [m.group(1) for m in re.finditer(r'(?m)^\s*#\s*include\s*[<"](xlamem/[^>"]+)[>"]', text)]
             for name, text in texts.items()}
    state, out = {}, []

    def visit(name, path):
        state[name] = 1
        for target in edges.get(name, []):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                out.append("include cycle: " + " -> ".join(cycle))
            elif state.get(target) is None and target in edges:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(edges):
        if state.get(name) is None:
            visit(name, [name])
    return out


def tool_violations(name, text):
    """Messages for what the tool's source `name` (text `text`) may not use: an include outside
    TOOL_ROW, a detail/ header, or a name in a `detail` namespace."""
    out = include_violations(name, "tools/xlamem", TOOL_ROW, text)
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(r'#\s*include\s*[<"]xlamem/(.*/)?detail/', line):
            out.append(f"{name}:{number}: the tool includes a detail/ header (use the front door)")
        elif re.search(r'\bdetail::', line):
            out.append(f"{name}:{number}: the tool uses a detail:: name (use the front door)")
    return out


def relative_name(header, include_dir):
    return os.path.relpath(os.path.abspath(header), os.path.abspath(include_dir))


def guard_check_source(name):
    lines = [f'#include "{name}"']
    for guard, file in FORBIDDEN_GUARDS.items():
        lines += [
            f"#ifdef {guard}",
            f'#error "core header {name} pulls in {file}: core headers may include only the standard library"',
            "#endif",
        ]
    lines.append("int xlamem_header_isolation_anchor;")
    return "\n".join(lines) + "\n"


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--include", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--clang")
    ap.add_argument("--nvcc")
    ap.add_argument("--cuda-include")
    ap.add_argument("--llvm-include")
    ap.add_argument("--core", nargs="*", default=[])
    ap.add_argument("--cuda", nargs="*", default=[])
    ap.add_argument("--llvm", nargs="*", default=[])
    ap.add_argument("--tool", help="the command-line tool's source folder, checked against TOOL_ROW")
    ap.add_argument("--self-test", action="store_true",
                    help="also plant CUDA and LLVM includes in a scratch core header and require "
                         "that they are caught")
    args = ap.parse_args()

    warn = ["-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only"]
    toolkit_includes = []
    if args.cuda_include:
        toolkit_includes += ["-isystem", args.cuda_include]
    if args.llvm_include:
        toolkit_includes += ["-isystem", args.llvm_include]

    work = tempfile.mkdtemp(prefix="xlamem-headers-")
    checks = []  # (label, command)

    def source(name, suffix, text):
        path = os.path.join(work, name.replace("/", "__") + suffix)
        with open(path, "w") as f:
            f.write(text)
        return path

    core_names = [relative_name(header, args.include) for header in args.core]
    for name in core_names:
        cpp = source(name, ".cpp", guard_check_source(name))
        checks.append((f"g++     {name}", [args.cxx, *warn, "-I", args.include, *toolkit_includes, cpp]))
    if core_names:
        every = "".join(f'#include "{name}"\n' for name in core_names) + "int xlamem_header_isolation_anchor;\n"
        together = f"all {len(core_names)} core headers in one translation unit"
        if args.clang:
            cpp = source("all-core", ".cpp", every)
            checks.append((f"clang++ {together}", [args.clang, *warn, "-I", args.include, *toolkit_includes, cpp]))
        if args.nvcc:
            # nvcc pre-includes cuda_runtime.h in every .cu file, so the guard check is left to
            # the host compilers; this check is that the headers parse under EDG.
            cu = source("all-core", ".cu", every)
            checks.append((f"nvcc    {together}", [args.nvcc, "-std=c++20", "-I", args.include, "-c", cu,
                                                   "-o", os.path.join(work, "all-core.o")]))
    for header, extra in [(h, ["-isystem", args.cuda_include] if args.cuda_include else []) for h in args.cuda] + \
                         [(h, ["-isystem", args.llvm_include] if args.llvm_include else []) for h in args.llvm]:
        name = relative_name(header, args.include)
        cpp = source(name, ".cpp", f'#include "{name}"\nint xlamem_header_isolation_anchor;\n')
        checks.append((f"g++     {name}", [args.cxx, *warn, "-I", args.include, *extra, cpp]))

    layering_failures = []  # (label, message)
    for header in args.core + args.cuda + args.llvm:
        name = relative_name(header, args.include)
        with open(header) as f:
            problems = layering_violations(name, f.read())
        print(("ok      " if not problems else "FAILED  ") + f"layering {name}", flush=True)
        if problems:
            layering_failures.append((f"layering {name}", "\n".join(problems)))
    layering_checks = len(args.core) + len(args.cuda) + len(args.llvm)
    texts = {}
    for header in args.core + args.cuda + args.llvm:
        with open(header) as f:
            texts[relative_name(header, args.include)] = f.read()
    cycles = include_cycles(texts)
    print(("ok      " if not cycles else "FAILED  ") + "no include cycle among the headers", flush=True)
    if cycles:
        layering_failures.append(("include cycles", "\n".join(cycles)))
    layering_checks += 1
    if args.tool:
        for file in sorted(os.listdir(args.tool)):
            if not file.endswith((".cpp", ".hpp")):
                continue
            with open(os.path.join(args.tool, file)) as f:
                problems = tool_violations(f"tools/xlamem/{file}", f.read())
            print(("ok      " if not problems else "FAILED  ") + f"front door tools/xlamem/{file}", flush=True)
            if problems:
                layering_failures.append((f"front door tools/xlamem/{file}", "\n".join(problems)))
            layering_checks += 1

    skipped = []
    if not args.clang:
        skipped.append("clang++ not found: core headers not checked with clang")
    if not args.nvcc:
        skipped.append("nvcc not found: core headers not checked with nvcc")

    planted = []  # (label, command) that must FAIL, naming the planted header
    if args.self_test:
        for toolkit, include, available in [("cuda", "cuda.h", args.cuda_include),
                                            ("llvm", "llvm/Config/llvm-config.h", args.llvm_include)]:
            if not available:
                continue
            inc = os.path.join(work, f"planted-{toolkit}")
            os.makedirs(os.path.join(inc, "xlamem"))
            with open(os.path.join(inc, "xlamem", f"planted_{toolkit}.hpp"), "w") as f:
                f.write(f"#pragma once\n#include <vector>\n#include <{include}>\n")
            name = f"xlamem/planted_{toolkit}.hpp"
            cpp = source(name, ".cpp", guard_check_source(name))
            planted.append((name, [args.cxx, *warn, "-I", inc, *toolkit_includes, cpp]))

    if args.self_test:
        # A planted passes/ header that includes the HLO IR must be reported, and one that
        # includes only graph/ must not.
        bad = layering_violations("xlamem/passes/planted_layering.hpp",
                                  '#pragma once\n#include <vector>\n#include "xlamem/hlo/module.hpp"\n')
        good = layering_violations("xlamem/passes/planted_layering.hpp",
                                   '#pragma once\n#include "xlamem/graph/graph_traits.hpp"\n')
        caught = len(bad) == 1 and "passes/ may not include xlamem/hlo/module.hpp" in bad[0] and not good
        print(("ok      " if caught else "FAILED  ") + "self-test: planted passes/ -> hlo/ include is "
              + ("caught" if caught else "NOT caught"))
        if not caught:
            layering_failures.append(("self-test layering", "\n".join(bad + good)))
        layering_checks += 1
        # io/ is held per subfolder: a planted io/sharding/ header may include its subject and
        # the codecs but not hlo/ or another subject's formats; a codec may include no subject;
        # a header straight in io/ has no row at all.
        bad = (layering_violations("xlamem/io/sharding/planted.hpp",
                                   '#pragma once\n#include "xlamem/hlo/module.hpp"\n#include "xlamem/io/report/memory_report_text.hpp"\n')
               + layering_violations("xlamem/io/codec/planted.hpp", '#pragma once\n#include "xlamem/sharding/problem.hpp"\n')
               + layering_violations("xlamem/io/planted.hpp", '#pragma once\n'))
        good = layering_violations("xlamem/io/sharding/planted.hpp",
                                   '#pragma once\n#include "xlamem/io/codec/json_reader.hpp"\n#include "xlamem/sharding/problem.hpp"\n'
                                   '#include "xlamem/io/sharding/iopddl_json.hpp"\n')
        caught = (len(bad) == 4 and "io/sharding/ may not include xlamem/hlo/module.hpp" in bad[0]
                  and "io/sharding/ may not include xlamem/io/report/" in bad[1]
                  and "io/codec/ may not include xlamem/sharding/" in bad[2]
                  and "folder 'io' is not in the layering table" in bad[3] and not good)
        print(("ok      " if caught else "FAILED  ") + "self-test: planted io/sharding/ -> hlo/ and io/report/, "
              "io/codec/ -> sharding/ includes and a header straight in io/ are " + ("caught" if caught else "NOT caught"))
        if not caught:
            layering_failures.append(("self-test io layering", "\n".join(bad + good)))
        layering_checks += 1
        # A planted tool source that reaches past the front door (a packer's own header, a
        # detail/ header, a detail:: name) must be reported three times; one that uses the
        # front door must not.
        bad = tool_violations("tools/xlamem/planted.cpp",
                              '#include "xlamem/packing/search.hpp"\n#include "xlamem/passes/detail/xla_order.hpp"\n'
                              "auto x = xlamem::detail::in_binary_units(1);\n")
        good = tool_violations("tools/xlamem/planted.cpp",
                               '#include "xlamem/packing/solvers.hpp"\n#include "xlamem/io/codec/json.hpp"\n')
        looped = include_cycles({"xlamem/a/x.hpp": '#include "xlamem/a/y.hpp"\n',
                                 "xlamem/a/y.hpp": '#include "xlamem/b/z.hpp"\n',
                                 "xlamem/b/z.hpp": '#include "xlamem/a/x.hpp"\n'})
        caught = len(bad) == 4 and not good and len(looped) == 1 and "z.hpp -> xlamem/a/x.hpp" in looped[0]
        print(("ok      " if caught else "FAILED  ") + "self-test: planted tool includes past the front door and a planted include cycle are "
              + ("caught" if caught else "NOT caught"))
        if not caught:
            layering_failures.append(("self-test front door", "\n".join(bad + good)))
        layering_checks += 1

    failures = list(layering_failures)
    jobs = max(1, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: (c[0], *run(c[1])), checks))
    for label, code, output in results:
        print(("ok      " if code == 0 else "FAILED  ") + label, flush=True)
        if code != 0:
            failures.append((label, output))
    for label, output in failures:
        print(f"\n--- {label} ---\n{output.strip()}")
    for name, cmd in planted:
        code, output = run(cmd)
        caught = code != 0 and f"core header {name} pulls in" in output
        print(("ok      " if caught else "FAILED  ") + f"self-test: planted toolkit include in {name} is "
              + ("caught" if caught else "NOT caught"))
        if not caught:
            failures.append((f"self-test {name}", output))
    for s in skipped:
        print(f"note: {s}")
    headers = len(args.core) + len(args.cuda) + len(args.llvm)
    print(f"header isolation: {headers} public headers ({len(args.core)} core, {len(args.cuda)} cuda, "
          f"{len(args.llvm)} llvm), {len(checks) + len(planted) + layering_checks} checks, "
          f"{len(checks) + len(planted) + layering_checks - len(failures)} passed, "
          f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
