//! `lab echo-server` end to end at a small size: every server's rows in results.json (the
//! envelope, one fork per round, no failed request, the seed's 1028-byte document), the
//! tables, the paired ratios, the trace and heap files linked and present; two runs
//! compared; a hung server reported HUNG; bad input is one line and exit 2.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{lab, text};

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("echo_server_e2e", name)
}

fn results(dir: &Path) -> Value {
    let s = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    serde_json::from_str(&s).expect("results.json parses")
}

/// A small run of inline and locked (and nginx, with ab, where installed): exit 0.
fn small_run(dir: &Path, extra: &[&str]) -> Value {
    let d = dir.to_str().expect("utf-8 path");
    let mut args = vec![
        "echo-server",
        "--requests",
        "300",
        "--concurrency",
        "10",
        "--rounds",
        "8",
        "--variants",
        "inline,locked",
        "--out",
        d,
    ];
    args.extend_from_slice(extra);
    let o = lab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    results(dir)
}

fn check_row(r: &Value, label: &str) {
    let rows = r["results"].as_array().expect("results");
    let row = rows.iter().find(|x| x["label"] == label).unwrap_or_else(|| panic!("no {label}"));
    assert_eq!(row["status"], "OK", "{row:#}");
    assert_eq!(row["valid"], true);
    assert_eq!(
        (row["unit"].as_str(), row["higher_is_better"].as_bool()),
        (Some("req/s"), Some(true))
    );
    assert_eq!(row["key"]["server"], label);
    let forks = row["forks"].as_array().expect("forks");
    assert_eq!(forks.len(), 8, "one fork per round");
    for f in forks {
        assert_eq!(f["status"], "OK", "{f:#}");
        assert!(f["score"].as_f64().expect("score") > 0.0);
    }
    assert!(row["score"].as_f64().expect("score") > 0.0);
    assert!(row["score_ci"].is_array(), "eight forks give an interval: {row:#}");
    let l = &row["load"];
    assert_eq!(l["failed_requests"], 0, "{label}: {l:#}");
    assert_eq!(l["complete_requests"], 300, "{label}");
    assert_eq!(l["document_length"], 1028, "{label}");
    assert_eq!(l["concurrency"], 10, "{label}");
    assert_eq!(l["percentiles"].as_array().expect("percentiles").len(), 9);
    assert!(row["ab_style"].as_str().expect("ab text").contains("Document Length:"));
    assert_eq!(row["failed_requests"], 0);
    if !row["ab"].is_null() {
        assert_eq!(row["ab"]["failed_requests"], 0, "{label}");
        assert_eq!(row["ab"]["document_length"], 1028, "{label}");
    }
}

#[test]
fn two_small_runs_serve_the_document_without_failures_and_compare() {
    // The lab looks for lab-heap beside itself; cargo builds both bins for this test.
    assert!(Path::new(env!("CARGO_BIN_EXE_lab-heap")).is_file());
    let dir = out_dir("a");
    let r = small_run(&dir, &[]);
    assert_eq!(r["schema_version"], lab::results::SCHEMA_VERSION);
    assert_eq!(r["experiment"], "echo-server");
    assert_eq!(r["status"], "complete", "{r:#}");
    assert_eq!(r["rounds"]["finished"], 8);
    assert!(r["environment"]["cpu_model"].is_string());
    let rows = r["results"].as_array().expect("results");
    let nginx = rows.iter().any(|x| x["label"] == "nginx");
    let notes: Vec<&str> =
        r["notes"].as_array().expect("notes").iter().filter_map(Value::as_str).collect();
    if nginx {
        check_row(&r, "nginx");
        assert!(rows.iter().any(|x| x["label"] == "nginx" && x["heap"].is_null()));
    } else {
        assert!(notes.contains(&"nginx not installed: not measured"), "{notes:?}");
    }
    for label in ["inline", "locked"] {
        check_row(&r, label);
        let row = rows.iter().find(|x| x["label"] == label).expect("row");
        for key in ["trace", "heap_file"] {
            let f = row[key].as_str().unwrap_or_else(|| panic!("{label}: no {key}"));
            let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(f)).expect(f))
                .unwrap_or_else(|e| panic!("{f} is not JSON: {e}"));
            assert!(v.is_object() || v.is_array());
        }
        assert!(row["heap"]["max_bytes"].as_u64().expect("heap totals") > 0);
    }
    // locked against the inline baseline, paired within the eight rounds.
    let ratios = r["ratios"].as_array().expect("ratios");
    let locked = ratios
        .iter()
        .find(|x| x["variant"] == "locked" && x["baseline"] == "inline")
        .expect("locked/inline ratio");
    assert_eq!(locked["rounds"], 8);
    assert!(locked["median"].as_f64().expect("median") > 0.0);
    let files: Vec<&str> =
        r["files"].as_array().expect("files").iter().filter_map(|f| f["file"].as_str()).collect();
    assert_eq!(files.iter().filter(|f| f.ends_with(".trace.json")).count(), 2, "{files:?}");
    assert_eq!(files.iter().filter(|f| f.ends_with(".dhat-heap.json")).count(), 2, "{files:?}");
    let ab_style = files.iter().find(|f| f.ends_with(".ab-style.txt")).expect("ab-style file");
    let text_ab = std::fs::read_to_string(dir.join(ab_style)).expect("ab-style");
    assert!(text_ab.contains("Server Software:") && text_ab.contains("Requests per second:"));
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    for f in &files {
        assert!(dir.join(f).is_file(), "{f}");
        assert!(md.contains(f) && html.contains(f), "{f} not linked from the reports");
    }
    let titles: Vec<&str> = r["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    assert!(titles.iter().any(|t| t.starts_with("Connection times")), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("Percentage of the requests served")));
    assert!(md.contains("× seed 8,371") && md.contains("vs inline (paired)"));

    // A second run of the same options, and the comparison of the two.
    let dir_b = out_dir("b");
    small_run(&dir_b, &["--heap", "off", "--trace", "off"]);
    let o = lab(&["compare", dir.to_str().unwrap(), dir_b.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    assert!(out.contains("a: score [interval]") && out.contains("locked"), "{out}");
    assert!(out.contains("locked/inline"), "the ratios are compared: {out}");
    if o.status.code() == Some(1) {
        assert!(out.contains("BETTER") || out.contains("WORSE"), "exit 1 needs a change: {out}");
    }
}

#[test]
fn a_hung_server_is_killed_and_reported_while_the_others_stand() {
    let dir = out_dir("hung");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .env("LAB_FAULTS", "1")
        .args(["echo-server", "-n", "100", "-c", "5", "--rounds", "1", "--timeout", "2"])
        .args(["--variants", "inline,fault-hang", "--nginx", "off", "--ab", "off"])
        .args(["--heap", "off", "--trace", "off", "--out", dir.to_str().unwrap()])
        .output()
        .expect("run lab");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = results(&dir);
    assert_eq!(r["status"], "failed");
    let row = |l: &str| r["results"].as_array().unwrap().iter().find(|x| x["label"] == l).cloned();
    assert_eq!(row("fault-hang").expect("hung row")["status"], "HUNG", "{r:#}");
    assert_eq!(row("inline").expect("inline row")["status"], "OK");
}

#[test]
fn help_shows_the_options_defaults_and_possible_values() {
    let o = lab(&["echo-server", "--help"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let h = String::from_utf8_lossy(&o.stdout);
    for s in [
        "[default: inline,locked,ring,reactive,naive, then java-nio and netty",
        "[possible values: inline, locked, ring",
        "--requests",
        "[default: 10000]",
        "busy-spin",
        "--rounds",
        "[default: 8]",
        "Shared options",
    ] {
        assert!(h.contains(s), "{s} missing from:\n{h}");
    }
}

#[test]
fn an_unknown_variant_is_one_line_and_exit_2() {
    let o = lab(&["run", "echo-server", "--variants", "inline,bogus", "--out", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("unknown variant 'bogus'") && err.contains("inline, locked, ring"));
}

#[test]
fn a_port_in_use_is_one_line_and_exit_2() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = held.local_addr().expect("addr").port().to_string();
    let o = lab(&["echo-server", "--port", &port, "--out", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("port {port}")) && err.contains("not free"), "{err}");
}
