//! What a run leaves besides its time: counters, the kernel's scheduling, traces and heap
//! profiles. Profilers observe a run; none of them imports the harness that drives it.
//!
//! * [`usage`]: CPU time and context switches per thread (`getrusage`).
//! * [`counters`]: perf counters per measured run, per message (as JMH's `perfnorm`).
//! * [`sched`]: the kernel's scheduling in the trace pass, as off-CPU slices and wake-ups.
//! * [`ftrace`]: the same records as ftrace packets in the native Perfetto trace, and the
//!   clock line both traces put them on.
//! * [`twin`]: the native Perfetto trace (`.pftrace`) beside each Chrome JSON trace.
//! * [`trace`]: the flight recorder or tracing-chrome installed around a trace pass.
//! * [`inrun`]: the child half of `--trace in-run` (the recorder in a timed fork).
//! * [`dhat`]: reads dhat heap files for their top allocation sites.
//! * [`jfr`]: a JVM cell's trace pass: Java Flight Recorder's events as a Chrome trace, and
//!   its allocation samples as top sites.
//! * [`jvm_counters`]: perf counters on every thread of a JVM child.

pub mod counters;
pub mod dhat;
pub mod ftrace;
pub mod inrun;
pub mod jfr;
pub mod jvm_counters;
pub mod sched;
pub mod trace;
pub mod twin;
pub mod usage;
