//! The one child protocol: what the parent tells a child, and what the child says back.
//!
//! The parent starts `lab __child <spec>` (or `lab-heap <spec>` for a heap pass) with a
//! [`ChildSpec`] as one JSON argument. The child writes [`Message`]s to stdout, one JSON
//! object a line and nothing else: a `heartbeat` after every run it makes (warm-up,
//! measured, or any extra run such as a sampling-cost pair), then exactly one `done` or
//! `failed`. Diagnostics go to stderr. The runner's watchdog judges progress by the
//! heartbeats, never by a budget guessed in advance. The JVM programs speak the same lines.
//! Every child inherits the run folder as [`RUN_DIR_ENV`] ([`export_run_dir`]), for files a
//! timed fork writes (the in-run trace's dumps).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write as _;
use std::path::Path;

/// The environment variable that tells a child the run folder.
pub const RUN_DIR_ENV: &str = "LAB_RUN_DIR";

/// In the parent, before the first fork: the run folder, for the children to write into.
/// Children inherit the environment; the value is absolute, whatever their working folder.
pub fn export_run_dir(dir: &Path) {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    std::env::set_var(RUN_DIR_ENV, dir);
}

/// Which pass a child runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "pass", rename_all = "kebab-case")]
pub enum Pass {
    /// A timed fork: warm-up and measured runs, nothing else listening.
    Timed,
    /// An untimed run under dhat (the `lab-heap` binary), writing `file`.
    Heap {
        /// The dhat file to write.
        file: String,
    },
    /// An untimed run with a recorder (`flight` or `full`) writing `file`.
    Trace {
        /// `flight` or `full`.
        mode: String,
        /// The Chrome trace file to write.
        file: String,
    },
}

/// What a child is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildSpec {
    /// The experiment's name.
    pub experiment: String,
    /// The pass.
    #[serde(flatten)]
    pub pass: Pass,
    /// The experiment's cell, as the experiment serialised it.
    pub cell: Value,
}

/// A JVM child's mark of one of its runs (tools/jvm/bus/src/main/java/Protocol.java's `run_start` and
/// `run_end` lines): `{"type":"run_start","run":i,"phase":"warmup"|"measured","t_ns":N}`,
/// N from `System.nanoTime()` (CLOCK_MONOTONIC). Runs are numbered from 0, warm-up first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunMark {
    /// `run_start` (true) or `run_end`.
    pub start: bool,
    /// The run's index.
    pub run: u64,
    /// The stamp, CLOCK_MONOTONIC ns.
    pub t_ns: i64,
    /// A measured run (`"phase":"measured"`), not a warm-up one; a mark without a phase
    /// counts as measured.
    pub measured: bool,
}

impl RunMark {
    /// The mark a line carries, if it is one.
    pub fn parse(line: &str) -> Option<RunMark> {
        if !line.contains("\"run_start\"") && !line.contains("\"run_end\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let start = match v["type"].as_str()? {
            "run_start" => true,
            "run_end" => false,
            _ => return None,
        };
        let measured = v["phase"].as_str().is_none_or(|p| p == "measured");
        Some(RunMark { start, run: v["run"].as_u64()?, t_ns: v["t_ns"].as_i64()?, measured })
    }
}

/// One line a child writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// A run finished (its index among the child's runs, from 0).
    Heartbeat {
        /// How many runs the child has finished, minus one.
        run: u64,
    },
    /// The child's outcome.
    Done {
        /// The experiment's outcome, serialised.
        outcome: Value,
        /// Heap totals, from a heap pass.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        heap: Option<HeapTotals>,
        /// The recorder's account, from a trace pass.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The child could not produce an outcome.
    Failed {
        /// Why.
        error: String,
    },
}

impl Message {
    /// Writes the message as one line on stdout and flushes it.
    pub fn send(&self) {
        let line = serde_json::to_string(self).expect("messages serialise");
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// dhat's totals over a heap pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapTotals {
    /// Allocations.
    pub total_blocks: u64,
    /// Bytes allocated.
    pub total_bytes: u64,
    /// Peak live bytes.
    pub max_bytes: u64,
    /// Peak live allocations.
    pub max_blocks: u64,
}

/// What a child adds to its outcome: heap totals or a recorder's account.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// See [`Message::Done`].
    pub heap: Option<HeapTotals>,
    /// See [`Message::Done`].
    pub note: Option<String>,
}

/// What a cell's code gets from the child: the pass, and the heartbeat.
#[derive(Debug)]
pub struct Ctx {
    /// The pass this child runs.
    pub pass: Pass,
    /// The child binary's global allocator: `system` (the `lab` binary), `dhat`
    /// (`lab-heap`), `mimalloc` or `jemalloc` (the `lab-cell-*` binaries).
    pub allocator: &'static str,
    runs: u64,
    notes: Vec<String>,
}

impl Ctx {
    /// A context for `pass`.
    pub fn new(pass: Pass) -> Ctx {
        Ctx { pass, allocator: "system", runs: 0, notes: Vec::new() }
    }

    /// Keeps a note for the pass's record (a recorder's caveat, say), so that it reaches
    /// results.json rather than only the child's stderr.
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The notes kept so far, taken.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Call after every run: the parent's watchdog counts these. The parent wakes to read
    /// each one, so the child then pauses for [`HEARTBEAT_SETTLE`] before its next run,
    /// leaving the parent's answer to an idle moment instead of a timed run's first
    /// moments.
    pub fn heartbeat(&mut self) {
        Message::Heartbeat { run: self.runs }.send();
        self.runs += 1;
        std::thread::sleep(HEARTBEAT_SETTLE);
    }

    /// Runs made so far.
    pub fn runs(&self) -> u64 {
        self.runs
    }
}

/// How long a child pauses after a heartbeat: the parent's reader and watch threads take
/// tens of µs to read and answer it, and run on the CPUs the child times its threads on.
pub const HEARTBEAT_SETTLE: std::time::Duration = std::time::Duration::from_millis(1);

/// The child's end: prints `done` or `failed`; returns the exit code.
pub fn finish(result: Result<(Value, Extras), String>) -> i32 {
    match result {
        Ok((outcome, x)) => {
            Message::Done { outcome, heap: x.heap, note: x.note }.send();
            0
        }
        Err(error) => {
            Message::Failed { error }.send();
            3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_match_the_jvm_shape() {
        let m: Message = serde_json::from_str(r#"{"type":"heartbeat","run":3}"#).unwrap();
        assert!(matches!(m, Message::Heartbeat { run: 3 }));
        let m: Message = serde_json::from_str(r#"{"type":"done","outcome":{"x":1}}"#).unwrap();
        assert!(matches!(m, Message::Done { outcome, .. } if outcome["x"] == 1));
        let spec = ChildSpec {
            experiment: "x".into(),
            pass: Pass::Trace { mode: "flight".into(), file: "a".into() },
            cell: serde_json::json!({"p": 1}),
        };
        let back: ChildSpec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(back.pass, spec.pass);
    }

    #[test]
    fn a_cells_notes_are_kept_until_taken_once() {
        let mut ctx = Ctx::new(Pass::Timed);
        ctx.note("rx: off-CPU: no sched events".into());
        ctx.note("rx: wrote t.json".into());
        assert_eq!(ctx.take_notes(), ["rx: off-CPU: no sched events", "rx: wrote t.json"]);
        assert!(ctx.take_notes().is_empty());
    }
}
