//! A results.json written by an earlier lab is still read by `lab report` and `lab
//! compare`, as every later one must be: one from commit d62ada6 (before the rows' details
//! were typed and lab/src was reshaped: a small `disruptor-vs-lbq` run, P=1,2, heap and
//! trace on), and one from commit 3a29962 (schema version 2, the rows' roles only in their
//! labels: own loops and traced twins, P=1). A detail field that does not read (renamed,
//! mistyped) is a one-line error naming the row and the field, exit 2.

mod common;

use common::{lab, out_dir, text, tiny_no_passes};
use std::path::Path;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/before-typed-details/results.json")
}

fn roles_in_labels() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roles-in-labels/results.json")
}

/// The roles fixture with the `ring` row's fields edited by `edit`, in a fresh run folder.
fn edited(name: &str, edit: impl Fn(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let dir = out_dir("old_results", name);
    let text = std::fs::read_to_string(roles_in_labels()).expect("the fixture");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let rows = v["results"].as_array_mut().expect("rows");
    let ring = rows.iter_mut().find(|x| x["label"] == "ring").expect("a ring row");
    edit(ring.as_object_mut().expect("an object"));
    std::fs::write(dir.join("results.json"), v.to_string()).expect("write");
    dir.to_str().unwrap().to_string()
}

#[test]
fn a_results_json_with_roles_in_labels_is_reported_and_compared() {
    let dir = out_dir("old_results", "roles");
    std::fs::copy(roles_in_labels(), dir.join("results.json")).expect("copy the fixture");
    let o = lab(&["report", dir.to_str().unwrap(), "--details"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ring/own-loop"), "{}", text(&o));
    let f = roles_in_labels();
    let o = lab(&["compare", f.to_str().unwrap(), dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 change(s)"), "{}", text(&o));
}

#[test]
fn a_renamed_detail_field_is_an_error_naming_the_row_and_the_field() {
    let dir = edited("renamed", |ring| {
        let qps = ring.remove("qps").expect("the ring row has qps");
        ring.insert("qpz".into(), qps);
    });
    for args in [vec!["report", dir.as_str()], vec!["compare", dir.as_str(), dir.as_str()]] {
        let o = lab(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("row `ring` (P=1)") && err.contains("`qpz`"), "{err}");
        assert!(err.contains("valid: ") && err.contains("qps"), "it lists the fields: {err}");
    }
}

#[test]
fn a_mistyped_detail_field_is_an_error_naming_the_row_and_the_field() {
    let dir = edited("mistyped", |ring| {
        ring.insert("median_ms".into(), serde_json::json!("fast"));
    });
    let o = lab(&["report", dir.as_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("row `ring` (P=1): field `median_ms`"), "{err}");
    assert!(err.contains("invalid type"), "{err}");
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
