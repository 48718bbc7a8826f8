//! `lab echo-server` end to end at a small size: every variant's load report parsed from
//! results.json (no failed request, the seed's 1028-byte document), the trace and heap files
//! linked and present; bad input is one line and exit 2.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{lab, text};

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("echo_server_e2e", name)
}

#[test]
fn small_run_every_variant_serves_the_document_without_failures() {
    // The lab looks for lab-heap beside itself; cargo builds both bins for this test.
    assert!(Path::new(env!("CARGO_BIN_EXE_lab-heap")).is_file());
    let dir = out_dir("small");
    let d = dir.to_str().expect("utf-8 path");
    let o = lab(&[
        "echo-server",
        "--requests",
        "500",
        "--concurrency",
        "10",
        "--runs",
        "1",
        "--variants",
        "inline,locked",
        "--out",
        d,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("read"))
            .expect("results.json parses");
    assert_eq!(r["experiment"], "echo-server");
    assert_eq!(r["status"], "complete", "{r:#}");
    assert!(r["environment"]["os"].is_string() || r["environment"].is_object());
    let rows = r["rows"].as_array().expect("rows");
    let nginx = rows.iter().any(|x| x["variant"] == "nginx");
    let notes: Vec<&str> =
        r["notes"].as_array().expect("notes").iter().filter_map(Value::as_str).collect();
    if !nginx {
        assert!(notes.contains(&"nginx not installed: not measured"), "{notes:?}");
    }
    for variant in ["inline", "locked"] {
        let row = rows.iter().find(|x| x["variant"] == variant).unwrap_or_else(|| {
            panic!("no row for {variant}: {r:#}");
        });
        assert_eq!(row["status"], "ok", "{row:#}");
        let rounds = row["rounds"].as_array().expect("rounds");
        assert_eq!(rounds.len(), 1);
        for round in rounds {
            let l = &round["load"];
            assert_eq!(l["failed_requests"], 0, "{variant}: {l:#}");
            assert_eq!(l["complete_requests"], 500, "{variant}");
            assert_eq!(l["document_length"], 1028, "{variant}");
            assert_eq!(l["concurrency"], 10, "{variant}");
            assert!(l["requests_per_second"].as_f64().expect("rps") > 0.0);
            assert_eq!(l["percentiles"].as_array().expect("percentiles").len(), 9);
            assert!(round["ab_style"].as_str().expect("ab text").contains("Document Length:"));
            if !round["ab"].is_null() {
                assert_eq!(round["ab"]["failed_requests"], 0, "{variant}");
                assert_eq!(round["ab"]["document_length"], 1028, "{variant}");
            }
        }
        for key in ["trace_file", "heap_file"] {
            let f = row[key].as_str().unwrap_or_else(|| panic!("{variant}: no {key}"));
            let p = dir.join(f);
            let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(meta.len() > 0, "{} is empty", p.display());
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("read"))
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()));
            assert!(v.is_object() || v.is_array());
        }
    }
    let files: Vec<&str> =
        r["files"].as_array().expect("files").iter().filter_map(Value::as_str).collect();
    assert_eq!(files.len(), 4, "{files:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    for f in &files {
        assert!(dir.join(f).is_file(), "{f}");
        assert!(md.contains(f) && html.contains(f), "{f} not linked from the reports");
    }
    assert!(md.contains("× seed 8,371") && md.contains("Connection times"));
    assert!(md.contains("Percentage of the requests served within a certain time"));
    assert!(md.contains("```text\nServer Software:"), "the ab-style text is missing");
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
