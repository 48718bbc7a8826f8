#!/usr/bin/env python3
"""Fails when lab/src has an import circle between its top-level modules.

A module here is a top-level entry of lab/src (a file `x.rs` or a folder `x/`); its
references are every `crate::y` path in its files (in `use` lines and inline), with
`super::` paths inside a folder resolved to the folder's siblings. A circle is a cycle in
that graph: one stage that needs another which needs it back. Also lists, within each
folder, the cycles among its own children (`super::sibling` and `crate::folder::sibling`).
Also fails when a generic stage names an experiment (`crate::experiments::…`).
Usage: scripts/import-circles.py [--graph] [lab/src]   (exit 1 on a circle, 0 otherwise;
--graph also prints each top-level module with the modules it uses)
"""
import os
import re
import sys

GRAPH = "--graph" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--graph"]
ROOT = ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), "..", "lab", "src")
ROOT = os.path.normpath(ROOT)
SKIP = {"main.rs", "lib.rs", "bin"}
# Stages that must not know an experiment by name or by feature.
GENERIC = {"pipeline", "runner", "stats", "results", "report"}

CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?")
SUPER_PATH = re.compile(r"\bsuper::([a-z_][a-z0-9_]*)")
COMMENT = re.compile(r"//.*$")


def files_of(entry):
    path = os.path.join(ROOT, entry)
    if os.path.isdir(path):
        for dirpath, _, names in os.walk(path):
            for n in names:
                if n.endswith(".rs"):
                    yield os.path.join(dirpath, n)
    elif entry.endswith(".rs"):
        yield path


def code_lines(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield COMMENT.sub("", line)


def cycles(graph):
    """Every elementary cycle's node set, found by Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def main():
    entries = sorted(e for e in os.listdir(ROOT) if e not in SKIP and (e.endswith(".rs") or os.path.isdir(os.path.join(ROOT, e))))
    names = {e[:-3] if e.endswith(".rs") else e: e for e in entries}
    top = {n: set() for n in names}
    inner = {}  # folder -> {child -> set(child)}
    bad = []
    for name, entry in names.items():
        folder = os.path.join(ROOT, entry)
        for path in files_of(entry):
            rel = os.path.relpath(path, folder) if os.path.isdir(folder) else ""
            child = rel.split(os.sep)[0].removesuffix(".rs") if rel else None
            if child == "mod":
                child = None
            for line in code_lines(path):
                for m in CRATE_PATH.finditer(line):
                    target, sub = m.group(1), m.group(2)
                    if target in names and target != name:
                        top[name].add(target)
                    if target == name and child and sub and sub != child:
                        inner.setdefault(name, {}).setdefault(child, set()).add(sub)
                    if name in GENERIC and target == "experiments":
                        bad.append(f"{os.path.relpath(path, ROOT)}: the generic stage `{name}` names an experiment (crate::experiments)")
                if child and os.path.dirname(rel) == "":
                    for m in SUPER_PATH.finditer(line):
                        if m.group(1) != child:
                            inner.setdefault(name, {}).setdefault(child, set()).add(m.group(1))
    found = [("lab/src", c) for c in cycles(top)]
    for folder, graph in inner.items():
        found += [(f"lab/src/{folder}", c) for c in cycles(graph)]
    for where, c in found:
        edges = [f"{a} -> {b}" for a in c for b in sorted((top if where == "lab/src" else inner[where.split('/')[-1]]).get(a, ())) if b in c]
        print(f"import circle in {where}: {{{', '.join(c)}}} ({'; '.join(edges)})")
    for b in bad:
        print(b)
    if GRAPH:
        for n in sorted(top):
            print(f"{n} -> {', '.join(sorted(top[n])) or '(none)'}")
    print(f"import-circles: {len(entries)} top-level entries in lab/src, {len(found)} circle(s), {len(bad)} generic stage(s) naming an experiment")
    return 1 if found or bad else 0


if __name__ == "__main__":
    sys.exit(main())
