//! `lab trace-overhead` at a small size: every mode measured against off, the targets
//! reported, and the timed children's global allocator probed as the system allocator. This
//! test binary runs on `dhat::Alloc` itself, so the probe is shown to tell the two apart.

use serde_json::Value;
use std::path::PathBuf;

mod common;
use common::{lab, text};

// The probe's counter-example: a process whose global allocator is dhat's.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("trace_overhead", name)
}

#[test]
fn the_probe_sees_dhat_when_dhat_is_the_global_allocator() {
    let p = lab::experiments::trace_overhead::allocator_probe();
    assert_eq!(p.name, "dhat::Alloc", "{p:?}");
    assert!(p.dhat_counted_blocks >= 1, "{p:?}");
}

#[test]
fn trace_overhead_reports_each_mode_against_off_on_the_system_allocator() {
    let dir = out_dir("small");
    let o = lab(&[
        "trace-overhead",
        "--elements",
        "30000",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Tracing cost") && stdout.contains("throughput vs off"), "{stdout}");
    assert!(stdout.contains("target: flight recorder's cost"), "{stdout}");

    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("json"))
            .expect("results.json parses");
    assert_eq!(r["experiment"], "trace-overhead");
    assert_eq!(r["status"], "complete", "{r:#}");
    let rows = r["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6, "2 workloads × 3 modes");
    let rounds = r["config"]["rounds"].as_u64().expect("rounds") as usize;
    for row in rows {
        let what = format!("{} {}", row["workload"], row["mode"]);
        assert_eq!(row["runs_ms"].as_array().map(Vec::len), Some(2 * rounds), "{what}");
        let alloc = row["allocator"].as_array().expect("allocator probes");
        assert_eq!(alloc.len(), rounds, "{what}: one probe per child");
        for a in alloc {
            assert_eq!(a["name"], "std::alloc::System", "{what}: {a}");
            assert_eq!(a["dhat_counted_blocks"], 0, "{what}: {a}");
        }
        let ratio = row["throughput_vs_off"].as_f64().unwrap_or_else(|| panic!("{what}"));
        assert!(ratio > 0.0, "{what}: {ratio}");
        if row["mode"] == "off" {
            assert!((ratio - 1.0).abs() < 1e-12, "{what}: off against itself is 1");
            assert!(row["cost_pct_median"].is_null(), "{what}");
        } else {
            let cost = row["cost_pct_median"].as_f64().unwrap_or_else(|| panic!("{what}"));
            assert!((cost / 100.0 + 1.0 - 1.0 / ratio).abs() < 1e-9, "{what}: cost vs ratio");
            assert_eq!(row["trace_bytes"].as_array().map(Vec::len), Some(rounds), "{what}");
        }
    }
    assert_eq!(r["config"]["timed_allocator"], serde_json::json!(["std::alloc::System"]));
    let env_alloc = r["environment"]["timed_allocator"].as_str().expect("env allocator");
    assert!(env_alloc.starts_with("std::alloc::System (probed"), "{env_alloc}");
    let targets = r["targets"].as_array().expect("targets");
    let flight: Vec<&Value> =
        targets.iter().filter(|t| t["what"].as_str().unwrap_or("").contains("flight")).collect();
    assert_eq!(flight.len(), 2, "a flight target per workload: {targets:?}");
    // Decided, or left undecided with the reason in the notes (this machine's noise).
    let notes = r["notes"].to_string();
    for t in &flight {
        assert!(
            t["met"].is_boolean() || (t["met"].is_null() && notes.contains("UNDECIDED")),
            "{t}: {notes}"
        );
    }
    let alloc_target =
        targets.iter().find(|t| t["what"] == "global allocator of the timed children");
    assert_eq!(alloc_target.map(|t| &t["met"]), Some(&Value::Bool(true)), "{targets:?}");
    // The flight dumps are kept as evidence and linked.
    let files: Vec<&str> =
        r["files"].as_array().expect("files").iter().filter_map(Value::as_str).collect();
    assert!(files.iter().any(|f| f.contains("-flight-")), "{files:?}");
    for f in &files {
        assert!(dir.join(f).is_file(), "{f} listed but missing");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(html.contains("Tracing cost") && html.contains("std::alloc::System"));
}

#[test]
fn trace_overhead_refuses_bad_input() {
    let o = lab(&["trace-overhead", "--elements", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--elements"), "{}", text(&o));
}
