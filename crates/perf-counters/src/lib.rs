//! Hardware and software counters, and scheduler events, for the lab's cells: what
//! `perf stat -e …` and `perf record -e sched:sched_switch,sched:sched_wakeup,sched:sched_waking`
//! give, read from inside the process through `perf_event_open(2)`, so a run can put
//! "context switches per message" and "how long the consumer slept, and who woke it"
//! beside its throughput — and say plainly why a value is missing instead of printing a
//! zero.
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
//! * **Scheduler events** ([`SchedRecorder`]): the `sched_switch`, `sched_wakeup` and
//!   `sched_waking` tracepoints, opened CPU-wide on every online CPU (a thread's switch-*in*
//!   is emitted in the context of the thread it replaces, so per-task events never see it),
//!   with `PERF_SAMPLE_TID | TIME | CPU | RAW` and `use_clockid = CLOCK_MONOTONIC`, so
//!   timestamps are on `Instant`'s clock ([`monotonic_ns`]). One mmap ring per CPU (the
//!   wake-up fds write into the switch fd's ring via `PERF_EVENT_IOC_SET_OUTPUT`), drained
//!   by a thread every 20 ms or when a ring is half full; `PERF_RECORD_LOST` counts are
//!   summed in [`SchedRecording::lost`] (and `PERF_RECORD_THROTTLE`s in `throttled`).
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
//! * **Forcing the unavailable path**: `PERF_COUNTERS_DISABLE=1`, or
//!   [`CountersBuilder::force_unavailable`] / [`SchedOptions::force_unavailable`].
//!
//! # Guarantees
//! Opening counters never fails as a whole; reading allocates one small map. The
//! recorder's drain thread is the only one that touches the rings; it is stopped and
//! joined by [`SchedRecorder::stop`] or on drop. Linux only.
//!
//! # Sources
//! `perf_event_open(2)`; `include/uapi/linux/perf_event.h` (attribute layout, the
//! `perf_event_mmap_page` head/tail protocol); `tools/lib/api/fs/tracing_path.c` (perf's
//! tracefs look-up and mount); the `sched_switch` `print fmt` for the state letters;
//! JMH's `LinuxPerfNormProfiler` for per-operation normalisation.

mod counters;
mod offcpu;
mod sched;
mod sys;
pub mod tracefs;

pub use counters::{
    delta, ipc, per_message, Counters, CountersBuilder, EventStatus, Scope, DISABLE_ENV, EVENTS,
};
pub use offcpu::{off_cpu_intervals, OffCpu};
pub use sched::{
    parse_sample, state_letters, Layouts, SampleHeader, SchedEvent, SchedKind, SchedOptions,
    SchedRecorder, SchedRecording, SchedUnavailable, Switch, Target, Wakeup,
};
pub use sys::{gettid, has_hardware_pmu, monotonic_ns, perf_event_paranoid, threads_of};
