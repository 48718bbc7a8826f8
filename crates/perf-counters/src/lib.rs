//! Hardware and software counters for the lab's cells: what `perf stat -e …` gives, read
//! from inside the process through `perf_event_open(2)`, so a run can put "context switches
//! per message" or "instructions per cycle" beside its throughput — and say plainly why a
//! value is missing instead of printing a zero. Recording the scheduler
//! (`sched_switch`/`sched_wakeup`/`sched_waking` into off-CPU intervals) is the
//! `sched-recorder` crate, built on this crate's syscall layer ([`sys`]).
//!
//! # Design
//! * **Counters** ([`Counters`]): a fixed list, [`EVENTS`], named as perf names them
//!   (task-clock, context-switches, cpu-migrations, page-faults, cycles, instructions,
//!   cache-references, cache-misses, branch-misses). Each event is its own fd, not a
//!   group, so an event that can't be opened (no PMU, not permitted) leaves the others
//!   counting; its value reads `None`, and [`Counters::note`] says why in one line
//!   ("no hardware PMU in this VM: /sys/bus/event_source/devices has no cpu", "not
//!   permitted: perf_event_paranoid N and not root", or the errno). When the kernel
//!   refuses kernel-mode counting, the event is reopened user-only, as perf does
//!   ([`EventStatus::UserOnly`]). Counts are scaled by enabled/running time if the kernel
//!   multiplexed them. Scope: one thread, or a **process as a per-thread sum**: every
//!   thread alive at open time gets its own fd with `inherit` set, so threads they spawn
//!   afterwards are counted too (`inherit` alone on the process would miss the threads that
//!   already exist). [`per_message`] divides by a message count as JMH's `perfnorm` does,
//!   [`ipc`] gives instructions per cycle where both exist, [`delta`] subtracts readings.
//! * **The process and the machine**: [`gettid`], [`threads_of`], [`monotonic_ns`] (the
//!   clock of `Instant`), [`perf_event_paranoid`], [`has_hardware_pmu`].
//! * **The syscall layer** ([`sys`]): the `perf_event_attr` struct, the constants, the
//!   `perf_event_open` and ioctl wrappers, the online CPUs. Public so that `sched-recorder`
//!   opens its tracepoints through the same code; the counting API above is this crate's
//!   face.
//! * **Forcing the unavailable path**: `PERF_COUNTERS_DISABLE=1` ([`DISABLE_ENV`], read by
//!   [`disabled_by_env`]; `sched-recorder` honours it too), or
//!   [`CountersBuilder::force_unavailable`].
//!
//! # Guarantees
//! Opening counters never fails as a whole; reading allocates one small map. Linux only.
//!
//! # Sources
//! `perf_event_open(2)`; `include/uapi/linux/perf_event.h` (attribute layout, ioctls);
//! perf's user-only fallback (`exclude_kernel` on `EACCES`); JMH's `LinuxPerfNormProfiler`
//! for per-operation normalisation.

mod counters;
mod host;
pub mod sys;

pub use counters::{
    delta, disabled_by_env, ipc, per_message, Counters, CountersBuilder, EventStatus, Scope,
    DISABLE_ENV, EVENTS,
};
pub use host::{gettid, has_hardware_pmu, monotonic_ns, perf_event_paranoid, threads_of};
