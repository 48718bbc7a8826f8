//! The lab: runs handoff experiments and writes their evidence.
//!
//! # What it models
//! Seed 001 (a game server's message bus moved from Java's `LinkedBlockingQueue` to the LMAX
//! Disruptor: 32Mi messages, 1–6 producers, one consumer, `BlockingWaitStrategy`, duration
//! and QPS tables with ratios, CPU use, CPU time per thread), measured the way seed 000
//! demands (warm-up, several measured runs, median, a full environment record, invalid
//! evidence refused) and with seed 004's JMH discipline (a process per cell, warm-up and
//! measured iterations, 99.9% confidence intervals).
//!
//! # Design: one pipeline, a module per stage
//! Every experiment goes through the same stages, in this order, each in one place; the
//! arrows between modules point one way (`scripts/import-circles.py` checks it in CI):
//!
//! * [`cli`]: the clap tree (`lab <experiment>`, list, env, compare, report, view) and the hidden child entry.
//! * [`error`]: the one error type; its kind carries the exit code (2 bad input, 1 failed, 130 interrupted).
//! * [`experiment`]: the [`experiment::Experiment`] trait, its shared options and what a run hands back to it.
//! * [`pipeline`]: the one flow parse → plan → run → assemble → analyse → emit, and experiments behind their names.
//! * [`runner`]: forks in interleaved rounds, the watchdog, process groups, Ctrl-C, the machine probes, the untimed passes.
//! * [`protocol`]: the one child protocol (spec in, heartbeat/done/failed lines out) and the run folder a child writes into.
//! * [`measure`]: inside a child: the handoff harness, the variants by name, the peers, the JVM originals, faults.
//! * [`profile`]: what a run leaves besides its time: CPU usage, perf counters, the kernel's scheduling, traces, dhat files.
//! * [`stats`]: summaries, order-statistic intervals ([`stats::Interval`]), latency percentiles, bimodality, paired ratios, phases.
//! * [`results`]: the one versioned results.json schema and nothing else.
//! * [`report`]: the terminal, Markdown and HTML reports from the same results, and links to a run's files.
//! * [`compare`]: `lab compare A B` and `lab report DIR` over any experiment's results.
//! * [`view`]: `lab view`, serving a run folder to Perfetto's UI.
//! * [`machine`]: the machine: the environment record every run stores, its CPUs and where threads run.
//! * [`units`]: sizes and producer lists parsed from options, figures formatted for tables.
//! * [`experiments`]: one file or folder per experiment, registered by one line each.
//!
//! The generic stages (pipeline, runner, stats, results, report) know no experiment by name
//! or by feature; no profiler imports the harness; the schema imports no writer; an
//! experiment never reaches back into the CLI; there is one child protocol and one results
//! schema.
//!
//! # Guarantees
//! Every run checks itself (count, per-producer order, checksum via `handoff::Checker`); a
//! failed run is INVALID everywhere it appears and never enters a statistic. A hung child
//! is killed and reported HUNG; a crashed child is reported CRASHED with its stderr, and
//! the others' results stand. Ctrl-C saves what finished.
//!
//! # Crates used and why
//! clap (CLI), serde/serde_json (specs, results, dhat files), hdrhistogram (latency
//! percentiles without storing samples), indicatif (progress), comfy-table (terminal
//! tables), signal-hook (Ctrl-C delivered to a thread, not a handler), statrs (Student's t
//! quantile), rayon (the untimed passes side by side), libc (getrusage per thread, process
//! groups), dhat (heap profiles), perf-counters (the workspace's perf_event_open counters),
//! mimalloc and tikv-jemallocator (the global allocators of the `lab-cell-*` child binaries).

pub mod cli;
pub mod compare;
pub mod error;
pub mod experiment;
pub mod experiments;
pub mod machine;
pub mod measure;
pub mod pipeline;
pub mod profile;
pub mod protocol;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod units;
pub mod view;
