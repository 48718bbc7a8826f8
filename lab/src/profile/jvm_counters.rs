//! perf counters for a JVM child (the `jvm-*` rows): the lab opens its software counters
//! on every thread of the `java` process — Bus's `producer-N` and `consumer`, and the
//! JVM's own threads (GC, JIT compiler, the rest) — so JVM rows get `counters` and
//! `counters_by_thread` as Rust rows do.
//!
//! # Design
//! * A poller thread lists `/proc/<pid>/task` every [`POLL`] and opens a per-thread
//!   [`perf_counters::Counters`] (no `inherit`) on each new thread, enabled at once. A
//!   thread's counters stay readable after it exits (its final counts), so threads that
//!   came and went between two readings still count. A thread that lived less than one
//!   poll interval is never seen: the note says so. Each run mark's reading also lists
//!   the threads first, so a run's threads (Bus starts new ones per run) are counted
//!   from its start mark whatever the poller's phase.
//! * The poller shares the machine with the JVM it measures, so it does the least it can:
//!   it lists the task directory and reads the name of a new thread only. Reading every
//!   live thread's name each millisecond (as it once did) took a measurable share of a
//!   core on a 2-core machine and slowed the JVM rows against their own loops (the dated
//!   figures are in docs/design-figures.md).
//! * Each thread's name is its `comm` (the Java name cut to 15 bytes), read when the
//!   thread is first seen and again at every reading: a Java thread names itself shortly
//!   after it starts.
//! * The whole process is the sum over every thread seen (an `inherit` counter on the
//!   process would add a live thread's counts to its parent only when it exits, so it
//!   could not be read per run while the JVM's threads live on).
//! * Per thread, Bus's threads (and NettyAlloc's one worker, `alloc`) keep their names; the JVM's own are summed by kind
//!   ([`kind`]): `GC threads` (`GC Thread#0`, `G1 Conc#0`, `G1 Refine#0`, …), `VM
//!   thread` (`VM Thread`: safepoint operations, and the serial collector's collections,
//!   which have no GC thread of their own), `JIT compiler threads` (`C1 CompilerThre`,
//!   `C2 CompilerThre`), `other JVM threads`.
//! * Windows: when Bus marks its runs (`run_start` / `run_end` lines, [`crate::protocol::RunMark`], on
//!   its stdout), each run's counts are the difference between readings taken as the lab
//!   reads the marks (a pipe's delay after Bus wrote them: microseconds against runs of
//!   tens of ms or more). Without marks the counts cover the whole JVM, from launch to
//!   exit (its JIT warm-up passes, warm-up and measured runs), divided by every message it
//!   moved, and the note says so.

use crate::profile::counters::{RunCounters, Values, UNAVAILABLE_ENV};
use perf_counters::{Counters, CountersBuilder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the poller looks for new threads.
pub const POLL: Duration = Duration::from_millis(20);

/// The counters of one thread of the JVM.
#[derive(Debug)]
struct Tracked {
    name: String,
    counters: Counters,
}

#[derive(Debug, Default)]
struct Shared {
    threads: BTreeMap<u32, Tracked>,
}

/// Counters on every thread of one `java` process, until [`JvmCounters::finish`].
#[derive(Debug)]
pub struct JvmCounters {
    pid: u32,
    builder: CountersBuilder,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    poller: Option<JoinHandle<()>>,
    /// Readings at each `run_start` mark, by run index.
    starts: BTreeMap<u64, Reading>,
    /// Complete runs: (index, start, end).
    runs: Vec<(u64, Reading, Reading)>,
}

/// One reading of every thread seen so far: tid → (name, totals).
type Reading = BTreeMap<u32, (String, Values)>;

/// The JVM's own threads summed by kind; the lab's programs' threads (Bus's producers and
/// consumer, the echo servers' `echo-*`, NettyAlloc's `alloc`) by their own names.
pub fn kind(comm: &str) -> String {
    if comm.starts_with("producer-")
        || comm == "consumer"
        || comm.starts_with("echo-")
        || comm == "alloc"
    {
        comm.to_string()
    } else if comm.starts_with("GC Thread")
        || comm.starts_with("G1 ")
        || comm.starts_with("GC ")
        || comm.starts_with("ZWorker")
        || comm.starts_with("Shenandoah")
    {
        "GC threads".to_string()
    } else if comm.starts_with("C1 CompilerThre") || comm.starts_with("C2 CompilerThre") {
        "JIT compiler threads".to_string()
    } else if comm == "VM Thread" {
        // Runs every safepoint operation; under the serial collector the collections
        // themselves, so it is kept apart from the rest rather than hidden among them.
        "VM thread".to_string()
    } else {
        "other JVM threads".to_string()
    }
}

fn comm(pid: u32, tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// Opens counters on the threads of `pid` not yet tracked; with `rename`, re-reads the
/// names of the live threads already tracked (a reading does; the poller reads only the
/// task list and a new thread's name, so that it costs little CPU while the JVM runs).
fn scan(pid: u32, builder: &CountersBuilder, shared: &Mutex<Shared>, rename: bool) {
    let Ok(tids) = perf_counters::threads_of(pid) else { return };
    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
    for tid in tids {
        match s.threads.get_mut(&tid) {
            Some(t) => {
                if let Some(n) = rename.then(|| comm(pid, tid)).flatten() {
                    t.name = n;
                }
            }
            None => {
                let counters = builder.thread(tid);
                // A failed enable leaves zeros; the note of the open says why.
                let _ = counters.enable();
                let name = comm(pid, tid).unwrap_or_else(|| format!("tid {tid}"));
                s.threads.insert(tid, Tracked { name, counters });
            }
        }
    }
}

impl JvmCounters {
    /// Starts counting the threads of `pid` (call right after spawning it).
    pub fn start(pid: u32) -> JvmCounters {
        let mut builder = Counters::builder();
        if std::env::var(UNAVAILABLE_ENV).is_ok_and(|v| v == "1") {
            builder = builder.force_unavailable(true);
        }
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = Arc::new(AtomicBool::new(false));
        scan(pid, &builder, &shared, true);
        let poller = {
            let (builder, shared, stop) = (builder.clone(), shared.clone(), stop.clone());
            std::thread::Builder::new()
                .name("jvm-counters".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        scan(pid, &builder, &shared, false);
                        std::thread::sleep(POLL);
                    }
                })
                .ok()
        };
        JvmCounters {
            pid,
            builder,
            shared,
            stop,
            poller,
            starts: BTreeMap::new(),
            runs: Vec::new(),
        }
    }

    fn read(&self) -> Reading {
        scan(self.pid, &self.builder, &self.shared, true);
        let s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        s.threads.iter().map(|(tid, t)| (*tid, (t.name.clone(), t.counters.read()))).collect()
    }

    /// Reads a line of Bus's stdout: a run mark takes a reading; anything else is ignored.
    pub fn line(&mut self, line: &str) {
        let Some(crate::protocol::RunMark { start, run: i, .. }) =
            crate::protocol::RunMark::parse(line)
        else {
            return;
        };
        let reading = self.read();
        if start {
            self.starts.insert(i, reading);
        } else if let Some(s) = self.starts.remove(&i) {
            self.runs.push((i, s, reading));
        }
    }

    /// Stops counting (call after the JVM exited). `measured`: the measured runs, the last
    /// of `all_runs` runs (warm-up first; Bus may mark all or only the measured ones); `messages`: a run's messages; `cell_messages`: every
    /// message the JVM moved, for the whole-cell fallback. One [`RunCounters`] per measured
    /// run, or one for the whole cell when Bus did not mark each run.
    pub fn finish(
        mut self,
        measured: usize,
        all_runs: usize,
        messages: u64,
        cell_messages: u64,
    ) -> Vec<RunCounters> {
        let end = self.read();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.poller.take() {
            let _ = p.join();
        }
        let open_note = {
            let s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            s.threads.values().find_map(|t| t.counters.note().map(str::to_string))
        };
        let seen = format!(
            "threads found by polling /proc/<pid>/task every {POLL:?}: one that lived less \
             is not counted"
        );
        let mut runs = std::mem::take(&mut self.runs);
        runs.sort_by_key(|r| r.0);
        // Bus marks every run (warm-up ones first) or only the measured ones.
        if measured > 0 && (runs.len() == all_runs || runs.len() == measured) {
            return runs[runs.len() - measured..]
                .iter()
                .map(|(_, a, b)| {
                    summed(a, b, messages, join([open_note.clone(), Some(seen.clone())]))
                })
                .collect();
        }
        let why = format!(
            "per cell: Bus marked {} of its {all_runs} runs, so the counts cover the whole JVM \
             (JIT warm-up, warm-up and measured runs) over the {cell_messages} messages it moved",
            runs.len()
        );
        vec![summed(&Reading::new(), &end, cell_messages, join([open_note, Some(seen), Some(why)]))]
    }
}

fn join<const N: usize>(notes: [Option<String>; N]) -> Option<String> {
    let v: Vec<String> = notes.into_iter().flatten().collect();
    (!v.is_empty()).then(|| v.join("; "))
}

/// The counts between two readings, per message: the process (every thread) and by kind.
fn summed(before: &Reading, after: &Reading, messages: u64, note: Option<String>) -> RunCounters {
    let mut process: Values = BTreeMap::new();
    let mut threads: BTreeMap<String, Values> = BTreeMap::new();
    let add = |into: &mut Values, d: &Values| {
        for (k, v) in d {
            let e = into.entry(k.clone()).or_insert(Some(0.0));
            *e = e.zip(*v).map(|(a, b)| a + b);
        }
    };
    for (tid, (name, values)) in after {
        let d = match before.get(tid) {
            Some((_, b)) => perf_counters::delta(values, b),
            None => values.clone(),
        };
        add(&mut process, &d);
        add(threads.entry(kind(name)).or_default(), &d);
    }
    RunCounters {
        process: perf_counters::per_message(&process, messages),
        threads: threads
            .into_iter()
            .map(|(k, v)| (k, perf_counters::per_message(&v, messages)))
            .collect(),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_by_kind() {
        assert_eq!(kind("consumer"), "consumer");
        assert_eq!(kind("echo-selector"), "echo-selector");
        assert_eq!(kind("producer-3"), "producer-3");
        assert_eq!(kind("alloc"), "alloc", "NettyAlloc's worker");
        assert_eq!(kind("GC Thread#0"), "GC threads");
        assert_eq!(kind("G1 Conc#0"), "GC threads");
        assert_eq!(kind("G1 Refine#0"), "GC threads");
        assert_eq!(kind("C2 CompilerThre"), "JIT compiler threads");
        assert_eq!(kind("C1 CompilerThre"), "JIT compiler threads");
        assert_eq!(kind("VM Thread"), "VM thread");
        assert_eq!(kind("Signal Dispatch"), "other JVM threads");
    }

    #[test]
    fn run_marks_parse() {
        use crate::protocol::RunMark;
        let m = RunMark::parse(r#"{"type":"run_start","run":2,"phase":"measured","t_ns":5}"#);
        assert_eq!(m, Some(RunMark { start: true, run: 2, t_ns: 5, measured: true }));
        let m = RunMark::parse(r#"{"type":"run_end","run":0,"phase":"warmup","t_ns":7}"#);
        assert_eq!(m, Some(RunMark { start: false, run: 0, t_ns: 7, measured: false }));
        assert_eq!(RunMark::parse(r#"{"type":"heartbeat","run":0}"#), None);
        assert_eq!(RunMark::parse(r#"{"type":"run_start","run":1}"#), None, "no stamp");
    }

    #[test]
    fn a_reading_sums_threads_by_kind_per_message() {
        let v = |x: f64| -> Values { [("task-clock".to_string(), Some(x))].into() };
        let before: Reading = [(1, ("consumer".to_string(), v(10.0)))].into();
        let after: Reading = [
            (1, ("consumer".to_string(), v(110.0))),
            (2, ("GC Thread#0".to_string(), v(50.0))),
            (3, ("G1 Conc#0".to_string(), v(50.0))),
        ]
        .into();
        let r = summed(&before, &after, 10, None);
        assert_eq!(r.process["task-clock"], Some(20.0));
        assert_eq!(r.threads["consumer"]["task-clock"], Some(10.0));
        assert_eq!(r.threads["GC threads"]["task-clock"], Some(10.0));
    }
}
