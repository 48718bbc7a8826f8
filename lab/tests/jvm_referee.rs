//! `lab jvm-referee` at tiny scale, through the built binary: a small JMH run of the same
//! code as the lab's JVM child (Reactor's Mono.just subscribed 1M times on JDK 25, Netty's pooled
//! heap allocator) is run, its JSON result read back by the lab, and set beside the lab's
//! own figure with a paired ratio and a verdict. Needs a JDK and Maven (the JMH module is
//! built from Maven Central's jars); without them the test fails saying so, never skips.

mod common;

use common::{out_dir, text};
use serde_json::Value;
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// JMH refuses to start while another JMH holds its lock (`/tmp/jmh.lock`), so the tests
/// that run it take turns.
static JMH: Mutex<()> = Mutex::new(());

#[test]
fn a_small_jmh_run_is_read_back_beside_the_labs_figure() {
    let _turn = JMH.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = out_dir("jvm-referee", "small");
    let d = dir.display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["jvm-referee", "--workloads", "reactor-mono-just,netty-pooled-heap"])
        .args(["--rounds", "1", "--runs", "2", "--warmup", "1", "--ops", "20000"])
        .args(["--jmh-warmup-iterations", "1", "--jmh-iterations", "2", "--jmh-iteration-s", "1"])
        .args(["--out", &d])
        .output()
        .expect("run lab");
    let all = text(&o);
    assert!(
        !all.contains("cannot run here"),
        "the referee needs a JDK and Maven (bash scripts/setup-test-deps.sh): {all}"
    );
    assert_eq!(o.status.code(), Some(0), "{all}");
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let rows = r["results"].as_array().expect("rows");
    for w in ["reactor-mono-just", "netty-pooled-heap"] {
        let jmh = rows
            .iter()
            .find(|x| x["label"] == format!("{w}/jmh"))
            .unwrap_or_else(|| panic!("no JMH row for {w}: {all}"));
        assert_eq!(jmh["status"], "OK", "{jmh}");
        let forks = jmh["jmh_forks"].as_array().expect("JMH's result per fork");
        assert_eq!(forks.len(), 1, "{jmh}");
        let score = forks[0]["score"].as_f64().expect("JMH's score, read from its JSON");
        assert!(score > 0.0, "{jmh}");
        assert_eq!(forks[0]["iterations"][0].as_array().map(Vec::len), Some(2), "{jmh}");
        let unit = if w.starts_with("reactor") { "ns/op" } else { "ops/ms" };
        assert_eq!(forks[0]["unit"], unit, "{jmh}");
        let lab = rows.iter().find(|x| x["label"] == w).expect("the lab's row");
        assert_eq!(lab["status"], "OK", "{lab}");
        assert!(lab["valid"].as_bool().unwrap_or(false), "{lab}");
    }
    let table = r["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["title"].as_str().is_some_and(|s| s.contains("referee"))))
        .expect("the referee table");
    assert_eq!(table["rows"].as_array().map(Vec::len), Some(2), "{table}");
    for row in table["rows"].as_array().unwrap() {
        let verdict = row[5].as_str().unwrap_or("");
        assert!(verdict == "agree" || verdict.starts_with("FLAG"), "{row}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bus's plain loops: `Bus --plain` beside JMH's asymmetric group of the same work, at
/// two producers; JMH's figure is its `take` method's (the queue) or the group's (the ring),
/// messages per µs, and both sides checked every message.
#[test]
fn the_bus_loops_run_beside_their_jmh_groups() {
    let _turn = JMH.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = out_dir("jvm-referee", "bus");
    let d = dir.display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["jvm-referee", "--workloads", "bus-lbq,bus-disruptor", "--producers", "2"])
        .args(["--rounds", "1", "--runs", "2", "--warmup", "1", "--messages", "200000"])
        .args(["--jmh-warmup-iterations", "1", "--jmh-iterations", "2", "--jmh-iteration-s", "1"])
        .args(["--out", &d])
        .output()
        .expect("run lab");
    let all = text(&o);
    assert_eq!(o.status.code(), Some(0), "{all}");
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let rows = r["results"].as_array().expect("rows");
    for w in ["bus-lbq P=2", "bus-disruptor P=2"] {
        let jmh = rows.iter().find(|x| x["label"] == format!("{w}/jmh")).expect("a JMH row");
        assert_eq!(jmh["status"], "OK", "{jmh}");
        let fork = &jmh["jmh_forks"][0];
        assert_eq!(fork["unit"], "ops/us", "{jmh}");
        assert_eq!(fork["iterations"][0].as_array().map(Vec::len), Some(2), "{jmh}");
        assert!(fork["score"].as_f64().is_some_and(|s| s > 0.0), "{jmh}");
        let lab = rows.iter().find(|x| x["label"] == w).expect("the lab's row");
        assert_eq!((lab["status"].as_str(), lab["valid"].as_bool()), (Some("OK"), Some(true)));
        assert_eq!(lab["key"]["producers"], 2, "{lab}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_workload_is_one_line_and_exit_2() {
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["jvm-referee", "--workloads", "nope"])
        .output()
        .expect("run lab");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("rx-flowable-range"), "names the valid choices: {err}");
}
