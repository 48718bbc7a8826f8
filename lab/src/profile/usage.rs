//! CPU time and context switches, per thread and for the process, from `getrusage`: what
//! every run reports per thread (`RUSAGE_THREAD` at the thread's end) and the process's
//! page faults and CPU time around a run.

use serde::{Deserialize, Serialize};

/// CPU time and context switches of one thread over its life.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadUsage {
    /// `producer-i` or `consumer`.
    pub name: String,
    /// User + system CPU time, ms.
    pub cpu_ms: f64,
    /// User CPU time, ms.
    pub user_ms: f64,
    /// System CPU time, ms.
    pub sys_ms: f64,
    /// Voluntary context switches (blocking).
    pub voluntary_cs: u64,
    /// Involuntary context switches (preemption).
    pub involuntary_cs: u64,
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct of integers.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable `rusage`; `who` is RUSAGE_SELF or RUSAGE_THREAD,
    // both supported by Linux. On failure `ru` stays zeroed, which reads as "no usage".
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

fn tv_ms(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 * 1e3 + tv.tv_usec as f64 / 1e3
}

/// This thread's usage so far (call at the thread's end).
pub fn thread_usage(name: &str) -> ThreadUsage {
    let ru = rusage(libc::RUSAGE_THREAD);
    ThreadUsage {
        name: name.to_string(),
        user_ms: tv_ms(ru.ru_utime),
        sys_ms: tv_ms(ru.ru_stime),
        cpu_ms: tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime),
        voluntary_cs: ru.ru_nvcsw as u64,
        involuntary_cs: ru.ru_nivcsw as u64,
    }
}

/// Minor and major page faults of the process so far.
pub fn page_faults() -> u64 {
    let ru = rusage(libc::RUSAGE_SELF);
    (ru.ru_minflt + ru.ru_majflt) as u64
}

/// User + system CPU time of the process so far, ms.
pub fn process_cpu_ms() -> f64 {
    let ru = rusage(libc::RUSAGE_SELF);
    tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime)
}
