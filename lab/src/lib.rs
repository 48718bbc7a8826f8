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
//! # Design
//! * [`cli`]: the parent. It plans the matrix (variant × producers), runs each cell in a
//!   child process of the same binary (`lab __cell <json>`, one JSON line back) under a
//!   watchdog, then a heap child per cell (the `lab-heap` binary, whose global allocator is
//!   `dhat::Alloc`, never used for timing) and a trace child per cell, and writes
//!   `results.json`, `report.md`, `report.html` (inline SVG charts).
//! * [`harness`]: the loop inside a child, generic over `H: Handoff` and the payload size;
//!   [`variants::dispatch`] is the one by-name `match` (enum dispatch).
//! * [`peers`]: crossbeam-channel, std's `sync_channel` and the `disruptor` crate as
//!   `Handoff` adapters, so one harness drives every variant and peer.
//! * [`faults`]: planted faults for the lab's own tests (lost messages, a hang, a crash).
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
//! tables), libc (getrusage per thread, signals), dhat (heap profiles).

pub mod cli;
pub mod dhatfile;
pub mod envinfo;
pub mod experiments;
pub mod faults;
pub mod harness;
pub mod parse;
pub mod peers;
pub mod report;
pub mod results;
pub mod stats;
pub mod tracehook;
pub mod variants;
pub mod view;
