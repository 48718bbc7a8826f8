//! The kernel's scheduling in the trace pass: a [`sched_recorder::SchedRecorder`] for this
//! process around the trace run, its off-CPU intervals written into the run's Chrome trace
//! as `off-cpu` slices with wake-up flows, and a per-thread summary for the outcome.
//!
//! * [`Session::start`] starts the recorder (CPU-wide `sched_switch`, `sched_wakeup` and
//!   `sched_waking`, and switch records inherited by the threads the run spawns) and puts a
//!   `clock_sync` instant into the trace carrying `CLOCK_MONOTONIC` ns; [`Session::finish`]
//!   puts a second one, stops the recorder and keeps the intervals for [`annotate`].
//! * [`annotate`] runs after the recorder wrote the file (flight dump or repaired full
//!   capture): it maps monotonic ns onto the trace's clock by the two `clock_sync`
//!   instants (a line through both: the flight recorder's TSC clock is scaled, not equal,
//!   to `Instant`; the instants are then removed), and OS tids onto the file's tracks by
//!   thread name (the kernel's `comm` is the name cut to 15 bytes; the main thread, whose
//!   `comm` is the executable's, is the track named `main`). Threads with no track get one.
//! * Every off-CPU interval becomes an `X` slice `off-cpu` (cat `sched`, args `state`,
//!   `woken_by`) on the switched-out thread's track. The waker is that of the interval's
//!   last `sched_waking` ([`sched_recorder::off_cpu_intervals`] says which count), emitted
//!   in the waker's own context; `sched_wakeup` is emitted where the wake-up completes,
//!   which for one the kernel hands to the sleeper's idle CPU is that CPU's idle task
//!   (`swapper/N`), so it is only the fallback (no `sched_waking` on this kernel, or the
//!   record lost). A wake-up from an interrupt (a timer) names whoever the interrupt
//!   landed on, with either event. A slice never contains a timestamp the thread read
//!   itself (it was not running), so one that crosses a boundary of the track's own spans
//!   does so by the clock mapping's error only: it is cut back to the longest part that
//!   keeps 2 ns clear of every boundary, so that Perfetto, which drops slices that are not
//!   properly nested, keeps them all.
//! * A wake-up by a thread of this process becomes a flow (cat `wakeup`): `s` on the
//!   waker's track at the wake-up (the `sched_waking`, which can lie a little before the
//!   `off-cpu` slice's start when the waker came while the sleeper was switching out), bound
//!   to a zero-length `wakeup` slice put there for it (Perfetto binds a flow event to the
//!   slice open at its time, and the waker was running, usually outside any span), and
//!   `f` (`bp:"e"`) on the woken thread's track at the `off-cpu` slice's end, bound to a
//!   zero-length `woken` slice there. Bound to the `off-cpu` slice itself, which starts
//!   before the wake-up, the arrow came out reversed in Perfetto (its flow table had the
//!   `off-cpu` slice as the source).
//! * The trace's native twin (`.pftrace`, where there is one) gets the recorder's own
//!   records instead, as ftrace packets from which Perfetto draws thread states and CPU
//!   tracks ([`crate::profile::ftrace`]), on the same clock line.
//! * Where recording is impossible the file's `otherData.sched` and the outcome's
//!   `off_cpu_note` say why; the run goes on.

use crate::profile::ftrace::{ClockMap, CLOCK_SYNC};
use sched_recorder::{off_cpu_intervals, SchedEvent, SchedKind, SchedRecorder, SchedRecording};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

/// One thread's off-CPU account over the trace run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadOffCpu {
    /// Off-CPU intervals (switch-out to switch-in).
    pub off_cpu_slices: u64,
    /// Their total length, ns.
    pub off_cpu_ns: u64,
    /// `off_cpu_ns` over the run's wall time (from just before the run's threads were
    /// started to just after they were joined).
    pub off_cpu_share: f64,
    /// Intervals by the state the thread left in (`S`, `D`, `R`, `R+`, …).
    pub states: BTreeMap<String, u64>,
    /// Waker name → intervals it ended (`swapper/N` for a wake-up from an interrupt on an
    /// idle CPU); intervals with no recorded wake-up (preemptions) are not counted here.
    pub woken_by: BTreeMap<String, u64>,
    /// The thread's voluntary context switches over its life, `getrusage(RUSAGE_THREAD)`,
    /// when the run reports the thread.
    pub voluntary_cs: Option<u64>,
    /// Its involuntary context switches, the same way.
    pub involuntary_cs: Option<u64>,
    /// How long its wake-ups took: from the kernel's wake-up record (`sched_waking`, else
    /// `sched_wakeup`) to the switch that ran it again, over the intervals a wake-up ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_to_run: Option<WakeDelays>,
}

/// The time from a thread's wake-up to its running again, over a run's wake-ups, ns.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WakeDelays {
    /// Wake-ups counted.
    pub count: u64,
    /// Their median.
    pub p50_ns: u64,
    /// Their 99th percentile.
    pub p99_ns: u64,
    /// The longest.
    pub max_ns: u64,
}

impl WakeDelays {
    /// The summary of `delays` (`None` for none), nearest-rank percentiles.
    pub fn of(delays: &mut [u64]) -> Option<WakeDelays> {
        if delays.is_empty() {
            return None;
        }
        delays.sort_unstable();
        let at =
            |q: f64| delays[((q * delays.len() as f64).ceil() as usize).clamp(1, delays.len()) - 1];
        Some(WakeDelays {
            count: delays.len() as u64,
            p50_ns: at(0.50),
            p99_ns: at(0.99),
            max_ns: delays[delays.len() - 1],
        })
    }
}

/// The name the main thread's track has in the lab's traces (Rust names it `main`).
const MAIN: &str = "main";

/// The name the calling thread has in a recording's per-thread summary: [`MAIN`] for the
/// process's main thread, else the kernel's `comm` (its name cut to 15 bytes).
pub fn own_name() -> String {
    // SAFETY: gettid has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() };
    if tid as u32 == std::process::id() {
        return MAIN.to_string();
    }
    std::fs::read_to_string("/proc/thread-self/comm")
        .map(|c| c.trim_end().to_string())
        .unwrap_or_else(|_| format!("tid {tid}"))
}
/// The recorder's own drain thread (`perf-sched-drain`, as `comm` holds it).
const DRAIN_COMM: &str = "perf-sched-drai";
/// Clearance kept between an `off-cpu` slice's ends and the track's span boundaries, ns.
const MARGIN_NS: i64 = 2;

/// An interval to write, in monotonic ns.
#[derive(Debug, Clone)]
struct Slice {
    tid: u32,
    start_ns: u64,
    end_ns: u64,
    state: String,
    waker: Option<u32>,
    woken_at_ns: Option<u64>,
}

#[derive(Debug)]
enum Pending {
    Unavailable(String),
    Recorded {
        slices: Vec<Slice>,
        /// OS tid → thread name, for this process's threads and every waker seen.
        names: HashMap<u32, String>,
        /// This process's threads, in order of their first event.
        threads: Vec<u32>,
        lost: u64,
        /// Whether `sched_waking` was recorded (else the wakers are `sched_wakeup`'s).
        waking: bool,
        /// The recorder's events as they came, for the `.pftrace`'s ftrace packets.
        raw: Vec<SchedEvent>,
    },
}

/// What [`Session::finish`] leaves for [`annotate`]: one trace pass per process.
static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

fn set_pending(p: Pending) {
    *PENDING.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
}

/// The recorder around one trace run.
#[derive(Debug)]
pub struct Session {
    recorder: Result<SchedRecorder, String>,
    t0_ns: u64,
    /// The recorded process: this one, or a child that writes no trace of its own (a JVM).
    pid: u32,
}

/// `clock_sync` instants put in a row at each end of the run. The trace's clock is read
/// after the monotonic one, so the pair with the smallest difference is the closest: the
/// first of them also pays for the thread's first event (its ring is set up then).
const MARKS: usize = 8;

fn clock_mark() -> u64 {
    let mut now = 0;
    for _ in 0..MARKS {
        now = perf_counters::monotonic_ns();
        handoff::instant!("clock_sync", mono_ns = now);
    }
    now
}

impl Session {
    /// Starts recording this process (and the threads it starts from now on).
    pub fn start() -> Session {
        let recorder = SchedRecorder::start(std::process::id()).map_err(|e| e.to_string());
        let t0_ns = if recorder.is_ok() { clock_mark() } else { perf_counters::monotonic_ns() };
        Session { recorder, t0_ns, pid: std::process::id() }
    }

    /// Starts recording another process (a JVM child, `crate::profile::jfr`): no
    /// `clock_sync` instants here, as the trace [`annotate`] later reads is that process's,
    /// which carries its own on `CLOCK_MONOTONIC`.
    pub fn start_process(pid: u32) -> Session {
        let recorder = SchedRecorder::start(pid).map_err(|e| e.to_string());
        Session { recorder, t0_ns: perf_counters::monotonic_ns(), pid }
    }

    /// Stops recording; the per-thread summary with what may make it incomplete (records
    /// the kernel lost, threads without switch records), or why there is none. `threads`
    /// gives each thread's context switches as `getrusage` counted them.
    pub fn finish(
        self,
        threads: &[crate::profile::usage::ThreadUsage],
    ) -> Result<(BTreeMap<String, ThreadOffCpu>, Vec<String>), String> {
        self.finish_within(threads, None)
    }

    /// As [`Session::finish`], with the summary's off-CPU time and shares taken over
    /// `window` alone (CLOCK_MONOTONIC ns, start and end: a JVM child's measured runs, from
    /// its run marks) where one is given; the trace keeps every slice.
    pub fn finish_within(
        self,
        threads: &[crate::profile::usage::ThreadUsage],
        window: Option<(u64, u64)>,
    ) -> Result<(BTreeMap<String, ThreadOffCpu>, Vec<String>), String> {
        let recorder = match self.recorder {
            Ok(r) => r,
            Err(why) => {
                let why = format!("off-CPU slices unavailable: {why}");
                set_pending(Pending::Unavailable(why.clone()));
                return Err(why);
            }
        };
        let own = self.pid == std::process::id();
        let t1_ns = if own { clock_mark() } else { perf_counters::monotonic_ns() };
        let rec = recorder.stop();
        let window = window.unwrap_or((self.t0_ns, t1_ns));
        let (pending, summary) = digest(&rec, self.pid, window, threads);
        set_pending(pending);
        let mut caveats: Vec<String> = rec.note.iter().map(|n| format!("off-CPU: {n}")).collect();
        if rec.lost > 0 || rec.throttled > 0 {
            caveats.push(format!(
                "off-CPU: {} scheduler records lost, {} throttles: some intervals are missing",
                rec.lost, rec.throttled
            ));
        }
        Ok((summary, caveats))
    }
}

/// How long the interval `(start, end)` lies inside `(from, to)`, ns.
fn overlap_ns((start, end): (u64, u64), (from, to): (u64, u64)) -> u64 {
    end.min(to).saturating_sub(start.max(from))
}

/// The recording's slices and names, and the summary by thread name.
fn digest(
    rec: &SchedRecording,
    pid: u32,
    (from_ns, to_ns): (u64, u64),
    usage: &[crate::profile::usage::ThreadUsage],
) -> (Pending, BTreeMap<String, ThreadOffCpu>) {
    let wall_ns = to_ns.saturating_sub(from_ns).max(1);
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut threads: Vec<u32> = Vec::new();
    // The last `comm` seen: a new thread runs a while under its creator's before it
    // names itself.
    for ev in &rec.events {
        match &ev.kind {
            SchedKind::Switch(s) => {
                names.insert(s.prev_pid, s.prev_comm.clone());
                names.insert(s.next_pid, s.next_comm.clone());
            }
            SchedKind::Wakeup(w) | SchedKind::Waking(w) => {
                names.insert(w.pid, w.comm.clone());
            }
            SchedKind::SwitchIn => {}
        }
        let real = ev.tid != 0 && ev.tid != u32::MAX;
        if ev.pid == pid && real && !threads.contains(&ev.tid) {
            threads.push(ev.tid);
        }
    }
    names.insert(pid, MAIN.to_string());
    threads.retain(|t| names.get(t).map(String::as_str) != Some(DRAIN_COMM));
    let tids: BTreeSet<u32> = threads.iter().copied().collect();
    let name_of = |tid: u32| names.get(&tid).cloned().unwrap_or_else(|| format!("tid {tid}"));
    let mut summary: BTreeMap<String, ThreadOffCpu> = BTreeMap::new();
    let mut wakes: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut slices = Vec::new();
    for i in off_cpu_intervals(&rec.events, &tids) {
        // The part of the interval inside the window; one wholly outside counts nothing.
        let inside = overlap_ns((i.start_ns, i.end_ns), (from_ns, to_ns));
        if inside > 0 {
            let t = summary.entry(name_of(i.tid)).or_default();
            t.off_cpu_slices += 1;
            t.off_cpu_ns += inside;
            *t.states.entry(i.state.clone()).or_default() += 1;
            if let Some(w) = i.woken_by {
                *t.woken_by.entry(name_of(w)).or_default() += 1;
            }
            // A wake-up can be recorded a little before the switch-out it ends (the waker
            // came while the thread was going to sleep): it runs again from the later.
            if let Some(at) = i.woken_at_ns {
                let from = at.max(i.start_ns);
                wakes.entry(name_of(i.tid)).or_default().push(i.end_ns.saturating_sub(from));
            }
        }
        slices.push(Slice {
            tid: i.tid,
            start_ns: i.start_ns,
            end_ns: i.end_ns,
            state: i.state,
            waker: i.woken_by,
            woken_at_ns: i.woken_at_ns,
        });
    }
    for (name, t) in summary.iter_mut() {
        t.off_cpu_share = t.off_cpu_ns as f64 / wall_ns as f64;
        t.wake_to_run = wakes.get_mut(name).and_then(|d| WakeDelays::of(d));
        if let Some(u) = usage.iter().find(|u| &u.name == name) {
            t.voluntary_cs = Some(u.voluntary_cs);
            t.involuntary_cs = Some(u.involuntary_cs);
        }
    }
    let raw = rec.events.clone();
    (Pending::Recorded { slices, names, threads, lost: rec.lost, waking: rec.waking, raw }, summary)
}

/// Writes what the trace run's [`Session`] recorded into the finished trace `file` (a
/// no-op when no session ran in this process). `Err` says why the file was left as it was.
pub fn annotate(file: &Path) -> Result<(), String> {
    let Some(pending) = PENDING.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return Ok(());
    };
    // The native twin gets the kernel's own records (Perfetto draws thread states from
    // them), where the JSON gets slices made from them; the JSON says what the twin got.
    let twin = pftrace::twin_path(file);
    let native = match &pending {
        Pending::Recorded { raw, names, threads, .. } if twin.is_file() => {
            crate::profile::ftrace::annotate_twin(&twin, raw, names, threads).map(Some)
        }
        _ => Ok(None),
    };
    let twin_records = match &native {
        Ok(Some(records)) => Some(*records),
        Ok(None) | Err(_) => None,
    };
    let json = annotate_json(file, &pending, twin_records);
    match (json, native.map(|_| ())) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
    }
}

/// The JSON side of [`annotate`]: `off-cpu` slices, wake-up flows and `otherData.sched`,
/// which also counts what the `.pftrace` twin got (`pftrace`: the kernel's records, and the
/// switches the lab wrote for switch-ins the tracepoints missed).
fn annotate_json(
    file: &Path,
    pending: &Pending,
    twin: Option<crate::profile::ftrace::FtraceStats>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a JSON trace ({e})", file.display()))?;
    let Value::Object(mut doc) = doc else {
        return Err(format!("{}: not a JSON object", file.display()));
    };
    let Some(Value::Array(mut events)) = doc.remove("traceEvents") else {
        return Err(format!("{}: no traceEvents array", file.display()));
    };
    let sched = match pending {
        Pending::Unavailable(why) => json!({ "available": false, "note": why }),
        Pending::Recorded { slices, names, threads, lost, waking, .. } => {
            let added = add_sched_events(&mut events, slices, names, threads);
            match added {
                Ok(stats) => json!({
                    "available": true,
                    "off_cpu_slices": stats.slices,
                    "wakeup_flows": stats.flows,
                    "cut_to_nest": stats.cut,
                    "left_out_to_nest": stats.left_out,
                    "records_lost": lost,
                    "wakers_from": if *waking { "sched_waking" } else { "sched_wakeup" },
                    "pftrace": twin.map(|t| json!({
                        "records": t.records,
                        "switches_added": t.switches_added,
                    })),
                }),
                Err(why) => json!({ "available": false, "note": why }),
            }
        }
    };
    let other = doc.entry("otherData").or_insert_with(|| json!({}));
    if let Value::Object(o) = other {
        o.insert("sched".into(), sched);
    }
    write_trace(file, &events, &doc).map_err(|e| format!("{}: {e}", file.display()))
}

/// One event a line, as the recorders write them.
fn write_trace(file: &Path, events: &[Value], rest: &Map<String, Value>) -> std::io::Result<()> {
    let tmp = file.with_extension("json.tmp");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        w.write_all(b"{\"traceEvents\":[\n")?;
        for (i, e) in events.iter().enumerate() {
            if i > 0 {
                w.write_all(b",\n")?;
            }
            serde_json::to_writer(&mut w, e)?;
        }
        w.write_all(b"\n]")?;
        for (k, v) in rest {
            w.write_all(b",\n")?;
            serde_json::to_writer(&mut w, k)?;
            w.write_all(b":")?;
            serde_json::to_writer(&mut w, v)?;
        }
        w.write_all(b"}\n")?;
        w.flush()?;
    }
    std::fs::rename(&tmp, file)
}

#[derive(Debug, Default)]
struct AddStats {
    slices: u64,
    flows: u64,
    cut: u64,
    left_out: u64,
}

/// A trace timestamp (µs, number or numeric string) in ns.
fn ns_of(v: &Value) -> Option<i64> {
    let us = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.parse().ok()?,
        _ => return None,
    };
    Some((us * 1000.0).round() as i64)
}

/// ns as trace µs (the nearest double prints as the three decimals the recorders write).
fn us(ns: i64) -> Value {
    json!(ns as f64 / 1000.0)
}

/// Takes the `clock_sync` instants out of `events`; their (monotonic, trace) ns.
fn take_clock_marks(events: &mut Vec<Value>) -> Result<ClockMap, String> {
    let mut marks: Vec<(f64, f64)> = Vec::new();
    events.retain(|e| {
        if e["ph"] != "i" || e["name"] != CLOCK_SYNC {
            return true;
        }
        let mono = match &e["args"]["mono_ns"] {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim_matches('"').parse().ok(),
            _ => None,
        };
        match (mono, ns_of(&e["ts"])) {
            (Some(m), Some(t)) => {
                marks.push((m, t as f64));
                false
            }
            _ => true,
        }
    });
    ClockMap::fit(marks)
        .ok_or_else(|| "no clock_sync instant in the trace: off-CPU slices left out".to_string())
}

/// `comm` as the kernel keeps it: at most 15 bytes.
fn comm_of(name: &str) -> &str {
    let mut end = name.len().min(15);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

fn add_sched_events(
    events: &mut Vec<Value>,
    slices: &[Slice],
    names: &HashMap<u32, String>,
    threads: &[u32],
) -> Result<AddStats, String> {
    let clock = take_clock_marks(events)?;
    let pid = events
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name")
        .or_else(|| events.iter().find(|e| e["pid"].is_i64()))
        .and_then(|e| e["pid"].as_i64())
        .unwrap_or(1);
    // Tracks by name, in tid order; OS threads of the same name take them in order of
    // their first event.
    let mut tracks: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut max_tid = 0;
    for e in events.iter() {
        if let Some(t) = e["tid"].as_i64() {
            max_tid = max_tid.max(t);
        }
        if e["ph"] == "M" && e["name"] == "thread_name" && e["pid"].as_i64() == Some(pid) {
            if let (Some(t), Some(n)) = (e["tid"].as_i64(), e["args"]["name"].as_str()) {
                tracks.entry(comm_of(n).to_string()).or_default().push(t);
            }
        }
    }
    for v in tracks.values_mut() {
        v.sort_unstable();
        v.reverse(); // popped from the end
    }
    let mut track_of: HashMap<u32, i64> = HashMap::new();
    for &tid in threads {
        let name = names.get(&tid).cloned().unwrap_or_else(|| format!("tid {tid}"));
        let t = match tracks.get_mut(comm_of(&name)).and_then(Vec::pop) {
            Some(t) => t,
            None => {
                max_tid += 1;
                events.push(json!({"ph": "M", "pid": pid, "tid": max_tid,
                    "name": "thread_name", "args": {"name": name}}));
                max_tid
            }
        };
        track_of.insert(tid, t);
    }
    // Span boundaries per track, sorted.
    let mut bounds: HashMap<i64, Vec<i64>> = HashMap::new();
    for e in events.iter() {
        let (Some(t), Some(ts)) = (e["tid"].as_i64(), ns_of(&e["ts"])) else { continue };
        let b = bounds.entry(t).or_default();
        match e["ph"].as_str() {
            Some("X") => {
                b.push(ts);
                b.push(ts + ns_of(&e["dur"]).unwrap_or(0));
            }
            Some("B" | "E") => b.push(ts),
            _ => {}
        }
    }
    for b in bounds.values_mut() {
        b.sort_unstable();
    }
    let mut next_flow = events
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
        .filter_map(|e| e["id"].as_u64())
        .max()
        .unwrap_or(0)
        + 1;
    let name_of = |tid: u32| names.get(&tid).cloned();
    let mut stats = AddStats::default();
    let mut added = Vec::new();
    for s in slices {
        let Some(&track) = track_of.get(&s.tid) else { continue };
        let (a, b) = (clock.to_trace(s.start_ns).max(0), clock.to_trace(s.end_ns).max(0));
        let Some((a2, b2)) = clear_of(a, b, bounds.get(&track).map_or(&[][..], Vec::as_slice))
        else {
            stats.left_out += 1;
            continue;
        };
        if (a2, b2) != (a, b) {
            stats.cut += 1;
        }
        let woken_by = s.waker.map(|w| name_of(w).unwrap_or_else(|| format!("tid {w}")));
        added.push(json!({"ph": "X", "pid": pid, "tid": track, "ts": us(a2), "dur": us(b2 - a2),
            "name": "off-cpu", "cat": "sched", "args": {"state": s.state, "woken_by": woken_by}}));
        stats.slices += 1;
        let (Some(w), Some(at)) = (s.waker, s.woken_at_ns) else { continue };
        let Some(&from) = track_of.get(&w) else { continue };
        let at_ns = clock.to_trace(at).max(0);
        // A wake-up after the slice's (cut) end would be a flow back in time, which
        // Perfetto does not bind: one a lost record paired with the wrong interval.
        if at_ns > b2 {
            continue;
        }
        let at = us(at_ns);
        let id = next_flow;
        next_flow += 1;
        let woken = name_of(s.tid);
        added.push(json!({"ph": "X", "pid": pid, "tid": from, "ts": at, "dur": 0,
            "name": "wakeup", "cat": "sched", "args": {"woke": woken}}));
        added.push(json!({"ph": "s", "pid": pid, "tid": from, "ts": at, "id": id,
            "name": "wakeup", "cat": "wakeup"}));
        let end = us(b2);
        added.push(json!({"ph": "X", "pid": pid, "tid": track, "ts": end, "dur": 0,
            "name": "woken", "cat": "sched", "args": {"by": woken_by}}));
        added.push(json!({"ph": "f", "bp": "e", "pid": pid, "tid": track, "ts": end,
            "id": id, "name": "wakeup", "cat": "wakeup"}));
        stats.flows += 1;
    }
    events.extend(added);
    Ok(stats)
}

/// The longest part of `[a, b]` that keeps [`MARGIN_NS`] clear of every boundary in
/// `bounds` (sorted); `None` when no part of at least 2 ns is left.
fn clear_of(a: i64, b: i64, bounds: &[i64]) -> Option<(i64, i64)> {
    let first = bounds.partition_point(|&x| x <= a - MARGIN_NS);
    let mut best: Option<(i64, i64)> = None;
    let mut cursor = a;
    let mut consider = |lo: i64, hi: i64| {
        if hi - lo >= 2 && best.is_none_or(|(x, y)| hi - lo > y - x) {
            best = Some((lo, hi));
        }
    };
    for &x in &bounds[first..] {
        if x >= b + MARGIN_NS {
            break;
        }
        consider(cursor, (x - MARGIN_NS).min(b));
        cursor = cursor.max(x + MARGIN_NS);
    }
    consider(cursor, b);
    best
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_interval_counts_only_inside_the_window() {
        use super::overlap_ns;
        assert_eq!(overlap_ns((10, 20), (0, 100)), 10);
        assert_eq!(overlap_ns((10, 20), (15, 100)), 5);
        assert_eq!(overlap_ns((10, 20), (0, 12)), 2);
        assert_eq!(overlap_ns((10, 20), (20, 30)), 0);
        assert_eq!(overlap_ns((10, 20), (30, 40)), 0);
    }

    use super::*;

    #[test]
    fn slices_keep_clear_of_span_boundaries() {
        assert_eq!(clear_of(100, 200, &[]), Some((100, 200)));
        assert_eq!(clear_of(100, 200, &[50, 98, 202, 300]), Some((100, 200)));
        // A span ending just after the slice's start (the mapping's error).
        assert_eq!(clear_of(100, 200, &[50, 110]), Some((112, 200)));
        // Starting just before its end.
        assert_eq!(clear_of(100, 200, &[195, 400]), Some((100, 193)));
        assert_eq!(clear_of(100, 200, &[101, 199]), Some((103, 197)));
        assert_eq!(clear_of(100, 103, &[101]), None);
    }

    #[test]
    fn wake_delays_are_nearest_rank_percentiles() {
        use super::WakeDelays;
        let mut d: Vec<u64> = (1..=200).rev().collect();
        let w = WakeDelays::of(&mut d).unwrap();
        assert_eq!((w.count, w.p50_ns, w.p99_ns, w.max_ns), (200, 100, 198, 200));
        assert_eq!(WakeDelays::of(&mut [7]).map(|w| (w.p50_ns, w.p99_ns)), Some((7, 7)));
        assert_eq!(WakeDelays::of(&mut []), None);
    }

    #[test]
    fn comm_is_fifteen_bytes() {
        assert_eq!(comm_of("perf-sched-drain"), DRAIN_COMM);
        assert_eq!(comm_of("consumer"), "consumer");
    }

    #[test]
    fn clock_marks_map_and_leave() {
        let mut ev = vec![
            json!({"ph": "i", "name": "clock_sync", "ts": 10.5, "args": {"mono_ns": 999_900}}),
            json!({"ph": "i", "name": "clock_sync", "ts": 10.0, "args": {"mono_ns": 1_000_000}}),
            json!({"ph": "i", "name": "clock_sync", "ts": 20.0, "args": {"mono_ns": "1010000"}}),
            json!({"ph": "i", "name": "clock_sync", "ts": 20.2, "args": {"mono_ns": 1_010_100}}),
            json!({"ph": "X", "name": "x", "ts": 1.0, "dur": 1.0}),
        ];
        let c = take_clock_marks(&mut ev).unwrap();
        assert_eq!(ev.len(), 1);
        assert_eq!(c.to_trace(1_005_000), 15_000);
        assert!(take_clock_marks(&mut ev).is_err());
    }
}
