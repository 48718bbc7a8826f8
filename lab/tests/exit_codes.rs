//! Each exit code of the built `lab` binary, one small case each: 0 for a tiny run that
//! passed, 2 for bad input (one line on stderr), 1 for a failure found by measuring (a
//! planted loss), 130 for Ctrl-C; and the README's exit-code table against the codes of
//! `lab::error::Error`, so the docs and the code cannot drift apart.

mod common;

use common::{lab, out_dir, text};
use lab::error::{Error, SUCCESS};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// The cheapest run: one producer, one run per fork, no warm-up, no passes.
const TINY: &[&str] = &[
    "disruptor-vs-lbq",
    "--messages",
    "10000",
    "--producers",
    "1",
    "--runs",
    "1",
    "--warmup",
    "0",
    "--min-fork-ms",
    "0",
    "--heap",
    "off",
    "--trace",
    "off",
];

fn tiny(variants: &str, rounds: &str, out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    c.env_remove("LAB_FAULTS").args(TINY).args(["--variants", variants, "--rounds", rounds]);
    c.arg("--out").arg(out);
    c
}

fn status_of(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("results.json parses");
    v["status"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_tiny_run_that_passes_exits_0() {
    let out = out_dir("exit_codes", "ok");
    let o = tiny("locked", "1", &out).output().expect("lab runs");
    assert_eq!(o.status.code(), Some(SUCCESS), "{}", text(&o));
    assert_eq!(status_of(&out), "complete");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let out = out_dir("exit_codes", "usage");
    let out = out.to_str().expect("utf-8");
    for (args, needle) in [
        (vec!["no-such-experiment"], "unknown experiment 'no-such-experiment'; valid:"),
        (vec!["disruptor-vs-lbq", "--messages", "lots", "--out", out], "not a size"),
        (vec!["disruptor-vs-lbq", "--variants", "bogus", "--out", out], "unknown variant 'bogus'"),
        (
            vec!["disruptor-vs-lbq", "--jvm-gc", "g1,bogus", "--out", out],
            "g1, parallel, serial, g1-default, all",
        ),
        (
            vec!["disruptor-vs-lbq", "--jvm-flags", "-Xmx2g -XX:+UseZGC", "--out", out],
            "choose it with --jvm-gc (g1, parallel, serial, g1-default, all)",
        ),
        (vec!["compare", "/nonexistent/a.json", "/nonexistent/b.json"], "cannot read"),
    ] {
        let o = lab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("lab: ") && err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_failure_found_by_measuring_exits_1_after_writing_the_results() {
    let out = out_dir("exit_codes", "failed");
    let o = tiny("fault-lossy", "1", &out).env("LAB_FAULTS", "1").output().expect("lab runs");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.trim().lines().last().unwrap_or_default();
    assert_eq!(last, "lab: 1 row(s) did not pass (see the tables)", "{err}");
    assert_eq!(status_of(&out), "failed");
}

#[test]
fn ctrl_c_exits_130_and_writes_what_finished() {
    use std::os::unix::process::CommandExt;
    let out = out_dir("exit_codes", "interrupted");
    // fault-hang's fork never ends by itself: only the interrupt stops this run.
    let mut cmd = tiny("crossbeam,fault-hang", "3", &out);
    cmd.env("LAB_FAULTS", "1").args(["--timeout", "60"]);
    let mut child =
        cmd.process_group(0).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut err = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).expect("read stderr") > 0, "stderr closed early");
        if line.starts_with("[1/") {
            break;
        }
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    // SAFETY: kill(2) on our own child's process group with SIGINT, as a terminal sends it.
    let rc = unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGINT) };
    assert_eq!(rc, 0);
    let status = child.wait().expect("wait");
    let err = rest.join().expect("stderr reader");
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("lab: interrupted; what finished is written"), "{err}");
    assert_eq!(status_of(&out), "interrupted");
}

/// The codes in README.md's "Exit codes" table.
fn readme_codes() -> BTreeSet<i32> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme.split("\n## Exit codes\n").nth(1).expect("an '## Exit codes' section");
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .filter_map(|cell| cell.trim().trim_matches('`').parse().ok())
        .collect()
}

#[test]
fn the_readme_lists_exactly_the_codes_the_error_type_has() {
    let mut codes: BTreeSet<i32> = Error::every_kind().iter().map(Error::exit_code).collect();
    codes.insert(SUCCESS);
    assert_eq!(readme_codes(), codes, "README.md's exit-code table and lab::error::Error differ");
}
