//! The shape checks CI runs over lab/src (`scripts/import-circles.py`,
//! `scripts/long-functions.py`): each passes on the tree as it is and fails on a planted
//! circle, a generic stage naming an experiment, or a planted long function.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn script(name: &str, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(root().join("scripts").join(name))
        .args(args)
        .output()
        .expect("python3 runs (apt-get install python3)")
}

fn say(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A scratch tree of `files` (path, text).
fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shape").join(name);
    let _ = std::fs::remove_dir_all(&d);
    for (p, text) in files {
        let p = d.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

#[test]
fn lab_src_has_no_import_circle() {
    let src = root().join("lab").join("src");
    let o = script("import-circles.py", &[src.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", say(&o));
    assert!(say(&o).contains("0 circle(s)"), "{}", say(&o));
}

#[test]
fn a_planted_circle_and_a_generic_stage_naming_an_experiment_fail() {
    let d = tree(
        "circle",
        &[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "use crate::b::Thing;\n"),
            ("b/mod.rs", "// crate::a in a comment is not an import\npub struct Thing;\n"),
            ("b/inner.rs", "fn f() { let _ = crate::a::x(); }\n"),
        ],
    );
    let o = script("import-circles.py", &[d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", say(&o));
    assert!(say(&o).contains("import circle in lab/src: {a, b}"), "{}", say(&o));

    let d = tree(
        "generic",
        &[
            ("runner/mod.rs", "use crate::experiments::Foo;\n"),
            ("experiments/mod.rs", "pub struct Foo;\n"),
        ],
    );
    let o = script("import-circles.py", &[d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", say(&o));
    assert!(say(&o).contains("the generic stage `runner` names an experiment"), "{}", say(&o));

    // A circle between two children of one folder.
    let d = tree(
        "inner",
        &[
            ("x/mod.rs", "mod p;\nmod q;\n"),
            ("x/p.rs", "use super::q::Q;\npub struct P;\n"),
            ("x/q.rs", "use crate::x::p::P;\npub struct Q;\n"),
        ],
    );
    let o = script("import-circles.py", &[d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", say(&o));
    assert!(say(&o).contains("import circle in lab/src/x: {p, q}"), "{}", say(&o));
}

#[test]
fn no_function_in_lab_is_over_120_lines() {
    let lab = root().join("lab");
    let o = script("long-functions.py", &[lab.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", say(&o));
}

#[test]
fn a_planted_long_function_fails_and_braces_in_strings_do_not_count() {
    let body: String = (0..125).map(|i| format!("    let _x{i} = \"}}{{\";\n")).collect();
    let d = tree(
        "long",
        &[("a.rs", &format!("fn long() {{\n{body}}}\n\nfn short() {{\n    '}}';\n}}\n"))],
    );
    let o = script("long-functions.py", &[d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", say(&o));
    assert!(say(&o).contains("fn long is 127 lines"), "{}", say(&o));
    assert!(!say(&o).contains("fn short"), "{}", say(&o));
}
