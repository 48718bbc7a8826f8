//! Where a run's threads run: one CPU each, or wherever the kernel puts them.
//!
//! On a machine with as many CPUs as a run has threads, the kernel sometimes leaves a
//! producer and the consumer on one CPU for part or all of a run (it wakes a sleeper on
//! the waker's CPU, and a short run ends before the load balancer moves it). Such a run
//! measures another handoff: nothing crosses between caches, every wake-up is a switch on
//! the same CPU. On this lab's 2-core VMs that made the ring's P=1 cell bimodal, run by
//! run, and moved the locked queue the other way (docs/placement.md has the runs). `auto`
//! pins each thread of a run to its own CPU when they fit, so that every run of a cell
//! measures the same thing; with more threads than CPUs (an oversubscribed cell) it leaves
//! placement to the kernel, whose time-slicing is then part of what is measured. `kernel`
//! never pins (to see the modes), `spread` always pins round-robin.
//!
//! Thread `0` of a run is the consumer and thread `i + 1` is producer `i`; the JVM rows
//! get the same CPUs in the same order (`Bus --pin`).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// The placement policy of a cell's runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// One CPU per thread where the run's threads fit the CPUs; the kernel's choice beyond.
    #[default]
    Auto,
    /// One CPU per thread, round-robin over the CPUs, however many threads.
    Spread,
    /// No pinning: the kernel places and moves the threads.
    Kernel,
}

impl Placement {
    /// The option's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Auto => "auto",
            Placement::Spread => "spread",
            Placement::Kernel => "kernel",
        }
    }
}

/// The CPUs the calling thread may run on (its affinity: a thread left pinned sees only its
/// one CPU, and so do the threads it spawns), in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    let set = affinity()?;
    // SAFETY: `set` was filled by the kernel; CPU_ISSET reads it within its size.
    let cpus: Vec<usize> =
        (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
    if cpus.is_empty() {
        return Err("sched_getaffinity returned no CPU".to_string());
    }
    Ok(cpus)
}

/// The calling thread's CPU set.
fn affinity() -> Result<libc::cpu_set_t, String> {
    // SAFETY: `cpu_set_t` is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable `cpu_set_t` of the size passed; pid 0 is this
    // thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(format!("sched_getaffinity: {}", std::io::Error::last_os_error()));
    }
    Ok(set)
}

/// The CPU of each of `threads` threads (consumer first), or `None` for the kernel's
/// choice.
pub fn plan(policy: Placement, threads: usize) -> Result<Option<Vec<usize>>, String> {
    let cpus = allowed_cpus()?;
    let pin = match policy {
        Placement::Kernel => false,
        Placement::Spread => true,
        Placement::Auto => threads <= cpus.len(),
    };
    Ok(pin.then(|| (0..threads).map(|t| cpus[t % cpus.len()]).collect()))
}

/// Pins the calling thread to `cpu`.
pub fn pin_current(cpu: usize) -> Result<(), String> {
    // SAFETY: as in `allowed_cpus`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu < CPU_SETSIZE` (it came from `allowed_cpus`); `set` is valid.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(format!("pinning a thread to CPU {cpu}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The calling thread pinned by [`pin_scoped`]; dropping it gives the thread back the CPUs
/// it was allowed before.
pub struct Pinned {
    before: libc::cpu_set_t,
}

/// Pins the calling thread to `cpu` until the returned guard drops. For a run's thread
/// that outlives the run (a child's main thread taking the consumer's part): left pinned,
/// it would hand its one CPU to every thread it spawns later, and the next run's plan
/// would see one CPU only (the next run's threads then shared it, unpinned).
pub fn pin_scoped(cpu: usize) -> Result<Pinned, String> {
    let before = affinity()?;
    pin_current(cpu)?;
    Ok(Pinned { before })
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pinned").finish_non_exhaustive()
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: `before` is the valid set this thread had; pid 0 is this thread (the
        // guard is not `Send`: `cpu_set_t` is plain data, but the guard is only made and
        // dropped by the thread it pinned, in `pin_scoped`'s caller's scope).
        let _ = unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.before)
        };
    }
}

/// How a row's runs were placed, for its table note: `one CPU each (0, 1)` or the
/// kernel's.
pub fn describe(cpus: Option<&[usize]>) -> String {
    match cpus {
        Some(c) => {
            let list: Vec<String> = c.iter().map(|x| x.to_string()).collect();
            format!("pinned, consumer first: CPUs {}", list.join(", "))
        }
        None => "the kernel's".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scoped_pin_gives_the_thread_its_cpus_back() {
        // In a thread of its own, so the test runner's threads keep their CPUs whatever
        // happens here.
        std::thread::spawn(|| {
            let all = allowed_cpus().unwrap();
            {
                let _pinned = pin_scoped(all[0]).unwrap();
                assert_eq!(allowed_cpus().unwrap(), vec![all[0]]);
            }
            assert_eq!(allowed_cpus().unwrap(), all, "restored when the guard dropped");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn auto_pins_only_what_fits() {
        let n = allowed_cpus().unwrap().len();
        assert_eq!(plan(Placement::Auto, n).unwrap().map(|v| v.len()), Some(n));
        assert_eq!(plan(Placement::Auto, n + 1).unwrap(), None);
        assert_eq!(plan(Placement::Kernel, 1).unwrap(), None);
        let spread = plan(Placement::Spread, 2 * n + 1).unwrap().unwrap();
        assert_eq!(spread.len(), 2 * n + 1);
        assert_eq!(spread[0], spread[n], "round-robin");
    }

    #[test]
    fn a_pinned_thread_stays_on_its_cpu() {
        let cpu = *allowed_cpus().unwrap().last().unwrap();
        std::thread::spawn(move || {
            pin_current(cpu).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![cpu]);
            // SAFETY: no preconditions.
            assert_eq!(unsafe { libc::sched_getcpu() }, cpu as i32);
        })
        .join()
        .unwrap();
    }
}
