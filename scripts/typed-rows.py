#!/usr/bin/env python3
"""Rows cross lab/src's stages typed: no row field read or written by a string name, no
role read back from a label.

Counts, in lab/src (tests included, comments and strings skipped):
* string-keyed row data: a row's or cell's key or detail map indexed by name
  (`.key.get("…")`, `.key.insert(…)`, `.key_u64(…)`, `.detail.get(…)`, `.detail["…"]`, …);
  rows are read through their experiment's key and detail types instead;
* label-suffix role checks: a label, variant or baseline name taken apart to learn what the
  row is (`label.ends_with("[in-run]")`, `baseline.rsplit_once('/')`,
  `label.split(['[', '@'])`, `name.strip_prefix("rx-")`, …); roles, allocators, collectors
  and libraries are fields of the row's role and key instead.

A line that reads a results.json written before roles were typed says so with the comment
`schema upgrade:` on it or on the line above it, and is not counted. Exit 1 when either count is above 0.

Usage: scripts/typed-rows.py [lab/src]
       scripts/typed-rows.py --self-test   (planted lines are found; comments, strings and
                                            marked lines are not)
"""
import os
import re
import sys

STRING_KEYED = re.compile(
    r"\.(key|detail)\s*\.\s*(get|get_mut|insert|remove|contains_key|entry)\s*\(|"
    r"\.(key|detail)\s*\[|\bkey_(u64|str|f64)\s*\("
)
LABEL_ROLE = re.compile(
    r"\b(label|variant|baseline|stem|name)\w*(\.as_str\(\))?\s*\.\s*"
    r"(ends_with|starts_with|strip_suffix|strip_prefix|rsplit_once|split_once|split|rsplit|"
    r"trim_start_matches|trim_end_matches)\s*\(\s*(\"(\[in-run\]|/own-loop|/|@|\[|rx-|jvm-|"
    r"reactor-)|'(/|@|\[)'|\[)"
)


def code_only(line):
    """The line without its // comment and without the text of its string literals (their
    quotes kept, so that a pattern can still see a literal's start)."""
    out, i, in_str = [], 0, False
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
                out.append(c)
            i += 1
            continue
        if line.startswith("//", i):
            break
        if c == '"':
            in_str = True
        out.append(c)
        i += 1
    return "".join(out)


def scan(root):
    keyed, roles = [], []
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                marked = False
                for n, line in enumerate(fh, 1):
                    was_marked, marked = marked, "schema upgrade:" in line
                    if marked or was_marked:
                        continue
                    where = f"{os.path.relpath(path)}:{n}: {line.strip()}"
                    if STRING_KEYED.search(code_only(line)):
                        keyed.append(where)
                    # The role patterns look at the literal's first characters: match on
                    # the line without its comment, strings kept.
                    if LABEL_ROLE.search(line.split("//")[0]):
                        roles.append(where)
    return keyed, roles


PLANTED = {
    "keyed.rs": (
        'fn a(x: &Row) { x.key.get("producers"); x.key_u64("size"); r.detail.insert(k, v); }\n'
        "fn b(x: &Row) { let _ = x.detail[\"qps\"]; }\n"
    ),
    "roles.rs": (
        'fn c(l: &str) { l.ends_with("[in-run]"); label.rsplit_once(\'/\'); q.baseline.starts_with("rx-"); }\n'
        "fn d(l: &str) { label.split(['[', '@']); }\n"
    ),
    "clean.rs": (
        "// x.key.get(\"a\") in a comment; label.ends_with(\"[in-run]\") too\n"
        'fn e(x: &Row) { let k: Key = x.key_as(); let s = "x.key.get(\\"a\\")"; }\n'
        "// schema upgrade: a legacy label\n"
        'fn f(l: &str) { l.strip_suffix("[in-run]"); }\n'
    ),
}


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory(prefix="typed-rows-") as root:
        for name, text in PLANTED.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        keyed, roles = scan(root)
    want = ({"keyed.rs": 2}, {"roles.rs": 2})
    got = tuple({k: sum(os.path.basename(w.split(":")[0]) == k for w in ws) for k in PLANTED} for ws in (keyed, roles))
    ok = all(got[i].get(k, 0) == want[i].get(k, 0) for i in range(2) for k in PLANTED)
    print(f"typed-rows self-test: {'ok' if ok else 'FAILED'}: lines found per file {got}, want {want}")
    return 0 if ok else 1


def main(argv):
    if "--self-test" in argv:
        return self_test()
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "src")
    keyed, roles = scan(os.path.normpath(root))
    for w in keyed:
        print(f"string-keyed row data: {w}")
    for w in roles:
        print(f"label-suffix role check: {w}")
    print(
        f"typed-rows: {len(keyed)} string-keyed read(s) or write(s) of row data, "
        f"{len(roles)} label-suffix role check(s)"
    )
    return 1 if keyed or roles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
