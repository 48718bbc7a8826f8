#!/usr/bin/env python3
"""Fails when lab/src has an import circle between sibling modules, at any folder depth.

The modules are the crate's file tree under lab/src (lib.rs is the root; main.rs and bin/
are other crates and are skipped): a file `x.rs` or a folder `x/` (with `x/mod.rs`, or
`x.rs` beside `x/`) is a module, and a folder's children are its siblings. Every path a
file names in code (comments and string literals skipped) is resolved from the module it
is written in, inline `mod tests { … }` blocks included:

* `crate::…`, `$crate::…`, `self::…`, `super::…` and `super::super::…`;
* `use` trees with nested groups (`use super::{a, b::{self, c}};`, `use crate::x::{y, z}`);
* path expressions (`super::calibration::is_side(…)`, `crate::stats::median(…)`);
* a bare path `y::f()` in a module that glob-imports the module owning `y`
  (`use super::*;`).

A path from module S to module T is an edge between the two children of their deepest
common folder that hold S and T (a child naming its own parent or a parent naming its
child is no edge between siblings). A circle is a cycle in one folder's graph: a module
that needs a sibling which needs it back; edges written in `#[cfg(test)]` code (a test
module, or a file declared `#[cfg(test)] mod x;`) count too and are marked. Re-exports (`pub use x::Y` in a folder's mod.rs)
are not followed: a child naming `super::Y` is an edge to its parent, whichever child
defines Y.

Also fails when a generic stage (pipeline, runner, stats, results, analysis, report) names an
experiment (any path into `crate::experiments`), and when a top-level module imports one of
its own or a higher layer of the numbered list under `//! # Layers` in lib.rs (or is not
in that list).

Usage: scripts/import-circles.py [--graph] [lab/src]
       scripts/import-circles.py --self-test
Prints each circle with the lines that make its edges, then one summary line per folder
(its depth, modules, edges, circles) and per depth; exit 1 on a circle, a generic stage
naming an experiment or an import against the layers, 0 otherwise. --graph also prints the import graph, one line per
folder: `module -> deps; …`. --self-test plants circles in a scratch tree and checks that
each is reported and that a tree without one passes.
"""
import os
import re
import shutil
import sys
import tempfile

SKIP = {"main.rs", "lib.rs", "bin"}
# Stages that must not know an experiment by name or by feature.
GENERIC = {"pipeline", "runner", "stats", "results", "analysis", "report"}
ROOT_LABEL = "lab/src"
PATH_HEADS = {"crate", "$crate", "self", "super"}
KEYWORDS = {
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
    "where", "while", "Self",
}
IDENT = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*")
CHAR = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")
RAW_STRING = re.compile(r'b?r(#*)"')


# --- the module tree ------------------------------------------------------------------


class Module:
    """A file-backed module: its path from the crate root, its file (None for a folder
    without mod.rs), its children by name, and whether it is a folder."""

    def __init__(self, path, file, folder):
        self.path = path
        self.file = file
        self.folder = folder
        self.children = {}


def module_tree(root):
    """The crate's file modules from lab/src's folders: {path tuple: Module}."""
    modules = {}

    def walk(dirpath, mpath, top):
        for entry in sorted(os.listdir(dirpath)):
            full = os.path.join(dirpath, entry)
            if top and entry in SKIP:
                continue
            if entry == "mod.rs":
                continue
            if os.path.isdir(full):
                name = entry
                mod_rs = os.path.join(full, "mod.rs")
                beside = full + ".rs"
                file = mod_rs if os.path.isfile(mod_rs) else beside if os.path.isfile(beside) else None
            elif entry.endswith(".rs"):
                name = entry[:-3]
                if os.path.isdir(os.path.join(dirpath, name)):
                    continue  # `x.rs` beside `x/`: the folder's entry adds it
                file = full
            else:
                continue
            child = Module(mpath + (name,), file, os.path.isdir(full))
            modules[child.path] = child
            modules[mpath].children[name] = child
            if child.folder:
                walk(full, child.path, False)

    lib = os.path.join(root, "lib.rs")
    modules[()] = Module((), lib if os.path.isfile(lib) else None, True)
    walk(root, (), True)
    return modules


def folder_name(path):
    return "/".join((ROOT_LABEL,) + path)


# --- lexing: identifiers and punctuation, comments and literals skipped ---------------


def tokens(text):
    """(kind, value, line) for identifiers ("id"), `::` and single punctuation ("p")."""
    i, line, n = 0, 1, len(text)
    out = []
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif RAW_STRING.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW_STRING.match(text, i)
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            line += text.count("\n", i, end)
            i = end
        elif c == '"' or (c == "b" and text.startswith('b"', i)):
            i += 1 if c == '"' else 2
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                if i < n and text[i] == "\n":
                    line += 1
                i += 1
            i += 1
        elif c == "'" or (c == "b" and text.startswith("b'", i)):
            m = CHAR.match(text, i + (c == "b"))
            if m:
                i = m.end()
            else:  # a lifetime or a label
                i += 1
                m = IDENT.match(text, i)
                i = m.end() if m else i
        elif text.startswith("r#", i) and IDENT.match(text, i + 2):
            m = IDENT.match(text, i + 2)
            out.append(("id", m.group(0), line))
            i = m.end()
        elif IDENT.match(text, i):
            m = IDENT.match(text, i)
            out.append(("id", m.group(0), line))
            i = m.end()
        elif c.isdigit():
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
        elif text.startswith("::", i):
            out.append(("p", "::", line))
            i += 2
        else:
            out.append(("p", c, line))
            i += 1
    return out


# --- paths: each path a file names, with the module it is written in -----------------


def use_tree(toks, i, prefix, out):
    """Parses one use tree at toks[i]; appends (segments, line, is_glob); returns the index after it."""
    segs = list(prefix)
    if i < len(toks) and toks[i][1] == "::":
        i += 1
    while i < len(toks):
        kind, val, line = toks[i]
        if val == "{":
            i += 1
            while i < len(toks) and toks[i][1] != "}":
                i = use_tree(toks, i, segs, out)
                if i < len(toks) and toks[i][1] == ",":
                    i += 1
            return i + 1
        if val == "*":
            out.append((segs, line, True))
            return i + 1
        if kind != "id":
            break
        if val == "self" and segs:
            i += 1  # `{self, …}`: the prefix itself
        else:
            segs = segs + [val]
            i += 1
        if i < len(toks) and toks[i][1] == "::":
            i += 1
            continue
        break
    if i < len(toks) and toks[i][1] == "as":
        i += 2
    if segs:
        out.append((segs, toks[min(i, len(toks)) - 1][2], False))
    return i


def under_cfg_test(toks, i):
    """Whether the item whose keyword is toks[i] carries `#[cfg(test)]` (visibility skipped)."""
    j = i - 1
    while j >= 0 and toks[j][1] in ("pub", "(", ")", "crate", "super", "self", "in", "::"):
        j -= 1
    while j >= 0 and toks[j][1] == "]":
        k = j - 1
        while k >= 0 and toks[k][1] != "[":
            k -= 1
        if k >= 1 and toks[k - 1][1] == "#" and [t[1] for t in toks[k + 1 : j]] == ["cfg", "(", "test", ")"]:
            return True
        j = k - 2
    return False


def named_paths(toks):
    """Yields (scope, segments, line, how, test): every path in the token list, where scope
    is the inline-module path inside the file, how is "use", "glob", "code" or "testmod"
    (a `#[cfg(test)] mod name;` declaration) and test says the path is in `#[cfg(test)]` code."""
    scope = []  # (name, brace depth at which its block opened, under #[cfg(test)])
    depth = 0
    i = 0
    while i < len(toks):
        kind, val, line = toks[i]
        prev = toks[i - 1][1] if i else None
        inner = tuple(name for name, _, _ in scope)
        test = any(t for _, _, t in scope)
        if kind == "id" and val == "mod" and i + 2 < len(toks) and toks[i + 1][0] == "id" and toks[i + 2][1] in "{;":
            if toks[i + 2][1] == "{":
                depth += 1
                scope.append((toks[i + 1][1], depth, under_cfg_test(toks, i)))
            elif test or under_cfg_test(toks, i):
                yield inner, [toks[i + 1][1]], line, "testmod", True
            i += 3
        elif kind == "id" and val == "use" and prev != "::":
            found = []
            i = use_tree(toks, i + 1, [], found)
            for segs, at, glob in found:
                yield inner, segs, at, "glob" if glob else "use", test
        elif kind == "id" and prev != "::" and i + 2 < len(toks) and toks[i + 1][1] == "::" and toks[i + 2][0] == "id":
            segs = [val]
            j = i + 1
            while j + 1 < len(toks) and toks[j][1] == "::" and toks[j + 1][0] == "id":
                segs.append(toks[j + 1][1])
                j += 2
            yield inner, segs, line, "code", test
            i = j
        else:
            if val == "{":
                depth += 1
            elif val == "}":
                if scope and scope[-1][1] == depth:
                    scope.pop()
                depth -= 1
            i += 1


def resolve(segs, here):
    """The absolute path `segs` names from module `here`, or None (an outside crate, a local name)."""
    head = segs[0]
    if head in ("crate", "$crate"):
        return tuple(segs[1:])
    if head not in ("self", "super"):
        return None
    base = list(here)
    k = 0
    while k < len(segs) and segs[k] in ("self", "super"):
        if segs[k] == "super":
            if not base:
                return None
            base.pop()
        k += 1
    return tuple(base) + tuple(segs[k:])


def owner(path, modules):
    """The deepest file module on `path` (an item's path ends in the module that holds it)."""
    for k in range(len(path), -1, -1):
        if path[:k] in modules:
            return path[:k]
    return ()


def sibling_edge(src, dst):
    """(folder, from child, to child) for an edge from file module src to file module dst, or None."""
    k = 0
    while k < len(src) and k < len(dst) and src[k] == dst[k]:
        k += 1
    if k == len(src) or k == len(dst):
        return None  # the same module, or a parent and its descendant
    return src[:k], src[k], dst[k]


# --- the graphs -----------------------------------------------------------------------


class Report:
    def __init__(self, modules):
        self.modules = modules
        self.files = 0
        # folder path -> {child -> {dep child -> [(file, line number, line text)]}}
        self.graphs = {p: {c: {} for c in m.children} for p, m in modules.items() if m.folder}
        self.bad = []

    def add(self, src, dst, where):
        edge = sibling_edge(src, dst)
        if edge:
            folder, a, b = edge
            seen = self.graphs[folder][a].setdefault(b, [])
            if where not in seen:
                seen.append(where)

    def circles(self):
        """[(folder, sorted members)] for every strongly connected part with two or more members."""
        found = []
        for folder in sorted(self.graphs, key=lambda p: (len(p), p)):
            graph = {a: set(deps) for a, deps in self.graphs[folder].items()}
            found += [(folder, c) for c in cycles(graph)]
        return found


def scan(root):
    modules = module_tree(root)
    report = Report(modules)
    test_files = set()  # file modules declared `#[cfg(test)] mod x;`
    for mpath, mod in sorted(modules.items()):
        if not mod.file:
            continue
        report.files += 1
        with open(mod.file, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
        globs = {}  # inline scope -> [absolute glob bases]
        shown = "/".join([ROOT_LABEL] + os.path.relpath(mod.file, root).split(os.sep))
        for inner, segs, line, how, test in named_paths(tokens(text)):
            here = mpath + inner
            if how == "testmod":
                test_files.add(here + tuple(segs))
                continue
            test = test or any(mpath[:k] in test_files for k in range(1, len(mpath) + 1))
            target = resolve(segs, here)
            if how == "glob":
                if target is not None:
                    globs.setdefault(inner, []).append(target)
            if target is None:
                # A bare path through a glob import: `use super::*;` then `sibling::f()`.
                for base in globs.get(inner, []):
                    if base + (segs[0],) in modules:
                        target = base + tuple(segs)
                        break
            if target is None:
                continue
            text_of = lines[line - 1].strip() if line <= len(lines) else ""
            report.add(mpath, owner(target, modules), (shown, line, text_of + ("   (test code)" if test else "")))
            if len(mpath) >= 1 and mpath[0] in GENERIC and target[:1] == ("experiments",):
                report.bad.append(
                    f"{shown}:{line}: the generic stage `{mpath[0]}` names an experiment (crate::experiments)"
                )
    return report


def cycles(graph):
    """Every strongly connected component with two or more nodes (Tarjan), members sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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


def shortest_cycle(graph, members):
    """One shortest cycle through the component's first member, as a node list (first repeated)."""
    start = members[0]
    seen = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while seen[path[-1]] is not None:
                    path.append(seen[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in seen:
                seen[w] = v
                queue.append(w)
    return members


# --- output ---------------------------------------------------------------------------


def describe(report, found):
    out = []
    for folder, members in found:
        graph = report.graphs[folder]
        out.append(f"import circle in {folder_name(folder)}: {{{', '.join(members)}}} (depth {len(folder)})")
        out.append(f"  a cycle: {' -> '.join(shortest_cycle(graph, members))}")
        for a in members:
            for b in sorted(graph[a]):
                if b in members:
                    out.append(f"  {a} -> {b}:")
                    for shown, line, text in graph[a][b]:
                        out.append(f"    {shown}:{line}: {text}")
    return out


def summary(report, found):
    out = []
    per_depth = {}
    for folder in sorted(report.graphs, key=lambda p: (len(p), p)):
        graph = report.graphs[folder]
        edges = sum(len(deps) for deps in graph.values())
        n = sum(1 for f, _ in found if f == folder)
        out.append(
            f"import-circles: {folder_name(folder)} (depth {len(folder)}): "
            f"{len(graph)} module(s), {edges} edge(s), {n} circle(s)"
        )
        d = per_depth.setdefault(len(folder), [0, 0])
        d[0] += 1
        d[1] += n
    for depth, (folders, n) in sorted(per_depth.items()):
        out.append(f"import-circles: depth {depth}: {folders} folder(s), {n} circle(s)")
    out.append(
        f"import-circles: {report.files} file(s), {len(report.graphs)} folder(s), {len(found)} circle(s), "
        f"{len(report.bad)} generic stage(s) naming an experiment"
    )
    return out


def graph_lines(report):
    out = []
    for folder in sorted(report.graphs, key=lambda p: (len(p), p)):
        graph = report.graphs[folder]
        parts = [f"{a} -> {', '.join(sorted(graph[a])) or '(none)'}" for a in sorted(graph)]
        out.append(f"{folder_name(folder)}: {'; '.join(parts)}")
    return out


def layers_of(root):
    """Top-level module -> its layer, from the numbered list under `//! # Layers` in the
    root's lib.rs (`//! 3. [`results`], [`x`]: what they are`: the modules named before the
    first colon); None when lib.rs has no such list."""
    path = os.path.join(root, "lib.rs")
    if not os.path.exists(path):
        return None
    layers, inside = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith("//! #"):
                inside = s == "//! # Layers"
                continue
            m = re.match(r"//! (\d+)\. (.*)", s) if inside else None
            if m:
                for name in re.findall(r"\[`(\w+)`\]", m.group(2).split(":")[0]):
                    layers[name] = int(m.group(1))
    return layers or None


def layer_breaches(report, layers):
    """Lines for every top-level module missing from the layers and every import of a
    module of the same or a higher layer."""
    out = []
    for a, deps in sorted(report.graphs.get((), {}).items()):
        if a not in layers:
            out.append(f"{ROOT_LABEL}/lib.rs: the module `{a}` has no layer in its `# Layers` list")
            continue
        for b, wheres in sorted(deps.items()):
            if b in layers and layers[b] >= layers[a]:
                f, n, _ = wheres[0]
                out.append(
                    f"{f}:{n}: `{a}` (layer {layers[a]}) imports `{b}` (layer {layers[b]}); a "
                    f"module imports only lower layers ({ROOT_LABEL}/lib.rs, # Layers)"
                )
    return out


def check(root, graph=False):
    """(exit code, printed lines) for the tree at root."""
    root = os.path.normpath(root)
    report = scan(root)
    found = report.circles()
    layers = layers_of(root)
    if layers:
        report.bad += layer_breaches(report, layers)
    lines = describe(report, found) + report.bad
    if graph:
        lines += graph_lines(report)
    lines += summary(report, found)
    return (1 if found or report.bad else 0), lines


# --- self-test ------------------------------------------------------------------------

# A tree with decoys that must make no edge: comments, strings, raw strings, doc links, a
# test module's `use super::*`, a child naming its parent's items, a parent naming its child.
BASE = {
    "lib.rs": "pub mod a;\npub mod b;\npub mod outer;\n",
    "main.rs": "use lab::a; fn main() { crate::b::x(); }\n",
    "a.rs": "use crate::b::Thing;\npub fn x() {}\n",
    "b.rs": "pub struct Thing;\n// crate::a::x() in a comment\npub fn x() { let _ = \"crate::a::x\"; }\n",
    "outer/mod.rs": "pub mod inner;\npub use inner::p::P;\nfn f() { inner::q::g(); self::inner::p::h(); }\n",
    "outer/inner/mod.rs": "pub mod p;\npub mod q;\npub mod deep;\npub struct Shared;\n",
    "outer/inner/p.rs": (
        "use super::Shared;\n"
        "use super::q::Q;\n"
        "pub struct P;\n"
        "/// [`super::q::Q`] names q; a doc link is no import\n"
        "pub fn h() { let _ = r#\"super::q::g()\"#; let _c = '\"'; }\n"
        "fn l<'a>(x: &'a str) -> &'a str { x }\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    fn t() { let _ = P; }\n}\n"
    ),
    "outer/inner/q.rs": "pub struct Q;\npub fn g() { let _ = super::Shared; }\n",
    "outer/inner/deep.rs": "pub fn d() {}\n",
    "outer/inner/deep/x.rs": "use super::y::Y;\npub struct X;\n",
    "outer/inner/deep/y.rs": "pub struct Y;\n",
}

# Each planted back edge closes a circle: (what it is, file, text appended, folder, members).
PLANTS = [
    ("a `use` with nested groups", "outer/inner/q.rs",
     "use crate::outer::inner::{p::{self, P}, deep};\n", "outer/inner", "{p, q}"),
    ("a path expression through super::", "outer/inner/q.rs",
     "fn k() { if super::p::h() == () {} }\n", "outer/inner", "{p, q}"),
    ("super::super:: in a test module", "outer/inner/q.rs",
     "#[cfg(test)]\nmod tests {\n    use super::super::p;\n}\n", "outer/inner", "{p, q}"),
    ("a bare path through a glob import", "outer/inner/q.rs",
     "mod tests {\n    use super::super::*;\n    fn t() { p::h(); }\n}\n", "outer/inner", "{p, q}"),
    ("a `use self::super::` in a folder beside its file (deep.rs and deep/)", "outer/inner/deep/y.rs",
     "use self::super::x::X;\n", "outer/inner/deep", "{x, y}"),
    ("a crate:: path expression three folders down", "outer/inner/deep/y.rs",
     "fn k() { let _ = crate::outer::inner::deep::x::X; }\n", "outer/inner/deep", "{x, y}"),
    ("a top-level circle", "b.rs", "fn k() { crate::a::x(); }\n", "", "{a, b}"),
]


def self_test():
    failures = []
    scratch = tempfile.mkdtemp(prefix="import-circles-")
    try:

        def plant(name, extra):
            root = os.path.join(scratch, name)
            for rel, text in BASE.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text + extra.get(rel, ""))
            return root

        code, lines = check(plant("clean", {}), graph=True)
        text = "\n".join(lines)
        if code != 0 or "0 circle(s), 0 generic" not in text:
            failures.append("the tree without a circle fails:\n" + text)
        for want in ("lab/src: a -> b; b -> (none); outer -> (none)",
                     "lab/src/outer/inner: deep -> (none); p -> q; q -> (none)",
                     "lab/src/outer/inner/deep: x -> y; y -> (none)",
                     "import-circles: lab/src/outer/inner/deep (depth 3): 2 module(s), 1 edge(s), 0 circle(s)"):
            if want not in lines:
                failures.append(f"the clean tree's report lacks `{want}`:\n" + text)
        for k, (what, rel, extra, folder, members) in enumerate(PLANTS):
            code, lines = check(plant(f"plant{k}", {rel: extra}))
            text = "\n".join(lines)
            head = f"import circle in {folder_name(tuple(folder.split('/')) if folder else ())}: {members}"
            if code != 1 or not any(line.startswith(head) for line in lines):
                failures.append(f"{what}: `{head}` not reported:\n" + text)
            elif sum(line.startswith("import circle in") for line in lines) != 1:
                failures.append(f"{what}: more than the planted circle reported:\n" + text)
            elif ("test module" in what) != ("(test code)" in text):
                failures.append(f"{what}: the edge from test code is not marked as such:\n" + text)
        generic = plant("generic", {"b.rs": ""})
        os.makedirs(os.path.join(generic, "runner"))
        os.makedirs(os.path.join(generic, "experiments"))
        with open(os.path.join(generic, "runner", "mod.rs"), "w", encoding="utf-8") as f:
            f.write("fn f() { super::experiments::E; }\n")
        with open(os.path.join(generic, "experiments", "mod.rs"), "w", encoding="utf-8") as f:
            f.write("pub struct E;\n")
        code, lines = check(generic)
        if code != 1 or not any("the generic stage `runner` names an experiment" in line for line in lines):
            failures.append("a generic stage naming an experiment passes:\n" + "\n".join(lines))
        # Layers: a (layer 2) may import b (layer 1); the other way round is a breach.
        ok = "//! # Layers\n//! 1. [`b`], [`outer`]: leaves\n//! 2. [`a`]: above them\n//! # Next\n"
        code, lines = check(plant("layers-ok", {"lib.rs": ok}))
        if code != 0:
            failures.append("imports down the layers fail:\n" + "\n".join(lines))
        up = ok.replace("1. [`b`], [`outer`]", "1. [`a`], [`outer`]").replace("2. [`a`]", "2. [`b`]")
        code, lines = check(plant("layers-up", {"lib.rs": up}))
        if code != 1 or not any("`a` (layer 1) imports `b` (layer 2)" in line for line in lines):
            failures.append("an import up the layers passes:\n" + "\n".join(lines))
        missing = ok.replace(", [`outer`]", "")
        code, lines = check(plant("layers-missing", {"lib.rs": missing}))
        if code != 1 or not any("`outer` has no layer" in line for line in lines):
            failures.append("a module without a layer passes:\n" + "\n".join(lines))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for f in failures:
        print(f"import-circles self-test: FAILED: {f}")
    cases = len(PLANTS) + 5
    print(f"import-circles self-test: {len(failures)} failure(s) in {cases} case(s) (a clean tree, {len(PLANTS)} planted circles, a generic stage, three layer cases)")
    return 1 if failures else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "src")
    code, lines = check(root, graph)
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
