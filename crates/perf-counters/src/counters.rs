//! Counting events: one fd per event (and per thread for a process), no groups, so one
//! event that can't be opened leaves the others counting.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io;

use crate::{host, sys};

/// The events every [`Counters`] opens, named as `perf list` names them.
pub const EVENTS: [&str; 9] = [
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branch-misses",
];

/// The environment variable that, set to `1`, makes every [`Counters`] take the unavailable
/// path (and `sched-recorder`'s recorder too, which reads it through [`disabled_by_env`]).
pub const DISABLE_ENV: &str = "PERF_COUNTERS_DISABLE";

/// `(type, config, is hardware)` of a named event.
fn event_code(name: &str) -> (u32, u64, bool) {
    use sys::*;
    match name {
        "task-clock" => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false),
        "context-switches" => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false),
        "cpu-migrations" => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false),
        "page-faults" => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false),
        "cycles" => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
        "instructions" => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true),
        "cache-references" => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true),
        "cache-misses" => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true),
        "branch-misses" => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true),
        other => unreachable!("unknown event {other}"),
    }
}

/// Whether [`DISABLE_ENV`] is set to `1`.
pub fn disabled_by_env() -> bool {
    std::env::var(DISABLE_ENV).is_ok_and(|v| v == "1")
}

/// What a [`Counters`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One thread (a kernel tid), nothing it spawns.
    Thread(u32),
    /// Every thread of a process alive when the counters are opened, each with `inherit`,
    /// so threads they spawn later are counted too; the values are the sum.
    Process(u32),
}

/// How one event fared when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventStatus {
    /// Counting kernel and user time.
    Counting,
    /// Counting user time only: the kernel refused `exclude_kernel = 0`
    /// (`perf_event_paranoid` ≥ 2 without root or CAP_PERFMON).
    UserOnly,
    /// Not opened; the reason.
    Unavailable(String),
}

/// Builds [`Counters`]; `force_unavailable` takes the path of a machine where nothing
/// opens (it is also taken when `PERF_COUNTERS_DISABLE=1`).
#[derive(Debug, Clone, Default)]
pub struct CountersBuilder {
    force_unavailable: bool,
}

impl CountersBuilder {
    pub fn new() -> Self {
        CountersBuilder { force_unavailable: disabled_by_env() }
    }

    /// Opens nothing: every value reads `None` and the note says it was forced.
    pub fn force_unavailable(mut self, yes: bool) -> Self {
        self.force_unavailable = yes;
        self
    }

    pub fn thread(&self, tid: u32) -> Counters {
        self.open(Scope::Thread(tid))
    }

    pub fn current_thread(&self) -> Counters {
        self.open(Scope::Thread(host::gettid()))
    }

    /// The calling process (see [`Scope::Process`]).
    pub fn process(&self) -> Counters {
        self.open(Scope::Process(std::process::id()))
    }

    pub fn open(&self, scope: Scope) -> Counters {
        if self.force_unavailable {
            let why = format!(
                "forced unavailable ({DISABLE_ENV}=1 or CountersBuilder::force_unavailable)"
            );
            return Counters {
                scope,
                events: EVENTS
                    .iter()
                    .map(|name| Slot {
                        name,
                        files: Vec::new(),
                        status: EventStatus::Unavailable(why.clone()),
                    })
                    .collect(),
                note: Some(why),
            };
        }
        let (tids, inherit) = match scope {
            Scope::Thread(tid) => (Ok(vec![tid]), false),
            Scope::Process(pid) => (host::threads_of(pid), true),
        };
        let mut failures: Vec<(&'static str, bool, io::Error)> = Vec::new();
        let events = EVENTS
            .iter()
            .map(|name| {
                let (slot, failure) = match &tids {
                    Ok(tids) => open_event(name, tids, inherit),
                    Err(e) => {
                        let err = io::Error::new(e.kind(), format!("listing threads: {e}"));
                        let slot = Slot {
                            name,
                            files: Vec::new(),
                            status: EventStatus::Unavailable(err.to_string()),
                        };
                        (slot, Some(err))
                    }
                };
                if let Some(err) = failure {
                    failures.push((name, event_code(name).2, err));
                }
                slot
            })
            .collect();
        Counters { scope, events, note: explain(&failures, host::has_hardware_pmu()) }
    }
}

/// Opens one event on every tid; the first failure makes the event unavailable.
fn open_event(name: &'static str, tids: &[u32], inherit: bool) -> (Slot, Option<io::Error>) {
    let (type_, config, _) = event_code(name);
    let mut attr = sys::PerfEventAttr::new(type_, config);
    attr.read_format = sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr.flags = sys::ATTR_DISABLED | if inherit { sys::ATTR_INHERIT } else { 0 };
    let mut files = Vec::with_capacity(tids.len());
    let mut user_only = false;
    for &tid in tids {
        let mut result = sys::perf_event_open(&attr, tid as i32, -1);
        if !user_only && matches!(&result, Err(e) if is_permission(e)) {
            // perf's own fallback: count user space only.
            attr.flags |= sys::ATTR_EXCLUDE_KERNEL | sys::ATTR_EXCLUDE_HV;
            user_only = true;
            result = sys::perf_event_open(&attr, tid as i32, -1);
        }
        match result {
            Ok(fd) => files.push(File::from(fd)),
            // A thread that exited since the listing is not a failure of the event.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) && tids.len() > 1 => {}
            Err(e) => {
                let slot = Slot {
                    name,
                    files: Vec::new(),
                    status: EventStatus::Unavailable(e.to_string()),
                };
                return (slot, Some(e));
            }
        }
    }
    let status = if user_only { EventStatus::UserOnly } else { EventStatus::Counting };
    (Slot { name, files, status }, None)
}

fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

/// The one-line reason behind the `None`s (`None` when everything opened).
fn explain(failures: &[(&str, bool, io::Error)], has_pmu: bool) -> Option<String> {
    if failures.is_empty() {
        return None;
    }
    let mut reasons: Vec<String> = Vec::new();
    let hardware: Vec<&str> = failures.iter().filter(|f| f.1).map(|f| f.0).collect();
    let mut rest: Vec<&(&str, bool, io::Error)> = failures.iter().collect();
    if !hardware.is_empty() && !has_pmu {
        reasons.push(
            "no hardware PMU in this VM: /sys/bus/event_source/devices has no cpu".to_string(),
        );
        rest.retain(|f| !f.1);
    }
    let denied: Vec<&str> = rest.iter().filter(|f| is_permission(&f.2)).map(|f| f.0).collect();
    if !denied.is_empty() {
        let paranoid = host::perf_event_paranoid()
            .map(|p| p.to_string())
            .unwrap_or_else(|| "unknown".to_string());
        let who = if sys::euid() == 0 { "even as root" } else { "and not root" };
        reasons.push(format!(
            "not permitted: perf_event_paranoid {paranoid} {who} ({})",
            denied.join(", ")
        ));
        rest.retain(|f| !is_permission(&f.2));
    }
    for (name, _, err) in rest {
        reasons.push(format!("{name}: {err}"));
    }
    Some(reasons.join("; "))
}

struct Slot {
    name: &'static str,
    /// One per thread counted; empty when unavailable.
    files: Vec<File>,
    status: EventStatus,
}

/// The [`EVENTS`] of one thread or one process. Opened disabled: call [`Counters::enable`].
pub struct Counters {
    scope: Scope,
    events: Vec<Slot>,
    note: Option<String>,
}

impl fmt::Debug for Counters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counters")
            .field("scope", &self.scope)
            .field("availability", &self.availability())
            .field("note", &self.note)
            .finish()
    }
}

impl Counters {
    pub fn builder() -> CountersBuilder {
        CountersBuilder::new()
    }

    /// One thread, by kernel tid (see [`crate::gettid`]).
    pub fn for_thread(tid: u32) -> Counters {
        CountersBuilder::new().thread(tid)
    }

    pub fn for_current_thread() -> Counters {
        CountersBuilder::new().current_thread()
    }

    /// This process: the threads alive now, each with `inherit` ([`Scope::Process`]).
    pub fn for_process() -> Counters {
        CountersBuilder::new().process()
    }

    pub fn scope(&self) -> Scope {
        self.scope
    }

    fn each_file(&self, op: fn(&File) -> io::Result<()>) -> io::Result<()> {
        let mut first_err = None;
        for file in self.events.iter().flat_map(|s| &s.files) {
            if let Err(e) = op(file) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    pub fn enable(&self) -> io::Result<()> {
        self.each_file(sys::enable)
    }

    pub fn disable(&self) -> io::Result<()> {
        self.each_file(sys::disable)
    }

    /// Zeroes the counts (not the enabled/running times).
    pub fn reset(&self) -> io::Result<()> {
        self.each_file(sys::reset)
    }

    /// Every event of [`EVENTS`]: its count (task-clock in nanoseconds), scaled by
    /// enabled/running time if the kernel multiplexed it, summed over threads; `None`
    /// where the event could not be opened (or read).
    pub fn read(&self) -> BTreeMap<String, Option<f64>> {
        self.events
            .iter()
            .map(|slot| {
                let value = if slot.files.is_empty() {
                    None
                } else {
                    slot.files
                        .iter()
                        .map(|f| sys::read_u64s::<3>(f).map(scaled))
                        .sum::<io::Result<f64>>()
                        .ok()
                };
                (slot.name.to_string(), value)
            })
            .collect()
    }

    /// Why values are `None`, in one line; `None` when every event opened.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// How each event fared when opened.
    pub fn availability(&self) -> BTreeMap<String, EventStatus> {
        self.events.iter().map(|s| (s.name.to_string(), s.status.clone())).collect()
    }
}

/// `[value, time_enabled, time_running]` → the value extrapolated to the enabled time.
fn scaled([value, enabled, running]: [u64; 3]) -> f64 {
    if running == 0 || running >= enabled {
        value as f64
    } else {
        value as f64 * enabled as f64 / running as f64
    }
}

/// `after - before`, event by event (`None` where either is).
pub fn delta(
    after: &BTreeMap<String, Option<f64>>,
    before: &BTreeMap<String, Option<f64>>,
) -> BTreeMap<String, Option<f64>> {
    after
        .iter()
        .map(|(k, a)| {
            let b = before.get(k).copied().flatten();
            (k.clone(), a.zip(b).map(|(a, b)| a - b))
        })
        .collect()
}

/// Every value divided by `messages`, as JMH's `perfnorm` profiler reports them (per
/// operation); `None` everywhere when `messages` is 0.
pub fn per_message(
    values: &BTreeMap<String, Option<f64>>,
    messages: u64,
) -> BTreeMap<String, Option<f64>> {
    values
        .iter()
        .map(|(k, v)| {
            let v = v.filter(|_| messages > 0).map(|v| v / messages as f64);
            (k.clone(), v)
        })
        .collect()
}

/// Instructions per cycle, where both were counted and cycles is non-zero.
pub fn ipc(values: &BTreeMap<String, Option<f64>>) -> Option<f64> {
    let cycles = values.get("cycles").copied().flatten()?;
    let instructions = values.get("instructions").copied().flatten()?;
    (cycles > 0.0).then(|| instructions / cycles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Option<f64>)]) -> BTreeMap<String, Option<f64>> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn ipc_needs_both() {
        assert_eq!(ipc(&map(&[("cycles", Some(200.0)), ("instructions", Some(300.0))])), Some(1.5));
        assert_eq!(ipc(&map(&[("cycles", None), ("instructions", Some(300.0))])), None);
        assert_eq!(ipc(&map(&[("cycles", Some(0.0)), ("instructions", Some(3.0))])), None);
        assert_eq!(ipc(&map(&[("instructions", Some(3.0))])), None);
    }

    #[test]
    fn per_message_divides_and_keeps_nones() {
        let m = map(&[("task-clock", Some(1000.0)), ("cycles", None)]);
        let n = per_message(&m, 4);
        assert_eq!(n["task-clock"], Some(250.0));
        assert_eq!(n["cycles"], None);
        assert_eq!(per_message(&m, 0)["task-clock"], None);
    }

    #[test]
    fn delta_subtracts() {
        let a = map(&[("x", Some(10.0)), ("y", None), ("z", Some(1.0))]);
        let b = map(&[("x", Some(4.0)), ("y", Some(1.0))]);
        let d = delta(&a, &b);
        assert_eq!(d["x"], Some(6.0));
        assert_eq!(d["y"], None);
        assert_eq!(d["z"], None);
    }

    #[test]
    fn scaling_extrapolates_multiplexed_counts() {
        assert_eq!(scaled([100, 10, 10]), 100.0);
        assert_eq!(scaled([100, 20, 10]), 200.0);
        assert_eq!(scaled([0, 20, 0]), 0.0);
    }

    #[test]
    fn notes_name_the_cause() {
        let enoent = || io::Error::from_raw_os_error(libc::ENOENT);
        let hw = vec![("cycles", true, enoent()), ("instructions", true, enoent())];
        assert_eq!(
            explain(&hw, false).unwrap(),
            "no hardware PMU in this VM: /sys/bus/event_source/devices has no cpu"
        );
        let with_pmu = explain(&hw, true).unwrap();
        assert!(with_pmu.starts_with("cycles: "), "{with_pmu}");
        let denied = vec![("cycles", true, io::Error::from_raw_os_error(libc::EACCES))];
        let note = explain(&denied, true).unwrap();
        assert!(note.starts_with("not permitted: perf_event_paranoid "), "{note}");
        assert_eq!(explain(&[], false), None);
    }
}
