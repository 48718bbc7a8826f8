//! The trace pass records the kernel's scheduling: the built `lab` runs the locked queue and
//! the busy-spinning ring at P=1 with a flight trace; each trace must hold `off-cpu` slices
//! on the consumer's own track, about as many as the consumer's context switches
//! (`getrusage`), and wake-up flows from a thread's track to the slice it ends.
//!
//! Needs CPU-wide tracepoints (root or CAP_PERFMON, as in CI): where they are not permitted
//! the tests fail with the reason the run recorded.

mod common;

use common::{lab, out_dir, text};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Context switches of the locked consumer below which a run says too little.
const MIN_SWITCHES: u64 = 50;

struct Run {
    dir: PathBuf,
    row: Value,
}

/// One variant at P=1 with a flight trace.
fn run(name: &str, extra: &[&str]) -> Run {
    let dir = out_dir("offcpu", name);
    let mut args = common::tiny(
        "disruptor-vs-lbq",
        "1",
        &["--producers", "1", "--messages", "200000", "--heap", "off", "--trace", "flight"],
    );
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", dir.to_str().expect("utf-8 path")]);
    let o = lab(&args);
    assert!(o.status.success(), "lab {args:?} failed: {}", text(&o));
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json written"),
    )
    .expect("results.json parses");
    let row = r["results"][0].clone();
    if let Some(why) = row["off_cpu_note"].as_str() {
        panic!("{name}: the trace pass recorded no scheduler events: {why}");
    }
    assert!(row["off_cpu_by_thread"].is_object(), "{name}: no off_cpu_by_thread in {row:#}");
    Run { dir, row }
}

/// The locked run's options: the locked queue, bounded (see [`runs`]).
const LOCKED: &[&str] = &["--variants", "locked", "--capacity", "64"];

/// The two runs, one after the other (side by side they would disturb each other).
fn runs() -> &'static (Run, Run) {
    static RUNS: OnceLock<(Run, Run)> = OnceLock::new();
    RUNS.get_or_init(|| {
        // The locked queue's consumer sleeps when it catches up with the producer, which
        // an occasional run hardly does: such a run has too few switches to compare, and
        // is made again (at most three times).
        // Bounded at 64, the queue fills and empties in turn, so the consumer sleeps on
        // `not_empty` (woken by the producer's put) many times a run whatever the machine's
        // phase; unbounded, a phase in which the producer keeps ahead left it 7–18 sleeps
        // a run in CI's test profile, too few to compare.
        let mut locked = run("locked", LOCKED);
        for attempt in 2..=3 {
            if context_switches(&locked, "consumer") >= MIN_SWITCHES {
                break;
            }
            locked = run(&format!("locked-{attempt}"), LOCKED);
        }
        let ring = run("ring", &["--variants", "ring", "--wait", "busy-spin"]);
        (locked, ring)
    })
}

struct Trace {
    events: Vec<Value>,
    /// Thread name → track (tid).
    tracks: HashMap<String, i64>,
    /// `otherData.sched.left_out_to_nest`.
    left_out_to_nest: u64,
}

fn trace(r: &Run) -> Trace {
    let file = r.row["trace"].as_str().unwrap_or_else(|| panic!("no trace in {:#}", r.row));
    let path = r.dir.join(file);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("trace file"))
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    let sched = &doc["otherData"]["sched"];
    assert_eq!(sched["available"], true, "{}: otherData.sched = {sched}", path.display());
    let events = doc["traceEvents"].as_array().expect("traceEvents").clone();
    let tracks = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| (e["args"]["name"].as_str().unwrap().to_string(), e["tid"].as_i64().unwrap()))
        .collect();
    let left_out_to_nest = sched["left_out_to_nest"].as_u64().expect("left_out_to_nest");
    Trace { events, tracks, left_out_to_nest }
}

impl Trace {
    fn off_cpu_on(&self, thread: &str) -> Vec<&Value> {
        let tid = self.tracks[thread];
        self.events.iter().filter(|e| e["name"] == "off-cpu" && e["tid"] == tid).collect()
    }

    /// The ends (`ph: f`) of the wake-up flows, by flow id.
    fn flow_ends(&self) -> HashMap<u64, &Value> {
        self.events
            .iter()
            .filter(|e| e["ph"] == "f" && e["cat"] == "wakeup")
            .map(|e| (e["id"].as_u64().unwrap(), e))
            .collect()
    }
}

fn context_switches(r: &Run, thread: &str) -> u64 {
    let t = &r.row["off_cpu_by_thread"][thread];
    let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{thread}: no {k} in {t}"));
    n("voluntary_cs") + n("involuntary_cs")
}

#[test]
fn locked_consumer_slices_match_its_context_switches() {
    let (locked, _) = runs();
    let t = trace(locked);
    let slices = t.off_cpu_on("consumer").len() as f64;
    let switches = context_switches(locked, "consumer") as f64;
    assert!(
        switches >= MIN_SWITCHES as f64,
        "locked P=1: the consumer switched {switches} times (getrusage) in each of three \
         runs: too few to compare with its off-cpu slices"
    );
    assert!(
        slices >= MIN_SWITCHES as f64,
        "locked P=1: {slices} off-cpu slices on the consumer's track"
    );
    assert!(
        (slices - switches).abs() <= 0.25 * switches,
        "locked P=1: {slices} off-cpu slices, {switches} context switches (getrusage)"
    );
    let summary = &locked.row["off_cpu_by_thread"]["consumer"];
    assert_eq!(summary["off_cpu_slices"].as_f64(), Some(slices), "{summary}");
    let share = summary["off_cpu_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{summary}");
}

#[test]
fn busy_spin_ring_consumer_is_off_cpu_far_less() {
    let (locked, ring) = runs();
    let l = trace(locked).off_cpu_on("consumer").len();
    let r = trace(ring).off_cpu_on("consumer").len();
    assert!(r * 5 <= l, "consumer off-cpu slices: busy-spin ring {r}, locked {l}");
}

#[test]
fn traces_stay_valid_and_flows_join_the_right_tracks() {
    let (locked, ring) = runs();
    for (name, r) in [("locked", locked), ("ring", ring)] {
        let t = trace(r);
        for e in &t.events {
            assert!(e["pid"].is_i64(), "{name}: pid not an integer: {e}");
            if e["ph"] != "M" {
                assert!(e["tid"].is_i64(), "{name}: tid not an integer: {e}");
                assert!(e["ts"].as_f64().is_some_and(|v| v >= 0.0), "{name}: ts: {e}");
            }
            if e["ph"] == "X" {
                assert!(e["dur"].as_f64().is_some_and(|v| v >= 0.0), "{name}: dur: {e}");
            }
        }
        let off: Vec<&Value> = t.events.iter().filter(|e| e["name"] == "off-cpu").collect();
        for e in &off {
            assert_eq!(e["cat"], "sched", "{e}");
            assert!(e["args"]["state"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
            assert!(e["args"]["woken_by"].is_string() || e["args"]["woken_by"].is_null(), "{e}");
        }
        // Every flow starts at a `wakeup` slice on one track and ends at the end of an
        // `off-cpu` slice of another, on a `woken` slice.
        let ends = t.flow_ends();
        let starts: Vec<&Value> =
            t.events.iter().filter(|e| e["ph"] == "s" && e["cat"] == "wakeup").collect();
        assert_eq!(starts.len(), ends.len(), "{name}: unpaired wake-up flows");
        for s in &starts {
            let f = ends[&s["id"].as_u64().unwrap()];
            assert_eq!(f["bp"], "e", "{f}");
            assert!(
                t.events.iter().any(|w| w["name"] == "wakeup"
                    && w["ph"] == "X"
                    && w["tid"] == s["tid"]
                    && w["ts"] == s["ts"]),
                "{name}: no wakeup slice under {s}"
            );
            assert!(
                t.events.iter().any(|w| w["name"] == "woken"
                    && w["ph"] == "X"
                    && w["tid"] == f["tid"]
                    && w["ts"] == f["ts"]),
                "{name}: no woken slice under {f}"
            );
            let (ts, tid) = (f["ts"].as_f64().unwrap(), &f["tid"]);
            let slice = off.iter().find(|o| {
                let a = o["ts"].as_f64().unwrap();
                // Within a nanosecond (µs with three decimals, added as doubles).
                &o["tid"] == tid && a <= ts + 1e-3 && ts <= a + o["dur"].as_f64().unwrap() + 1e-3
            });
            let slice = slice.unwrap_or_else(|| panic!("{name}: {f} is in no off-cpu slice"));
            assert_ne!(s["tid"], f["tid"], "{name}: a thread woke itself: {s}");
            let waker =
                t.tracks.iter().find(|(_, &v)| v == s["tid"].as_i64().unwrap()).map(|(k, _)| k);
            assert_eq!(
                slice["args"]["woken_by"].as_str(),
                waker.map(String::as_str),
                "{name}: flow from another thread than the slice's waker"
            );
        }
        if name == "locked" {
            // The locked queue's consumer sleeps until the producer wakes it: one flow per
            // wake-up by the producer that the summary counts.
            let from_producer = starts
                .iter()
                .filter(|s| s["tid"] == t.tracks["producer-0"])
                .filter(|s| ends[&s["id"].as_u64().unwrap()]["tid"] == t.tracks["consumer"])
                .count() as u64;
            let counted = r.row["off_cpu_by_thread"]["consumer"]["woken_by"]["producer-0"]
                .as_u64()
                .unwrap_or(0);
            // Less the slices left out to keep the nesting (the file counts them).
            let left_out = t.left_out_to_nest;
            assert!(
                from_producer <= counted && counted <= from_producer + left_out,
                "locked: {from_producer} flows producer-0 -> consumer, {counted} wake-ups \
                 counted, {left_out} slices left out"
            );
            assert!(!starts.is_empty(), "locked: no wake-up flow at all");
        }
    }
}

/// The locked queue's consumer sleeps on a futex that the producer's `notify_one` wakes: the
/// waker of most of its off-CPU slices is the producer thread, named in `woken_by` and drawn
/// as a flow from the producer's track. Most of these wake-ups the kernel hands to the
/// consumer's CPU to complete, in its idle task, whose `sched_wakeup` names `swapper/N`
/// (taken alone, it seldom named the producer: figures: docs/design-figures.md); the waker
/// comes from `sched_waking`, emitted in the producer's own context.
#[test]
fn locked_consumer_is_woken_by_the_producer() {
    const SHARE: f64 = 0.8;
    let (locked, _) = runs();
    let t = trace(locked);
    let slices = t.off_cpu_on("consumer");
    assert!(slices.len() as u64 >= MIN_SWITCHES, "locked P=1: {} off-cpu slices", slices.len());
    let (producer, consumer) = (t.tracks["producer-0"], t.tracks["consumer"]);
    let mut by_waker: HashMap<String, usize> = HashMap::new();
    let mut by_state: HashMap<String, usize> = HashMap::new();
    for s in &slices {
        let w = s["args"]["woken_by"].as_str().unwrap_or("(none)").to_string();
        *by_waker.entry(w).or_default() += 1;
        *by_state.entry(s["args"]["state"].as_str().unwrap_or("?").to_string()).or_default() += 1;
    }
    let ends = t.flow_ends();
    let flows = t
        .events
        .iter()
        .filter(|e| e["ph"] == "s" && e["cat"] == "wakeup" && e["tid"] == producer)
        .filter(|s| ends.get(&s["id"].as_u64().unwrap()).is_some_and(|f| f["tid"] == consumer))
        .count();
    // Only a sleep (S, D) is ended by a wake-up; a preempted slice (R, R+) has no waker by
    // nature, and under load (the machine shared with a build) there are more of them.
    let sleeping: Vec<_> =
        slices.iter().filter(|s| matches!(s["args"]["state"].as_str(), Some("S" | "D"))).collect();
    let sleeps = sleeping.len();
    let named = sleeping.iter().filter(|s| s["args"]["woken_by"] == "producer-0").count();
    assert!(
        sleeps as u64 >= MIN_SWITCHES / 2,
        "locked P=1: {sleeps} sleeping off-cpu slices (by state {by_state:?})"
    );
    let n = sleeps as f64;
    let (named_share, flow_share) = (named as f64 / n, flows as f64 / n);
    println!(
        "locked P=1 consumer: {} off-cpu slices; woken_by producer-0 {named} ({:.1}%), \
         flows producer-0 -> consumer {flows} ({:.1}%); by waker {by_waker:?}; by state \
         {by_state:?}",
        slices.len(),
        100.0 * named_share,
        100.0 * flow_share
    );
    assert!(
        named_share >= SHARE,
        "locked P=1: {named} of {sleeps} sleeping consumer off-cpu slices name producer-0 as \
         woken_by (by waker {by_waker:?}, by state {by_state:?})"
    );
    assert!(
        flow_share >= SHARE,
        "locked P=1: {flows} flows producer-0 -> consumer for {sleeps} sleeping consumer \
         off-cpu slices"
    );
}

/// The locked run's native trace (`.pftrace`) holds the kernel's records as ftrace packets,
/// from which Perfetto's own trace processor (`tools/viewers/check-pftrace.mjs`) builds the
/// consumer's thread states itself: it sleeps (`S`/`D`), and the runnable state after a
/// sleep names producer-0 as the waker for most of them, as the JSON's `off-cpu` slices
/// do; the CPU tracks are there; the slices, counter tracks and flows agree with the JSON.
/// Without node or the trace processor this fails, naming the setup script.
#[test]
fn the_native_trace_has_the_kernels_thread_states() {
    let (locked, _) = runs();
    let file = locked.row["trace"].as_str().expect("a trace");
    let json = locked.dir.join(file);
    let twin = locked.dir.join(file.replace(".trace.json", ".pftrace"));
    assert!(twin.is_file(), "{}: no .pftrace beside it", json.display());
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/viewers/check-pftrace.mjs");
    let o = std::process::Command::new("node")
        .arg(&script)
        .arg(&twin)
        .args(["--twin", json.to_str().expect("utf-8 path")])
        .args(["--expect-sleeps", "consumer", "--expect-woken-by", "consumer=producer-0"])
        .args(["--expect-cpu-tracks", "--expect-flow", "publish->consume"])
        .args(["--expect-counter", "queue_depth"])
        .output()
        .unwrap_or_else(|e| panic!("node: {e}: run scripts/setup-test-deps.sh"));
    assert_ne!(o.status.code(), Some(2), "the checker's setup: {}", text(&o));
    assert!(o.status.success(), "{}", text(&o));
    let s: Value = serde_json::from_slice(&o.stdout).expect("the checker's summary");
    let count = |rows: &Value, keep: &dyn Fn(&Value) -> bool| -> u64 {
        rows.as_array()
            .expect("rows")
            .iter()
            .filter(|r| keep(r))
            .map(|r| r["n"].as_u64().unwrap())
            .sum()
    };
    let sleeps = count(&s["thread_states"], &|r| {
        r["name"] == "consumer" && matches!(r["state"].as_str(), Some("S" | "D"))
    });
    let by_producer =
        count(&s["wakers"], &|r| r["thread"] == "consumer" && r["waker"] == "producer-0");
    println!("locked P=1 .pftrace: consumer sleeps {sleeps}, woken by producer-0 {by_producer}");
    // The JSON says what its twin got: the kernel's records, and the switches the lab added.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("trace file"))
        .expect("a JSON trace");
    let got = &doc["otherData"]["sched"]["pftrace"];
    let records = got["records"].as_u64().unwrap_or_else(|| panic!("otherData.sched = {got}"));
    let added = got["switches_added"].as_u64().unwrap_or_else(|| panic!("{got}"));
    assert!(records >= sleeps && added <= records, "{got}: {sleeps} consumer sleeps");
    assert!(sleeps >= MIN_SWITCHES / 2, "{sleeps} consumer sleeps in {}", twin.display());
    assert!(
        by_producer as f64 >= 0.8 * sleeps as f64,
        "{by_producer} of {sleeps} consumer sleeps ended by producer-0 in {}",
        twin.display()
    );
}
