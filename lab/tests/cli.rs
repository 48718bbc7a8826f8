//! End-to-end tests of the built `lab` binary on the one pipeline, through
//! `disruptor-vs-lbq`: a small run with every promised field and file checked (forks,
//! intervals, paired ratios), each bad-input error (exit code 2 and its message), planted
//! faults (INVALID, HUNG, CRASHED), the heartbeat watchdog, Ctrl-C delivered to the process
//! group, a filesystem that fills up, `compare` and `report`.

mod common;

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
            "--rounds",
            "2",
            // Exactly the runs asked for: no measuring on to a minimum fork time.
            "--min-fork-ms",
            "0",
            // The lab's own rows only (the own loops' rows: tests/calibration.rs).
            "--own-loops",
            "off",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("lab runs");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("Duration (ms per run") && stdout.contains("QPS"), "{stdout}");
    assert!(stdout.contains("report.html"), "{stdout}");

    let r = read_json(&out.join("results.json"));
    assert_eq!(r["experiment"], "disruptor-vs-lbq");
    assert_eq!(r["schema_version"], lab::results::SCHEMA_VERSION);
    assert_eq!(r["rounds"]["finished"], 2);
    check_environment(&r["environment"]);
    let rows = r["results"].as_array().expect("results[]");
    let variants: Vec<&str> = r["config"]["plan"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(variants.contains(&"locked"), "{variants:?}");
    assert_eq!(rows.len(), 2 * variants.len(), "one row per (variant, P)");
    for row in rows {
        check_row(row, &out);
    }
    check_ratios(&r, &stdout);
    check_report(&out, rows.len());
    let _ = std::fs::remove_dir_all(&out);
}

/// The environment record of the small run: every field present, as the run was asked.
fn check_environment(env: &Value) {
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
        "rounds",
        "scheduling",
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
}

/// One row of the small run: its envelope, forks, latency, CPU, trace and heap files.
fn check_row(row: &Value, out: &Path) {
    let what = format!("{} P={}", row["variant"], row["producers"]);
    assert_eq!(row["messages"], 20000, "{what}");
    assert_eq!(row["valid"], true, "{what}: {row}");
    assert_eq!(row["status"], "OK", "{what}");
    // Two rounds: two forks of one measured run each, every run kept.
    assert_eq!(row["runs_ms"].as_array().unwrap().len(), 2, "{what}");
    let forks = row["forks"].as_array().unwrap();
    assert_eq!(forks.len(), 2, "{what}: a fork per round");
    let rounds: Vec<u64> = forks.iter().map(|f| f["round"].as_u64().unwrap()).collect();
    assert_eq!(rounds, [0, 1], "{what}");
    for f in forks {
        assert!(f["score"].as_f64().is_some_and(|x| x > 0.0), "{what}: {f}");
        assert!(f["disturbance"]["load_avg"].as_f64().is_some(), "{what}: {f}");
    }
    assert_eq!(row["score"], row["median_ms"], "{what}: the score is the median over forks");
    assert_eq!(row["key"]["variant"], row["variant"], "{what}");
    assert_eq!(row["group"], format!("P={}", row["producers"]), "{what}");
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
    let names: Vec<&str> =
        cpu["threads"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
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

/// Paired ratios: ring against the baseline (locked) at each P, two rounds each, too few
/// for an interval, so unstable and printed with a dash.
fn check_ratios(r: &Value, stdout: &str) {
    let ratios = r["ratios"].as_array().expect("ratios[]");
    assert_eq!(ratios.len(), 2, "{ratios:?}");
    for x in ratios {
        assert_eq!((x["variant"].as_str(), x["baseline"].as_str()), (Some("ring"), Some("locked")));
        assert!(x["median"].as_f64().is_some_and(|m| m > 0.0), "{x}");
        assert_eq!(x["rounds"], 2);
        assert_eq!(x["unstable"], true);
        assert!(x["ci_low"].is_null() && x["rounds_needed"].as_u64().is_some(), "{x}");
    }
    assert!(stdout.contains("ring/locked QPS") && stdout.contains("[–] unstable"), "{stdout}");
}

/// The Markdown and HTML reports, and every link in the HTML report pointing at a file in
/// the run folder (at least one per row: its heap file).
fn check_report(out: &Path, rows: usize) {
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("<svg") && html.contains("Throughput against producers"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## Environment") && md.contains("git commit"));
    // Every link in the HTML report points at a file in the run folder.
    let mut links = 0;
    for part in html.split("href=\"").skip(1) {
        let target = &part[..part.find('"').unwrap()];
        // The page's own empty icon (so a browser asks for no favicon).
        if target == "data:," {
            continue;
        }
        // In-page links (the reasons' footnotes) name an element of the page.
        if let Some(id) = target.strip_prefix('#') {
            assert!(
                html.contains(&format!("id=\"{id}\"")),
                "report links to missing anchor {target}"
            );
            continue;
        }
        // Perfetto deep links (used when `lab view` serves the folder) name a file in it too.
        let file = target
            .strip_prefix("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/")
            .unwrap_or(target);
        assert!(out.join(file).is_file(), "report links to missing {target}");
        links += 1;
    }
    assert!(links >= rows, "expected a link per heap file, found {links}");
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
    expect_usage_error(
        &["disruptor-vs-lbq", "--trace", "loud"],
        "[possible values: flight, full, in-run, off]",
    );
    expect_usage_error(&["disruptor-vs-lbq", "--heap", "maybe"], "[possible values: on, off]");
    expect_usage_error(&["disruptor-vs-lbq", "--rounds", "0"], "--rounds must be at least 1");
    expect_usage_error(&["disruptor-vs-lbq", "--runs", "0"], "--runs must be at least 1");
    expect_usage_error(
        &["disruptor-vs-lbq", "--baseline", "nope"],
        "--baseline 'nope' is not a row of this run; valid: locked, ring",
    );
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
        .arg("run")
        .args(common::tiny_no_passes("disruptor-vs-lbq", "1", &["--messages", "10001"]))
        .args(["--producers", "2", "--variants", "locked"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["results"][0]["per_producer"], serde_json::json!([5001, 5000]));
    let notes = r["notes"].as_array().unwrap();
    let note = notes
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("do not divide evenly"))
        .expect("a spread note");
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
        .args(["--rounds", "2"])
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
    assert_eq!(hang["forks"].as_array().unwrap().len(), 1, "a hung cell is not run again");
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

/// Processes (other than ours) whose environment carries `tag`.
fn tagged_processes(tag: &str) -> Vec<u32> {
    let needle = format!("LAB_TEST_TAG={tag}");
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
                v.push(pid);
            }
        }
    }
    v
}

/// Starts `lab args…` in its own process group (as a shell starts a job), SIGINT ignored
/// on entry when `ignored`; waits for the first finished fork on stderr, sends SIGINT to
/// the whole group as a terminal does, and returns (exit code, seconds to exit, run folder).
fn interrupt_after_first_fork(
    name: &str,
    args: &[&str],
    ignored: bool,
) -> (Option<i32>, f64, PathBuf) {
    use std::os::unix::process::CommandExt;
    let out = tmp(name);
    let tag = format!("{}-{name}", std::process::id());
    let mut cmd = if ignored {
        // `trap '' INT` sets SIGINT to ignored, which exec keeps: the lab must still stop.
        let mut c = Command::new("sh");
        c.arg("-c").arg("trap '' INT; exec \"$0\" \"$@\"").arg(env!("CARGO_BIN_EXE_lab"));
        c
    } else {
        lab()
    };
    cmd.env("LAB_FAULTS", "1").env("LAB_TEST_TAG", &tag).args(args).arg("--out").arg(&out);
    let mut child =
        cmd.process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "stderr closed before progress");
        if line.starts_with("[1/") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let t0 = std::time::Instant::now();
    // SAFETY: kill(2) on our own child's process group with SIGINT; no memory is involved.
    let rc = unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGINT) };
    assert_eq!(rc, 0);
    let status = child.wait().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = tagged_processes(&tag);
    assert!(left.is_empty(), "{name}: processes of the run left behind: {left:?}");
    (status.code(), secs, out)
}

#[test]
fn ctrl_c_to_the_process_group_stops_kills_the_children_and_saves_what_finished() {
    let args = common::tiny_no_passes(
        "disruptor-vs-lbq",
        "3",
        &[
            "--messages",
            "20000",
            "--producers",
            "1",
            "--variants",
            "crossbeam,fault-hang",
            "--timeout",
            "60",
        ],
    );
    for ignored in [false, true] {
        let name = if ignored { "sigint-ignored" } else { "sigint" };
        let (code, secs, out) = interrupt_after_first_fork(name, &args, ignored);
        assert_eq!(code, Some(130), "{name}");
        assert!(secs < 10.0, "{name}: took {secs:.1} s to stop");
        let r = read_json(&out.join("results.json"));
        assert_eq!(r["status"], "interrupted");
        // Stopped before the last round (fault-hang's fork never ends by itself).
        let statuses: Vec<String> = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|x| {
                x["forks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| format!("{} {} {}", x["label"], f["status"], f["error"]))
            })
            .collect();
        assert!(
            r["rounds"]["finished"].as_u64().unwrap() < 3,
            "{name}: {} {statuses:?}",
            r["rounds"]
        );
        let rows = r["results"].as_array().unwrap();
        let cb = rows.iter().find(|x| x["variant"] == "crossbeam").unwrap();
        assert!(!cb["forks"].as_array().unwrap().is_empty(), "{name}: the finished fork is kept");
        assert!(cb["qps"].as_f64().is_some_and(|q| q > 0.0), "{name}: {cb}");
        assert!(out.join("report.html").is_file() && out.join("report.md").is_file());
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn ctrl_c_stops_every_experiment_within_seconds_and_keeps_what_finished() {
    // Small sizes and many rounds: each run is still going when its first fork finishes.
    let runs: &[&[&str]] = &[
        &[
            "disruptor-vs-lbq",
            "--messages",
            "200000",
            "--variants",
            "locked,ring",
            "--producers",
            "1",
            "--heap",
            "off",
            "--trace",
            "off",
            "--rounds",
            "100",
        ],
        &["subscribe-overhead", "--elements", "100000", "--rounds", "100"],
        &["publish-on-latency", "--elements", "20000", "--rounds", "100"],
        &["backpressure-buffer", "--rounds", "100"],
        &["heap-growth", "--messages", "8192"],
        &[
            "alloc-pooled-vs-unpooled",
            "--ops",
            "20000",
            "--rounds",
            "100",
            "--modes",
            "pooled,unpooled",
        ],
        &[
            "echo-server",
            "-n",
            "2000",
            "--ab",
            "off",
            "--nginx",
            "off",
            "--rounds",
            "100",
            "--heap",
            "off",
            "--trace",
            "off",
        ],
        &["trace-overhead", "--messages", "20000", "--rounds", "100"],
        &["handoff-latency", "--rounds", "100"],
        &[
            "jvm-referee",
            "--workloads",
            "netty-pooled-heap",
            "--ops",
            "20000",
            "--rounds",
            "100",
            "--jmh-warmup-iterations",
            "1",
            "--jmh-iterations",
            "1",
        ],
    ];
    let names: Vec<&str> = runs.iter().map(|a| a[0]).collect();
    let o = lab().arg("list").output().unwrap();
    for line in String::from_utf8_lossy(&o.stdout).lines().skip(1).take_while(|l| !l.is_empty()) {
        let name = line.split_whitespace().next().unwrap();
        assert!(names.contains(&name), "{name} has no Ctrl-C case here");
    }
    for args in runs {
        let name = format!("sigint-{}", args[0]);
        let (code, secs, out) = interrupt_after_first_fork(&name, args, false);
        assert_eq!(code, Some(130), "{}", args[0]);
        assert!(secs < 10.0, "{}: took {secs:.1} s to stop", args[0]);
        let r = read_json(&out.join("results.json"));
        assert_eq!(r["status"], "interrupted", "{}", args[0]);
        let kept = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| !x["forks"].as_array().unwrap().is_empty() || x["status"] != "NOT_RUN")
            .count();
        // An untimed experiment may have finished only a pass: its file is what it kept.
        let files = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name().to_string_lossy().ends_with("trace.json")
                    || e.file_name().to_string_lossy().ends_with("dhat-heap.json")
            })
            .count();
        assert!(kept + files >= 1, "{}: what finished is kept", args[0]);
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn the_watchdog_counts_heartbeats_not_a_budget() {
    // Each run is well under the limit, the whole child well over it: not HUNG.
    let out = tmp("heartbeats");
    let t0 = std::time::Instant::now();
    let o = lab()
        .args(["disruptor-vs-lbq", "--messages", "1M", "--producers", "1", "--variants", "locked"])
        .args(["--runs", "10", "--warmup", "0", "--rounds", "1", "--timeout", "2"])
        // Exactly the runs asked for: no extra runs for a short or a widely spread fork.
        .args(["--min-fork-ms", "0", "--spread-fork-ms", "0"])
        .args(["--heap", "off", "--trace", "off", "--sample-every", "0"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["results"][0]["status"], "OK");
    let runs: Vec<f64> = r["results"][0]["runs_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let total: f64 = runs.iter().sum::<f64>() / 1e3;
    assert!(runs.len() == 10 && runs.iter().all(|ms| *ms < 2000.0), "{runs:?}");
    // When the child as a whole outlived the limit, only heartbeats kept it alive.
    eprintln!("heartbeats: 10 runs, {total:.1} s of runs, {took:.1} s in all, limit 2 s");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_filesystem_that_fills_up_loses_no_table_and_leaves_no_truncated_file() {
    let dir = tmp("full-fs");
    std::fs::create_dir_all(&dir).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&dir)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        mounted,
        "this test mounts a 512 KiB tmpfs to fill it up and needs root (CI runs as root): \
         `sudo cargo test -p lab --test cli`"
    );
    let o = lab()
        .args(common::tiny("disruptor-vs-lbq", "1", &["--messages", "200000", "--producers", "1"]))
        .args(["--variants", "locked", "--heap", "off", "--trace", "full"])
        // Every message traced: the trace pass alone writes far more than the 512 KiB.
        .args(["--sample-every", "1"])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    let listing: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let results = dir.join("results.json");
    let parsed =
        std::fs::read_to_string(&results).map(|t| serde_json::from_str::<Value>(&t).is_ok());
    let _ = Command::new("umount").arg(&dir).status();
    assert_eq!(o.status.code(), Some(1), "a failed write is exit 1: {stdout} {stderr}");
    assert!(stdout.contains("QPS") && stdout.contains("locked"), "tables first: {stdout}");
    assert!(
        stderr.contains("cannot write") && stderr.contains(".json") || stderr.contains("report."),
        "{stderr}"
    );
    assert_eq!(
        stderr.trim().lines().last().map(|l| l.starts_with("lab: cannot write")),
        Some(true),
        "{stderr}"
    );
    assert!(!matches!(parsed, Ok(false)), "a truncated results.json was left: {listing:?}");
    assert!(!listing.iter().any(|f| f.ends_with(".tmp")), "temporary files left: {listing:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn small_run(name: &str, rounds: &str) -> PathBuf {
    let out = tmp(name);
    let o = lab()
        .args(common::tiny_no_passes("disruptor-vs-lbq", rounds, &["--messages", "10000"]))
        .args(["--producers", "1", "--variants", "locked,crossbeam"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    out
}

#[test]
fn compare_judges_changes_against_both_intervals_and_refuses_bad_files() {
    let out = small_run("cmp", "8");
    let f = out.join("results.json");
    let o = lab().arg("compare").arg(&f).arg(&out).output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("within the intervals") && stdout.contains("1.00×"), "{stdout}");
    assert!(stdout.contains("crossbeam/locked"), "ratios are compared too: {stdout}");
    assert!(stdout.contains("0 change(s)"), "{stdout}");
    // A copy four times faster, its interval below a's: a change, exit 1.
    let mut v = read_json(&f);
    let row = &mut v["results"][0];
    let lo = row["score_ci"][0].as_f64().unwrap();
    row["score"] = serde_json::json!(lo / 4.0);
    row["score_ci"] = serde_json::json!([lo / 5.0, lo / 3.0]);
    let g = out.join("faster.json");
    std::fs::write(&g, serde_json::to_string(&v).unwrap()).unwrap();
    let o = lab().arg("compare").arg(&f).arg(&g).output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("BETTER (beyond both runs' intervals)"), "{stdout}");
    // Missing files, files from before schema_version, and unknown versions: one line, 2.
    let o = lab().arg("compare").arg(&f).arg(out.join("nope.json")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("cannot read"));
    let mut old = read_json(&f);
    old.as_object_mut().unwrap().remove("schema_version");
    std::fs::write(out.join("old.json"), old.to_string()).unwrap();
    expect_usage_error(
        &["compare", f.to_str().unwrap(), out.join("old.json").to_str().unwrap()],
        "before results.json had a schema_version",
    );
    old["schema_version"] = serde_json::json!(99);
    std::fs::write(out.join("v99.json"), old.to_string()).unwrap();
    expect_usage_error(
        &["compare", f.to_str().unwrap(), out.join("v99.json").to_str().unwrap()],
        "schema_version 99; this lab reads versions 2 to 3",
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn report_renders_a_run_again_from_its_results() {
    let out = small_run("report", "1");
    std::fs::remove_file(out.join("report.html")).unwrap();
    std::fs::remove_file(out.join("report.md")).unwrap();
    let o = lab().arg("report").arg(&out).output().unwrap();
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("QPS") && stdout.contains("crossbeam"), "{stdout}");
    assert!(out.join("report.html").is_file() && out.join("report.md").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn each_experiment_help_shows_its_own_options_and_the_shared_ones() {
    for args in [&["disruptor-vs-lbq", "--help"][..], &["run", "disruptor-vs-lbq", "--help"]] {
        let o = lab().args(args).output().unwrap();
        let (stdout, _) = text(&o);
        assert_eq!(o.status.code(), Some(0));
        for w in [
            "--ring-size",
            "--producers",
            "--rounds",
            "--runs",
            "--warmup",
            "--trace",
            "--heap",
            "--out",
            "[default: 1Mi]",
            "[possible values: flight, full, in-run, off]",
        ] {
            assert!(stdout.contains(w), "{args:?} lacks {w}: {stdout}");
        }
        assert!(!stdout.contains("--elements"), "another experiment's option: {stdout}");
    }
}

#[test]
fn the_jvm_originals_run_as_forks_check_themselves_and_a_planted_loss_is_invalid() {
    let out = tmp("jvm");
    let o = lab()
        .env("LAB_FAULTS", "1")
        .args(common::tiny_no_passes("disruptor-vs-lbq", "1", &["--messages", "20000"]))
        .args(["--producers", "1,2", "--jit-warmup", "1"])
        .args(["--variants", "locked,ring,jvm-lbq,jvm-disruptor,jvm-disruptor-3.4,fault-jvm-lbq"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(
        !stderr.contains("cannot run here"),
        "the JVM rows need a JDK and Maven (bash scripts/setup-test-deps.sh): {stderr}"
    );
    assert_eq!(o.status.code(), Some(1), "the planted loss fails the run: {stdout} {stderr}");
    let r = read_json(&out.join("results.json"));
    let rows = r["results"].as_array().unwrap();
    for v in ["jvm-lbq", "jvm-disruptor"] {
        for p in [1, 2] {
            let row = rows.iter().find(|x| x["variant"] == v && x["producers"] == p).unwrap();
            assert_eq!(row["status"], "OK", "{v} P={p}: {row}");
            assert!(row["qps"].as_f64().is_some_and(|q| q > 0.0), "{v} P={p}");
            let j = &row["jvm"];
            assert!(j["jvm"]["version"].as_str().is_some(), "{v}: the JVM's version: {j}");
            assert!(j["allocated_bytes_per_message"].as_f64().is_some(), "{v}: {j}");
            if v == "jvm-disruptor" {
                let want = if p == 1 { "single" } else { "multi" };
                assert_eq!(j["producer_type"], want, "P={p}: like for like with the Rust ring");
            }
        }
    }
    // The current Disruptor by default, seed 001's line beside it, each naming its version.
    for (v, version) in [("jvm-disruptor", "4.0.0"), ("jvm-disruptor-3.4", "3.4.4")] {
        // The rows themselves (their own loops share the variant, not the JVM detail).
        let measured: Vec<&Value> = rows.iter().filter(|x| x["label"] == v).collect();
        assert_eq!(measured.len(), 2, "{v} at P=1 and P=2");
        for row in measured {
            assert_eq!(row["status"], "OK", "{v}: {row}");
            assert_eq!(row["jvm"]["disruptor_version"], version, "{v}: {row}");
        }
    }
    let d = rows.iter().find(|x| x["variant"] == "jvm-disruptor").unwrap();
    assert_eq!(d["jvm"]["wait"], "blocking", "Rust blocking pairs with seed 001's strategy");
    assert_eq!(d["jvm"]["wait_strategy"], "BlockingWaitStrategy", "{d}");
    for v in ["jvm-lbq", "jvm-disruptor"] {
        let row = rows.iter().find(|x| x["variant"] == v).unwrap();
        assert_eq!(row["jvm"]["message"], "inline", "{row}");
        let lat = &row["latency_ns"];
        assert!(lat["count"].as_u64().is_some_and(|c| c > 0), "{v}: latency sampled: {row}");
        assert!(lat["p50"].as_u64().is_some_and(|p| p > 0), "{v}: {row}");
    }
    let lbq = rows.iter().find(|x| x["variant"] == "jvm-lbq").unwrap();
    let bytes = lbq["jvm"]["allocated_bytes_per_message"].as_f64().unwrap();
    assert!((70.0..80.0).contains(&bytes), "one inline message (48 B) and a node (24 B): {bytes}");
    let bad = rows.iter().find(|x| x["variant"] == "fault-jvm-lbq").unwrap();
    assert_eq!(bad["status"], "INVALID", "{bad}");
    assert!(bad["error"].as_str().unwrap().contains("received 19999 of 20000"), "{bad}");
    let pairs: Vec<(String, String)> = r["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["variant"].as_str().unwrap().into(), x["baseline"].as_str().unwrap().into()))
        .collect();
    assert!(pairs.contains(&("locked".into(), "jvm-lbq".into())), "{pairs:?}");
    assert!(pairs.contains(&("ring".into(), "jvm-disruptor".into())), "{pairs:?}");
    assert!(pairs.contains(&("ring".into(), "jvm-disruptor-3.4".into())), "{pairs:?}");
    assert!(stdout.contains("JVM rows: bytes allocated per message"), "{stdout}");
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
