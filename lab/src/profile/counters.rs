//! perf counters per counted run (a run of its own, never a timed one), normalised per message as JMH's `perfnorm` reports
//! them: the whole process (a per-thread sum, through `perf_counters`) and each of the
//! run's threads by name (`producer-0` …, `consumer`).
//!
//! # Design
//! * A run's [`Probe`] opens the process counters and enables them right after the handoff
//!   is opened, before the run's threads are spawned: threads spawned later are counted
//!   through `inherit`, and the window is the one `page_faults` already covers (the run's
//!   own, from after `open` until every thread is joined). [`Probe::finish`] waits for the
//!   joined threads to be gone (an inherited count reaches the parent only then), disables
//!   and reads them.
//! * Each run thread opens its own counters at its start ([`ThreadProbe::open`]), enables
//!   them when it leaves the start barrier and reads them when its loop ends, so nothing
//!   outside the timed section is counted for it.
//! * The cost is per run, never per message: per thread, one `perf_event_open`, one
//!   enable and one read per event, and nothing at all when counting is off
//!   (`Probe::start(false)`: warm-up, sampling pairs, heap and trace passes).
//! * [`UNAVAILABLE_ENV`]`=1` in the child takes the unavailable path (every value `None`,
//!   the note says so), for tests; `PERF_COUNTERS_DISABLE=1` still works as the crate
//!   documents.
//!
//! # Guarantees
//! A value is `None` only where the event could not be counted, and then the run's
//! `note` says why in one line. Counting never fails a run.

use perf_counters::{Counters, CountersBuilder, EVENTS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Set to `1` in a child: every counter is forced unavailable.
pub const UNAVAILABLE_ENV: &str = "LAB_COUNTERS_UNAVAILABLE";

/// Event name (perf's) → value; `None` where it could not be counted.
pub type Values = BTreeMap<String, Option<f64>>;

/// One counted run's counters, each value divided by the run's messages.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunCounters {
    /// The whole process (every thread, summed).
    pub process: Values,
    /// Per run thread, by its name.
    pub threads: BTreeMap<String, Values>,
    /// Why some values are `None` (one line); `None` when every event counted.
    pub note: Option<String>,
}

fn forced() -> bool {
    std::env::var(UNAVAILABLE_ENV).is_ok_and(|v| v == "1")
}

/// The note of a forced run names the lab's switch rather than the crate's.
fn forced_note() -> String {
    format!("forced unavailable ({UNAVAILABLE_ENV}=1)")
}

/// The counters of one run, from before its threads are spawned to after they are joined.
#[derive(Debug)]
pub struct Probe {
    /// `None` when this run is not counted.
    on: Option<On>,
}

#[derive(Debug)]
struct On {
    builder: CountersBuilder,
    forced: bool,
    process: Counters,
}

impl Probe {
    /// Opens and enables the process counters when `count`; otherwise does nothing.
    pub fn start(count: bool) -> Probe {
        if !count {
            return Probe { on: None };
        }
        let forced = forced();
        let mut builder = Counters::builder();
        if forced {
            // Only ever set, never cleared: `PERF_COUNTERS_DISABLE=1` keeps working.
            builder = builder.force_unavailable(true);
        }
        let process = builder.process();
        // An enable that fails leaves the counts at zero; the read still reports them, as
        // the kernel's own state is the only witness.
        let _ = process.enable();
        Probe { on: Some(On { builder, forced, process }) }
    }

    /// What a run thread takes with it to open its own counters.
    pub fn thread(&self) -> ThreadProbe {
        ThreadProbe { builder: self.on.as_ref().map(|o| o.builder.clone()), counters: None }
    }

    /// Reads the process counters (call after every run thread is joined) and puts them,
    /// with the threads' readings, per message. `None` when the run was not counted.
    ///
    /// An inherited counter adds a thread's counts to its parent's only as the thread
    /// exits (`perf_event_exit_task`), which the kernel does after it has woken the
    /// joiner: a read straight after `join` can miss a whole thread. So this first waits
    /// until each reading's thread has left `/proc/self/task`, which happens later still.
    pub fn finish(self, messages: u64, threads: Vec<ThreadReading>) -> Option<RunCounters> {
        let on = self.on?;
        let lingering = wait_exited(&threads);
        let _ = on.process.disable();
        let process = perf_counters::per_message(&on.process.read(), messages);
        let mut notes: Vec<String> = Vec::new();
        let mut note = |n: Option<&str>| {
            if let Some(n) = n {
                let n = if on.forced { forced_note() } else { n.to_string() };
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        };
        note(on.process.note());
        for name in lingering {
            note(Some(&format!(
                "{name} had not exited {EXIT_WAIT:?} after its join: the process counts may miss its own"
            )));
        }
        let mut by_thread = BTreeMap::new();
        for t in threads {
            note(t.note.as_deref());
            by_thread.insert(t.name, perf_counters::per_message(&t.values, messages));
        }
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        Some(RunCounters { process, threads: by_thread, note })
    }
}

/// How long [`Probe::finish`] waits for a joined thread to be gone.
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// Waits until no reading's thread is listed in `/proc/self/task` (or [`EXIT_WAIT`] has
/// passed); the names of those still listed.
fn wait_exited(threads: &[ThreadReading]) -> Vec<String> {
    let deadline = Instant::now() + EXIT_WAIT;
    loop {
        // An unreadable listing counts as empty: there is nothing to wait on.
        let alive = perf_counters::threads_of(std::process::id()).unwrap_or_default();
        let lingering: Vec<String> = threads
            .iter()
            .filter(|t| alive.binary_search(&t.tid).is_ok())
            .map(|t| t.name.clone())
            .collect();
        if lingering.is_empty() || Instant::now() >= deadline {
            return lingering;
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// A run thread's counters: opened inside the thread, enabled at its timed section.
#[derive(Debug)]
pub struct ThreadProbe {
    builder: Option<CountersBuilder>,
    counters: Option<Counters>,
}

/// One thread's totals over its timed section.
#[derive(Debug, Clone)]
pub struct ThreadReading {
    /// The thread's name (`producer-i`, `consumer`).
    pub name: String,
    /// Totals, not yet per message.
    pub values: Values,
    /// Why values are `None`.
    pub note: Option<String>,
    /// The thread's kernel id.
    pub tid: u32,
}

impl ThreadProbe {
    /// Opens the calling thread's counters, disabled (call at the thread's start).
    pub fn open(mut self) -> ThreadProbe {
        self.counters = self.builder.as_ref().map(CountersBuilder::current_thread);
        self
    }

    /// Starts counting (call as the timed section begins).
    #[inline]
    pub fn enable(&self) {
        if let Some(c) = &self.counters {
            let _ = c.enable();
        }
    }

    /// Reads the totals (call as the timed section ends); `None` when not counting.
    pub fn read(self, name: &str) -> Option<ThreadReading> {
        let c = self.counters?;
        let values = c.read();
        Some(ThreadReading {
            name: name.to_string(),
            values,
            note: c.note().map(str::to_string),
            tid: perf_counters::gettid(),
        })
    }
}

/// One number per event over many readings: the median over forks of each fork's median
/// over its runs (`None` where no run had the value), plus `ipc` where cycles and
/// instructions both exist.
pub fn median_of_medians(forks: &[Vec<&Values>]) -> Values {
    let median = |xs: Vec<f64>| crate::stats::median(&xs);
    let mut names: Vec<String> = EVENTS.iter().map(|e| e.to_string()).collect();
    for runs in forks {
        for k in runs.iter().flat_map(|v| v.keys()) {
            if !names.contains(k) && k != "ipc" {
                names.push(k.clone());
            }
        }
    }
    let mut out: Values = names
        .into_iter()
        .map(|name| {
            let per_fork: Vec<f64> = forks
                .iter()
                .filter_map(|runs| {
                    median(runs.iter().filter_map(|v| v.get(&name).copied().flatten()).collect())
                })
                .collect();
            (name, median(per_fork))
        })
        .collect();
    if let Some(ipc) = perf_counters::ipc(&out) {
        out.insert("ipc".to_string(), Some(ipc));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, Option<f64>)]) -> Values {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn median_over_forks_of_medians_over_runs() {
        let a = values(&[("cycles", Some(10.0)), ("instructions", Some(20.0))]);
        let b = values(&[("cycles", Some(30.0)), ("instructions", Some(60.0))]);
        let c = values(&[("cycles", Some(100.0)), ("instructions", None)]);
        // Fork 1: medians 20 and 40 (two runs); fork 2: 100 and nothing.
        let m = median_of_medians(&[vec![&a, &b], vec![&c]]);
        assert_eq!(m["cycles"], Some(60.0));
        assert_eq!(m["instructions"], Some(40.0));
        assert_eq!(m["task-clock"], None, "every event of EVENTS has a key");
        assert_eq!(m["ipc"], Some(40.0 / 60.0));
        let none = median_of_medians(&[vec![&c]]);
        assert!(!none.contains_key("ipc"));
    }

    #[test]
    fn a_run_not_counted_costs_nothing_and_reports_nothing() {
        let p = Probe::start(false);
        let t = p.thread().open();
        t.enable();
        assert!(t.read("consumer").is_none());
        assert!(p.finish(10, Vec::new()).is_none());
    }

    #[test]
    fn software_counters_count_a_thread_and_the_process() {
        let p = Probe::start(true);
        let t = std::thread::spawn({
            let t = p.thread();
            move || {
                let t = t.open();
                t.enable();
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                t.read("consumer")
            }
        })
        .join()
        .unwrap();
        let r = p.finish(1000, t.into_iter().collect()).unwrap();
        // Without PERF_COUNTERS_DISABLE, the software events open on any Linux.
        if std::env::var("PERF_COUNTERS_DISABLE").is_err() && !forced() {
            assert!(r.process["task-clock"].is_some_and(|v| v > 0.0), "{r:?}");
            assert!(r.threads["consumer"]["task-clock"].is_some_and(|v| v > 0.0), "{r:?}");
        }
    }
}
