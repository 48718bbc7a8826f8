#!/usr/bin/env python3
"""Lists functions longer than a limit (default 120 lines) in the given Rust folders.

A function runs from its `fn` line to the line of its closing brace at the same depth
(braces in strings, chars and comments are skipped). Exit 1 when any is longer.
Usage: scripts/long-functions.py [--max N] DIR...
"""
import os
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def strip(line, state):
    """The line's braces outside strings and comments; `state` carries a block comment and a string across lines."""
    out = []
    i = 0
    while i < len(line):
        c = line[i]
        if state["block"]:
            if line.startswith("*/", i):
                state["block"] = False
                i += 2
                continue
            i += 1
            continue
        if state["str"]:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                state["str"] = False
            i += 1
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if c == '"':
            state["str"] = True
            i += 1
            continue
        if c == "'" and re.match(r"'(\\.|[^\\'])'", line[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", line[i:]).group(0))
            continue
        if c in "{}":
            out.append(c)
        i += 1
    return out


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    state = {"block": False, "str": False}
    depth = 0
    open_fns = []  # (name, start line, depth at which its body opened)
    pending = None
    for n, line in enumerate(lines, 1):
        m = FN.match(line) if not state["block"] and not state["str"] else None
        if m:
            pending = (m.group(7), n)
        for b in strip(line, state):
            if b == "{":
                depth += 1
                if pending:
                    open_fns.append((pending[0], pending[1], depth))
                    pending = None
            else:
                if open_fns and open_fns[-1][2] == depth:
                    name, start, _ = open_fns.pop()
                    yield name, start, n
                depth -= 1
        if pending and line.rstrip().endswith(";"):
            pending = None


def main(argv):
    limit = 120
    if len(argv) > 1 and argv[0] == "--max":
        limit = int(argv[1])
        argv = argv[2:]
    long = []
    for root in argv:
        for d, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(".rs"):
                    p = os.path.join(d, name)
                    for fn, a, b in functions(p):
                        if b - a + 1 > limit:
                            long.append((b - a + 1, p, a, fn))
    for size, p, a, fn in sorted(long, reverse=True):
        print(f"{p}:{a}: fn {fn} is {size} lines (limit {limit})")
    print(f"long-functions: {len(long)} function(s) over {limit} lines in {', '.join(argv)}")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
