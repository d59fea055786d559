# SPDX-License-Identifier: Apache-2.0
"""The differential corpus: many programs, several XLA versions, XLA:CPU's own answers.

Run through generate-corpus.sh, which makes one virtual environment per version and calls

    python corpus.py --out DIR [--only NAME ...] [--group G ...]   # driver: DIR/<version>/...
    python corpus.py --list                                          # the programs
    python corpus.py --pack DIR --archive FILE.tar.xz                # deterministic archive

The driver compiles each program in a fresh Python process (XLA reads XLA_FLAGS once) and keeps,
in DIR/<version>/<program>/, XLA's optimised module, its buffer assignment, the values and
live-range analyses, compiled.memory_analysis() (JAX only) and writes DIR/<version>/manifest.json.
<version> is jax-<jaxlib version> or tf-<tensorflow version>. A program whose library is missing
or fails to import in this environment is recorded under "unavailable" with the reason; a
program that fails to compile is recorded under "failed" with the end of its error.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import lzma
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import registry  # noqa: E402

PROGRAM_MODULES = ("programs", "programs_hard", "programs_spmd", "programs_models", "programs_shapes",
                   "programs_tf")

MEMORY_FIELDS = (
    "argument_size_in_bytes",
    "output_size_in_bytes",
    "alias_size_in_bytes",
    "temp_size_in_bytes",
    "generated_code_size_in_bytes",
    "peak_memory_in_bytes",
    "host_argument_size_in_bytes",
    "host_output_size_in_bytes",
    "host_alias_size_in_bytes",
    "host_temp_size_in_bytes",
    "host_generated_code_size_in_bytes",
    "total_allocation_bytes",
    "peak_unpadded_heap_bytes",
)

# What XLA writes per module that the corpus keeps; `.cpu_after_optimizations` is the stem.
KEPT_SUFFIXES = (
    ".txt",
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
)


def load_programs() -> dict[str, registry.Program]:
    """Every program: the 15 oracle programs of programs.py (group "oracle") and the rest."""
    for m in PROGRAM_MODULES:
        mod = importlib.import_module(m)
        if m == "programs":
            for n, f in mod.PROGRAMS.items():
                if n not in registry.PROGRAMS:
                    registry.program("oracle")(f)
    return registry.PROGRAMS


def dump_flags(dump_dir: str, module_re: str, prog: registry.Program) -> str:
    flags = [
        f"--xla_dump_to={dump_dir}",
        "--xla_dump_hlo_as_text",
        f"--xla_dump_hlo_module_re={module_re}",
    ]
    if prog.frontend != "tf":
        # TF 2.21's XLA predates the split layout: one -buffer-assignment.txt holds the
        # allocations, the used values and HloLiveRange, and this flag does not exist there.
        flags.append("--xla_dump_buffer_assignment_analysis")
    if not prog.metadata:
        flags.append("--xla_dump_disable_metadata")
    if prog.devices > 1:
        flags.append(f"--xla_force_host_platform_device_count={prog.devices}")
    flags.extend(prog.extra_flags)
    return " ".join(flags)


def module_re(prog: registry.Program) -> str:
    if prog.frontend == "tf":
        # TF names the cluster a_inference_<function>_<id>__.<n> (or __inference_...).
        return rf".*inference_{re.escape(prog.name)}_\d+.*"
    return rf"^jit_{re.escape(prog.name)}$"


def environment_version() -> tuple[str, dict]:
    """The corpus version of this interpreter's environment and what it holds."""
    info = {"python": platform.python_version()}
    try:
        import jax
        import jaxlib

        info.update(jax=jax.__version__, jaxlib=jaxlib.__version__)
        version = f"jax-{jaxlib.__version__}"
    except ImportError:
        version = None
    try:
        import importlib.metadata as md

        tfv = md.version("tensorflow-cpu") if _has_dist("tensorflow-cpu") else md.version("tensorflow")
        info["tensorflow"] = tfv
        if version is None:
            version = f"tf-{tfv}"
    except Exception:
        pass
    if version is None:
        raise SystemExit("corpus.py: this environment has neither jax nor tensorflow")
    return version, info


def _has_dist(name: str) -> bool:
    import importlib.metadata as md

    try:
        md.version(name)
        return True
    except md.PackageNotFoundError:
        return False


def library_versions(needs: tuple[str, ...]) -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for n in needs:
        dist = {"haiku": "dm-haiku", "keras_hub": "keras-hub", "jax_md": "jax-md", "mujoco": "mujoco",
                "tensorflow": "tensorflow-cpu" if _has_dist("tensorflow-cpu") else "tensorflow",
                "MaxText": "maxtext", "mujoco.mjx": "mujoco-mjx"}.get(n, n.replace("_", "-"))
        try:
            out[n] = md.version(dist)
        except md.PackageNotFoundError:
            out[n] = "?"
    return out


# ------------------------------------------------------------------------------------------
# Child: compile one program with XLA_FLAGS set by the driver.
# ------------------------------------------------------------------------------------------


def run_child(name: str, json_path: str) -> None:
    prog = load_programs()[name]
    try:
        built = prog.builder()
    except ImportError as e:
        # The library is installed but does not import with this JAX: record, do not fail.
        print(f"UNAVAILABLE: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(3)
    if prog.frontend == "tf":
        fn, args = built
        fn(*args)  # tf.function(jit_compile=True): the first call compiles and dumps
        out = {}
    else:
        import jax

        fn, args, jit_kwargs = built

        # The module is named after the function (jit_<name>) and its parameters after the
        # function's arguments, so rename the function itself; wrap only what cannot be renamed.
        try:
            fn.__name__ = fn.__qualname__ = name
            named = fn
        except (AttributeError, TypeError):
            import functools

            @functools.wraps(fn)
            def named(*a):
                return fn(*a)

            named.__name__ = named.__qualname__ = name
        compiled = jax.jit(named, **jit_kwargs).lower(*args).compile()
        ma = compiled.memory_analysis()
        out = {f: int(getattr(ma, f)) for f in MEMORY_FIELDS if hasattr(ma, f)}
    with open(json_path, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)


def probe_needs(prog: registry.Program) -> str | None:
    """None when every module the program needs is installed here, else the reason. (A module
    that is installed but fails to import is caught in the child: exit 3, "unavailable".)"""
    import importlib.util

    for n in prog.needs:
        try:
            found = importlib.util.find_spec(n) is not None
        except (ImportError, ValueError) as e:
            return f"import {n}: {e}"
        if not found:
            return f"{n} is not installed in this environment"
    return None


# ------------------------------------------------------------------------------------------
# Path scrubbing: metadata names the generating machine's files; make them repo-relative.
# ------------------------------------------------------------------------------------------


def path_rewrites() -> list[tuple[str, str]]:
    subs = []
    purelib = sysconfig.get_paths()["purelib"]
    stdlib = sysconfig.get_paths()["stdlib"]
    subs.append((purelib.rstrip("/") + "/", "site-packages/"))
    subs.append((stdlib.rstrip("/") + "/", "python-stdlib/"))
    subs.append((ROOT.rstrip("/") + "/", ""))
    for p in {os.path.realpath(purelib), os.path.realpath(stdlib)}:
        subs.append((p.rstrip("/") + "/", "site-packages/" if "site-packages" in p else "python-stdlib/"))
    return sorted(set(subs), key=lambda s: -len(s[0]))


_MACHINE = re.compile(r"(/tmp/|/root/|/home/|/work/|/usr/|/opt/)[^\s\"']*")


def scrub(text: str, subs: list[tuple[str, str]]) -> str:
    for a, b in subs:
        text = text.replace(a, b)
    # Anything absolute left (a temp dir, an interpreter elsewhere) loses its directories.
    return _MACHINE.sub(lambda m: "<abs>/" + os.path.basename(m.group(0)), text)


_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*\S")


def count_instructions(hlo_text: str) -> tuple[int, int]:
    total = entry = 0
    in_entry = in_comp = False
    for line in hlo_text.splitlines():
        s = line.strip()
        if not in_comp and s.endswith("{") and not s.startswith("HloModule") and "=" not in s.split("(")[0]:
            in_comp = True
            in_entry = s.startswith("ENTRY")
            continue
        if in_comp and s == "}":
            in_comp = False
            continue
        if in_comp and _INSTR.match(line):
            total += 1
            entry += in_entry
    return total, entry


def allocation_figures(ba_text: str) -> dict[str, int]:
    """XLA's four CompiledMemoryStats numbers summed from the allocation blocks (colour 0)."""
    arg = out = alias = temp = const = tl = 0
    for size, flags in re.findall(r"^allocation \d+: size (\d+)(.*):$", ba_text, re.M):
        size = int(size)
        m = re.search(r", color (\d+)", flags)
        if m and m.group(1) != "0":
            continue
        p, o = ", parameter " in flags, ", maybe-live-out" in flags
        arg += size if p else 0
        out += size if o else 0
        alias += size if p and o else 0
        temp += size if ", preallocated-temp" in flags else 0
        const += size if ", constant" in flags else 0
        tl += size if ", thread-local" in flags else 0
    return {"argument_size_in_bytes": arg, "output_size_in_bytes": out, "alias_size_in_bytes": alias,
            "temp_size_in_bytes": temp, "constant_bytes": const, "thread_local_bytes": tl}


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------


def find_module_files(dump: str, prog: registry.Program) -> tuple[str, dict[str, str]] | None:
    """(module name, {kept suffix: dump file}) of the program's after-optimisation module."""
    cands = {}
    for f in os.listdir(dump):
        m = re.match(r"^(?:module_\d+\.)?(.+?)\.cpu_after_optimizations(\.txt|-buffer-assignment\.txt|"
                     r"-buffer-assignment-values\.txt|-live-range\.txt)$", f)
        if m:
            cands.setdefault(m.group(1), {})[m.group(2)] = f
    if not cands:
        return None
    # TF may compile more than one cluster; keep the largest module.
    best = max(cands, key=lambda k: os.path.getsize(os.path.join(dump, cands[k].get(".txt", next(iter(cands[k].values()))))))
    return best, cands[best]


def run_driver(out_root: str, only: list[str], groups: list[str], jobs: int) -> int:
    progs = load_programs()
    version, info = environment_version()
    frontend = "tf" if version.startswith("tf-") else "jax"
    names = [n for n, p in progs.items() if p.frontend == frontend]
    if groups:
        names = [n for n in names if progs[n].group in groups]
    if only:
        unknown = [n for n in only if n not in progs]
        if unknown:
            print(f"unknown program(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        names = [n for n in only if progs[n].frontend == frontend]
    out_dir = os.path.join(out_root, version)
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    manifest = {"programs": {}, "unavailable": {}, "failed": {}}
    if (only or groups) and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest.update(info)
    manifest.update({
        "generator": "tools/xla-oracle/corpus.py",
        "version": version,
        "backend": "cpu",
        "host_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    })
    subs = path_rewrites()

    def one(name):
        prog = progs[name]
        why = probe_needs(prog)
        if why:
            return name, "unavailable", why
        with tempfile.TemporaryDirectory(prefix=f"xla-corpus-{name}-") as tmp:
            dump = os.path.join(tmp, "dump")
            ma_json = os.path.join(tmp, "memory_analysis.json")
            env = dict(os.environ, XLA_FLAGS=dump_flags(dump, module_re(prog), prog), JAX_PLATFORMS="cpu",
                       TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow" if prog.frontend == "tf" else "jax", PYTHONHASHSEED="0",
                       CUDA_VISIBLE_DEVICES="")
            try:
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--run", name, "--json", ma_json],
                                      env=env, capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                return name, "failed", "compile ran past 600 s"
            if proc.returncode == 3 and "UNAVAILABLE: " in proc.stderr:
                return name, "unavailable", scrub(proc.stderr.split("UNAVAILABLE: ", 1)[1].strip(), subs)
            if proc.returncode != 0:
                return name, "failed", scrub(proc.stderr[-1500:], subs)
            found = find_module_files(dump, prog) if os.path.isdir(dump) else None
            if not found:
                return name, "failed", "XLA wrote no after-optimisation module"
            module, files = found
            # TF's module names carry hashes of its config (a_inference_f_52__XlaMustCompile_...);
            # the corpus names the files by the program instead.
            stem = module if prog.frontend != "tf" else prog.name
            wanted = KEPT_SUFFIXES if prog.frontend != "tf" else KEPT_SUFFIXES[:2]
            missing = [s for s in wanted if s not in files]
            if missing:
                return name, "failed", f"XLA did not write {', '.join(missing)}"
            dest = os.path.join(out_dir, name)
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            kept = []
            for s in wanted:
                target = f"{stem}.cpu_after_optimizations{s}"
                with open(os.path.join(dump, files[s]), encoding="utf-8", errors="surrogateescape") as f:
                    text = scrub(f.read(), subs)
                with open(os.path.join(dest, target), "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(text)
                kept.append(target)
            with open(ma_json) as f:
                ma = json.load(f)
            with open(os.path.join(dest, f"{stem}.cpu_after_optimizations-buffer-assignment.txt")) as f:
                alloc = allocation_figures(f.read())
            if ma:
                with open(os.path.join(dest, "memory_analysis.json"), "w") as f:
                    json.dump(ma, f, indent=2, sort_keys=True)
                    f.write("\n")
                kept.append("memory_analysis.json")
            with open(os.path.join(dest, f"{stem}.cpu_after_optimizations.txt")) as f:
                total, entry = count_instructions(f.read())
            entry_doc = {
                "module": stem,
                "hlo_module": module,
                "group": prog.group,
                "description": prog.description,
                "devices": prog.devices,
                "metadata": prog.metadata,
                "libraries": library_versions(prog.needs),
                "instructions": total,
                "entry_instructions": entry,
                "files": sorted(kept),
                "xla_figures_from": "memory_analysis" if ma else "buffer_assignment",
                "memory_analysis": ma,
                "allocations": alloc,
                "xla_flags": dump_flags("<dir>", module_re(prog), prog),
            }
            return name, "ok", entry_doc

    from concurrent.futures import ThreadPoolExecutor

    def write_manifest():
        for k in ("programs", "unavailable", "failed"):
            manifest[k] = dict(sorted(manifest[k].items()))
        with open(manifest_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(manifest_path + ".tmp", manifest_path)

    status = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for name, kind, what in ex.map(one, names):
            for k in ("programs", "unavailable", "failed"):
                manifest[k].pop(name, None)
            if kind == "ok":
                manifest["programs"][name] = what
                shown = what["memory_analysis"] or what["allocations"]
                print(f"{version} {name}: {what['instructions']} instructions, temp {shown['temp_size_in_bytes']} B",
                      flush=True)
            else:
                manifest[kind][name] = what
                print(f"{version} {name}: {kind.upper()}: {what.strip().splitlines()[-1] if what.strip() else ''}",
                      file=sys.stderr, flush=True)
                if kind == "failed":
                    status = 1
            write_manifest()  # after every program, so an interrupted run keeps what it made
    return status


def pack(src: str, archive: str) -> None:
    """A byte-reproducible .tar.xz of src: sorted names, mtime 0, no owners, fixed modes."""
    buf = io.BytesIO()
    base = os.path.basename(os.path.normpath(src))
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        entries = []
        for d, dirs, files in os.walk(src):
            dirs.sort()
            rel = os.path.relpath(d, src)
            if rel != ".":
                entries.append((rel, None))
            for f in sorted(files):
                entries.append((os.path.normpath(os.path.join(rel, f)), os.path.join(d, f)))
        for rel, path in sorted(entries):
            ti = tarfile.TarInfo(f"{base}/{rel}")
            ti.mtime = 0
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            if path is None:
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(ti)
            else:
                with open(path, "rb") as f:
                    data = f.read()
                ti.size, ti.mode = len(data), 0o644
                tar.addfile(ti, io.BytesIO(data))
    with open(archive, "wb") as f:
        f.write(lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                              preset=9 | lzma.PRESET_EXTREME))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", help="corpus root; this environment's version goes to OUT/<version>/")
    ap.add_argument("--only", nargs="*", default=[], help="programs to (re)generate")
    ap.add_argument("--group", nargs="*", default=[], help="program groups to (re)generate")
    ap.add_argument("--jobs", type=int, default=1, help="programs compiled at once")
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    ap.add_argument("--pack", help="directory to pack")
    ap.add_argument("--archive", help="archive to write with --pack")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.pack:
        pack(a.pack, a.archive)
        return 0
    if a.run:
        run_child(a.run, a.json)
        return 0
    if a.list:
        for n, p in load_programs().items():
            print(f"{n} [{p.group}, {p.frontend}, devices={p.devices}{', metadata' if p.metadata else ''}]: "
                  f"{p.description}")
        return 0
    if not a.out:
        ap.error("--out is required")
    return run_driver(a.out, a.only, a.group, a.jobs)


if __name__ == "__main__":
    sys.exit(main())
