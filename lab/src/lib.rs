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
//! # Design: one pipeline
//! Every experiment goes through the same stages, each in one place:
//!
//! * [`cli`]: one clap tree; each experiment's subcommand is built from its own `Args` and
//!   the [`experiment::Shared`] options (`--out`, `--rounds`, `--runs`, `--warmup`,
//!   `--trace`, `--heap`, `--timeout`).
//! * [`error`]: the one error type; its kind carries the exit code (2, 1, 130).
//! * [`experiment`]: the [`experiment::Experiment`] trait (typed options, a plan of cells,
//!   `run_cell` in the child, `analyse` in the parent) and what a run hands back to it.
//! * [`pipeline`]: the one flow parse → plan → run → assemble → analyse → emit, and
//!   [`pipeline::Registered`], an experiment behind its name.
//! * [`runner`]: forks in interleaved rounds (a fresh child per cell per round, the order
//!   rotated each round), a watchdog fed by the child's heartbeats, process groups killed
//!   on a stall or Ctrl-C ([`runner::signal`]), the untimed passes after the rounds (heap
//!   passes two at a time, each trace pass alone), one progress bar with an ETA.
//! * [`protocol`]: the one child protocol's typed lines (heartbeat, done, failed);
//!   [`entry`]: the hidden child entry (`lab __child <spec>`, `lab-heap <spec>`).
//! * [`results`]: the one versioned schema (`schema_version`), rows with one envelope,
//!   fork scores, intervals, modes and the ratios paired within rounds (rounds that ran in
//!   another phase of the machine set apart); [`stats`] holds the
//!   order statistics (a row's confidence interval, a ratio's repeat interval).
//! * [`report`]: terminal, Markdown and HTML (one stylesheet) from the same results;
//!   atomic writes after the terminal tables. [`compare`]: `lab compare`, `lab report`.
//! * [`experiments`]: one file per experiment and one registration line each.
//! * [`harness`], [`variants`], [`peers`], [`faults`]: the handoff loop inside a
//!   `disruptor-vs-lbq` child, the by-name `match` (enum dispatch), the reference peers as
//!   `Handoff` adapters, and planted faults for the lab's own tests.
//! * [`inrun`]: `--trace in-run`, the flight recorder in the timed forks of traced twins,
//!   the outlier forks' dumps kept (the run folder reaches children as `LAB_RUN_DIR`).
//!
//! The runner and the results know no experiment by name; an experiment never reaches
//! back into the CLI; there is one child protocol and one results schema.
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
pub mod envinfo;
pub mod error;
pub mod experiment;
pub mod experiments;
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
