#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every file under include/ is installed: fails naming each file under SOURCE_ROOT/include that
include/meson.build does not list (the lists drive `install_headers`), and each listed file that
does not exist. A header missing from the lists is not installed, and an installed header that
includes it does not compile (alloc/owner_bias.hpp was once left out).
Usage: install_list.py SOURCE_ROOT
"""
import os
import re
import sys


def listed(meson_build):
    """The 'xlamem/...' paths quoted in include/meson.build's files() lists."""
    text = open(meson_build).read()
    # Drop comments, so a commented-out entry does not count as listed.
    text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    names = set()
    for call in re.finditer(r"files\((.*?)\)", text, re.S):
        names.update(re.findall(r"'([^']+)'", call.group(1)))
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    include = os.path.join(os.path.abspath(sys.argv[1]), "include")
    meson_build = os.path.join(include, "meson.build")
    in_lists = listed(meson_build)
    on_disk = set()
    for d, _, files in os.walk(include):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), include)
            if rel != "meson.build":
                on_disk.add(rel)
    missing = sorted(on_disk - in_lists)
    stale = sorted(in_lists - on_disk)
    for name in missing:
        print(f"install list: include/{name} is not in include/meson.build, so it is not "
              "installed")
    for name in stale:
        print(f"install list: include/meson.build lists {name}, which does not exist")
    if missing or stale:
        return 1
    print(f"install list: all {len(on_disk)} files under include/ are installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
