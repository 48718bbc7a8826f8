//! `disruptor-vs-lbq --allocator`: one row per allocator, each child on the allocator its
//! row names (the child says so, and refuses a cell meant for another), ratios against the
//! baseline of the same allocator, and clap's one-line error for a name it does not know.

mod common;

use common::{lab, out_dir, text, tiny_no_passes};
use serde_json::Value;
use std::process::Command;

fn run(name: &str, extra: &[&str]) -> Value {
    let out = out_dir("allocator", name);
    let mut args =
        tiny_no_passes("disruptor-vs-lbq", "2", &["--messages", "20000", "--producers", "1"]);
    args.extend_from_slice(extra);
    let o_str = out.display().to_string();
    args.extend(["--out", &o_str]);
    let o = lab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // cargo built every binary of the lab from these sources for the tests: the runner must
    // see that from the binaries themselves and not rebuild them (a rebuild under other
    // features took minutes on a fresh machine).
    assert!(!String::from_utf8_lossy(&o.stderr).contains("building it"), "{}", text(&o));
    let s = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    serde_json::from_str(&s).expect("valid JSON")
}

#[test]
fn every_sibling_binary_names_the_build_of_the_lab() {
    let dir = std::path::Path::new(env!("CARGO_BIN_EXE_lab")).parent().unwrap().to_path_buf();
    let id = |name: &str| {
        let o = Command::new(dir.join(name)).arg("__build-id").output().expect("run it");
        assert!(o.status.success(), "{name}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let heap = id("lab-heap");
    assert_eq!(heap.len(), 16, "{heap}");
    assert_eq!(id("lab-cell-jemalloc"), heap);
    assert_eq!(id("lab-cell-mimalloc"), heap);
}

#[test]
fn all_gives_a_row_per_allocator_each_run_on_its_own() {
    let r = run("all", &["--variants", "locked", "--allocator", "all"]);
    let rows = r["results"].as_array().expect("rows");
    let labels: Vec<&str> = rows.iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["locked@system", "locked@mimalloc", "locked@jemalloc"]);
    for x in rows {
        assert_eq!(x["status"], "OK", "{x}");
        let a = x["key"]["allocator"].as_str().expect("allocator in the key");
        assert_eq!(x["allocator"], a);
        // The child names its allocator from a constant compiled into its binary.
        assert_eq!(x["allocator_in_child"], a, "{} ran elsewhere", x["label"]);
    }
    let env = r["environment"]["timed_allocator"].as_str().unwrap();
    for b in ["lab binary", "lab-cell-mimalloc", "lab-cell-jemalloc"] {
        assert!(env.contains(b), "{env}");
    }
    assert_eq!(
        r["config"]["plan"]["allocators"],
        serde_json::json!(["system", "mimalloc", "jemalloc"])
    );
    let t = r["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"].as_str().unwrap().starts_with("Allocator"))
        .expect("an Allocator table");
    let header: Vec<&str> =
        t["header"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
    assert!(header.contains(&"mimalloc/system [interval]"), "{header:?}");
    assert!(header.contains(&"jemalloc/system [interval]"), "{header:?}");
    assert_eq!(t["rows"].as_array().unwrap().len(), 1);
}

#[test]
fn the_default_is_jemalloc_with_plain_labels_and_ratios_pair_within_an_allocator() {
    let r = run("default", &["--variants", "locked"]);
    let rows = r["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["label"], "locked");
    assert!(rows[0]["key"].get("allocator").is_none(), "{}", rows[0]["key"]);
    assert_eq!(rows[0]["allocator"], "jemalloc");
    assert_eq!(rows[0]["allocator_in_child"], "jemalloc");
    assert!(!r["tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["title"].as_str().unwrap().starts_with("Allocator")));

    let r = run("pairs", &["--variants", "locked,ring", "--allocator", "jemalloc,system"]);
    let pairs: Vec<(String, String)> = r["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["variant"].as_str().unwrap().into(), q["baseline"].as_str().unwrap().into()))
        .collect();
    let want = [("ring@jemalloc", "locked@jemalloc"), ("ring@system", "locked@system")];
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    for (v, b) in want {
        assert!(pairs.contains(&(v.into(), b.into())), "{pairs:?}");
    }
}

#[test]
fn a_child_refuses_a_cell_meant_for_another_allocator() {
    let cell = serde_json::json!({
        "experiment": "disruptor-vs-lbq", "pass": "timed",
        "cell": {"variant": "locked", "wait": null, "producers": 1, "messages": 1000,
                 "warmup": 0, "runs": 1, "ring_size": 1024, "capacity": null, "prefetch": 256,
                 "payload": 16, "sample_every": 0, "batch": 64, "sampling_ab_pairs": 0,
                 "heap_messages": 1000, "trace_messages": 1000, "allocator": "system"}
    });
    let o = Command::new(env!("CARGO_BIN_EXE_lab-cell-mimalloc"))
        .args(["__child", &cell.to_string()])
        .output()
        .expect("run lab-cell-mimalloc");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("\"failed\"") && out.contains("this child runs on mimalloc"), "{out}");
}

#[test]
fn an_unknown_allocator_is_one_line_and_exit_code_2() {
    let o = lab(&["disruptor-vs-lbq", "--allocator", "bogus"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for v in ["bogus", "system", "mimalloc", "jemalloc", "all"] {
        assert!(err.contains(v), "{err}");
    }
}
