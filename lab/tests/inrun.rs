//! `--trace in-run`: the flight recorder in the timed forks of a traced twin, the outlier
//! forks' dumps kept. A tiny run of the built `lab` (ring, P=1, three rounds): the run
//! folder holds exactly the kept dumps under their outlier names and no scratch files;
//! each is a Chrome trace with the lab's spans (and loads into Perfetto's trace processor,
//! `tools/viewers/check-trace.mjs`, which FAILS naming the set-up when the viewers are
//! missing); report.md links each; results.json has the twin row with its `in_run_traces`
//! and the recording-cost ratio. An experiment without the mode refuses it in one line.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{lab, text};

const SETUP: &str = "run scripts/setup-test-deps.sh";

fn viewers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/viewers")
}

/// The viewer check of one dump, when the checker is in the tree and node runs; fails
/// (never skips) when its setup is missing.
fn check_in_perfetto(trace: &Path) {
    let script = viewers().join("check-trace.mjs");
    let node_runs =
        Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !script.is_file() || !node_runs {
        return;
    }
    let o = Command::new("node")
        .arg(&script)
        .arg(trace)
        .args(["--expect-thread", "consumer", "--expect-thread", "producer-0"])
        .args(["--expect-slice", "consume", "--min-flows", "1"])
        .output()
        .expect("node runs");
    assert_ne!(
        o.status.code(),
        Some(2),
        "check-trace.mjs: the viewers are missing: {SETUP}\n{}",
        text(&o)
    );
    assert!(o.status.success(), "{} in Perfetto's trace processor: {}", trace.display(), text(&o));
}

fn thread_names(doc: &Value) -> Vec<String> {
    doc["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn in_run_keeps_the_outlier_forks_dumps_and_reports_the_recording_cost() {
    let dir = common::out_dir("inrun", "ring-p1");
    let o = lab(&common::tiny(
        "disruptor-vs-lbq",
        "3",
        &[
            // The cost table is one of the tables the terminal shows with --details.
            "--details",
            "--trace",
            "in-run",
            "--variants",
            "ring",
            "--producers",
            "1",
            "--messages",
            "50000",
            "--heap",
            "off",
            "--out",
            dir.to_str().expect("utf-8 path"),
        ],
    ));
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("In-run recording cost"), "{stdout}");

    // Exactly the kept dumps, under their outlier names; no scratch folder or file.
    let mut dumps: Vec<String> = std::fs::read_dir(&dir)
        .expect("run folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".trace.json"))
        .collect();
    dumps.sort();
    assert!(!dir.join("inrun").exists(), "the scratch folder is left");
    assert!((2..=4).contains(&dumps.len()), "2 to 4 dumps expected: {dumps:?}");
    for d in &dumps {
        let kind = d
            .strip_prefix("ring-p1.")
            .and_then(|k| k.strip_suffix(".trace.json"))
            .unwrap_or_else(|| panic!("{d}: not a ring-p1 dump"));
        assert!(["slowest", "fastest", "mode1", "mode2"].contains(&kind), "{d}");
        // Each kept dump has its native Perfetto twin beside it.
        let twin = d.replace(".trace.json", ".pftrace");
        assert!(dir.join(&twin).is_file(), "{twin}: no .pftrace beside {d}");
    }
    assert!(dumps.contains(&"ring-p1.slowest.trace.json".to_string()), "{dumps:?}");
    assert!(dumps.contains(&"ring-p1.fastest.trace.json".to_string()), "{dumps:?}");

    for d in &dumps {
        let path = dir.join(d);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("dump"))
            .unwrap_or_else(|e| panic!("{d}: not JSON: {e}"));
        let names = thread_names(&doc);
        assert!(names.iter().any(|n| n == "consumer"), "{d}: threads {names:?}");
        let consume = doc["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "consume");
        assert!(consume, "{d}: no consume span");
        check_in_perfetto(&path);
    }

    let report = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    for d in &dumps {
        assert!(report.contains(&format!("]({d})")), "report.md does not link {d}");
    }

    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let rows = r["results"].as_array().expect("rows");
    let plain = rows.iter().find(|x| x["label"] == "ring").expect("the plain row");
    let twin = rows.iter().find(|x| x["label"] == "ring[in-run]").expect("the twin row");
    assert_eq!(twin["group"], plain["group"]);
    assert_eq!(twin["key"]["in_run_trace"], true);
    assert_eq!(twin["forks"].as_array().map(Vec::len), Some(3));
    assert!(plain.get("in_run_traces").is_none(), "the plain row is not recorded");
    let kept = twin["in_run_traces"].as_array().expect("in_run_traces on the twin row");
    assert_eq!(kept.len(), dumps.len());
    let scores: Vec<f64> =
        twin["forks"].as_array().unwrap().iter().filter_map(|f| f["score"].as_f64()).collect();
    for k in kept {
        let file = k["file"].as_str().expect("file");
        assert!(dumps.iter().any(|d| d == file), "{file} listed but not in the folder");
        let ms = k["score_ms"].as_f64().expect("score_ms");
        let round = k["round"].as_u64().expect("round") as usize;
        assert_eq!(twin["forks"][round]["score"].as_f64(), Some(ms), "{k}");
        let want = match k["kind"].as_str() {
            Some("slowest") => scores.iter().copied().fold(f64::MIN, f64::max),
            Some("fastest") => scores.iter().copied().fold(f64::MAX, f64::min),
            _ => ms,
        };
        assert_eq!(ms, want, "{k}: not the {} fork of {scores:?}", k["kind"]);
    }
    let ratios = r["ratios"].as_array().expect("ratios");
    let cost = ratios
        .iter()
        .find(|q| q["variant"] == "ring[in-run]" && q["baseline"] == "ring")
        .expect("the recording-cost ratio");
    assert_eq!(cost["rounds"], 3);
    assert!(cost["median"].as_f64().is_some_and(|m| m > 0.0), "{cost}");
    let files = r["files"].as_array().expect("files");
    for d in &dumps {
        assert!(files.iter().any(|f| f["file"] == d.as_str()), "files[] misses {d}");
    }
}

#[test]
fn in_run_on_an_experiment_without_it_is_one_line_and_exit_2() {
    let o = lab(&["heap-growth", "--trace", "in-run"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(stderr.trim().lines().count(), 1, "one line expected: {stderr}");
    assert!(stderr.contains("in-run"), "{stderr}");
}
