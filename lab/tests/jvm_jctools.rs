//! `jvm-jctools` end to end: JCTools' MpscArrayQueue run by Bus (the jctools group,
//! tools/jvm/jctools/) in a tiny `disruptor-vs-lbq` run beside the ring, its own-loop
//! calibration and its planted fault (`fault-jvm-jctools`, `LAB_FAULTS=1`: producer 0 drops
//! one message).
//!
//! * jvm-jctools checks itself (count, per-producer order, the Rust checksum) and comes out
//!   valid, with the JVM evidence of the other JVM rows (latency, bytes per message, the
//!   JVM's description, the library's version), beside `jvm-jctools/own-loop` paired in
//!   every round, and ring against jvm-jctools is a pair.
//! * The planted loss turns fault-jvm-jctools INVALID, and the run exits 1.
//!
//! Without a JDK, the Disruptor jar or jctools-core.jar the run exits 2 naming the install
//! command, and this test fails with it: it never skips. (The missing-jar message itself is
//! unit-tested in `measure::jvm` with a group folder whose jar is absent.)

use serde_json::Value;

mod common;
use common::text;

#[test]
fn jvm_jctools_is_valid_beside_its_own_loop_and_a_planted_loss_is_invalid() {
    let dir = common::out_dir("jvm_jctools", "tiny");
    let args = common::tiny_no_passes(
        "disruptor-vs-lbq",
        "2",
        &[
            "--variants",
            "ring,jvm-jctools,fault-jvm-jctools",
            "--producers",
            "2",
            "--messages",
            "20000",
            "--jit-warmup",
            "1",
            "--sample-every",
            "64",
            "--out",
            dir.to_str().expect("utf-8 path"),
        ],
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .env("LAB_FAULTS", "1")
        .args(&args)
        .output()
        .expect("run lab");
    let all = text(&o);
    assert!(
        !all.contains("cannot run here"),
        "jvm-jctools needs a JDK and Maven (bash scripts/setup-test-deps.sh): {all}"
    );
    assert_eq!(o.status.code(), Some(1), "the planted loss fails the run: {all}");
    let s = std::fs::read_to_string(dir.join("results.json")).expect("results.json written");
    let r: Value = serde_json::from_str(&s).expect("results.json parses");
    let rows = r["results"].as_array().expect("rows");
    let row = |label: &str| -> &Value {
        rows.iter().find(|x| x["label"] == label).unwrap_or_else(|| panic!("no {label}: {all}"))
    };

    let j = row("jvm-jctools");
    assert_eq!(j["status"], "OK", "{j}");
    assert!(j["qps"].as_f64().is_some_and(|q| q > 0.0), "{j}");
    let jvm = &j["jvm"];
    assert!(jvm["jvm"]["version"].as_str().is_some(), "the JVM's version: {jvm}");
    assert!(jvm["library"].as_str().is_some_and(|l| l.starts_with("jctools-core ")), "{jvm}");
    assert_eq!(jvm["wait"], "blocking", "Rust blocking pairs with the queue's parking wait");
    let ws = jvm["wait_strategy"].as_str().unwrap_or_default();
    assert!(ws.contains("MpscArrayQueue") && ws.contains("parkNanos"), "{jvm}");
    let bytes = jvm["allocated_bytes_per_message"].as_f64().expect("bytes per message");
    assert!((45.0..55.0).contains(&bytes), "one inline message (48 B), no node: {bytes}");
    let lat = &j["latency_ns"];
    assert!(lat["count"].as_u64().is_some_and(|c| c > 0), "latency sampled: {j}");

    let cal = row("jvm-jctools/own-loop");
    assert_eq!(cal["status"], "OK", "{cal}");
    let ratios = r["ratios"].as_array().expect("ratios");
    let pair = |a: &str, b: &str| ratios.iter().find(|q| q["variant"] == a && q["baseline"] == b);
    let q = pair("jvm-jctools", "jvm-jctools/own-loop").expect("paired with its calibration");
    assert_eq!(q["rounds"], 2, "paired in every round: {q}");
    assert!(pair("ring", "jvm-jctools").is_some(), "ring against jvm-jctools: {ratios:?}");

    let bad = row("fault-jvm-jctools");
    assert_eq!(bad["status"], "INVALID", "{bad}");
    assert!(bad["error"].as_str().unwrap_or_default().contains("received 19999 of 20000"), "{bad}");
    let env = r["environment"]["notes"].to_string();
    assert!(env.contains("jctools-core"), "the library in the environment: {env}");
}
