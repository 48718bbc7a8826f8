//! `lab echo-server` with the JVM servers at a tiny size: java-nio and netty valid in the same
//! rounds as the Rust server, with their JVM evidence and the Rust row's paired ratios
//! against each; their planted fault (a document 100 bytes short) INVALID; a collector flag
//! in --jvm-flags is refused (exit 2). Missing jars: the unit test of `chosen_servers`.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::text;

fn run(dir: &Path, variants: &str, faults: bool) -> (Output, Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .env("LAB_FAULTS", if faults { "1" } else { "0" })
        .args(["echo-server", "-n", "200", "-c", "5", "--rounds", "2", "--warmup", "0"])
        .args(["--variants", variants, "--nginx", "off", "--ab", "off"])
        .args(["--heap", "off", "--trace", "off", "--out", dir.to_str().expect("utf-8")])
        .output()
        .expect("run lab");
    let r = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    (o, serde_json::from_str(&r).expect("results.json parses"))
}

fn row<'a>(r: &'a Value, label: &str) -> &'a Value {
    let rows = r["results"].as_array().expect("results");
    rows.iter().find(|x| x["label"] == label).unwrap_or_else(|| panic!("no {label}: {r:#}"))
}

#[test]
fn java_nio_and_netty_run_valid_beside_the_rust_server_with_their_evidence() {
    let dir = common::out_dir("echo_server_jvm", "valid");
    let (o, r) = run(&dir, "inline,java-nio,netty", false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for label in ["inline", "java-nio", "netty"] {
        let x = row(&r, label);
        assert_eq!((x["status"].as_str(), x["valid"].as_bool()), (Some("OK"), Some(true)), "{x:#}");
        assert_eq!(x["load"]["complete_requests"], 200, "{label}");
        assert_eq!(x["load"]["document_length"], 1028, "{label}");
        assert_eq!(x["failed_requests"], 0, "{label}");
        assert!(x["server_cpu_us_per_request"].as_f64().is_some_and(|v| v > 0.0), "{x:#}");
    }
    for label in ["java-nio", "netty"] {
        let j = &row(&r, label)["jvm"];
        assert!(j["flags"].as_str().expect("flags").contains("-XX:+UseSerialGC"), "{j:#}");
        assert_eq!(j["gc"], "serial");
        let runs = j["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 1, "one measured run: {j:#}");
        assert!(runs[0]["gc_ms"].is_number() && runs[0]["gc_count"].is_number());
        let threads = runs[0]["counters"]["threads"].as_object().expect("counters by thread");
        assert!(threads.keys().any(|k| k.starts_with("echo-")), "{threads:?}");
        // The Rust server against this JVM server, paired within the rounds.
        let q = r["ratios"]
            .as_array()
            .expect("ratios")
            .iter()
            .find(|q| q["variant"] == "inline" && q["baseline"] == label);
        let q = q.unwrap_or_else(|| panic!("no inline/{label} ratio: {:#}", r["ratios"]));
        assert_eq!(q["rounds"], 2, "{q:#}");
        assert!(q["median"].as_f64().is_some_and(|m| m > 0.0));
    }
    assert_eq!(row(&r, "netty")["jvm"]["netty_version"], "4.2.18.Final");
    let titles: Vec<&str> = r["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    assert!(titles.iter().any(|t| t.starts_with("JVM servers")), "{titles:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(md.contains("vs java-nio (paired)") && md.contains("vs netty (paired)"));
}

#[test]
fn a_planted_short_body_turns_each_jvm_row_invalid() {
    let dir = common::out_dir("echo_server_jvm", "fault");
    let (o, r) = run(&dir, "inline,fault-java-nio,fault-netty", true);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(row(&r, "inline")["status"], "OK");
    for label in ["fault-java-nio", "fault-netty"] {
        let x = row(&r, label);
        assert_eq!(x["status"], "INVALID", "{x:#}");
        let err = x["error"].as_str().unwrap_or_default();
        assert!(err.contains("document of 928 bytes, not 1028"), "{label}: {x:#}");
    }
}

#[test]
fn a_collector_flag_in_jvm_flags_is_one_line_and_exit_2() {
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["echo-server", "--variants", "inline,netty", "--jvm-flags", "-XX:+UseZGC"])
        .args(["--out", "/nonexistent"])
        .output()
        .expect("run lab");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--jvm-gc"), "{err}");
}
