//! End-to-end tests of the built `lab` binary: a small `disruptor-vs-lbq` run with every
//! promised field and file checked, each bad-input error (exit code 2 and its message),
//! planted faults (INVALID, HUNG, CRASHED), Ctrl-C, and `compare`.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn lab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    c.env_remove("LAB_FAULTS");
    c
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("results.json exists"))
        .expect("results.json parses")
}

#[test]
fn small_run_writes_every_promised_field_and_file() {
    let out = tmp("e2e");
    let o = lab()
        .args([
            "run",
            "disruptor-vs-lbq",
            "--messages",
            "20000",
            "--producers",
            "1,2",
            "--runs",
            "1",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("lab runs");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("Duration (ms, median)") && stdout.contains("QPS"), "{stdout}");
    assert!(stdout.contains("report.html"), "{stdout}");

    let r = read_json(&out.join("results.json"));
    assert_eq!(r["experiment"], "disruptor-vs-lbq");
    let env = &r["environment"];
    for k in [
        "date",
        "cpu_model",
        "cores",
        "memory_mib",
        "os",
        "kernel",
        "rustc",
        "build_profile",
        "build_flags",
        "git_commit",
        "git_dirty",
        "warmup_runs",
        "measured_runs",
        "messages",
        "load_average_at_start",
        "tracing",
        "heap_profiling",
        "timed_allocator",
        "heap_allocator",
    ] {
        assert!(!env[k].is_null(), "environment.{k} missing: {env}");
    }
    assert_eq!(env["measured_runs"], 1);
    assert_eq!(env["messages"], 20000);
    assert!(env["rustc"].as_str().unwrap().starts_with("rustc "));

    let rows = r["results"].as_array().expect("results[]");
    let variants: Vec<&str> =
        r["config"]["variants"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(variants.contains(&"locked"), "{variants:?}");
    assert_eq!(rows.len(), 2 * variants.len(), "one row per (variant, P)");
    for row in rows {
        let what = format!("{} P={}", row["variant"], row["producers"]);
        assert_eq!(row["messages"], 20000, "{what}");
        assert_eq!(row["valid"], true, "{what}: {row}");
        assert_eq!(row["status"], "OK", "{what}");
        assert_eq!(row["runs_ms"].as_array().unwrap().len(), 1, "{what}");
        for k in ["median_ms", "min_ms", "max_ms", "qps"] {
            assert!(row[k].as_f64().is_some_and(|x| x > 0.0), "{what}: {k} = {}", row[k]);
        }
        let lat = &row["latency_ns"];
        for k in ["p50", "p90", "p99", "p999", "max"] {
            assert!(lat[k].as_u64().is_some(), "{what}: latency_ns.{k} = {lat}");
        }
        assert!(lat["p50"].as_u64() <= lat["max"].as_u64());
        let cpu = &row["cpu"];
        assert!(cpu["process_pct"].as_f64().is_some(), "{what}: {cpu}");
        let names: Vec<&str> = cpu["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let p = row["producers"].as_u64().unwrap() as usize;
        let mut want: Vec<String> = (0..p).map(|i| format!("producer-{i}")).collect();
        want.push("consumer".into());
        assert_eq!(names, want, "{what}");
        assert!(cpu["threads"][0]["cpu_ms"].as_f64().is_some());
        // Trace (default: flight recorder): a Chrome-trace file with the lab's spans.
        let t = row["trace"].as_str().unwrap_or_else(|| panic!("{what}: trace = {}", row["trace"]));
        let trace: Value = serde_json::from_str(&std::fs::read_to_string(out.join(t)).unwrap())
            .unwrap_or_else(|e| panic!("{what}: {t} is not JSON: {e}"));
        let events = trace["traceEvents"].as_array().expect("traceEvents");
        for name in ["publish", "consume"] {
            assert!(events.iter().any(|e| e["name"] == name), "{what}: no {name} span in {t}");
        }
        assert!(events.iter().any(|e| e["args"]["name"] == "consumer"), "{what}: thread names");
        let heap = &row["heap"];
        let file = heap["file"].as_str().unwrap_or_else(|| panic!("{what}: heap = {heap}"));
        assert!(out.join(file).is_file(), "{what}: heap file {file} missing");
        for k in ["total_blocks", "total_bytes", "max_bytes", "messages"] {
            assert!(heap[k].as_u64().is_some(), "{what}: heap.{k}");
        }
        assert!(heap["blocks_per_message"].as_f64().is_some());
        assert!(heap["bytes_per_message"].as_f64().is_some());
        if row["variant"] == "locked" {
            // A linked node per message: at least one allocation each.
            assert!(heap["blocks_per_message"].as_f64().unwrap() >= 1.0, "{what}: {heap}");
        }
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("<svg") && html.contains("Throughput against producers"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## Environment") && md.contains("git commit"));
    // Every link in the HTML report points at a file in the run folder.
    let mut links = 0;
    for part in html.split("href=\"").skip(1) {
        let target = &part[..part.find('"').unwrap()];
        // Perfetto deep links (used when `lab view` serves the folder) name a file in it too.
        let file = target
            .strip_prefix("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/")
            .unwrap_or(target);
        assert!(out.join(file).is_file(), "report links to missing {target}");
        links += 1;
    }
    assert!(links >= rows.len(), "expected a link per heap file, found {links}");
    let _ = std::fs::remove_dir_all(&out);
}

fn expect_usage_error(args: &[&str], needle: &str) {
    let o = lab().args(args).output().expect("lab runs");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: stdout {stdout} stderr {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: one line expected: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr:?} should contain {needle:?}");
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    expect_usage_error(
        &["run", "no-such-experiment"],
        "unknown experiment 'no-such-experiment'; valid: disruptor-vs-lbq",
    );
    expect_usage_error(&["no-such-experiment"], "unknown experiment");
    expect_usage_error(
        &["disruptor-vs-lbq", "--variants", "locked,bogus"],
        "unknown variant 'bogus'; valid: locked, ring",
    );
    expect_usage_error(&["disruptor-vs-lbq", "--producers", "0"], "at least 1");
    expect_usage_error(&["disruptor-vs-lbq", "--producers", "0..3"], "at least 1");
    expect_usage_error(&["disruptor-vs-lbq", "--messages", "0"], "--messages must be at least 1");
    expect_usage_error(&["disruptor-vs-lbq", "--messages", "lots"], "not a size");
    expect_usage_error(&["disruptor-vs-lbq", "--ring-size", "1000"], "power of two");
    expect_usage_error(
        &["disruptor-vs-lbq", "--wait", "sometimes"],
        "unknown wait strategy 'sometimes'; valid: blocking",
    );
    expect_usage_error(&["disruptor-vs-lbq", "--payload", "17"], "valid: 16, 64, 256");
    expect_usage_error(&["disruptor-vs-lbq", "--trace", "loud"], "valid: off, flight, full");
    expect_usage_error(&["disruptor-vs-lbq", "--no-such-flag"], "--no-such-flag");
    // An output folder that cannot be written: its parent is a file.
    let f = tmp("not-a-dir");
    std::fs::write(&f, b"x").unwrap();
    let sub = f.join("sub");
    expect_usage_error(
        &["disruptor-vs-lbq", "--out", sub.to_str().unwrap()],
        "cannot write to output folder",
    );
    let _ = std::fs::remove_file(&f);
}

#[test]
fn uneven_messages_are_spread_and_said_so() {
    let out = tmp("spread");
    let o = lab()
        .args(["run", "disruptor-vs-lbq", "--messages", "10001", "--producers", "2", "--runs", "1"])
        .args(["--warmup", "0", "--variants", "locked", "--heap", "off", "--trace", "off"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["results"][0]["per_producer"], serde_json::json!([5001, 5000]));
    let note = r["config"]["spread_note"].as_str().expect("a spread note");
    assert!(note.contains("P=2: 1 producer(s) send 5001 and 1 send 5000"), "{note}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("do not divide evenly"), "the report says how messages were spread");
    assert_eq!(r["results"][0]["heap"], Value::Null);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn planted_faults_are_invalid_hung_or_crashed_and_spare_the_others() {
    let out = tmp("faults");
    let o = lab()
        .env("LAB_FAULTS", "1")
        .args(["run", "disruptor-vs-lbq", "--messages", "5000", "--producers", "1", "--runs", "2"])
        .args(["--variants", "fault-lossy,fault-hang,fault-crash,crossbeam", "--timeout", "3"])
        .args(["--heap", "off", "--trace", "off"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "a failed cell makes exit code 1: {stdout} {stderr}");
    let r = read_json(&out.join("results.json"));
    let row = |v: &str| {
        r["results"].as_array().unwrap().iter().find(|x| x["variant"] == v).cloned().unwrap()
    };
    let lossy = row("fault-lossy");
    assert_eq!(lossy["status"], "INVALID");
    assert_eq!(lossy["valid"], false);
    assert!(lossy["median_ms"].is_null(), "invalid runs never enter the statistics");
    assert!(lossy["runs"][0]["verdict"]
        .as_str()
        .unwrap()
        .starts_with("INVALID: received 4995 of 5000"));
    let hang = row("fault-hang");
    assert_eq!(hang["status"], "HUNG");
    assert!(hang["error"].as_str().unwrap().contains("watchdog"));
    let crash = row("fault-crash");
    assert_eq!(crash["status"], "CRASHED");
    assert!(crash["stderr_tail"].as_str().unwrap().contains("aborting on purpose"), "{crash}");
    let ok = row("crossbeam");
    assert_eq!(ok["status"], "OK");
    assert!(ok["qps"].as_f64().unwrap() > 0.0);
    assert!(stdout.contains("INVALID") && stdout.contains("HUNG") && stdout.contains("CRASHED"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("class=\"bad\""));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ctrl_c_saves_what_finished() {
    let out = tmp("sigint");
    let mut child = lab()
        .env("LAB_FAULTS", "1")
        .args([
            "run",
            "disruptor-vs-lbq",
            "--messages",
            "20000",
            "--producers",
            "1,2",
            "--runs",
            "1",
        ])
        .args(["--warmup", "0", "--variants", "crossbeam,fault-hang", "--timeout", "60"])
        .args(["--heap", "off", "--trace", "off"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first cell is done (the second, fault-hang, then hangs), then Ctrl-C.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "stderr closed before progress");
        if line.starts_with("[1/") {
            break;
        }
    }
    // SAFETY: kill(2) on our own child's pid with SIGINT; no memory is involved.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["status"], "interrupted");
    let rows = r["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the finished cell: {rows:?}");
    assert_eq!(rows[0]["variant"], "crossbeam");
    assert!(out.join("report.html").is_file() && out.join("report.md").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn compare_marks_rows_and_rejects_bad_files() {
    let out = tmp("cmp");
    let o = lab()
        .args(["run", "disruptor-vs-lbq", "--messages", "10000", "--producers", "1", "--runs", "2"])
        .args(["--warmup", "0", "--variants", "locked", "--heap", "off", "--trace", "off"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let f = out.join("results.json");
    let o = lab().arg("compare").arg(&f).arg(&out).output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout.contains("within the spread") && stdout.contains("1.00×"), "{stdout}");
    assert!(stdout.contains("0 row(s) changed"), "{stdout}");
    // A faster copy: every run faster than a's fastest is beyond the spread.
    let mut v = read_json(&f);
    let fastest = v["results"][0]["min_ms"].as_f64().unwrap();
    for k in ["median_ms", "min_ms", "max_ms"] {
        v["results"][0][k] = serde_json::json!(fastest / 4.0);
    }
    let qps = v["results"][0]["qps"].as_f64().unwrap();
    v["results"][0]["qps"] = serde_json::json!(qps * 2.0);
    let g = out.join("faster.json");
    std::fs::write(&g, serde_json::to_string(&v).unwrap()).unwrap();
    let o = lab().arg("compare").arg(&f).arg(&g).output().unwrap();
    let (stdout, _) = text(&o);
    assert!(stdout.contains("FASTER") && stdout.contains("2.00×"), "{stdout}");
    let o = lab().arg("compare").arg(&f).arg(out.join("nope.json")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("cannot read"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn list_and_env_work() {
    let o = lab().arg("list").output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    for w in
        ["disruptor-vs-lbq", "locked", "ring", "crossbeam", "std-mpsc", "disruptor-rs", "busy-spin"]
    {
        assert!(stdout.contains(w), "list lacks {w}: {stdout}");
    }
    assert!(!stdout.contains("fault-"), "fault variants are hidden without LAB_FAULTS=1");
    let o = lab().arg("env").output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout.contains("rustc") && stdout.contains("kernel") && stdout.contains("git commit"));
}
