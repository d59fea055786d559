#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that no function in the given folders is longer than a limit (the project's rule: no function
over 120 lines in include/, so that each reads as one idea).

    function_length.py --limit 120 include [--self-test]

A function is a brace block whose header ends with ')' (plus qualifiers) at namespace or class
level: bodies are found by matching braces after comments, string, character and raw-string
literals and preprocessor lines are blanked, so braces inside them do not count. Lambdas count
toward the function that holds them. Prints each function over the limit with its place and
length, and exits 1 if there is one.
"""
import argparse
import bisect
import os
import re
import sys

NOT_A_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|namespace|struct|class|union|enum|try)\b")


def blank(text):
    """`text` with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    spaces = lambda s: re.sub(r"[^\n]", " ", s)  # noqa: E731
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = text[i + 2:k]
            j = text.find(")" + delim + '"', k)
            j = n if j < 0 else j + len(delim) + 2
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(spaces(text[i:j]))
        i = j
    s = "".join(out)
    return re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: spaces(m.group()), s)


def functions(text):
    """(first line, length in lines, header) of every function body in `text`."""
    s = blank(text)
    starts = [0]
    for line in s.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    line_of = lambda off: bisect.bisect_right(starts, off)  # noqa: E731
    found, stack, in_function = [], [], False
    for m in re.finditer(r"[{}]", s):
        off = m.start()
        if m.group() == "{":
            k = off - 1
            while k >= 0 and s[k] not in ";{}":
                k -= 1
            header = s[k + 1:off].strip()
            is_function = (not in_function and ")" in header and not NOT_A_FUNCTION.match(header)
                           and "=" not in header.split("(")[0] and not (header.startswith("[") and not header.startswith("[[")))
            in_function = in_function or is_function
            stack.append((off, is_function, header))
        elif stack:
            begin, is_function, header = stack.pop()
            if is_function:
                in_function = False
                found.append((line_of(begin), line_of(off) - line_of(begin) + 1, " ".join(header.split())[-100:]))
    return found


def too_long(roots, limit):
    out = []
    for root in roots:
        for folder, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith((".hpp", ".h", ".cpp")):
                    path = os.path.join(folder, f)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        for line, length, header in functions(fh.read()):
                            if length > limit:
                                out.append((path, line, length, header))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--self-test", action="store_true", help="also check that a planted long function is caught")
    ap.add_argument("roots", nargs="+")
    a = ap.parse_args()
    failed = False
    if a.self_test:
        body = "\n".join(f'  x += {i}; // }} "{{" ' for i in range(a.limit + 1))
        planted = f"namespace n {{\ninline int f(int x) {{\n{body}\n  return x;\n}}\n}}\n"
        caught = [length for _, length, _ in functions(planted)] == [a.limit + 4]
        print(("ok      " if caught else "FAILED  ") + "self-test: a planted long function is " + ("caught" if caught else "NOT caught"))
        failed = not caught
    bad = too_long(a.roots, a.limit)
    for path, line, length, header in bad:
        print(f"FAILED  {path}:{line}: a function of {length} lines (limit {a.limit}): {header}")
    print(f"function length: {'no' if not bad else len(bad)} function{'' if len(bad) == 1 else 's'} over {a.limit} lines in {', '.join(a.roots)}")
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
