//! `lab trace-overhead` at a small size: every mode measured against off in paired rounds,
//! the target decided on one workload only, the record path's cost and the predicted cost
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

fn median(xs: &[f64]) -> f64 {
    lab::stats::Summary::of(xs).expect("non-empty").median
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

#[test]
fn trace_overhead_reports_each_mode_against_off_on_the_system_allocator() {
    let dir = out_dir("small");
    let runs = 2;
    let o = lab(&[
        "trace-overhead",
        "--elements",
        "30000",
        "--runs",
        &runs.to_string(),
        "--warmup",
        "0",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Tracing cost") && stdout.contains("throughput vs off"), "{stdout}");
    assert!(stdout.contains("Record path"), "{stdout}");
    assert!(stdout.contains("target: flight recorder's cost"), "{stdout}");

    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("json"))
            .expect("results.json parses");
    assert_eq!(r["experiment"], "trace-overhead");
    assert_eq!(r["status"], "complete", "{r:#}");
    let workloads = r["config"]["workloads"].as_array().expect("workloads");
    let deciding: Vec<&Value> = workloads.iter().filter(|w| w["decides"] == true).collect();
    assert_eq!(deciding.len(), 1, "exactly one workload decides the target: {workloads:?}");
    assert!(workloads.len() >= 2, "context workloads are still reported");
    let slots: usize = workloads.iter().map(|w| w["slots"].as_array().expect("slots").len()).sum();
    let rows = r["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), slots, "a row per (workload, slot)");
    for w in workloads {
        let label = &w["label"];
        let rounds = w["rounds"].as_u64().expect("rounds") as usize;
        let mine: Vec<&Value> = rows.iter().filter(|r| r["workload"] == *label).collect();
        let off = mine.iter().find(|r| r["mode"] == "off").expect("an off row");
        let off_best = f64s(&off["child_best_ms"]);
        assert_eq!(off_best.len(), rounds, "{label}: a child per round");
        // Traced modes pair with the mean of both off children where there is an A/A one.
        let base_best: Vec<f64> = match mine.iter().find(|r| r["mode"] == "off-aa") {
            Some(aa) => off_best
                .iter()
                .zip(f64s(&aa["child_best_ms"]))
                .map(|(o, a)| (o + a) / 2.0)
                .collect(),
            None => off_best.clone(),
        };
        for row in &mine {
            let what = format!("{label} {}", row["mode"]);
            assert_eq!(row["rounds"].as_u64(), Some(rounds as u64), "{what}");
            assert_eq!(row["runs_ms"].as_array().map(Vec::len), Some(runs * rounds), "{what}");
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
                continue;
            }
            // The cost is the median of the per-round paired ratios of the children's best
            // runs, recomputed here from the raw figures.
            let best = f64s(&row["child_best_ms"]);
            let base = if row["mode"] == "off-aa" { &off_best } else { &base_best };
            let per_round: Vec<f64> =
                best.iter().zip(base).map(|(m, o)| (m / o - 1.0) * 100.0).collect();
            let got = f64s(&row["cost_pct_per_round"]);
            assert_eq!(got.len(), per_round.len(), "{what}");
            for (g, want) in got.iter().zip(&per_round) {
                assert!((g - want).abs() < 1e-9, "{what}: {got:?} vs {per_round:?}");
            }
            let cost = row["cost_pct_median"].as_f64().unwrap_or_else(|| panic!("{what}"));
            assert!((cost - median(&per_round)).abs() < 1e-9, "{what}: {cost}");
            if rounds >= 6 {
                let ci = f64s(&row["cost_ci_pct"]);
                assert!(ci[0] <= cost && cost <= ci[1], "{what}: {cost} outside {ci:?}");
            }
            if row["mode"] == "flight" {
                assert_eq!(row["trace_bytes"].as_array().map(Vec::len), Some(rounds), "{what}");
                let rpm = row["records_per_msg"].as_f64().unwrap_or_else(|| panic!("{what}"));
                assert!(rpm > 0.0, "{what}: the flight recorder recorded nothing");
                let c = &row["record_cost"];
                let (e, s) = (c["event_ns"].as_f64(), c["span_ns"].as_f64());
                assert!(e.is_some_and(|e| e > 0.0) && s.is_some_and(|s| s > 0.0), "{what}: {c}");
                assert!(row["predicted_cost_pct"].as_f64().is_some(), "{what}: {row}");
                let threads = row["records_by_thread"].as_array().expect("records_by_thread");
                assert!(threads.iter().any(|t| t["name"] == "consumer"), "{what}: {threads:?}");
            }
        }
    }
    assert_eq!(r["config"]["timed_allocator"], serde_json::json!(["std::alloc::System"]));
    let env_alloc = r["environment"]["timed_allocator"].as_str().expect("env allocator");
    assert!(env_alloc.starts_with("std::alloc::System (probed"), "{env_alloc}");
    let targets = r["targets"].as_array().expect("targets");
    let flight: Vec<&Value> =
        targets.iter().filter(|t| t["what"].as_str().unwrap_or("").contains("flight")).collect();
    assert_eq!(flight.len(), 1, "the target is decided on one workload only: {targets:?}");
    assert!(flight[0]["what"]
        .as_str()
        .unwrap_or("")
        .contains(deciding[0]["label"].as_str().unwrap()));
    // Met, not met, or UNDECIDED with the reason in the notes; a negative cost is never
    // left without a comment.
    let notes = r["notes"].to_string();
    let t = flight[0];
    assert!(
        t["met"].is_boolean() || (t["met"].is_null() && notes.contains("UNDECIDED")),
        "{t}: {notes}"
    );
    let flight_row = rows
        .iter()
        .find(|r| r["workload"] == deciding[0]["label"] && r["mode"] == "flight")
        .expect("flight row");
    if flight_row["cost_pct_median"].as_f64().is_some_and(|c| c < 0.0) {
        assert!(notes.contains("median is negative"), "{notes}");
    }
    // An interval wholly below 0 is changed dynamics, never a met target.
    if flight_row["cost_ci_pct"][1].as_f64().is_some_and(|hi| hi < 0.0) {
        assert!(t["met"].is_null(), "{t}");
        assert!(notes.contains("lies below 0"), "{notes}");
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
    for (args, says) in [
        (&["trace-overhead", "--elements", "0"][..], "--elements"),
        (&["trace-overhead", "--rounds", "3"][..], "at least 6"),
        (&["trace-overhead", "--rounds", "many"][..], "--rounds"),
        (&["subscribe-overhead", "--rounds", "10"][..], "trace-overhead only"),
    ] {
        let o = lab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says) && err.lines().count() == 1, "{args:?}: {}", text(&o));
    }
}
