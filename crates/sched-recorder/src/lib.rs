//! Scheduler events for the lab's cells: what
//! `perf record -e sched:sched_switch,sched:sched_wakeup,sched:sched_waking` gives, read
//! from inside the process through `perf_event_open(2)`, so a run can say "how long the
//! consumer slept, and who woke it" beside its throughput — and say plainly why it cannot
//! when recording is impossible. Counting events (context switches, cycles) is the
//! `perf-counters` crate, whose syscall layer ([`perf_counters::sys`]) this crate opens its
//! events through.
//!
//! # Design
//! * **Scheduler events** ([`SchedRecorder`]): the `sched_switch`, `sched_wakeup` and
//!   `sched_waking` tracepoints, opened CPU-wide on every online CPU (a thread's switch-*in*
//!   is emitted in the context of the thread it replaces, so per-task events never see it),
//!   with `PERF_SAMPLE_TID | TIME | CPU | RAW` and `use_clockid = CLOCK_MONOTONIC`, so
//!   timestamps are on `Instant`'s clock ([`perf_counters::monotonic_ns`]). One mmap ring
//!   per CPU (the wake-up fds write into the switch fd's ring via
//!   `PERF_EVENT_IOC_SET_OUTPUT`), drained by a thread every 20 ms or when a ring is half
//!   full; `PERF_RECORD_LOST` counts are summed in [`SchedRecording::lost`] (and
//!   `PERF_RECORD_THROTTLE`s in `throttled`).
//!   For a process or a list of threads, each thread also gets a per-CPU dummy event
//!   with `context_switch = 1` (inherited by the threads it spawns) writing into the same
//!   rings: its `PERF_RECORD_SWITCH` switch-ins ([`SchedKind::SwitchIn`]) are emitted in
//!   the incoming thread's own context, whereas `sched_switch` with `next_pid == tid`
//!   is emitted in the outgoing one's, often the idle task — and on this lab's VM
//!   (Firecracker, 2 vCPUs) CPU 1's idle task emits no tracepoint samples at all (`perf
//!   record -a` shows the same), so without them a thread sleeping on CPU 1 never came
//!   back. The waker of a wake-up is the sampled tid of `sched_waking`
//!   ([`SchedKind::Waking`]), which `try_to_wake_up` emits in the waker's own context;
//!   `sched_wakeup` is emitted where the wake-up completes, often the sleeper's idle CPU,
//!   and then names the idle task (or is missing, on CPU 1 here), so it is only the
//!   fallback: where `sched_waking` cannot be opened the recorder goes on with the other
//!   two and [`SchedRecording::note`] says so. A wake-up from an interrupt (a timer) names
//!   whoever the interrupt landed on (the idle task: `woken_by: Some(0)`), and one from
//!   CPU 1's idle context has no record at all (`woken_by: None`). Everything is recorded
//!   on every CPU and filtered in the drain thread ([`Target`]), so a busy machine costs
//!   ring space. Raw records are decoded with the field offsets of tracefs's `format`
//!   files, not hard-coded ones; [`tracefs`] documents how the ids are
//!   found when tracefs is not mounted (this VM: it mounts tracefs privately for the
//!   look-up and unmounts it, where perf mounts it at /sys/kernel/tracing and leaves it).
//!   Where recording is impossible, [`SchedRecorder::start`] returns a one-line
//!   [`SchedUnavailable`] for the caller to record as a note.
//! * **Off-CPU intervals** ([`off_cpu_intervals`]): a pure function from events and tids
//!   to `(tid, start, end, state, woken_by, woken_at)`: out at the switch-out, back at the
//!   switch-in, the waker being that of the last `sched_waking` since the thread's previous
//!   switch-in (it can come just before the switch-out: the waker got there while the
//!   sleeper was still switching out), else of the last `sched_wakeup` inside.
//! * **Forcing the unavailable path**: `PERF_COUNTERS_DISABLE=1` (the switch shared with
//!   `perf-counters`, [`perf_counters::DISABLE_ENV`]), or
//!   [`SchedOptions::force_unavailable`].
//!
//! # Guarantees
//! The recorder's drain thread is the only one that touches the rings; it is stopped and
//! joined by [`SchedRecorder::stop`] or on drop. Linux only.
//!
//! # Sources
//! `perf_event_open(2)`; the kernel tree's `include/uapi/linux/perf_event.h` (attribute
//! layout, the `perf_event_mmap_page` head/tail protocol) and
//! `linux/tools/lib/api/fs/tracing_path.c` (perf's tracefs look-up and mount); the
//! `sched_switch` `print fmt` for the state letters.

mod offcpu;
mod sched;
pub mod tracefs;

pub use offcpu::{off_cpu_intervals, OffCpu};
pub use sched::{
    parse_sample, state_letters, Layouts, SampleHeader, SchedEvent, SchedKind, SchedOptions,
    SchedRecorder, SchedRecording, SchedUnavailable, Switch, Target, Wakeup,
};
