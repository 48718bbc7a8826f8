//! The calling process, its threads and the machine, as the kernel reports them: thread
//! ids, the monotonic clock, `perf_event_paranoid`, whether there is a CPU PMU.

use std::io;

/// The calling thread's kernel thread id.
pub fn gettid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    (unsafe { libc::gettid() }) as u32
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the clock of `std::time::Instant` on Linux, and
/// of the events `sched-recorder` records (it opens them with `use_clockid`).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `/proc/sys/kernel/perf_event_paranoid`, when readable.
pub fn perf_event_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok()?.trim().parse().ok()
}

/// Whether `/sys/bus/event_source/devices` lists a CPU PMU (`cpu`, or `cpu_core` /
/// `cpu_atom` on hybrid Intel parts, or an `armv8_*` PMU).
pub fn has_hardware_pmu() -> bool {
    let Ok(dir) = std::fs::read_dir("/sys/bus/event_source/devices") else {
        return false;
    };
    dir.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name == "cpu" || name.starts_with("cpu_") || name.starts_with("armv")
    })
}

/// The thread ids of `pid` (`/proc/<pid>/task`).
pub fn threads_of(pid: u32) -> io::Result<Vec<u32>> {
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}
