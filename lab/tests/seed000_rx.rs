//! Seed 000's RxJava rows (`rx-…`, tools/jvm/rx: RxBench.java) in subscribe-overhead,
//! publish-on-latency, backpressure-buffer and heap-growth at tiny scale, through the
//! built `lab` binary: every rx row runs valid beside nothing else, and the planted fault
//! (`--impl fault-rx` with `LAB_FAULTS=1`: every run one op short; in backpressure-buffer and
//! heap-growth the source never emits element 1) turns every one of them
//! INVALID. Needs a JDK and Maven (`apt-get install openjdk-17-jdk-headless maven`);
//! without them the tests fail saying so. An unknown `--impl` is one line and exit 2 (the
//! missing-JDK refusal is unit-tested in `experiments::rx_rows`).

mod common;

use common::{out_dir, text};
use serde_json::Value;
use std::process::{Command, Output};

const SUITE: &str = "seed000-rx";

fn lab_env(args: &[&str], faults: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    c.args(args);
    if faults {
        c.env("LAB_FAULTS", "1");
    }
    c.output().expect("run lab")
}

/// `lab <exp> --impl <imp> <tiny settings> --out <dir>`: (exit code, results.json, output).
fn run(exp: &str, name: &str, imp: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let dir = out_dir(SUITE, name);
    let d = dir.display().to_string();
    let mut args = vec![exp, "--impl", imp, "--rounds", "1", "--runs", "1", "--warmup", "1"];
    args.extend_from_slice(extra);
    args.extend(["--out", &d]);
    let o = lab_env(&args, imp.starts_with("fault-"));
    let body = std::fs::read_to_string(dir.join("results.json"))
        .unwrap_or_else(|e| panic!("results.json: {e}\n{}", text(&o)));
    (o.status.code(), serde_json::from_str(&body).expect("results.json parses"), text(&o))
}

fn rows(r: &Value) -> &Vec<Value> {
    r["results"].as_array().expect("results")
}

#[test]
fn subscribe_overhead_rx_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "2000"];
    let (code, r, out) = run("subscribe-overhead", "subscribe-ok", "rx", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<&str> = rows(&r).iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["rx-flowable-range", "rx-single-just", "rx-hand-written", "rx-observe-on"]);
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["implementation"], "rx");
        assert!(x["library"].as_str().unwrap().starts_with("RxJava 3"), "{x}");
        assert!(x["jvm"]["flags"].as_array().unwrap().iter().any(|f| f == "-XX:+UseSerialGC"));
        assert_eq!(x["gc_count"].as_array().unwrap().len(), 1, "one measured run: {x}");
        assert_eq!(x["allocated_bytes_per_op"].as_array().unwrap().len(), 1, "{x}");
        assert!(x["score"].as_f64().unwrap() > 0.0);
    }
    let tables = r["tables"].as_array().unwrap();
    assert!(tables.iter().any(|t| t["title"].as_str().unwrap().starts_with("The JVM rows")));

    let (code, r, out) = run("subscribe-overhead", "subscribe-fault", "fault-rx", &tiny);
    assert_eq!(code, Some(1), "a row that did not pass: {out}");
    assert_eq!(rows(&r).len(), 4, "{out}");
    for x in rows(&r) {
        assert!(x["label"].as_str().unwrap().starts_with("fault-rx-"), "{x}");
        assert_eq!(x["status"], "INVALID", "{x}");
        let err = x["error"].as_str().unwrap();
        assert!(err.contains("expected"), "the check names what it expected: {err}");
    }
}

#[test]
fn an_unknown_impl_is_one_line_and_exit_2() {
    let o = lab_env(&["subscribe-overhead", "--impl", "akka"], false);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("valid: reactive, rx, reactor, all"), "{err}");
    // Without LAB_FAULTS the planted fault is not offered.
    let o = lab_env(&["subscribe-overhead", "--impl", "fault-rx"], false);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn publish_on_latency_rx_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "500", "--scheduler", "single,parallel"];
    let (code, r, out) = run("publish-on-latency", "latency-ok", "rx", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<(&str, &str)> = rows(&r)
        .iter()
        .map(|x| (x["label"].as_str().unwrap(), x["group"].as_str().unwrap()))
        .collect();
    assert_eq!(
        labels,
        [
            ("rx-observe-on[single]", "bulk"),
            ("rx-observe-on[single]", "one-by-one"),
            ("rx-observe-on[computation]", "bulk"),
            ("rx-observe-on[computation]", "one-by-one"),
        ]
    );
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["variant"], "rx");
        // Every element of the measured run, stamped and read with CLOCK_MONOTONIC.
        assert_eq!(x["latency_ns"]["count"], 500, "{x}");
        assert!(x["latency_ns"]["p50"].as_u64().unwrap() > 0, "{x}");
    }
    let (code, r, out) = run("publish-on-latency", "latency-fault", "fault-rx", &tiny);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(rows(&r).len(), 4, "{out}");
    for x in rows(&r) {
        assert_eq!(x["status"], "INVALID", "{x}");
        assert!(x["error"].as_str().unwrap().contains("of 500 elements arrived"), "{x}");
    }
}

#[test]
fn backpressure_buffer_rx_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "200", "--capacities", "10", "--rates", "2", "--trace", "off"];
    // The valid run with its trace pass: Java Flight Recorder's trace of the JVM.
    let mut traced = tiny;
    traced[7] = "flight";
    let (code, r, out) = run("backpressure-buffer", "bp-ok", "rx", &traced);
    assert_eq!(code, Some(0), "{out}");
    let files: Vec<&str> =
        r["files"].as_array().unwrap().iter().filter_map(|f| f["file"].as_str()).collect();
    assert_eq!(files, ["rx-publish-on-1.trace.json", "rx-grid-c10-r2.trace.json"], "{out}");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(SUITE).join("bp-ok");
    let trace = std::fs::read_to_string(dir.join(files[0])).expect("the trace file");
    assert!(trace.contains("RxSingleScheduler-1"), "the JVM's threads by name");
    assert!(dir.join("rx-publish-on-1.jfr").is_file(), "the recording beside it");
    let labels: Vec<&str> = rows(&r).iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "rx-sync-request-1[drop-latest]",
            "rx-publish-on-1[drop-latest]",
            "rx-publish-on-1[drop-oldest]",
            "rx-publish-on-1[error]",
            "rx-grid[c10,r2]",
        ]
    );
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["implementation"], "rx", "{x}");
        assert!(x["library"].as_str().unwrap().starts_with("RxJava 3"), "{x}");
        let runs = x["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "one measured run: {x}");
        if x["kind"] == "seed" {
            assert_eq!(x["overflows"].as_f64(), x["expected_overflows"].as_f64(), "{x}");
        } else {
            // Every element delivered or overflowed, checked by the JVM and by the lab.
            let o = &runs[0]["outcome"];
            let sum = o["delivered"].as_u64().unwrap() + o["overflows"].as_u64().unwrap();
            assert_eq!(sum, 200, "{x}");
        }
    }
    let (code, r, out) = run("backpressure-buffer", "bp-fault", "fault-rx", &tiny);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(rows(&r).len(), 5, "{out}");
    for x in rows(&r) {
        assert!(x["label"].as_str().unwrap().starts_with("fault-rx-"), "{x}");
        assert_eq!(x["status"], "INVALID", "{x}");
        assert!(x["error"].as_str().unwrap().contains("the JVM's check"), "{x}");
    }
}

#[test]
fn heap_growth_rx_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--messages", "4096", "--work", "2000", "--trace", "off"];
    let (code, r, out) = run("heap-growth", "heap-ok", "rx", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<(&str, &str)> = rows(&r)
        .iter()
        .map(|x| (x["label"].as_str().unwrap(), x["group"].as_str().unwrap()))
        .collect();
    let mut want = Vec::new();
    for l in [
        "rx-observable (unbounded)",
        "rx-on-backpressure-buffer (unbounded)",
        "rx-observe-on (prefetch 1024)",
    ] {
        want.extend([(l, "N"), (l, "2N")]);
    }
    assert_eq!(labels, want);
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert!(x["library"].as_str().unwrap().starts_with("RxJava 3"), "{x}");
        // The live heap after a full collection, sampled during the run, and a verdict.
        assert!(x["jvm_live_peak_bytes"].as_u64().unwrap() > 0, "{x}");
        assert!(x["jvm_live_bytes"].is_u64(), "{x}");
        assert!(["grows", "flat"].contains(&x["verdict"].as_str().unwrap()), "{x}");
    }
    let (code, r, out) = run("heap-growth", "heap-fault", "fault-rx", &tiny);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(rows(&r).len(), 6, "{out}");
    for x in rows(&r) {
        assert_eq!(x["status"], "INVALID", "{x}");
        assert!(x["error"].as_str().unwrap().contains("the JVM's check"), "{x}");
    }
}
