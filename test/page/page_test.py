#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The memory report page as a person uses it: `xlamem plan --html` pages opened in headless
Chromium (Debian's `chromium`). Checks that the page raises no script or console error, that
its DOM holds the chart and the top-N table, that a screenshot is not blank, and that hovering
the largest buffer live at the peak shows its tooltip: the page's own self-test (`#selftest`)
finds that buffer's rectangle on screen, asks the browser which element is under that point,
dispatches a mouse event there and records what the tooltip then says, then zooms with two
wheel events and pans with a drag; this script reads the record from the dumped DOM. Both tabs
are exercised (memory over time, temporary heap).

Usage: page_test.py XLAMEM_EXE SOURCE_ROOT WORK_DIR [--screenshots DIR]
With --screenshots, the screenshots are also copied to DIR (docs/images/ for docs/diagnosis.md).
Exit status 77 (a skip, never a pass) when no Chromium is installed.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

failures = []


def check(cond, what):
    print(("ok      " if cond else "FAILED  ") + what)
    if not cond:
        failures.append(what)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, url, *extra):
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--enable-logging=stderr", "--v=0", "--window-size=1280,1000",
            "--virtual-time-budget=4000", *extra, url]
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)


def console_errors(stderr):
    """Console messages of level error, and uncaught exceptions, as Chromium logs them."""
    bad = []
    for line in stderr.splitlines():
        if "CONSOLE" in line and ("ERROR" in line.split("CONSOLE")[0] or "Uncaught" in line):
            bad.append(line)
        elif "Uncaught" in line:
            bad.append(line)
    return bad


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG: enough for a screenshot."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour})")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def not_blank(path):
    """Share of non-white pixels and the number of distinct colours, sampled every 4th pixel."""
    width, height, channels, rows = png_pixels(path)
    colours, coloured, total = set(), 0, 0
    for y in range(0, height, 4):
        row = rows[y]
        for x in range(0, width, 4):
            px = row[x * channels:x * channels + 3]
            total += 1
            colours.add(px)
            if px != b"\xff\xff\xff":
                coloured += 1
    return coloured / max(total, 1), len(colours)


def selftest_record(dom):
    m = re.search(r"SELFTEST (\{.*?\})</pre>", dom, re.S)
    if not m:
        return None
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text)


def check_page(browser, exe, module, work, name, shots, extra_args=(), host=False, tabs=("memory", "heap")):
    page = os.path.join(work, name + ".html")
    proc = subprocess.run([exe, "plan", module, "--html", page, *extra_args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    check(proc.returncode == 0 and os.path.isfile(page), f"{name}: xlamem plan --html writes the page")
    if proc.returncode != 0:
        print(proc.stderr)
        return
    html = open(page).read()
    check("http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html,
          f"{name}: the page loads nothing from the network")
    check("<script src" not in html and "<link" not in html, f"{name}: script and style are inline")
    url = "file://" + page
    for tab in tabs:
        run = chromium(browser, url + ("#selftest" if tab == "memory" else "#selftest-heap"), "--dump-dom")
        check(run.returncode == 0, f"{name} [{tab}]: chromium --dump-dom exits 0")
        dom = run.stdout
        errs = console_errors(run.stderr)
        check(not errs, f"{name} [{tab}]: no console error" + ("" if not errs else ": " + errs[0][:300]))
        check('<svg id="chart"' in dom and "<rect" in dom, f"{name} [{tab}]: the DOM holds the chart")
        check(re.search(r'<table id="top">.*?<tbody><tr>', dom, re.S) is not None,
              f"{name} [{tab}]: the DOM holds the top-N table with rows")
        rec = selftest_record(dom)
        check(rec is not None, f"{name} [{tab}]: the page's self-test ran")
        if rec is None:
            continue
        print(f"        self-test: hovered {rec.get('expected')!r}, hit {rec.get('hit')}, "
              f"tooltip {rec.get('tooltip', '')[:100]!r}")
        check(not rec.get("errors"), f"{name} [{tab}]: no script error ({rec.get('errors')})")
        check(rec.get("tooltip_visible") and rec.get("expected") and rec["expected"] in rec.get("tooltip", ""),
              f"{name} [{tab}]: hovering the largest peak buffer shows its tooltip with its name")
        check("size" in rec.get("tooltip", "") and "live" in rec.get("tooltip", ""),
              f"{name} [{tab}]: the tooltip gives size and live range")
        check(rec.get("zoomed") is True, f"{name} [{tab}]: the wheel zooms in")
        check(rec.get("panned") is True, f"{name} [{tab}]: dragging pans (view {rec.get('view')})")
        if host and tab == "memory":
            print(f"        host chart: {rec.get('host_rects')} runs, {rec.get('host_transfers')} transfers, "
                  f"tooltip {rec.get('host_tooltip', '')[:100]!r}")
            check((rec.get("host_rects") or 0) > 0, f"{name} [{tab}]: the host memory chart is drawn")
            check((rec.get("host_transfers") or 0) > 0 and rec.get("host_expected")
                  and rec["host_expected"] in rec.get("host_tooltip", ""),
                  f"{name} [{tab}]: hovering a transfer marker names its instruction")
            check("moves" in rec.get("host_tooltip", "") and "host" in rec.get("host_tooltip", ""),
                  f"{name} [{tab}]: the transfer's tooltip gives its bytes and direction")
        elif tab == "memory":
            check("host_rects" not in rec, f"{name} [{tab}]: no host chart where nothing lives in host memory")
        check(rec.get("ok") is True, f"{name} [{tab}]: the page's self-test passed")
        png = os.path.join(work, f"{name}-{tab}.png")
        if os.path.exists(png):
            os.remove(png)
        shot = chromium(browser, url + ("" if tab == "memory" else "#heap"), f"--screenshot={png}")
        check(shot.returncode == 0 and os.path.isfile(png), f"{name} [{tab}]: chromium --screenshot writes a PNG")
        if os.path.isfile(png):
            share, ncolours = not_blank(png)
            print(f"        screenshot: {share:.1%} non-white, {ncolours} colours")
            check(share > 0.05 and ncolours > 8, f"{name} [{tab}]: the screenshot is not blank")
            if shots:
                os.makedirs(shots, exist_ok=True)
                shutil.copy(png, os.path.join(shots, os.path.basename(png)))


def write_module(path, batch):
    # A small scheduled module with metadata, as JAX writes it (see test/cli_test.py).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from cli_test import mlp_module  # noqa: E402
    with open(path, "w") as f:
        f.write(mlp_module(batch))
    return path


def write_long_module(path, n):
    """A program of n + 4 buffers and n + 3 time steps, above the page's level of detail (20,000
    of each): a large parameter live throughout, n small values in a chain."""
    lines = ["HloModule long_chain", "", "ENTRY main {", "  big = f32[1048576]{0} parameter(0)",
             "  v0 = f32[16]{0} parameter(1)"]
    lines += [f'  v{i} = f32[16]{{0}} negate(v{i - 1}), metadata={{op_name="jit(f)/neg"}}' for i in range(1, n + 1)]
    lines += [f"  ROOT t = (f32[1048576]{{0}}, f32[16]{{0}}) tuple(big, v{n})", "}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main():
    args = sys.argv[1:]
    shots = None
    if "--screenshots" in args:
        i = args.index("--screenshots")
        shots = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    exe, root, work = (os.path.abspath(a) for a in args[:3])
    os.makedirs(work, exist_ok=True)
    browser = find_chromium()
    if browser is None:
        print("skipped: no chromium (Debian: apt-get install chromium)")
        return 77
    check_page(browser, exe, os.path.join(root, "examples", "planning", "mlp_train_step.hlo"), work,
               "mlp_train_step", shots)
    check_page(browser, exe, write_module(os.path.join(work, "mlp_with_metadata.hlo"), 256), work,
               "mlp_with_metadata", shots)
    # Host offloading as XLA's host offloader leaves it: the second chart, host memory.
    check_page(browser, exe, os.path.join(root, "test", "data", "memory-spaces", "offloaded.hlo"), work,
               "host_offload", shots, host=True)
    # Level of detail: 30,004 buffers and steps; the 20,000 largest drawn, the kind view in bars
    # of 2 steps, a line saying so, and the self-test still hovers the largest peak buffer (the
    # chain keeps no temporary heap: the memory tab only).
    page = os.path.join(work, "long_chain.html")
    check_page(browser, exe, write_long_module(os.path.join(work, "long_chain.hlo"), 30000), work, "long_chain",
               shots, tabs=("memory",))
    html = open(page).read() if os.path.isfile(page) else ""
    check("level of detail: the 20001 largest of 30004 buffers" in html and "in bars of 2 steps" in html,
          "long_chain: the page says what its level of detail left out")
    check(len(html) < 4_000_000, f"long_chain: the page stays small ({len(html):,} bytes)")
    print(f"page: {len(failures)} failed")
    for f in failures:
        print("--- " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
