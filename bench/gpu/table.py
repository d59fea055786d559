#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns cuda_bench's JSON output into the markdown tables of docs/benchmarks.md ("CUDA").

Times are wall-clock nanoseconds per allocate+free pair (per acquire+release for pools).
Ratios compare within the same run: pool against cuMemAlloc / cuMemHostAlloc, and against the
strongest driver path measured (the fastest of cuMemAlloc, the stream-ordered pool and VMM).
Usage: table.py cuda_bench.json > table.md
"""
import json
import sys

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
DEVICE_SIZES = ["256B", "64KiB", "16MiB"]
DEVICE_SOURCES = ["cuMemAlloc", "async_pool", "async_pool_stream_ordered", "vmm", "vmm_nosync",
                  "fixed_block_pool"]
PINNED_SIZES = ["4B", "256B", "64KiB", "16MiB"]
DEVICE_TARGET = 50.0
PINNED_TARGET = 1000.0


def fmt_ns(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.1f} us"
    return f"{v:.1f} ns"


def fmt_ratio(v):
    return "n/a" if v is None else f"{v:,.0f}x" if v >= 10 else f"{v:.1f}x"


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    if "skipped" in ctx:
        print(f"cuda_bench skipped: {ctx['skipped']}")
        return 0
    times = {}
    errors = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            errors[b["name"]] = b.get("error_message", "error")
            continue
        times[b["name"]] = b["real_time"] * UNIT_NS.get(b.get("time_unit", "ns"), 1.0)

    out = []
    out.append(f"GPU: {ctx.get('gpu', '?')} ({ctx.get('gpu_memory_mib', '?')} MiB), CUDA driver "
               f"{ctx.get('cuda_driver_version', '?')}; host: {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz, load average {ctx.get('load_avg', '?')}; "
               f"{ctx.get('date', '')}; library build: {ctx.get('library_build_type', '?')}.")
    out.append("")
    out.append("Device memory, one allocate + free (wall time per pair):")
    out.append("")
    out.append("| size | " + " | ".join(DEVICE_SOURCES) + " | cuMemAlloc / pool | best driver path / pool |")
    out.append("|---|" + "---:|" * (len(DEVICE_SOURCES) + 2))
    verdicts = []
    for s in DEVICE_SIZES:
        row = {src: times.get(f"device_pair/{src}/{s}") for src in DEVICE_SOURCES}
        pool = row["fixed_block_pool"]
        base = row["cuMemAlloc"]
        drivers = [v for k, v in row.items() if k != "fixed_block_pool" and v is not None]
        best = min(drivers) if drivers else None
        r_base = base / pool if base and pool else None
        r_best = best / pool if best and pool else None
        out.append(f"| {s} | " + " | ".join(fmt_ns(row[src]) for src in DEVICE_SOURCES) +
                   f" | {fmt_ratio(r_base)} | {fmt_ratio(r_best)} |")
        verdicts.append((f"device pool pair vs cuMemAlloc+cuMemFree, {s}", r_base, DEVICE_TARGET))
    out.append("")
    out.append("Pinned host memory, one allocate + free (wall time per pair):")
    out.append("")
    out.append("| size | cuMemHostAlloc + cuMemFreeHost | fixed_block_pool acquire + release | ratio |")
    out.append("|---|---:|---:|---:|")
    for s in PINNED_SIZES:
        base = times.get(f"pinned_pair/cuMemHostAlloc/{s}")
        pool = times.get(f"pinned_pair/fixed_block_pool/{s}")
        r = base / pool if base and pool else None
        out.append(f"| {s} | {fmt_ns(base)} | {fmt_ns(pool)} | {fmt_ratio(r)} |")
        verdicts.append((f"pinned pool acquire+release vs cuMemHostAlloc+free, {s}", r, PINNED_TARGET))
    out.append("")
    out.append("Pinned 4-byte scalar pool (128 values) from several threads, each thread "
               "acquiring and releasing in a loop. Google Benchmark reports wall time divided by "
               "the iterations of all threads, so pairs/s = 1 / time and one thread's latency = "
               "time x threads:")
    out.append("")
    out.append("| threads | lock_free Mpairs/s | mutex_fifo (XLA's design) Mpairs/s | "
               "lock_free latency | mutex_fifo latency |")
    out.append("|---:|---:|---:|---:|---:|")
    for t in [1, 2, 4, 8]:
        lf = times.get(f"pinned_pool_threads/lock_free/real_time/threads:{t}")
        mf = times.get(f"pinned_pool_threads/mutex_fifo/real_time/threads:{t}")
        rate = lambda v: "n/a" if v is None else f"{1e3 / v:.1f}"
        lat = lambda v: None if v is None else v * t
        out.append(f"| {t} | {rate(lf)} | {rate(mf)} | {fmt_ns(lat(lf))} | {fmt_ns(lat(mf))} |")
    out.append("")
    out.append("Acceptance targets:")
    out.append("")
    failed = 0
    for what, ratio, target in verdicts:
        ok = ratio is not None and ratio >= target
        failed += 0 if ok else 1
        out.append(f"- {what}: {fmt_ratio(ratio)} (target >= {target:,.0f}x): {'PASS' if ok else 'FAIL'}")
    if errors:
        out.append("")
        out.append("Benchmarks that reported an error:")
        for name, msg in sorted(errors.items()):
            out.append(f"- {name}: {msg}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
