//! Seed 000's Reactor rows (`reactor-…`, tools/jvm/reactor: ReactorBench.java) in
//! subscribe-overhead, publish-on-latency, backpressure-buffer and heap-growth at tiny
//! scale, through the built `lab` binary: every Reactor row runs valid on JDK 25 (the
//! seed's, named in each row) with the seed's flags, and the planted fault (`--impl
//! fault-reactor` with `LAB_FAULTS=1`: every run one op short; in backpressure-buffer and
//! heap-growth the source never emits element 1) turns every one of them INVALID. A JDK
//! that is not there is exit 2 with one line naming the path looked in and what installs
//! it, never a skip. Needs a JDK, Maven and Temurin 25 (`apt-get install
//! openjdk-17-jdk-headless maven`; Temurin 25 from Adoptium); without them the tests fail
//! saying so.

mod common;

use common::{out_dir, text};
use serde_json::Value;
use std::process::{Command, Output};

const SUITE: &str = "seed000-reactor";

fn lab_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    c.args(args).env_remove("LAB_JDK25").env_remove("LAB_JDK17");
    for (k, v) in env {
        c.env(k, v);
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
    let faults: &[(&str, &str)] = if imp.contains("fault-") { &[("LAB_FAULTS", "1")] } else { &[] };
    let o = lab_env(&args, faults);
    let body = std::fs::read_to_string(dir.join("results.json"))
        .unwrap_or_else(|e| panic!("results.json: {e}\n{}", text(&o)));
    (o.status.code(), serde_json::from_str(&body).expect("results.json parses"), text(&o))
}

fn rows(r: &Value) -> &Vec<Value> {
    r["results"].as_array().expect("results")
}

/// A Reactor row names Reactor 3.8.8 and the JDK 25 that ran it.
fn on_jdk25(x: &Value) {
    let lib = x["library"].as_str().unwrap_or_default();
    assert!(lib.starts_with("Reactor 3.8.8 on JDK 25"), "{x}");
}

/// Every row INVALID, labelled as the planted fault, its error containing `why`.
fn all_invalid(r: &Value, n: usize, why: &str, out: &str) {
    assert_eq!(rows(r).len(), n, "{out}");
    for x in rows(r) {
        assert!(x["label"].as_str().unwrap().starts_with("fault-reactor-"), "{x}");
        assert_eq!(x["status"], "INVALID", "{x}");
        assert!(x["error"].as_str().unwrap().contains(why), "{x}");
    }
}

#[test]
fn subscribe_overhead_reactor_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "2000"];
    let (code, r, out) = run("subscribe-overhead", "subscribe-ok", "reactive,reactor", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<&str> = rows(&r).iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "flux-range",
            "reactor-flux-range",
            "mono-just",
            "reactor-mono-just",
            "hand-written",
            "reactor-hand-written",
            "publish-on[single]",
            "reactor-publish-on",
        ]
    );
    for x in rows(&r).iter().filter(|x| x["implementation"] == "reactor") {
        assert_eq!(x["status"], "OK", "{x}");
        on_jdk25(x);
        let flags: Vec<&str> =
            x["jvm"]["flags"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
        for f in ["-Xms512m", "-Xmx1g", "-XX:+UseG1GC"] {
            assert!(flags.contains(&f), "the seed's flags by default: {x}");
        }
        assert!(x["score"].as_f64().unwrap() > 0.0);
    }
    // Each reactive row paired with its Reactor row, and the seed's table beside them.
    let ratios = r["ratios"].as_array().unwrap();
    for l in ["flux-range", "mono-just", "hand-written", "publish-on[single]"] {
        assert!(ratios
            .iter()
            .any(|q| q["variant"] == l && q["baseline"].as_str().unwrap().starts_with("reactor-")));
    }
    let tables = r["tables"].as_array().unwrap();
    let seed = tables
        .iter()
        .find(|t| t["title"].as_str().unwrap().starts_with("Seed 000's table"))
        .expect("the seed's table");
    let seed_col: Vec<&str> =
        seed["rows"].as_array().unwrap().iter().map(|r| r[1].as_str().unwrap()).collect();
    assert_eq!(seed_col, ["6 ms", "24 ns", "6 ns"]);

    let (code, r, out) = run("subscribe-overhead", "subscribe-fault", "fault-reactor", &tiny);
    assert_eq!(code, Some(1), "a row that did not pass: {out}");
    all_invalid(&r, 4, "expected", &out);
}

#[test]
fn publish_on_latency_reactor_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "500", "--scheduler", "single,parallel"];
    let (code, r, out) = run("publish-on-latency", "latency-ok", "reactor", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<(&str, &str)> = rows(&r)
        .iter()
        .map(|x| (x["label"].as_str().unwrap(), x["group"].as_str().unwrap()))
        .collect();
    assert_eq!(
        labels,
        [
            ("reactor-publish-on[single]", "bulk"),
            ("reactor-publish-on[single]", "one-by-one"),
            ("reactor-publish-on[parallel]", "bulk"),
            ("reactor-publish-on[parallel]", "one-by-one"),
        ]
    );
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["variant"], "reactor");
        on_jdk25(x);
        assert_eq!(x["latency_ns"]["count"], 500, "{x}");
    }
    let tables = r["tables"].as_array().unwrap();
    assert!(tables
        .iter()
        .any(|t| t["title"].as_str().unwrap().starts_with("Seed 000's publishOn")));
    let (code, r, out) = run("publish-on-latency", "latency-fault", "fault-reactor", &tiny);
    assert_eq!(code, Some(1), "{out}");
    all_invalid(&r, 4, "of 500 elements arrived", &out);
}

#[test]
fn backpressure_buffer_reactor_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--elements", "200", "--capacities", "10", "--rates", "2", "--trace", "off"];
    let (code, r, out) = run("backpressure-buffer", "bp-ok", "reactor", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<&str> = rows(&r).iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "reactor-sync-request-1[drop-latest]",
            "reactor-publish-on-1[drop-latest]",
            "reactor-publish-on-1[drop-oldest]",
            "reactor-publish-on-1[error]",
            "reactor-grid[c10,r2]",
        ]
    );
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["implementation"], "reactor", "{x}");
        on_jdk25(x);
        if x["kind"] == "seed" {
            assert_eq!(x["overflows"].as_f64(), x["expected_overflows"].as_f64(), "{x}");
        }
    }
    let (code, r, out) = run("backpressure-buffer", "bp-fault", "fault-reactor", &tiny);
    assert_eq!(code, Some(1), "{out}");
    all_invalid(&r, 5, "the JVM's check", &out);
}

#[test]
fn heap_growth_reactor_rows_run_valid_and_a_planted_fault_makes_each_invalid() {
    let tiny = ["--messages", "4096", "--work", "2000", "--trace", "off"];
    let (code, r, out) = run("heap-growth", "heap-ok", "reactor", &tiny);
    assert_eq!(code, Some(0), "{out}");
    let labels: Vec<(&str, &str)> = rows(&r)
        .iter()
        .map(|x| (x["label"].as_str().unwrap(), x["group"].as_str().unwrap()))
        .collect();
    let mut want = Vec::new();
    for l in ["reactor-on-backpressure-buffer (unbounded)", "reactor-publish-on (prefetch 1024)"] {
        want.extend([(l, "N"), (l, "2N")]);
    }
    assert_eq!(labels, want, "Reactor has no Observable: no row for it");
    for x in rows(&r) {
        assert_eq!(x["status"], "OK", "{x}");
        on_jdk25(x);
        assert!(x["jvm_live_peak_bytes"].as_u64().unwrap() > 0, "{x}");
        assert!(["grows", "flat"].contains(&x["verdict"].as_str().unwrap()), "{x}");
    }
    let (code, r, out) = run("heap-growth", "heap-fault", "fault-reactor", &tiny);
    assert_eq!(code, Some(1), "{out}");
    all_invalid(&r, 4, "the JVM's check", &out);
}

#[test]
fn a_missing_jdk_is_exit_2_with_one_line_naming_what_to_install() {
    let missing = "/nonexistent/temurin-25/bin/java";
    for imp in ["reactor", "all"] {
        let args = ["subscribe-overhead", "--impl", imp, "--rounds", "1", "--elements", "10"];
        let o = lab_env(&args, &[("LAB_JDK25", missing)]);
        assert_eq!(o.status.code(), Some(2), "never a skip: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err.lines().find(|l| l.contains("--jdk 25")).unwrap_or_else(|| panic!("{err}"));
        assert!(line.contains(missing), "the path looked in: {line}");
        assert!(line.contains("temurin-25-jdk") && line.contains("--jdk 17"), "{line}");
    }
    let o = lab_env(&["subscribe-overhead", "--jdk", "21"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("valid: 17, 25"), "{}", text(&o));
}
