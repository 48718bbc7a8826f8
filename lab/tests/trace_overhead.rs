//! `lab trace-overhead` at a small size: every mode measured against off in paired rounds,
//! a target decided on each deciding workload (the locked queue at P=2, the ring at P=1), the record path's cost and the predicted cost
//! reported, and the timed forks' global allocator probed as the system allocator. This
//! test binary runs on `dhat::Alloc` itself, so the probe is shown to tell the two apart.
//! Also `lab compare` of two runs, and of runs of two different experiments.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{lab, text};

// The probe's counter-example: a process whose global allocator is dhat's.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Rounds the tests run: the fewest the experiment accepts (an interval needs 6).
const ROUNDS: usize = 6;

fn out_dir(name: &str) -> PathBuf {
    common::out_dir("trace_overhead", name)
}

fn results(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    serde_json::from_str(&text).expect("results.json parses")
}

/// A tiny run of trace-overhead into `dir`; extra options appended.
fn tiny_run(dir: &Path, messages: &str, extra: &[&str]) -> std::process::Output {
    let rounds = ROUNDS.to_string();
    // --details: the tests read every table on stdout, not only the headline ones.
    let mut args =
        vec!["trace-overhead", "--details", "--messages", messages, "--rounds", &rounds, "--out"];
    args.push(dir.to_str().expect("utf-8 path"));
    args.extend(extra);
    lab(&args)
}

#[test]
fn the_probe_sees_dhat_when_dhat_is_the_global_allocator() {
    let p = lab::experiments::trace_overhead::allocator_probe();
    assert_eq!(p.name, "dhat::Alloc", "{p:?}");
    assert!(p.dhat_counted_blocks >= 1, "{p:?}");
}

fn median(xs: &[f64]) -> f64 {
    lab::stats::median(xs).expect("non-empty")
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

/// A per-round list with gaps (`null` for a round without a valid fork).
fn by_round(v: &Value) -> Vec<Option<f64>> {
    v.as_array().expect("array").iter().map(Value::as_f64).collect()
}

/// Checks one workload's rows: forks per round, the allocator probes, the paired ratios
/// and the costs recomputed from the forks' best runs.
fn check_workload(r: &Value, w: &Value, runs: usize) {
    let label = &w["label"];
    let rows = r["results"].as_array().expect("results");
    let mine: Vec<&Value> = rows.iter().filter(|x| x["group"] == *label).collect();
    let slots: Vec<&str> =
        w["slots"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(mine.iter().map(|x| x["label"].as_str().unwrap()).collect::<Vec<_>>(), slots);
    let off = mine.iter().find(|x| x["label"] == "off").expect("an off row");
    let off_best = by_round(&off["child_best_ms"]);
    // Traced modes pair with the mean of both off forks where there is an A/A one.
    let base: Vec<Option<f64>> = match mine.iter().find(|x| x["label"] == "off-aa") {
        Some(aa) => off_best
            .iter()
            .zip(by_round(&aa["child_best_ms"]))
            .map(|(o, a)| match (o, a) {
                (Some(o), Some(a)) => Some((o + a) / 2.0),
                (o, a) => o.or(a),
            })
            .collect(),
        None => off_best.clone(),
    };
    for row in &mine {
        let what = format!("{label} {}", row["label"]);
        assert_eq!(row["status"], "OK", "{what}: {row}");
        assert_eq!(
            (row["unit"].as_str(), row["higher_is_better"].as_bool()),
            (Some("ms"), Some(false))
        );
        assert_eq!(row["key"]["mode"], row["label"], "{what}");
        let forks = row["forks"].as_array().expect("forks");
        assert_eq!(forks.len(), ROUNDS, "{what}: a fork per round");
        let mut rounds: Vec<u64> = forks.iter().map(|f| f["round"].as_u64().unwrap()).collect();
        rounds.sort_unstable();
        assert_eq!(rounds, (0..ROUNDS as u64).collect::<Vec<_>>(), "{what}");
        for f in forks {
            assert_eq!(f["runs"].as_array().map(Vec::len), Some(runs), "{what}: {f}");
        }
        let alloc = row["allocator"].as_array().expect("allocator probes");
        assert_eq!(alloc.len(), ROUNDS, "{what}: one probe per fork");
        for a in alloc {
            assert_eq!(a["name"], "std::alloc::System", "{what}: {a}");
            assert_eq!(a["dhat_counted_blocks"], 0, "{what}: {a}");
        }
        let ratio = row["throughput_vs_off"].as_f64().unwrap_or_else(|| panic!("{what}"));
        assert!(ratio > 0.0, "{what}: {ratio}");
        if row["label"] == "off" {
            assert!((ratio - 1.0).abs() < 1e-12, "{what}: off against itself is 1");
            assert!(row["cost_pct_median"].is_null(), "{what}");
            continue;
        }
        // The pipeline's paired ratio against off, as the row says.
        let pr = r["ratios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["group"] == *label && x["variant"] == row["label"])
            .unwrap_or_else(|| panic!("{what}: no ratio against off"));
        assert_eq!(pr["baseline"], "off");
        assert_eq!(pr["rounds"].as_u64(), Some(ROUNDS as u64), "{what}");
        assert!((pr["median"].as_f64().unwrap() - ratio).abs() < 1e-12, "{what}");
        // The cost is the median of the per-round paired ratios of the forks' best runs,
        // recomputed here from the raw figures.
        let best = by_round(&row["child_best_ms"]);
        let against = if row["label"] == "off-aa" { &off_best } else { &base };
        let per_round: Vec<f64> = best
            .iter()
            .zip(against)
            .filter_map(|(m, o)| Some(((*m)? / (*o)? - 1.0) * 100.0))
            .collect();
        let got = f64s(&row["cost_pct_per_round"]);
        assert_eq!(got.len(), per_round.len(), "{what}");
        for (g, want) in got.iter().zip(&per_round) {
            assert!((g - want).abs() < 1e-9, "{what}: {got:?} vs {per_round:?}");
        }
        let cost = row["cost_pct_median"].as_f64().unwrap_or_else(|| panic!("{what}"));
        assert!((cost - median(&per_round)).abs() < 1e-9, "{what}: {cost}");
        let ci = f64s(&row["cost_ci_pct"]);
        assert!(ci[0] <= cost && cost <= ci[1], "{what}: {cost} outside {ci:?}");
        if row["label"] == "flight" {
            assert_eq!(row["trace_bytes"].as_array().map(Vec::len), Some(ROUNDS), "{what}");
            let rpm = row["records_per_msg"].as_f64().unwrap_or_else(|| panic!("{what}"));
            assert!(rpm > 0.0, "{what}: the flight recorder recorded nothing");
            let c = &row["record_cost"];
            let (e, s) = (c["event_ns"].as_f64(), c["span_ns"].as_f64());
            assert!(e.is_some_and(|e| e > 0.0) && s.is_some_and(|s| s > 0.0), "{what}: {c}");
            assert!(row["predicted_cost_pct"].as_f64().is_some(), "{what}: {row}");
            let threads = row["records_by_thread"].as_array().expect("records_by_thread");
            assert!(threads.iter().any(|t| t["name"] == "consumer"), "{what}: {threads:?}");
        }
    }
}

/// The flight target of one deciding workload: met, not met, or UNDECIDED with the reason
/// in the notes; a negative cost never left without a comment.
fn check_target(r: &Value, deciding: &Value) {
    let targets = r["targets"].as_array().expect("targets");
    let label = deciding["label"].as_str().unwrap();
    let flight: Vec<&Value> = targets
        .iter()
        .filter(|t| t["what"].as_str().unwrap_or("").contains("flight"))
        .filter(|t| t["what"].as_str().unwrap_or("").ends_with(label))
        .collect();
    assert_eq!(flight.len(), 1, "one flight target for {label}: {targets:?}");
    let notes = r["notes"].to_string();
    let t = flight[0];
    assert!(
        t["met"].is_boolean() || (t["met"].is_null() && notes.contains("UNDECIDED")),
        "{t}: {notes}"
    );
    let rows = r["results"].as_array().unwrap();
    let flight_row = rows
        .iter()
        .find(|x| x["group"] == deciding["label"] && x["label"] == "flight")
        .expect("flight row");
    if flight_row["cost_pct_median"].as_f64().is_some_and(|c| c < 0.0) {
        assert!(notes.contains("median is negative"), "{notes}");
    }
    // An interval wholly below 0 is changed dynamics, never a met target.
    if flight_row["cost_ci_pct"][1].as_f64().is_some_and(|hi| hi < 0.0) {
        assert!(t["met"].is_null(), "{t}");
        assert!(notes.contains("lies below 0"), "{notes}");
    }
    let alloc_target = targets.iter().find(|t| t["what"] == "global allocator of the timed forks");
    assert_eq!(alloc_target.map(|t| &t["met"]), Some(&Value::Bool(true)), "{targets:?}");
}

#[test]
fn trace_overhead_reports_each_mode_against_off_on_the_system_allocator() {
    let dir = out_dir("small");
    let runs = 2;
    let all = "locked-p2,ring-yielding-p1,ring-blocking-p2";
    let o = tiny_run(
        &dir,
        "20000",
        &["--runs", &runs.to_string(), "--warmup", "0", "--workloads", all],
    );
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Tracing cost") && stdout.contains("throughput vs off"), "{stdout}");
    assert!(stdout.contains("Record path"), "{stdout}");
    assert!(stdout.contains("target: flight recorder's cost"), "{stdout}");

    let r = results(&dir);
    assert_eq!(r["schema_version"], lab::results::SCHEMA_VERSION);
    assert_eq!(r["experiment"], "trace-overhead");
    assert_eq!(r["status"], "complete", "{r:#}");
    assert_eq!(r["rounds"]["finished"].as_u64(), Some(ROUNDS as u64));
    let workloads = r["config"]["plan"]["workloads"].as_array().expect("workloads");
    let deciding: Vec<&Value> = workloads.iter().filter(|w| w["decides"] == true).collect();
    let labels: Vec<&str> = deciding.iter().filter_map(|w| w["label"].as_str()).collect();
    assert_eq!(
        labels,
        ["locked P=2", "ring[yielding] P=1"],
        "the deciding workloads: {workloads:?}"
    );
    assert!(workloads.len() > deciding.len(), "the context workload is still reported");
    let flight_targets = r["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| t["what"].as_str().unwrap_or("").contains("flight"))
        .count();
    assert_eq!(flight_targets, deciding.len(), "a flight target per deciding workload");
    let slots: usize = workloads.iter().map(|w| w["slots"].as_array().expect("slots").len()).sum();
    assert_eq!(r["results"].as_array().map(Vec::len), Some(slots), "a row per (workload, slot)");
    for w in workloads {
        check_workload(&r, w, runs);
    }
    let titles: Vec<&str> =
        r["tables"].as_array().unwrap().iter().filter_map(|t| t["title"].as_str()).collect();
    assert!(titles.iter().any(|t| t.starts_with("Tracing cost")), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("Record path")), "{titles:?}");
    let env_alloc = r["environment"]["timed_allocator"].as_str().expect("env allocator");
    assert!(env_alloc.starts_with("std::alloc::System (probed"), "{env_alloc}");
    for d in &deciding {
        check_target(&r, d);
    }
    // The flight dumps of the timed forks are kept as evidence and linked.
    let files: Vec<&str> =
        r["files"].as_array().expect("files").iter().filter_map(|f| f["file"].as_str()).collect();
    assert!(files.iter().any(|f| f.contains("-flight-")), "{files:?}");
    for f in &files {
        assert!(dir.join(f).is_file(), "{f} listed but missing");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(html.contains("Tracing cost") && html.contains("std::alloc::System"));
    // The report renders again from results.json alone.
    let again = lab(&["report", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let brief = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(brief.contains("Tracing cost"));
    // Without --details the terminal shows the short cost table, within 120 columns; the
    // full one (throughput against off, records per message, files) is for --details.
    assert!(
        brief.contains("predicted (busiest)") && !brief.contains("throughput vs off"),
        "{brief}"
    );
    let widest = brief.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 120, "a line of {widest} columns:\n{brief}");
}

#[test]
fn trace_overhead_refuses_bad_input() {
    for (args, says) in [
        (&["trace-overhead", "--messages", "0"][..], "--messages"),
        (&["trace-overhead", "--rounds", "3"][..], "at least 6"),
        (&["trace-overhead", "--rounds", "many"][..], "--rounds"),
        (&["trace-overhead", "--workloads", "locked-p9"][..], "--workloads"),
        (&["trace-overhead", "--trace", "flight"][..], "--trace"),
        (&["trace-overhead", "--heap", "on"][..], "--heap"),
    ] {
        let o = lab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says) && err.lines().count() == 1, "{args:?}: {}", text(&o));
    }
}

/// Whether two `[low, high]` intervals are disjoint.
fn disjoint(a: &Value, b: &Value) -> bool {
    match (a.as_array(), b.as_array()) {
        (Some(a), Some(b)) if a.len() == 2 && b.len() == 2 => {
            let (al, ah, bl, bh) = (a[0].as_f64(), a[1].as_f64(), b[0].as_f64(), b[1].as_f64());
            matches!((al, ah, bl, bh), (Some(al), Some(ah), Some(bl), Some(bh)) if bl > ah || bh < al)
        }
        _ => false,
    }
}

#[test]
fn two_runs_compare_row_by_row() {
    let (a, b) = (out_dir("compare-a"), out_dir("compare-b"));
    for d in [&a, &b] {
        let o = tiny_run(d, "5000", &["--workloads", "locked-p2"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = lab(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("a: score [interval]") && stdout.contains("b: score [interval]"));
    for label in ["off", "off-aa", "flight", "full"] {
        assert!(stdout.contains(label), "{label} missing: {stdout}");
    }
    assert!(stdout.contains("flight/off"), "the ratio table: {stdout}");
    // Exit 1 only when some change lies beyond both runs' intervals.
    let (ra, rb) = (results(&a), results(&b));
    let rows = |r: &Value| r["results"].as_array().unwrap().clone();
    let mut beyond =
        rows(&ra).iter().zip(rows(&rb)).any(|(x, y)| disjoint(&x["score_ci"], &y["score_ci"]));
    // A ratio changed when each run's median lies outside the other's repeat interval.
    for (x, y) in ra["ratios"].as_array().unwrap().iter().zip(rb["ratios"].as_array().unwrap()) {
        let outside = |m: &Value, r: &Value| match (
            m.as_f64(),
            r["ci_low"].as_f64(),
            r["ci_high"].as_f64(),
        ) {
            (Some(m), Some(lo), Some(hi)) => Some(if m > hi {
                1
            } else if m < lo {
                -1
            } else {
                0
            }),
            _ => None,
        };
        if let (Some(b_in_a), Some(a_in_b)) = (outside(&y["median"], x), outside(&x["median"], y)) {
            beyond |= b_in_a != 0 && b_in_a == -a_in_b;
        }
    }
    assert_eq!(code == Some(1), beyond, "{}", text(&o));
}

#[test]
fn comparing_two_different_experiments_is_refused_in_one_line() {
    let (a, b) = (out_dir("other-a"), out_dir("other-b"));
    let o = tiny_run(&a, "2000", &["--workloads", "locked-p2", "--warmup", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = lab(&common::tiny_no_passes(
        "disruptor-vs-lbq",
        "1",
        &["--messages", "2000", "--producers", "1", "--out", b.to_str().unwrap()],
    ));
    assert!(o.status.success(), "{}", text(&o));
    let o = lab(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("different experiments") && err.lines().count() == 1, "{}", text(&o));
}
