//! End-to-end tests of seed 000/004's experiments at tiny scale: each runs through the
//! built `lab` binary, and results.json is parsed and checked (fields, environment record,
//! rows, linked files exist).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-seed000-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `lab run <exp> <args> --out <tmp>`; returns (results.json, folder, stdout).
fn run(exp: &str, args: &[&str]) -> (Value, PathBuf, String) {
    let out = tmp(exp);
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", exp])
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("lab runs");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let r: Value = serde_json::from_str(&text).expect("results.json parses");
    check_common(&r, exp, &out);
    (r, out, stdout)
}

fn check_common(r: &Value, exp: &str, dir: &Path) {
    assert_eq!(r["experiment"], exp);
    assert_eq!(r["status"], "complete");
    for k in ["date", "cpu_model", "cores", "rustc", "build_profile", "git_commit", "os"] {
        assert!(!r["environment"][k].is_null(), "environment.{k} missing");
    }
    assert!(!r["tables"].as_array().unwrap().is_empty());
    assert!(!r["rows"].as_array().unwrap().is_empty());
    assert!(!r["method"].as_array().unwrap().is_empty());
    for f in ["report.md", "report.html"] {
        let body = std::fs::read_to_string(dir.join(f)).expect(f);
        assert!(body.contains(exp), "{f} names the experiment");
    }
    for f in r["files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert!(dir.join(f).is_file(), "linked file {f} exists");
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(html.contains(f), "report.html links {f}");
    }
}

fn rows(r: &Value) -> &Vec<Value> {
    r["rows"].as_array().unwrap()
}

#[test]
fn subscribe_overhead() {
    let (r, _, stdout) =
        run("subscribe-overhead", &["--elements", "2000", "--runs", "2", "--warmup", "0"]);
    let rs = rows(&r);
    assert_eq!(rs.len(), 4);
    for row in rs {
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["runs_ns"].as_array().unwrap().len(), 2);
        assert!(row["ns_per_op"]["median"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(rs[0]["unit"], "element");
    assert_eq!(rs[1]["unit"], "subscription");
    assert_eq!(rs[0]["expected_result"], 2000 * 2001 / 2);
    assert_eq!(rs[3]["workload"], "publish-on");
    assert_eq!(rs[3]["expected_result"], 2000 * 2001 / 2);
    assert_eq!(r["targets"].as_array().unwrap().len(), 4);
    assert!(stdout.contains("subscriptions/s") && stdout.contains("elements/s"), "{stdout}");
}

#[test]
fn publish_on_latency() {
    let (r, _, _) =
        run("publish-on-latency", &["--elements", "2000", "--runs", "1", "--warmup", "0"]);
    let rs = rows(&r);
    assert_eq!(rs.len(), 12, "6 variants × 2 modes");
    for row in rs {
        assert_eq!(row["status"], "ok", "{row}");
        let l = &row["latency_ns"];
        assert_eq!(l["count"], 2000);
        let p = |k: &str| l[k].as_u64().unwrap();
        assert!(p("p50") <= p("p99") && p("p99") <= p("p999") && p("p999") <= p("max"));
        // A range travels to the worker; from_iter and the handoffs always cross threads.
        let crossed = row["crossed"].as_u64().unwrap();
        match row["variant"].as_str().unwrap() {
            "reactive" | "reactive-p1" => assert!(crossed < 2000, "{row}"),
            _ => assert_eq!(crossed, 2000, "{row}"),
        }
    }
    assert_eq!(r["targets"].as_array().unwrap().len(), 4);
}

#[test]
fn alloc_pooled_vs_unpooled() {
    let (r, _, stdout) =
        run("alloc-pooled-vs-unpooled", &["--elements", "2000", "--runs", "2", "--warmup", "1"]);
    let rs = rows(&r);
    assert_eq!(rs.len(), 12, "6 sizes × 2 modes");
    for row in rs {
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["ops_per_ms"].as_array().unwrap().len(), 2);
        assert!(row["summary"]["ci999_half"].as_f64().is_some());
    }
    assert!(stdout.contains("ops/ms") && stdout.contains("Error (99.9%)"), "{stdout}");
}

#[test]
fn backpressure_buffer() {
    let (r, dir, _) = run("backpressure-buffer", &["--elements", "300"]);
    let rs = rows(&r);
    let seed: Vec<&Value> = rs.iter().filter(|x| x["kind"] == "seed").collect();
    assert_eq!(seed.len(), 4);
    assert_eq!(seed[0]["overflows"], 0);
    assert_eq!(seed[1]["overflows"], 989);
    let grid: Vec<&Value> = rs.iter().filter(|x| x["kind"] == "grid").collect();
    assert_eq!(grid.len(), 12, "3 capacities × 4 rates");
    for g in grid {
        let sum = g["overflows"].as_u64().unwrap() + g["delivered"].as_u64().unwrap();
        assert_eq!(sum, 300, "{g}");
    }
    let files = r["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    let trace = std::fs::read_to_string(dir.join("publish-on-1.trace.json")).unwrap();
    assert!(trace.contains("overflow"), "the trace shows overflow instants");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        &["run", "subscribe-overhead", "--runs", "0"][..],
        &["run", "backpressure-buffer", "--trace", "full"],
        &["run", "alloc-pooled-vs-unpooled", "--bogus"],
        &["run", "no-such-experiment"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_lab")).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_lab")).args(["run", "nope"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    for name in [
        "subscribe-overhead",
        "publish-on-latency",
        "backpressure-buffer",
        "heap-growth",
        "alloc-pooled-vs-unpooled",
    ] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn list_shows_every_experiment() {
    let o = Command::new(env!("CARGO_BIN_EXE_lab")).arg("list").output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "subscribe-overhead",
        "publish-on-latency",
        "backpressure-buffer",
        "heap-growth",
        "alloc-pooled-vs-unpooled",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(name) && l.len() > name.len() + 10),
            "{out}"
        );
    }
}

#[test]
fn heap_growth() {
    let (r, dir, _) = run("heap-growth", &["--elements", "2048"]);
    let rs = rows(&r);
    assert_eq!(rs.len(), 5);
    let verdict = |label: &str| {
        let row = rs.iter().find(|x| x["variant"] == label).expect(label);
        assert_eq!(row["status"], "ok", "{row}");
        assert!(row["heap_2n"]["max_bytes"].as_u64().unwrap() > 0);
        row["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(verdict("naive"), "grows");
    assert_eq!(verdict("locked (unbounded)"), "grows");
    assert_eq!(verdict("locked (bounded 1024)"), "flat");
    assert_eq!(verdict("ring (1024)"), "flat");
    assert_eq!(verdict("reactive (prefetch 1024)"), "flat");
    let files: Vec<&str> =
        r["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(files.iter().filter(|f| f.ends_with(".dhat-heap.json")).count(), 10, "{files:?}");
    assert_eq!(files.iter().filter(|f| f.ends_with(".trace.json")).count(), 5, "{files:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg"), "depth chart");
}

#[test]
fn heap_growth_refuses_a_size_that_cannot_decide() {
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "heap-growth", "--elements", "300"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("too small"));
}
