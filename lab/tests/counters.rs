//! perf counters per message on every `disruptor-vs-lbq` row, through the built binary: the
//! software events always count, the unavailable path is forced by `LAB_COUNTERS_UNAVAILABLE`
//! and says why, and a machine with a hardware PMU cannot report null cycles.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty folder for one test's run, under cargo's per-target temp dir.
fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("counters").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create out dir");
    d
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A tiny run of locked and ring at P=1 into `out`; `unavailable` forces the null path.
fn tiny_run(out: &Path, unavailable: bool) -> (Value, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    c.env_remove("LAB_FAULTS").env_remove("PERF_COUNTERS_DISABLE");
    if unavailable {
        c.env("LAB_COUNTERS_UNAVAILABLE", "1");
    } else {
        c.env_remove("LAB_COUNTERS_UNAVAILABLE");
    }
    let o = c
        .arg("run")
        .args(common::tiny_no_passes(
            "disruptor-vs-lbq",
            "2",
            &["--messages", "20000", "--min-fork-ms", "0", "--producers", "1"],
        ))
        .args(["--variants", "locked,ring"])
        // The counters table is one of the tables the terminal shows with --details.
        .arg("--details")
        .arg("--out")
        .arg(out)
        .output()
        .expect("lab runs");
    let text = text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    (r, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn ok_rows(r: &Value) -> Vec<&Value> {
    let rows: Vec<&Value> = r["results"]
        .as_array()
        .expect("results[]")
        .iter()
        .filter(|x| x["status"] == "OK")
        .collect();
    assert_eq!(rows.len(), 2, "locked and ring at P=1");
    rows
}

fn has_pmu() -> bool {
    Path::new("/sys/bus/event_source/devices/cpu").exists()
}

#[test]
fn every_row_has_software_counters_per_message_and_hardware_ones_where_a_pmu_exists() {
    let out = out_dir("default");
    let (r, stdout) = tiny_run(&out, false);
    assert!(stdout.contains("Counters per message"), "{stdout}");
    for row in ok_rows(&r) {
        let what = format!("{} P={}", row["variant"], row["producers"]);
        let c = &row["counters"];
        for k in ["task-clock", "context-switches"] {
            assert!(c[k].as_f64().is_some_and(|v| v >= 0.0), "{what}: counters.{k} = {c}");
        }
        // CPU time is spent on every message: task-clock is positive.
        assert!(c["task-clock"].as_f64().unwrap() > 0.0, "{what}: {c}");
        let threads = &row["counters_by_thread"];
        let consumer = &threads["consumer"];
        assert!(consumer["task-clock"].as_f64().is_some_and(|v| v > 0.0), "{what}: {threads}");
        assert!(threads["producer-0"]["task-clock"].as_f64().is_some(), "{what}: {threads}");
        if has_pmu() {
            for k in ["cycles", "instructions"] {
                assert!(c[k].as_f64().is_some(), "{what}: a PMU exists but {k} is {c}");
            }
            assert!(c["ipc"].as_f64().is_some(), "{what}: {c}");
        } else {
            assert!(c["cycles"].is_null() && c["instructions"].is_null(), "{what}: {c}");
            let note = row["counters_note"].as_str().unwrap_or("");
            assert!(note.contains("PMU"), "{what}: the note should name the missing PMU: {note}");
            assert!(stdout.contains("no hardware PMU"), "the table's note: {stdout}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn forced_unavailable_counters_are_all_null_and_say_why() {
    let out = out_dir("unavailable");
    let (r, stdout) = tiny_run(&out, true);
    assert!(stdout.contains("Counters per message"), "{stdout}");
    for row in ok_rows(&r) {
        let what = format!("{} P={}", row["variant"], row["producers"]);
        let c = row["counters"].as_object().unwrap_or_else(|| panic!("{what}: {row}"));
        assert!(c.contains_key("task-clock"), "{what}: every event is named: {c:?}");
        assert!(c.values().all(Value::is_null), "{what}: {c:?}");
        let threads = row["counters_by_thread"].as_object().expect("counters_by_thread");
        assert!(threads.contains_key("consumer"), "{what}: {threads:?}");
        for (name, t) in threads {
            let t = t.as_object().unwrap();
            assert!(t.values().all(Value::is_null), "{what}: {name}: {t:?}");
        }
        let note = row["counters_note"].as_str().unwrap_or("");
        assert!(note.contains("LAB_COUNTERS_UNAVAILABLE"), "{what}: note = {note:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
