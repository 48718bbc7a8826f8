//! `lab heap-growth` end to end at a tiny size: the rows' envelope and their heap and depth
//! details in results.json, each variant's verdict (unbounded buffers grow, bounded ones
//! stay flat), the dhat and trace files, the depth chart; two runs compared; sizes that
//! cannot decide, a missing heap pass and runs of two experiments refused with one line.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{lab, text};

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("heap_growth", name)
}

fn run(dir: &Path) -> Value {
    // The Rust rows alone: the rx rows are lab/tests/seed000_rx.rs's.
    let d = dir.to_str().unwrap();
    let o = lab(&["heap-growth", "--messages", "2048", "--impl", "reactive", "--out", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    serde_json::from_str(&s).expect("results.json parses")
}

#[test]
fn unbounded_buffers_grow_bounded_ones_stay_flat_and_two_runs_compare() {
    let dir = out_dir("a");
    let r = run(&dir);
    assert_eq!(
        (r["schema_version"].as_u64(), r["experiment"].as_str()),
        (Some(u64::from(lab::results::SCHEMA_VERSION)), Some("heap-growth"))
    );
    assert_eq!(r["status"], "complete", "{r:#}");
    for k in ["date", "cpu_model", "cores", "rustc", "build_profile", "git_commit", "os"] {
        assert!(!r["environment"][k].is_null(), "environment.{k} missing");
    }
    let rows = r["results"].as_array().expect("results");
    assert_eq!(rows.len(), 10, "5 variants × N and 2N");
    for row in rows {
        assert_eq!(row["status"], "OK", "{row:#}");
        assert!(row["forks"].as_array().unwrap().is_empty(), "untimed cells have no forks");
        let n = if row["group"] == "N" { 2048 } else { 4096 };
        assert_eq!(row["key"]["messages"], n, "{row:#}");
        assert!(row["heap"]["max_bytes"].as_u64().unwrap() > 0);
        assert!(row["max_depth"].as_u64().is_some());
        assert!(dir.join(row["heap_file"].as_str().expect("heap file")).is_file());
    }
    let verdict = |label: &str| {
        let of =
            |g: &str| rows.iter().find(|x| x["label"] == label && x["group"] == g).expect(label);
        let (n, n2) = (of("N"), of("2N"));
        assert_eq!(n["verdict"], n2["verdict"], "one verdict per variant");
        n["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(verdict("naive"), "grows");
    assert_eq!(verdict("locked (unbounded)"), "grows");
    assert_eq!(verdict("locked (bounded 1024)"), "flat");
    assert_eq!(verdict("ring (1024)"), "flat");
    assert_eq!(verdict("reactive (prefetch 1024)"), "flat");
    let files: Vec<&str> =
        r["files"].as_array().unwrap().iter().filter_map(|f| f["file"].as_str()).collect();
    assert_eq!(files.iter().filter(|f| f.ends_with(".dhat-heap.json")).count(), 10, "{files:?}");
    assert_eq!(files.iter().filter(|f| f.ends_with(".trace.json")).count(), 5, "{files:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for f in &files {
        assert!(dir.join(f).is_file() && html.contains(f), "{f}");
    }
    assert!(html.contains("<svg") && html.contains("Queue depth over time"), "depth chart");
    let table = &r["tables"][0];
    assert!(table["header"].as_array().unwrap().iter().any(|h| h == "verdict"));
    assert_eq!(table["rows"].as_array().unwrap().len(), 5);

    let dir_b = out_dir("b");
    run(&dir_b);
    let o = lab(&["compare", dir.to_str().unwrap(), dir_b.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    assert!(out.contains("heap-growth") && out.contains("ring (1024)"), "{out}");
    if o.status.code() == Some(1) {
        assert!(out.contains("BETTER") || out.contains("WORSE"), "exit 1 needs a change: {out}");
    }
}

#[test]
fn compare_refuses_two_experiments_with_one_line() {
    let hg = out_dir("for-compare");
    run(&hg);
    let es = out_dir("echo-for-compare");
    let o = lab(&[
        "echo-server",
        "-n",
        "50",
        "-c",
        "5",
        "--variants",
        "inline",
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--heap",
        "off",
        "--trace",
        "off",
        "--nginx",
        "off",
        "--ab",
        "off",
        "--out",
        es.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = lab(&["compare", hg.to_str().unwrap(), es.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("different experiments"), "{err}");
}

#[test]
fn sizes_that_cannot_decide_and_a_missing_heap_pass_are_refused() {
    for (args, what) in [
        (&["heap-growth", "--messages", "300"][..], "too small"),
        (&["heap-growth", "--heap", "off"], "needs its heap pass"),
        (&["heap-growth", "--work", "0"], "--work"),
    ] {
        let o = lab(&[args, &["--out", "/nonexistent"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}
