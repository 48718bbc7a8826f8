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
//! Every experiment goes through the same stages, in this order, each in one place:
//! parse ([`cli`]) → plan and run ([`pipeline`], [`runner`], a child in [`measure`] and
//! [`profile`]) → assemble rows and pair them ([`analysis`]) → the experiment's `analyse`
//! ([`experiments`]) → emit ([`report`]).
//!
//! # Layers
//! A module imports only modules of lower layers (`scripts/import-circles.py` reads this
//! list and checks every import against it in CI, and finds circles inside every folder):
//!
//! 1. [`error`], [`units`], [`machine`], [`protocol`]: the one error type (its kind carries the exit code: 2 bad input, 1 failed, 130 interrupted); sizes and figures; the machine's record, CPUs and placement; the one child protocol.
//! 2. [`stats`]: numbers only: summaries, order-statistic intervals ([`stats::Interval`]), percentiles, bimodality.
//! 3. [`results`]: the one versioned results.json schema: rows with their typed roles, keys and details, ratios, tables.
//! 4. [`profile`]: what a run leaves besides its time: CPU usage, perf counters, the kernel's scheduling, traces, dhat files.
//! 5. [`measure`]: inside a child: the handoff harness, the variants by name, the peers, the JVM originals, faults.
//! 6. [`experiment`]: the [`experiment::Experiment`] trait (its cell, outcome, key and detail types), its shared options and what a run hands back to it.
//! 7. [`analysis`]: between measuring and reporting: rows paired into ratios, the verdict, the Why engine, charts, the failure table.
//! 8. [`report`]: the terminal, Markdown and HTML reports from the same results, and links to a run's files.
//! 9. [`runner`]: forks in interleaved rounds, the watchdog, process groups, Ctrl-C, the machine probes, the untimed passes.
//! 10. [`pipeline`]: the one flow parse → plan → run → assemble → analyse → emit, and experiments behind their names.
//! 11. [`experiments`]: one folder or file per experiment, registered by one line each.
//! 12. [`compare`]: `lab compare A B` and `lab report DIR` over any experiment's results, read strictly.
//! 13. [`view`]: `lab view`, serving a run folder to Perfetto's UI.
//! 14. [`cli`]: the clap tree (`lab <experiment>`, list, env, compare, report, view) and the hidden child entry.
//!
//! The generic stages (pipeline, runner, stats, results, analysis, report) know no
//! experiment by name or by feature; no profiler imports the harness; the schema imports no
//! writer; an experiment never reaches back into the CLI; there is one child protocol and
//! one results schema.
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

pub mod analysis;
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
