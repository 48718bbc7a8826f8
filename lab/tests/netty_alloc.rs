//! `alloc-pooled-vs-unpooled`'s Netty rows end to end, at tiny scale: Netty 4.2's pooled
//! and unpooled allocators, heap and direct, run by
//! tools/jvm/netty/src/main/java/NettyAlloc.java beside the Rust pool and the global
//! allocator, in the same rounds, with the Rust rows' ratios to Netty's heap rows; and a
//! planted leak (`fault-netty-pooled-heap`, `LAB_FAULTS=1`) that must come out INVALID. (A
//! Netty row named without a JDK or Maven is bad input naming the install command: the unit
//! test of `alloc::netty::chosen_modes`.)
//!
//! Without a JDK or Maven (or Netty's jars from Maven Central) these tests FAIL, naming the install command.

mod common;

use common::{lab, out_dir, text};
use serde_json::Value;
use std::process::Command;

const SUITE: &str = "netty-alloc";
const INSTALL: &str = "apt-get install openjdk-17-jdk-headless maven";

fn require_netty() {
    let ok = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "`java` is not runnable: {INSTALL}");
    let ok = Command::new("mvn").arg("-v").output().is_ok_and(|o| o.status.success());
    assert!(ok, "`mvn` is not runnable: {INSTALL}");
}

/// `lab alloc-pooled-vs-unpooled` at tiny scale with `extra`; (output, results.json).
fn tiny(name: &str, extra: &[&str], faults: bool) -> (std::process::Output, Value) {
    require_netty();
    let dir = out_dir(SUITE, name);
    let d = dir.display().to_string();
    let mut args = vec!["alloc-pooled-vs-unpooled", "--sizes", "1024", "--ops", "2000"];
    args.extend(["--runs", "2", "--warmup", "1", "--jvm-jit-warmup-ms", "0", "--out", &d]);
    args.extend_from_slice(extra);
    let o = if faults {
        Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(&args)
            .env("LAB_FAULTS", "1")
            .output()
            .expect("run lab")
    } else {
        lab(&args)
    };
    let body = std::fs::read_to_string(dir.join("results.json"))
        .unwrap_or_else(|e| panic!("results.json: {e}\n{}", text(&o)));
    (o, serde_json::from_str(&body).expect("results.json parses"))
}

fn row<'a>(r: &'a Value, label: &str) -> &'a Value {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["label"] == label)
        .unwrap_or_else(|| panic!("no {label} row"))
}

#[test]
fn netty_rows_run_beside_the_rust_rows_with_paired_ratios() {
    let (o, r) = tiny("valid", &["--rounds", "2"], false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let labels: Vec<&str> =
        r["results"].as_array().unwrap().iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "pooled",
            "unpooled",
            "netty-pooled-heap",
            "netty-unpooled-heap",
            "netty-pooled-direct",
            "netty-unpooled-direct"
        ],
        "the default modes with Netty installed"
    );
    for (label, class) in [
        ("netty-pooled-heap", "PooledUnsafeHeapByteBuf"),
        ("netty-unpooled-heap", "UnpooledUnsafeHeapByteBuf"),
        ("netty-pooled-direct", "PooledUnsafeDirectByteBuf"),
        ("netty-unpooled-direct", "UnpooledUnsafeDirectByteBuf"),
    ] {
        let x = row(&r, label);
        assert_eq!(x["status"], "OK", "{x}");
        assert_eq!(x["forks"].as_array().unwrap().len(), 2, "one fork per round");
        assert_eq!(x["ops_per_ms"].as_array().unwrap().len(), 4, "2 forks × 2 iterations");
        let j = &x["jvm"];
        assert!(j["buffer_class"].as_str().unwrap().contains(class), "{label}: {j}");
        assert!(j["netty_version"].as_str().unwrap().starts_with("4.2"), "{j}");
        assert_eq!(j["gc_count"].as_array().unwrap().len(), 4, "GC per measured iteration");
        let counters = j["counters"].as_array().unwrap();
        assert_eq!(counters.len(), 4, "counters per measured iteration, by run mark: {j}");
        assert!(counters[0]["threads"]["alloc"].is_object(), "the alloc thread: {j}");
        assert!(j["jvm"]["flags"].to_string().contains("leakDetection.level=disabled"));
    }
    let heap = row(&r, "netty-unpooled-heap")["jvm"]["allocated_bytes_per_op"][0].as_f64();
    assert!(heap.unwrap() >= 1024.0, "a new byte[1024] per op on the Java heap");
    let ratios = r["ratios"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = ratios
        .iter()
        .map(|q| (q["variant"].as_str().unwrap(), q["baseline"].as_str().unwrap()))
        .collect();
    for p in [
        ("pooled", "unpooled"),
        ("netty-pooled-heap", "netty-unpooled-heap"),
        ("netty-pooled-direct", "netty-unpooled-direct"),
        ("pooled", "netty-pooled-heap"),
        ("unpooled", "netty-unpooled-heap"),
    ] {
        assert!(pairs.contains(&p), "ratio {p:?} in {pairs:?}");
    }
    assert!(ratios.iter().all(|q| q["rounds"] == 2), "paired within both rounds: {ratios:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("The Rust rows against Netty's"), "{out}");
    assert!(out.contains("pooled / netty-pooled-heap"), "{out}");
}

#[test]
fn a_planted_leak_makes_the_netty_row_invalid() {
    let (o, r) = tiny("fault", &["--rounds", "1", "--modes", "fault-netty-pooled-heap"], true);
    assert_eq!(o.status.code(), Some(1), "a row that did not pass: {}", text(&o));
    let x = row(&r, "fault-netty-pooled-heap");
    assert_eq!(x["status"], "INVALID", "{x}");
    let why = x["error"].as_str().unwrap();
    assert!(why.contains("released 1999 of 2000 buffers"), "{why}");
}
