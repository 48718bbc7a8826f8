//! A results.json written by an earlier lab (commit d62ada6, before the rows' details were
//! typed and lab/src was reshaped: a small `disruptor-vs-lbq` run, P=1,2, heap and trace
//! on) is still read by `lab report` and `lab compare`, as every later one must be.

mod common;

use common::{lab, out_dir, text, tiny_no_passes};
use std::path::Path;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/before-typed-details/results.json")
}

#[test]
fn an_earlier_results_json_is_reported_again() {
    let dir = out_dir("old_results", "report");
    std::fs::copy(fixture(), dir.join("results.json")).expect("copy the fixture");
    let o = lab(&["report", dir.to_str().unwrap(), "--details"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in ["locked", "ring", "P=1", "P=2"] {
        assert!(out.contains(want), "the tables name {want}: {}", text(&o));
    }
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md rewritten");
    assert!(md.contains("ring"), "report.md holds the rows");
    assert!(dir.join("report.html").exists(), "report.html rewritten");
}

#[test]
fn an_earlier_results_json_compares_with_itself_as_no_change() {
    let f = fixture();
    let o = lab(&["compare", f.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 change(s)"), "{}", text(&o));
}

#[test]
fn an_earlier_results_json_compares_with_a_fresh_run_of_the_same_shape() {
    let dir = out_dir("old_results", "fresh");
    let args = tiny_no_passes(
        "disruptor-vs-lbq",
        "2",
        &["--messages", "64Ki", "--producers", "1,2", "--out", dir.to_str().unwrap()],
    );
    let o = lab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let f = fixture();
    let o = lab(&["compare", f.to_str().unwrap(), dir.join("results.json").to_str().unwrap()]);
    // 0 or 1 (a change between machines or days may be found); never 2, which would mean
    // one of the files could not be read as a lab results.json.
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in ["locked", "ring", "P=2"] {
        assert!(out.contains(want), "the comparison lists {want}: {}", text(&o));
    }
}
