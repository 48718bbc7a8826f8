//! Measuring handoffs inside a child: the harness's measured loop, the variants by name,
//! the reference peers, the JVM originals and planted faults.
//!
//! * [`harness`]: P producers and one consumer, a self-check of every run, CPU time, counters
//!   and latency of sampled messages; the cell spec and outcome of `disruptor-vs-lbq`.
//! * [`variants`]: the by-name `match` (enum dispatch) into the generic harness.
//! * [`peers`]: crossbeam-channel, std's `sync_channel` and the disruptor crate as
//!   `Handoff` adapters.
//! * [`jvm`]: the JVM originals (`tools/jvm/bus/src/main/java/Bus.java`) run as children of a fork.
//! * [`calibration`]: each row's competitor through its own API in a plain loop, the calibration
//!   cells run beside the lab's.
//! * [`own_loops`]: our own variants through their crates' own APIs in plain loops, the
//!   calibration cells of our rows.
//! * [`plain`]: the producers, check and result that every own loop shares.
//! * [`faults`]: planted faults for the lab's own tests (`LAB_FAULTS=1`).

pub mod calibration;
pub mod faults;
pub mod harness;
pub mod jvm;
pub mod jvm_build;
pub mod jvm_probes;
pub mod jvm_program;
pub mod own_loops;
pub mod peers;
pub mod plain;
pub mod rx;
pub mod variants;
