#!/usr/bin/env python3
"""Fails when a Markdown page or a source comment names a repository path that does not exist.

A repository path is a word starting with one of the repository's top folders
(`lab/`, `crates/`, `tools/`, `docs/`, `scripts/`, `traces/`, `.ci/`), backticked or
plain, anywhere in a *.md file or in a comment of a source file (Rust, Java, JavaScript,
CSS: `//` and `/* */`; XML: `<!-- -->`; Python, shell, TOML, YAML, the justfile: `#`).
`../` before it is resolved from the file's folder. Globs (`tools/jvm/**/X.java`), brace
lists (`lab/src/{a,b}.rs`) and placeholders (`tools/jvm/<group>/`, `tools/jvm/GROUP/`)
match any path they could name; a `:LINE` after a file is ignored; an elided path
(`lab/src/...`) is no name. A path that git ignores (a build output, a fetched tool)
counts as existing: it is made, not stale. A missing top folder and one word with no
extension and no trailing slash (`lab/own`, a ratio of two rows) is read as words.
Usage: scripts/stale-paths.py [FILE_OR_DIR...]   (default: the whole repository)
Exit 1 when any path is missing, 0 otherwise.
"""
import glob
import os
import re
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOPS = ("lab", "crates", "tools", "docs", "scripts", "traces", ".ci")
SKIP_DIRS = {".git", "target", "node_modules", "vendor", "__pycache__"}
SLASH_COMMENTS = {".rs", ".java", ".mjs", ".js", ".css"}
HASH_COMMENTS = {".py", ".sh", ".toml", ".yml", ".yaml", ".config"}
HASH_FILES = {"justfile", "run"}
XML_COMMENTS = {".xml", ".html"}
PATH = re.compile(r"(?<![\w./$-])((?:\.\./)*)((?:%s)/(?:[\w.*\-/]|\{[\w.\-/,*]*\}|<[\w\-]+>)*)" % "|".join(re.escape(t) for t in TOPS))


def kind(path):
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if ext == ".md":
        return "md"
    if ext in SLASH_COMMENTS:
        return "slash"
    if ext in HASH_COMMENTS or name in HASH_FILES:
        return "hash"
    if ext in XML_COMMENTS:
        return "xml"
    return None


def slash_comments(text):
    """(line number, comment text) of every `//` and `/* */` comment, strings skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k, part in enumerate(text[i:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end
        elif c in "\"`":
            i += 1
            while i < n and text[i] != c:
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    line += 1
                i += 1
            i += 1
        elif c == "'" and re.match(r"'(\\.|[^\\'\n])'", text[i:i + 4]):
            i += len(re.match(r"'(\\.|[^\\'\n])'", text[i:i + 4]).group(0))
        else:
            i += 1
    return out


def hash_comments(text):
    """(line number, comment text) of every `#` comment that starts a line or follows a space."""
    out = []
    for k, line in enumerate(text.split("\n"), 1):
        m = re.search(r"(^|\s)#", line)
        if m and not line.startswith("#!"):
            out.append((k, line[m.end() - 1:]))
    return out


def xml_comments(text):
    """(line number, comment text) of every line of every `<!-- -->` comment."""
    out = []
    for m in re.finditer(r"<!--.*?-->", text, re.S):
        first = text.count("\n", 0, m.start()) + 1
        out += [(first + k, part) for k, part in enumerate(m.group(0).split("\n"))]
    return out


def texts(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    k = kind(path)
    if k == "md":
        return list(enumerate(text.split("\n"), 1))
    if k == "slash":
        return slash_comments(text)
    if k == "xml":
        return xml_comments(text)
    return hash_comments(text)


def expand(path):
    """The brace lists expanded and placeholders (`<group>`, `GROUP`) made globs."""
    path = re.sub(r"<[\w\-]+>", "*", path)
    path = "/".join("*" if re.fullmatch(r"[A-Z][A-Z0-9_]*", seg) else seg for seg in path.split("/"))
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",") for p in expand(path[: m.start()] + alt + path[m.end():])]


def ignored(paths):
    """The paths git ignores (all of them, if git is not there)."""
    if not paths:
        return set()
    try:
        r = subprocess.run(["git", "-C", REPO, "check-ignore", "--no-index", "--stdin"],
                           input="\n".join(paths), capture_output=True, text=True, check=False)
    except OSError:
        return set(paths)
    return set(r.stdout.split("\n"))


def exists(rel):
    full = os.path.join(REPO, rel)
    if any(ch in rel for ch in "*?["):
        return bool(glob.glob(full, recursive=True))
    return os.path.exists(full)


def candidates(path):
    """(line, as written, repository-relative forms) of each repository path in the file."""
    here = os.path.relpath(os.path.dirname(path), REPO)
    for line, text in texts(path):
        for m in PATH.finditer(text):
            written = m.group(0)
            p = re.sub(r":\d+(-\d+)?$", "", m.group(2)).rstrip(".-")
            if "..." in p:
                continue  # an elided path (`lab/src/...`), not a name
            words = p.split("/")
            if len(words) == 2 and "." not in words[1] and not exists(p):
                continue  # `lab/own`: two words, not a path
            base = os.path.normpath(os.path.join(here, m.group(1))) if m.group(1) else "."
            forms = [os.path.normpath(os.path.join(base, e)) for e in expand(p)]
            yield line, written.rstrip(".-"), forms


def files(args):
    for a in args:
        if os.path.isfile(a):
            yield os.path.abspath(a)
            continue
        for d, dirs, names in os.walk(a):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for n in sorted(names):
                p = os.path.abspath(os.path.join(d, n))
                if kind(p):
                    yield p


def main(argv):
    args = argv or [REPO]
    missing = []
    checked = 0
    for path in files(args):
        for line, written, forms in candidates(path):
            checked += 1
            if not any(exists(f) for f in forms):
                missing.append((os.path.relpath(path, REPO), line, written, forms))
    gone = ignored(sorted({f for _, _, _, forms in missing for f in forms}))
    stale = [m for m in missing if not any(f in gone for f in m[3])]
    for where, line, written, _ in stale:
        print(f"{where}:{line}: `{written}` does not exist")
    print(f"stale-paths: {checked} path(s) named, {len(stale)} missing")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
