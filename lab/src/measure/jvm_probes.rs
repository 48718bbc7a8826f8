//! What the lab listens to around one JVM fork, by pass: perf counters on every thread of
//! the java process in timed forks ([`crate::profile::jvm_counters`]); in the trace pass,
//! Java Flight Recorder and the kernel's scheduler on the java process
//! ([`crate::profile::jfr`], [`crate::profile::sched`]). Timing runs never run with JFR on.

use crate::measure::harness::{CellOutput, CellSpec};
use crate::profile::jfr::JfrTrace;
use crate::profile::jvm_counters::JvmCounters;
use crate::profile::sched::Session;
use crate::protocol::Pass;

/// The listeners of one fork.
#[derive(Debug)]
pub struct Probes {
    timed: bool,
    trace: Option<JfrTrace>,
    counters: Option<JvmCounters>,
    sched: Option<Session>,
}

/// A fork's Bus settings: (messages per run, warm-up runs, measured runs). A trace pass
/// makes one run of the cell's trace messages, as the Rust trace child does.
pub fn bus_runs(cell: &CellSpec, pass: &Pass) -> (u64, usize, usize) {
    match pass {
        Pass::Trace { .. } => (cell.trace_messages, 0, 1),
        _ => (cell.messages, cell.warmup, cell.runs),
    }
}

impl Probes {
    /// Before launch: writes the trace pass's JFR settings.
    pub fn prepare(pass: &Pass) -> Result<Probes, String> {
        let trace = match pass {
            Pass::Trace { file, .. } => Some(JfrTrace::prepare(file)?),
            _ => None,
        };
        Ok(Probes { timed: matches!(pass, Pass::Timed), trace, counters: None, sched: None })
    }

    /// The JVM flags the pass adds (before the class name).
    pub fn java_flags(&self) -> Vec<String> {
        self.trace.iter().map(JfrTrace::java_flag).collect()
    }

    /// Call just before spawning java.
    pub fn launching(&mut self) {
        if let Some(t) = &mut self.trace {
            t.launching();
        }
    }

    /// Call right after java started.
    pub fn started(&mut self, pid: u32) {
        if self.timed {
            self.counters = Some(JvmCounters::start(pid));
        }
        if self.trace.is_some() {
            self.sched = Some(Session::start_process(pid));
        }
    }

    /// Each line of Bus's stdout.
    pub fn line(&mut self, line: &str) {
        if let Some(c) = &mut self.counters {
            c.line(line);
        }
        if let Some(t) = &mut self.trace {
            t.line(line);
        }
    }

    /// After java exited, for a JVM program outside the handoff harness whose cell has no
    /// trace pass (NettyAlloc): the timed pass's counters, one per measured run when the
    /// program marked its runs (else one for the whole JVM, its note says so), each divided
    /// by `per_run` (a run's operations; `all`: every operation the JVM did). Empty in an
    /// untimed pass.
    pub fn counters(
        self,
        measured: usize,
        all_runs: usize,
        per_run: u64,
        all: u64,
    ) -> Vec<crate::profile::counters::RunCounters> {
        self.counters.map_or_else(Vec::new, |c| c.finish(measured, all_runs, per_run, all))
    }

    /// After java exited, for a JVM program outside the handoff harness (RxBench): the timed pass's counters as [`Probes::counters`] gives them; in the trace
    /// pass, the Chrome trace from the flight recording left for the trace child to write
    /// over its own file and the kernel's slices for it to add, and the notes that account
    /// for them. `Err` when the trace pass could not read its recording.
    pub fn finish_program(
        self,
        pid: u32,
        (measured, all_runs): (usize, usize),
        per_run: u64,
        all: u64,
    ) -> Result<(Vec<crate::profile::counters::RunCounters>, Vec<String>), String> {
        let mut notes = Vec::new();
        if let Some(s) = self.sched {
            let window = self.trace.as_ref().and_then(JfrTrace::measured_window);
            // No per-thread getrusage figures from such a program: the summary stands on
            // the kernel's switch records alone.
            match s.finish_within(&[], window) {
                Ok((_, caveats)) => notes.extend(caveats),
                Err(why) => notes.push(why),
            }
        }
        if let Some(t) = self.trace {
            let (_, note) = t.finish(pid).map_err(|why| format!("the JVM's trace (JFR): {why}"))?;
            notes.push(note);
        }
        let counters =
            self.counters.map_or_else(Vec::new, |c| c.finish(measured, all_runs, per_run, all));
        Ok((counters, notes))
    }

    /// After java exited: counters into the measured runs, the trace's file, off-CPU account
    /// and allocation sites into `out`. `cell_messages`: every message the JVM moved. `Err`
    /// when the trace pass could not read its recording (the pass then fails with it).
    pub fn finish(
        self,
        pid: u32,
        messages: u64,
        cell_messages: u64,
        out: &mut CellOutput,
    ) -> Result<(), String> {
        if let Some(c) = self.counters {
            let all = out.warmup.len() + out.runs.len();
            let counted = c.finish(out.runs.len(), all, messages, cell_messages);
            let per_run = counted.len() == out.runs.len();
            for (k, r) in out.runs.iter_mut().enumerate() {
                // Per cell: every measured run carries the cell's one reading (its note says so).
                r.counters = counted.get(if per_run { k } else { 0 }).cloned();
            }
        }
        if let Some(s) = self.sched {
            let threads = out.runs.first().map(|r| r.threads.clone()).unwrap_or_default();
            let window = self.trace.as_ref().and_then(JfrTrace::measured_window);
            match s.finish_within(&threads, window) {
                Ok((by_thread, caveats)) => {
                    out.off_cpu = Some(by_thread);
                    out.notes.extend(caveats);
                    out.notes.push(if window.is_some() {
                        "off-CPU shares of the JVM's threads are over its measured runs (first \
                         measured run's start mark to the last one's end); the trace keeps the \
                         slices of launch and warm-up"
                            .into()
                    } else {
                        "off-CPU shares of the JVM's threads are over the java process's whole \
                         life (launch, JIT warm-up and the run): it marked no runs"
                            .into()
                    });
                }
                Err(why) => {
                    out.notes.push(why.clone());
                    out.off_cpu_note = Some(why);
                }
            }
        }
        if let Some(t) = self.trace {
            match t.finish(pid) {
                Ok((sites, note)) => {
                    if let Some(j) = &mut out.jvm {
                        j.allocation_sites = sites;
                    }
                    out.notes.push(note);
                }
                Err(why) => return Err(format!("the JVM's trace (JFR): {why}")),
            }
        }
        Ok(())
    }
}
