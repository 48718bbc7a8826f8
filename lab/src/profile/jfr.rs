//! The JVM's trace pass: the `jvm-*` cell's trace child runs `java` with Java Flight
//! Recorder on (timed forks never do), reads the recording back with the JDK's `jfr` tool
//! and writes the same kind of Chrome trace the Rust cells get, on the lab's clock:
//!
//! * a `GC` track: every `jdk.GCPhasePause` (a stop-the-world pause) as a slice named
//!   `GC pause`, with its collection's cause and collector (`jdk.GarbageCollection`, joined
//!   by `gcId`);
//! * `Safepoints` and `VM operations` tracks: `jdk.SafepointBegin` (time to reach the
//!   safepoint) and `jdk.ExecuteVMOperation`;
//! * on each Java thread's own track (its OS thread id: Java threads are Linux threads, so
//!   the kernel's off-CPU slices land on the same track): `jdk.ThreadPark` and
//!   `jdk.JavaMonitorWait` as `wait` slices;
//! * the kernel's off-CPU slices and wake-up flows of the java process's threads, added by
//!   [`crate::profile::sched::annotate`] from a [`crate::profile::sched::Session`] on the
//!   java pid;
//! * Bus's run marks ([`crate::protocol::RunMark`]), when it prints
//!   them, as `run i` slices on a `runs` track.
//!
//! `jdk.ObjectAllocationSample` is summarised as the top allocation sites (class and top
//! frame, by sampled bytes: [`allocation_sites`]) for the Heap section.
//!
//! # The clock
//! The trace's clock is `CLOCK_MONOTONIC` (what the sched recorder and Bus's
//! `System.nanoTime()` read), in µs from the JVM's launch. JFR writes wall-clock times
//! (`startTime`: its chunk's wall-clock start plus elapsed ticks of its own monotonic
//! counter), so the lab reads both clocks together just before it launches java
//! ([`ClockPair`]: the tightest of a few monotonic/realtime/monotonic readings) and maps a
//! JFR time `w` to `w - realtime + monotonic`. Its error is the JVM's own error in reading
//! the wall clock once at its chunk's start (microseconds), unless the wall clock is
//! stepped during the run.

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The events the recording holds (the `.jfc` written by [`JfrTrace::prepare`]).
pub const EVENTS: [&str; 7] = [
    "jdk.GarbageCollection",
    "jdk.GCPhasePause",
    "jdk.ThreadPark",
    "jdk.JavaMonitorWait",
    "jdk.SafepointBegin",
    "jdk.ExecuteVMOperation",
    "jdk.ObjectAllocationSample",
];

/// Allocation samples per second JFR keeps (its `throttle`): enough for the top sites of
/// a run of seconds, few enough that reading them back stays quick.
const ALLOCATION_THROTTLE: &str = "500/s";

/// Synthetic track ids for the JVM-wide tracks, above any OS thread id.
const GC_TRACK: i64 = 4_000_000_001;
const SAFEPOINT_TRACK: i64 = 4_000_000_002;
const VMOP_TRACK: i64 = 4_000_000_003;
const RUNS_TRACK: i64 = 4_000_000_004;

/// The JFR settings: every pause, park and monitor wait (threshold 0), allocation samples
/// with their stacks, nothing else.
fn settings() -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration version=\"2.0\" \
         label=\"lab\" description=\"the lab's trace pass\">\n",
    );
    for ev in EVENTS {
        s += &format!("  <event name=\"{ev}\">\n    <setting name=\"enabled\">true</setting>\n");
        if ev == "jdk.ObjectAllocationSample" {
            s += "    <setting name=\"stackTrace\">true</setting>\n";
            s += &format!("    <setting name=\"throttle\">{ALLOCATION_THROTTLE}</setting>\n");
        } else {
            s += "    <setting name=\"stackTrace\">false</setting>\n";
            s += "    <setting name=\"threshold\">0 ms</setting>\n";
        }
        s += "  </event>\n";
    }
    s + "</configuration>\n"
}

/// Both clocks read together: monotonic ns and wall-clock ns since the epoch.
#[derive(Debug, Clone, Copy)]
pub struct ClockPair {
    mono_ns: i128,
    real_ns: i128,
}

impl ClockPair {
    /// The tightest of a few (monotonic, realtime, monotonic) readings, at its midpoint.
    pub fn now() -> ClockPair {
        let mut best: Option<(u64, ClockPair)> = None;
        for _ in 0..5 {
            let a = perf_counters::monotonic_ns();
            let real = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128);
            let b = perf_counters::monotonic_ns();
            let pair = ClockPair { mono_ns: ((a as u128 + b as u128) / 2) as i128, real_ns: real };
            if best.is_none_or(|(w, _)| b - a < w) {
                best = Some((b - a, pair));
            }
        }
        best.expect("five readings").1
    }

    /// A wall-clock time (ns since the epoch) on the monotonic clock.
    fn mono_of(&self, real_ns: i128) -> i128 {
        real_ns - self.real_ns + self.mono_ns
    }
}

/// One JVM trace pass: where the recording goes, and the clocks at launch.
#[derive(Debug)]
pub struct JfrTrace {
    trace: PathBuf,
    jfr: PathBuf,
    jfc: PathBuf,
    clock: ClockPair,
    /// Bus's run marks seen: (start, index, monotonic ns).
    marks: Vec<(bool, u64, i128)>,
    /// The measured runs' span: the first measured start and the last measured end seen.
    measured: (Option<u64>, Option<u64>),
}

/// The flight recording a JVM trace pass keeps beside its Chrome trace `trace_file`
/// (`….trace.json` → `….jfr`).
pub fn recording_of(trace_file: &str) -> String {
    let stem = trace_file.strip_suffix(".trace.json").unwrap_or(trace_file);
    format!("{stem}.jfr")
}

impl JfrTrace {
    /// Writes the settings beside `trace_file` (`…trace.json` → `….jfc`, `….jfr`).
    pub fn prepare(trace_file: &str) -> Result<JfrTrace, String> {
        let trace = PathBuf::from(trace_file);
        let jfr = PathBuf::from(recording_of(trace_file));
        let jfc = jfr.with_extension("jfc");
        std::fs::write(&jfc, settings()).map_err(|e| format!("{}: {e}", jfc.display()))?;
        Ok(JfrTrace {
            trace,
            jfr,
            jfc,
            clock: ClockPair::now(),
            marks: Vec::new(),
            measured: (None, None),
        })
    }

    /// The flag that turns the recorder on (before the class name on java's command line).
    pub fn java_flag(&self) -> String {
        format!(
            "-XX:StartFlightRecording=filename={},settings={},dumponexit=true",
            self.jfr.display(),
            self.jfc.display()
        )
    }

    /// Call just before launching java: the clock pair the mapping uses.
    pub fn launching(&mut self) {
        self.clock = ClockPair::now();
    }

    /// A line of Bus's stdout: keeps its run marks.
    pub fn line(&mut self, line: &str) {
        if let Some(m) = crate::protocol::RunMark::parse(line) {
            self.marks.push((m.start, m.run, i128::from(m.t_ns)));
            let t = u64::try_from(m.t_ns).ok();
            match (m.measured, m.start) {
                (true, true) => self.measured.0 = self.measured.0.or(t),
                (true, false) => self.measured.1 = t.or(self.measured.1),
                _ => {}
            }
        }
    }

    /// The measured runs' span from the run marks seen so far (CLOCK_MONOTONIC ns: the
    /// first measured run's start to the last one's end), when both ends were marked.
    pub fn measured_window(&self) -> Option<(u64, u64)> {
        match self.measured {
            (Some(a), Some(b)) if b > a => Some((a, b)),
            _ => None,
        }
    }

    /// After java exited: reads the recording, sets the Chrome trace for
    /// [`write_pending`] and returns the top allocation sites with a one-line account.
    pub fn finish(self, pid: u32) -> Result<(Vec<AllocationSite>, String), String> {
        let events = read_recording(&self.jfr)?;
        let doc = chrome_trace(&events, pid, &self.clock, &self.marks);
        let gc = events.iter().filter(|e| e.0 == "jdk.GCPhasePause").count();
        let waits = events
            .iter()
            .filter(|e| e.0 == "jdk.ThreadPark" || e.0 == "jdk.JavaMonitorWait")
            .count();
        let window = run_window(&self.marks);
        let sites = allocation_sites(&events, window, &self.clock, 5);
        *PENDING.lock().unwrap_or_else(|e| e.into_inner()) = Some((self.trace.clone(), doc));
        let note = format!(
            "JFR ({}): {gc} GC pauses, {waits} parks and monitor waits, {} events in all",
            self.jfr.file_name().map_or("".into(), |f| f.to_string_lossy().into_owned()),
            events.len()
        );
        let _ = std::fs::remove_file(&self.jfc);
        Ok((sites, note))
    }
}

/// The Chrome trace a JVM trace pass built, to be written over the flight recorder's file.
static PENDING: Mutex<Option<(PathBuf, Value)>> = Mutex::new(None);

/// Writes the JVM's Chrome trace over `file` when a JVM trace pass left one for it (the
/// trace child's own flight recorder saw only the lab's idle threads); `Ok(false)` when
/// none did.
pub fn write_pending(file: &Path) -> Result<bool, String> {
    let Some((path, doc)) = PENDING.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return Ok(false);
    };
    if path != file {
        return Err(format!("a JVM trace for {} met {}", path.display(), file.display()));
    }
    let text = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
    std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(true)
}

/// One event of the recording: its type and its values.
type Event = (String, Value);

/// Reads the recording with `jfr print --json` (the JDK's own reader).
fn read_recording(jfr: &Path) -> Result<Vec<Event>, String> {
    let json = jfr.with_extension("jfr.json");
    let out = std::fs::File::create(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let status = Command::new("jfr")
        .args(["print", "--json", "--stack-depth", "4", "--events", &EVENTS.join(",")])
        .arg(jfr)
        .stdout(out)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            format!(
                "cannot run `jfr` (the JDK's tool; apt-get install openjdk-17-jdk-headless): {e}"
            )
        })?;
    if !status.status.success() {
        let err = String::from_utf8_lossy(&status.stderr);
        let _ = std::fs::remove_file(&json);
        return Err(format!("jfr print {}: {}", jfr.display(), err.trim()));
    }
    let file = std::fs::File::open(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let doc: Value = serde_json::from_reader(BufReader::new(file))
        .map_err(|e| format!("{}: unreadable ({e})", json.display()))?;
    let _ = std::fs::remove_file(&json);
    let Some(Value::Array(events)) = doc.pointer("/recording/events").cloned() else {
        return Err(format!("{}: no recording.events", jfr.display()));
    };
    Ok(events
        .into_iter()
        .filter_map(|mut e| {
            let t = e["type"].as_str()?.to_string();
            Some((t, e["values"].take()))
        })
        .collect())
}

/// `2026-12-03T16:23:12.403332485Z` → ns since the epoch (UTC; JFR writes `Z`).
pub fn epoch_ns(iso: &str) -> Option<i128> {
    let (date, time) = iso.trim_end_matches('Z').split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let (h, min) = (t.next()?.parse::<i64>().ok()?, t.next()?.parse::<i64>().ok()?);
    let sec = t.next()?;
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let s: i64 = whole.parse().ok()?;
    let frac_ns: i64 = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(9).collect();
        digits.parse::<i64>().ok()? * 10i64.pow(9 - digits.len() as u32)
    };
    // Days from the civil date (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + min * 60 + s;
    Some(secs as i128 * 1_000_000_000 + frac_ns as i128)
}

/// `PT0.00553959S`, `PT1M2.5S`, `PT1H` → ns.
pub fn duration_ns(iso: &str) -> Option<i128> {
    let mut rest = iso.strip_prefix("PT")?;
    let mut ns: f64 = 0.0;
    for (unit, scale) in [('H', 3.6e12), ('M', 6e10), ('S', 1e9)] {
        if let Some((n, after)) = rest.split_once(unit) {
            ns += n.parse::<f64>().ok()? * scale;
            rest = after;
        }
    }
    rest.is_empty().then_some(ns.round() as i128)
}

/// The measured window on the monotonic clock (first run start to last run end), when Bus
/// marked its runs.
fn run_window(marks: &[(bool, u64, i128)]) -> Option<(i128, i128)> {
    let start = marks.iter().filter(|m| m.0).map(|m| m.2).min()?;
    let end = marks.iter().filter(|m| !m.0).map(|m| m.2).max()?;
    (end > start).then_some((start, end))
}

/// One allocation site of a JVM row, from JFR's allocation samples.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AllocationSite {
    /// The allocated class (`java.util.concurrent.LinkedBlockingQueue$Node`).
    pub class: String,
    /// The innermost frame, `Type.method:line`.
    pub frame: String,
    /// Sampled bytes: the sum of the samples' `weight` (JFR's estimate of the bytes
    /// allocated there since the thread's previous sample).
    pub weight_bytes: f64,
    /// Samples at this site.
    pub samples: u64,
}

fn class_name(v: &Value) -> String {
    v["name"].as_str().unwrap_or("?").replace('/', ".")
}

fn frame_text(f: &Value) -> String {
    let m = &f["method"];
    format!("{}.{}:{}", class_name(&m["type"]), m["name"].as_str().unwrap_or("?"), f["lineNumber"])
}

/// The top `n` allocation sites by sampled bytes (within `window` on the monotonic clock,
/// when given; JFR's times mapped by `clock`).
fn allocation_sites(
    events: &[Event],
    window: Option<(i128, i128)>,
    clock: &ClockPair,
    n: usize,
) -> Vec<AllocationSite> {
    let mut by: HashMap<(String, String), (f64, u64)> = HashMap::new();
    for (_, v) in events.iter().filter(|e| e.0 == "jdk.ObjectAllocationSample") {
        if let Some((a, b)) = window {
            let at = v["startTime"].as_str().and_then(epoch_ns).map(|w| clock.mono_of(w));
            if !at.is_some_and(|t| a <= t && t <= b) {
                continue;
            }
        }
        let class = class_name(&v["objectClass"]);
        let frame =
            v["stackTrace"]["frames"].get(0).map_or_else(|| "(no stack)".to_string(), frame_text);
        let e = by.entry((class, frame)).or_default();
        e.0 += v["weight"].as_f64().unwrap_or(0.0);
        e.1 += 1;
    }
    let mut sites: Vec<AllocationSite> = by
        .into_iter()
        .map(|((class, frame), (w, s))| AllocationSite {
            class,
            frame,
            weight_bytes: w,
            samples: s,
        })
        .collect();
    sites.sort_by(|a, b| b.weight_bytes.total_cmp(&a.weight_bytes));
    sites.truncate(n);
    sites
}

/// The Chrome trace of a recording (see the module's docs).
fn chrome_trace(
    events: &[Event],
    pid: u32,
    clock: &ClockPair,
    marks: &[(bool, u64, i128)],
) -> Value {
    let base = clock.mono_ns;
    let us = |mono: i128| json!((mono - base) as f64 / 1000.0);
    let mut out: Vec<Value> =
        vec![json!({"ph": "M", "pid": pid, "tid": pid, "name": "process_name",
        "args": {"name": format!("java (pid {pid})")}})];
    let mut names: BTreeMap<i64, String> = BTreeMap::new();
    for (track, name) in [
        (GC_TRACK, "GC"),
        (SAFEPOINT_TRACK, "Safepoints"),
        (VMOP_TRACK, "VM operations"),
        (RUNS_TRACK, "runs"),
    ] {
        names.insert(track, name.to_string());
    }
    let causes: HashMap<i64, (String, String)> = events
        .iter()
        .filter(|e| e.0 == "jdk.GarbageCollection")
        .filter_map(|(_, v)| {
            let id = v["gcId"].as_i64()?;
            Some((id, (v["cause"].as_str()?.to_string(), v["name"].as_str()?.to_string())))
        })
        .collect();
    for (t, v) in events {
        let (Some(start), Some(dur)) = (
            v["startTime"].as_str().and_then(epoch_ns).map(|w| clock.mono_of(w)),
            v["duration"].as_str().and_then(duration_ns),
        ) else {
            continue;
        };
        let thread = v["eventThread"]["osThreadId"].as_i64();
        let (track, name, args) = match t.as_str() {
            "jdk.GCPhasePause" => {
                let id = v["gcId"].as_i64().unwrap_or(-1);
                let (cause, collector) = causes.get(&id).cloned().unwrap_or_default();
                let args = json!({"cause": cause, "collector": collector, "gcId": id,
                    "phase": v["name"], "vm_thread": v["eventThread"]["osName"]});
                (GC_TRACK, "GC pause".to_string(), args)
            }
            "jdk.SafepointBegin" => (
                SAFEPOINT_TRACK,
                "safepoint".into(),
                json!({"safepointId": v["safepointId"],
                    "threads": v["totalThreadCount"]}),
            ),
            "jdk.ExecuteVMOperation" => (
                VMOP_TRACK,
                v["operation"].as_str().unwrap_or("VM operation").to_string(),
                json!({"safepoint": v["safepoint"], "caller": v["caller"]["osName"]}),
            ),
            "jdk.ThreadPark" | "jdk.JavaMonitorWait" => {
                let Some(tid) = thread else { continue };
                let name = v["eventThread"]["javaName"]
                    .as_str()
                    .or(v["eventThread"]["osName"].as_str())
                    .unwrap_or("?");
                names.entry(tid).or_insert_with(|| name.to_string());
                let on = if t == "jdk.ThreadPark" { &v["parkedClass"] } else { &v["monitorClass"] };
                let mut args = json!({"event": t, "on": class_name(on)});
                if let Some(n) = v["notifier"]["osName"].as_str() {
                    args["notifier"] = json!(n);
                }
                (tid, "wait".into(), args)
            }
            _ => continue,
        };
        out.push(
            json!({"ph": "X", "pid": pid, "tid": track, "ts": us(start), "dur": dur as f64 / 1000.0,
            "name": name, "cat": "jfr", "args": args}),
        );
    }
    let mut starts: HashMap<u64, i128> = HashMap::new();
    for &(start, i, t) in marks {
        if start {
            starts.insert(i, t);
        } else if let Some(s) = starts.remove(&i) {
            out.push(json!({"ph": "X", "pid": pid, "tid": RUNS_TRACK, "ts": us(s),
                "dur": (t - s) as f64 / 1000.0, "name": format!("run {i}"), "cat": "bus"}));
        }
    }
    for (tid, name) in names {
        out.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
            "args": {"name": name}}));
    }
    // The clock marks `sched::annotate` maps the kernel's monotonic times by: here the
    // trace's clock is the monotonic one, so two marks give the identity.
    let end = events
        .iter()
        .filter_map(|(_, v)| v["startTime"].as_str().and_then(epoch_ns))
        .map(|w| clock.mono_of(w))
        .max()
        .unwrap_or(base + 1_000_000)
        .max(base + 1_000);
    for mono in [base, end] {
        out.push(json!({"ph": "i", "s": "t", "pid": pid, "tid": RUNS_TRACK, "ts": us(mono),
            "name": "clock_sync", "args": {"mono_ns": mono as u64}}));
    }
    let mut other = Map::new();
    other.insert(
        "clock".into(),
        json!(format!(
            "CLOCK_MONOTONIC, µs from the JVM's launch (monotonic ns {base}); JFR's wall-clock \
             times mapped by a pair of readings of both clocks taken at launch"
        )),
    );
    other.insert("jfr_events".into(), json!(EVENTS));
    json!({"traceEvents": out, "displayTimeUnit": "ns", "otherData": other})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations_parse() {
        assert_eq!(epoch_ns("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(epoch_ns("2000-03-01T00:00:00Z"), Some(951_868_800_000_000_000));
        assert_eq!(
            epoch_ns("2026-12-03T16:23:12.403332485Z").map(|n| n % 1_000_000_000),
            Some(403_332_485)
        );
        assert_eq!(duration_ns("PT0.00553959S"), Some(5_539_590));
        assert_eq!(duration_ns("PT1M"), Some(60_000_000_000));
        assert_eq!(duration_ns("PT1M0.5S"), Some(60_500_000_000));
        assert_eq!(duration_ns("P1D"), None);
    }

    #[test]
    fn a_gc_pause_lands_on_the_gc_track_with_its_cause() {
        let clock = ClockPair { mono_ns: 1_000_000_000, real_ns: 1_500_000_000 };
        let ev = |t: &str, v: Value| (t.to_string(), v);
        let events = vec![
            ev(
                "jdk.GarbageCollection",
                json!({"startTime": "1970-01-01T00:00:01.6Z",
                "duration": "PT0.01S", "gcId": 3, "name": "G1New", "cause": "G1 Evacuation Pause"}),
            ),
            ev(
                "jdk.GCPhasePause",
                json!({"startTime": "1970-01-01T00:00:01.6Z",
                "duration": "PT0.01S", "gcId": 3, "name": "GC Pause",
                "eventThread": {"osName": "VM Thread", "osThreadId": 7}}),
            ),
            ev(
                "jdk.ThreadPark",
                json!({"startTime": "1970-01-01T00:00:01.7Z",
                "duration": "PT0.002S", "parkedClass": {"name": "java/lang/Object"},
                "eventThread": {"osName": "consumer", "javaName": "consumer", "osThreadId": 42}}),
            ),
        ];
        let doc = chrome_trace(&events, 9, &clock, &[]);
        let evs = doc["traceEvents"].as_array().unwrap();
        let gc = evs.iter().find(|e| e["name"] == "GC pause").unwrap();
        assert_eq!(gc["tid"], GC_TRACK);
        assert_eq!(gc["args"]["cause"], "G1 Evacuation Pause");
        // 1.6 s wall = 1.1 s monotonic = 100 ms after launch.
        assert_eq!(gc["ts"].as_f64(), Some(100_000.0));
        assert_eq!(gc["dur"].as_f64(), Some(10_000.0));
        let wait = evs.iter().find(|e| e["name"] == "wait").unwrap();
        assert_eq!(wait["tid"], 42);
        assert!(evs.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"] == "consumer"));
        assert_eq!(evs.iter().filter(|e| e["name"] == "clock_sync").count(), 2);
    }

    #[test]
    fn allocation_sites_sum_weights_by_class_and_frame() {
        let s = |class: &str, w: f64| {
            (
                "jdk.ObjectAllocationSample".to_string(),
                json!({"objectClass": {"name": class}, "weight": w, "stackTrace": {"frames": [
                    {"method": {"type": {"name": "java/util/concurrent/LinkedBlockingQueue"},
                     "name": "offer"}, "lineNumber": 409}]}}),
            )
        };
        let events = vec![s("A", 10.0), s("B", 5.0), s("A", 30.0)];
        let clock = ClockPair { mono_ns: 0, real_ns: 0 };
        let sites = allocation_sites(&events, None, &clock, 5);
        assert_eq!(sites[0].class, "A");
        assert_eq!(sites[0].weight_bytes, 40.0);
        assert_eq!(sites[0].samples, 2);
        assert_eq!(sites[0].frame, "java.util.concurrent.LinkedBlockingQueue.offer:409");
    }
}
