//! Recording `sched:sched_switch`, `sched:sched_wakeup` and `sched:sched_waking` on every
//! CPU through `perf_event_open` tracepoints and mmap ring buffers.
//!
//! Who woke a thread is the sampled tid of a wake-up tracepoint, so it matters in whose
//! context the kernel emits it. `try_to_wake_up` emits `sched_waking` first, always in the
//! context of the caller (the thread in `futex_wake`, or whatever an interrupt landed on).
//! `sched_wakeup` comes from `ttwu_do_wakeup`, which for a wake-up the kernel hands to the
//! target CPU's wake list (`ttwu_queue_wakelist`, e.g. when that CPU is idle or the sleeper
//! is still switching out there; an IPI does the rest) runs on the target CPU, usually in
//! its idle task (tid 0), which it then names instead of the waker. In the lab's locked
//! queue runs at P=1 that was most of the consumer's wake-ups. [`SchedKind::Waking`]
//! therefore names the real waker; [`SchedKind::Wakeup`] is kept for kernels without
//! `sched_waking` (before Linux 4.3) and for wake-ups whose `sched_waking` was lost.

use std::collections::HashSet;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::tracefs::{self, FieldFormat, TracepointFormat};
use perf_counters::sys;

/// One scheduler event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedEvent {
    /// `CLOCK_MONOTONIC` nanoseconds (the clock of `Instant` and [`perf_counters::monotonic_ns`]).
    pub time_ns: u64,
    /// The CPU that emitted it.
    pub cpu: u32,
    /// The process and thread running when it was emitted: for a switch the thread being
    /// switched out, for a wake-up the context it was emitted in (see [`Wakeup::waker`]).
    pub pid: u32,
    pub tid: u32,
    pub kind: SchedKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchedKind {
    Switch(Switch),
    /// `sched_wakeup`: emitted where the wake-up completes, which for a wake-up queued to
    /// an idle target CPU is that CPU's idle task (then `waker` is 0).
    Wakeup(Wakeup),
    /// `sched_waking`: emitted by `try_to_wake_up` in the waker's own context, before the
    /// wake-up is done or queued, so `waker` is the thread that woke `pid` (or, from an
    /// interrupt, whoever the interrupt landed on). Where the target was still switching
    /// out, it can come a little before that thread's `sched_switch`.
    Waking(Wakeup),
    /// The event's `tid` was switched in: a `PERF_RECORD_SWITCH` of a per-thread event
    /// (`context_switch = 1`), emitted in the incoming thread's own context. It backs up
    /// the `sched_switch` with `next_pid == tid`, which is emitted in the context of the
    /// thread being replaced, often the idle task, and on this lab's VM the idle task of
    /// CPU 1 emits no tracepoint samples at all (`perf record -a` shows the same).
    SwitchIn,
}

/// `sched_switch`: `prev` leaves the CPU, `next` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub prev_comm: String,
    pub prev_pid: u32,
    pub prev_prio: i32,
    /// As `perf script` prints it: `R` (still runnable: a yield, or preempted on its way
    /// back to user space), `R+` (preempted in the kernel), `S`, `D`, `T`, `t`, `X`, `Z`,
    /// `P`, `I`, or several joined by `|`.
    pub prev_state: String,
    pub next_comm: String,
    pub next_pid: u32,
    pub next_prio: i32,
}

/// `sched_wakeup` or `sched_waking` (the same fields): `pid` becomes runnable on
/// `target_cpu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wakeup {
    pub comm: String,
    pub pid: u32,
    pub prio: i32,
    pub target_cpu: u32,
    /// The sampled tid: the thread running where the tracepoint fired. For a wake-up from
    /// an interrupt (a timer) that is whoever the interrupt landed on (0 for idle), for
    /// either event. For [`SchedKind::Waking`] it is otherwise the thread that called for
    /// the wake-up; for [`SchedKind::Wakeup`] of a wake-up the kernel queued to the target
    /// CPU it is whoever ran there (the idle task, 0, for an idle CPU).
    pub waker: u32,
}

/// `prev_state` in letters, as the tracepoint's `print fmt` renders it on Linux ≥ 4.14:
/// the bits 0x01..0x80 are `S D T t X Z P I` (joined by `|`), none of them is `R`, and
/// `TASK_REPORT_MAX` (0x100) appends `+` (preempted while runnable).
pub fn state_letters(prev_state: i64) -> String {
    const LETTERS: [&str; 8] = ["S", "D", "T", "t", "X", "Z", "P", "I"];
    let state = prev_state as u64;
    let bits = state & 0xff;
    let mut out = if bits == 0 {
        "R".to_string()
    } else {
        LETTERS
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("|")
    };
    if state & 0x100 != 0 {
        out.push('+');
    }
    out
}

/// Field offsets of the tracepoints, resolved from their formats.
#[derive(Debug, Clone)]
pub struct Layouts {
    switch_id: u64,
    wakeup_id: u64,
    common_type: FieldFormat,
    switch: [FieldFormat; 7],
    wakeup: [FieldFormat; 4],
    /// `sched_waking`'s id and fields, where it is recorded.
    waking: Option<(u64, [FieldFormat; 4])>,
}

fn field(f: &TracepointFormat, name: &str) -> Result<FieldFormat, String> {
    f.fields.get(name).cloned().ok_or_else(|| format!("{} has no field {name}", f.name))
}

fn wakeup_fields(f: &TracepointFormat) -> Result<[FieldFormat; 4], String> {
    Ok([field(f, "comm")?, field(f, "pid")?, field(f, "prio")?, field(f, "target_cpu")?])
}

impl Layouts {
    /// The layouts of `sched_switch`, `sched_wakeup` and, where given, `sched_waking`.
    pub fn new(
        switch: &TracepointFormat,
        wakeup: &TracepointFormat,
        waking: Option<&TracepointFormat>,
    ) -> Result<Layouts, String> {
        let s = |n| field(switch, n);
        Ok(Layouts {
            switch_id: switch.id,
            wakeup_id: wakeup.id,
            common_type: s("common_type")?,
            switch: [
                s("prev_comm")?,
                s("prev_pid")?,
                s("prev_prio")?,
                s("prev_state")?,
                s("next_comm")?,
                s("next_pid")?,
                s("next_prio")?,
            ],
            wakeup: wakeup_fields(wakeup)?,
            waking: match waking {
                Some(f) => Some((f.id, wakeup_fields(f)?)),
                None => None,
            },
        })
    }

    /// Parses a tracepoint's raw record; `None` for another tracepoint or a short record.
    pub fn parse_raw(&self, raw: &[u8], waker: u32) -> Option<SchedKind> {
        let kind = int(raw, &self.common_type)? as u64;
        if kind == self.switch_id {
            let [pc, pp, ppr, ps, nc, np, npr] = &self.switch;
            Some(SchedKind::Switch(Switch {
                prev_comm: comm(raw, pc)?,
                prev_pid: int(raw, pp)? as u32,
                prev_prio: int(raw, ppr)? as i32,
                prev_state: state_letters(int(raw, ps)?),
                next_comm: comm(raw, nc)?,
                next_pid: int(raw, np)? as u32,
                next_prio: int(raw, npr)? as i32,
            }))
        } else if kind == self.wakeup_id {
            Some(SchedKind::Wakeup(parse_wakeup(raw, &self.wakeup, waker)?))
        } else {
            match &self.waking {
                Some((id, fields)) if kind == *id => {
                    Some(SchedKind::Waking(parse_wakeup(raw, fields, waker)?))
                }
                _ => None,
            }
        }
    }
}

fn parse_wakeup(raw: &[u8], fields: &[FieldFormat; 4], waker: u32) -> Option<Wakeup> {
    let [c, p, pr, t] = fields;
    Some(Wakeup {
        comm: comm(raw, c)?,
        pid: int(raw, p)? as u32,
        prio: int(raw, pr)? as i32,
        target_cpu: int(raw, t)? as u32,
        waker,
    })
}

fn int(raw: &[u8], f: &FieldFormat) -> Option<i64> {
    let b = raw.get(f.offset..f.offset.checked_add(f.size)?)?;
    Some(match (f.size, f.signed) {
        (1, true) => b[0] as i8 as i64,
        (1, false) => b[0] as i64,
        (2, true) => i16::from_ne_bytes(b.try_into().ok()?) as i64,
        (2, false) => u16::from_ne_bytes(b.try_into().ok()?) as i64,
        (4, true) => i32::from_ne_bytes(b.try_into().ok()?) as i64,
        (4, false) => u32::from_ne_bytes(b.try_into().ok()?) as i64,
        (8, _) => i64::from_ne_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

fn comm(raw: &[u8], f: &FieldFormat) -> Option<String> {
    let b = raw.get(f.offset..f.offset.checked_add(f.size)?)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Some(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// The fixed part of a `PERF_RECORD_SAMPLE` with `TID | TIME | CPU | RAW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleHeader<'a> {
    pub pid: u32,
    pub tid: u32,
    pub time_ns: u64,
    pub cpu: u32,
    pub raw: &'a [u8],
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parses a sample's body (the bytes after `perf_event_header`), laid out in
/// `sample_type` bit order: `{pid, tid}`, `time`, `{cpu, res}`, `{size, data[size]}`.
pub fn parse_sample(body: &[u8]) -> Option<SampleHeader<'_>> {
    let raw_size = u32_at(body, 24)? as usize;
    Some(SampleHeader {
        pid: u32_at(body, 0)?,
        tid: u32_at(body, 4)?,
        time_ns: u64_at(body, 8)?,
        cpu: u32_at(body, 16)?,
        raw: body.get(28..28 + raw_size)?,
    })
}

/// A `PERF_RECORD_SWITCH` (switch-in)'s `sample_id` trailer (`sample_id_all` with
/// `TID | TIME | CPU`: `{pid, tid}`, `time`, `{cpu, res}`) as a [`SchedKind::SwitchIn`].
fn parse_sample_id(body: &[u8]) -> Option<SchedEvent> {
    Some(SchedEvent {
        pid: u32_at(body, 0)?,
        tid: u32_at(body, 4)?,
        time_ns: u64_at(body, 8)?,
        cpu: u32_at(body, 16)?,
        kind: SchedKind::SwitchIn,
    })
}

/// What [`SchedRecorder::stop`] hands back.
#[derive(Debug, Clone, Default)]
pub struct SchedRecording {
    /// The target's events, in time order.
    pub events: Vec<SchedEvent>,
    /// Samples the kernel dropped because a ring was full (`PERF_RECORD_LOST`).
    pub lost: u64,
    /// Times the kernel throttled an event (`PERF_RECORD_THROTTLE`: too many samples per
    /// tick, `perf_event_max_sample_rate`); samples are missing while it is throttled.
    pub throttled: u64,
    /// Records that were neither a parsable sample nor a loss or throttle record.
    pub unparsed: u64,
    pub cpus: Vec<u32>,
    /// Whether `sched_waking` was recorded (else wakers come from `sched_wakeup` alone, and
    /// `note` says why).
    pub waking: bool,
    /// Anything that worked less well than designed (no `sched_waking`, no switch records
    /// for a thread), `; `-separated.
    pub note: Option<String>,
    /// How the tracepoint ids were found (see [`crate::tracefs`]).
    pub id_route: String,
}

/// Whose events to keep (every CPU is recorded; this filters what is kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Events that involve a thread of this process (as prev, next, woken or waker). The
    /// thread list is refreshed from `/proc/<pid>/task` every drain (~20 ms) and grows
    /// with every thread seen switching out; the recorder's own drain thread is left out.
    Process(u32),
    /// Events that involve one of these tids.
    Threads(Vec<u32>),
    /// Everything.
    All,
}

/// A one-line reason why recording is not possible here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedUnavailable(pub String);

impl fmt::Display for SchedUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchedUnavailable {}

/// Options of [`SchedRecorder::start_with`].
#[derive(Debug, Clone)]
pub struct SchedOptions {
    /// Data pages per CPU ring (a power of two). Default 128 (512 KiB with 4 KiB pages).
    pub pages_per_cpu: usize,
    /// Take the unavailable path (also taken when `PERF_COUNTERS_DISABLE=1`).
    pub force_unavailable: bool,
    /// Record `sched_waking` too (default). `false` records as on a kernel without it:
    /// wakers from `sched_wakeup` alone, and a note that says so.
    pub waking: bool,
}

impl Default for SchedOptions {
    fn default() -> Self {
        SchedOptions {
            pages_per_cpu: 128,
            force_unavailable: perf_counters::disabled_by_env(),
            waking: true,
        }
    }
}

/// A mapped perf ring buffer: one control page, then `2^n` data pages.
struct Ring {
    fd: OwnedFd,
    base: NonNull<u8>,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is owned by the Ring (unmapped in Drop) and is only touched through
// `&mut self` (drain), so moving it to the drain thread moves sole access with it.
unsafe impl Send for Ring {}

impl Ring {
    fn map(fd: OwnedFd, data_pages: usize) -> io::Result<Ring> {
        let page = sys::page_size();
        let map_len = page * (1 + data_pages);
        // SAFETY: a shared read-write mapping of a perf fd at offset 0 creates its ring;
        // no existing memory is affected (address chosen by the kernel).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(ptr.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Ring { fd, base, map_len, data_offset: page, data_size: page * data_pages })
    }

    /// `data_head` (offset 1024 of `perf_event_mmap_page`) and `data_tail` (1032).
    fn head_tail(&self) -> (&AtomicU64, &AtomicU64) {
        let head = self.base.as_ptr().wrapping_add(1024).cast::<AtomicU64>();
        let tail = self.base.as_ptr().wrapping_add(1032).cast::<AtomicU64>();
        // SAFETY: both lie inside the mapped control page (4 KiB or more), are 8-byte
        // aligned (page-aligned base + 1024/1032), and live as long as `self`; the kernel
        // accesses them atomically too.
        let head = unsafe { &*head };
        // SAFETY: as above.
        let tail = unsafe { &*tail };
        (head, tail)
    }

    /// Copies out what the kernel has written since the last call and releases it.
    fn take(&mut self, out: &mut Vec<u8>) {
        let (head, tail) = self.head_tail();
        let head_v = head.load(Ordering::Acquire);
        let tail_v = tail.load(Ordering::Relaxed);
        let len = head_v.wrapping_sub(tail_v) as usize;
        out.clear();
        if len == 0 {
            return;
        }
        debug_assert!(len <= self.data_size);
        let start = (tail_v as usize) % self.data_size;
        let first = len.min(self.data_size - start);
        let data = self.base.as_ptr().wrapping_add(self.data_offset);
        // SAFETY: [start, start + first) and [0, len - first) are inside the data area;
        // the kernel does not write the bytes between tail and head until tail moves past
        // them, which happens only after the copy (the Release store below).
        let head_part = unsafe { std::slice::from_raw_parts(data.wrapping_add(start), first) };
        out.extend_from_slice(head_part);
        // SAFETY: as above, the wrapped-around remainder at the start of the data area.
        let wrapped = unsafe { std::slice::from_raw_parts(data, len - first) };
        out.extend_from_slice(wrapped);
        tail.store(head_v, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`map_len` are exactly the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.map_len) };
    }
}

/// Which events to keep, applied in the drain thread.
struct Filter {
    target: Target,
    known: HashSet<u32>,
    exclude: u32,
}

impl Filter {
    fn refresh(&mut self) {
        if let Target::Process(pid) = self.target {
            if let Ok(tids) = perf_counters::threads_of(pid) {
                self.known.extend(tids);
            }
        }
    }

    fn keep(&mut self, ev: &SchedEvent) -> bool {
        let involved: [u32; 2] = match &ev.kind {
            SchedKind::Switch(s) => [s.prev_pid, s.next_pid],
            SchedKind::Wakeup(w) | SchedKind::Waking(w) => [w.pid, w.waker],
            SchedKind::SwitchIn => [ev.tid, ev.tid],
        };
        match &self.target {
            Target::All => true,
            Target::Threads(_) => involved.iter().any(|t| self.known.contains(t)),
            Target::Process(pid) => {
                if ev.pid == *pid && ev.tid != self.exclude && ev.tid != 0 {
                    self.known.insert(ev.tid);
                }
                involved.iter().any(|t| *t != self.exclude && *t != 0 && self.known.contains(t))
            }
        }
    }
}

#[derive(Default)]
struct Drained {
    events: Vec<SchedEvent>,
    lost: u64,
    throttled: u64,
    unparsed: u64,
}

/// Parses the records of one ring's bytes into `into`.
fn parse_records(bytes: &[u8], layouts: &Layouts, filter: &mut Filter, into: &mut Drained) {
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let type_ = u32_at(bytes, at).unwrap_or(0);
        let size = u16::from_ne_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
        if size < 8 || at + size > bytes.len() {
            into.unparsed += 1;
            break;
        }
        let body = &bytes[at + 8..at + size];
        match type_ {
            sys::PERF_RECORD_SAMPLE => {
                let event = parse_sample(body).and_then(|s| {
                    Some(SchedEvent {
                        time_ns: s.time_ns,
                        cpu: s.cpu,
                        pid: s.pid,
                        tid: s.tid,
                        kind: layouts.parse_raw(s.raw, s.tid)?,
                    })
                });
                match event {
                    Some(ev) if filter.keep(&ev) => into.events.push(ev),
                    Some(_) => {}
                    None => into.unparsed += 1,
                }
            }
            sys::PERF_RECORD_LOST => into.lost += u64_at(body, 8).unwrap_or(0),
            sys::PERF_RECORD_SWITCH => {
                let misc = u16::from_ne_bytes([bytes[at + 4], bytes[at + 5]]);
                if misc & sys::PERF_RECORD_MISC_SWITCH_OUT == 0 {
                    match parse_sample_id(body) {
                        Some(ev) if filter.keep(&ev) => into.events.push(ev),
                        Some(_) => {}
                        None => into.unparsed += 1,
                    }
                }
            }
            sys::PERF_RECORD_THROTTLE => into.throttled += 1,
            sys::PERF_RECORD_UNTHROTTLE => {}
            _ => into.unparsed += 1,
        }
        at += size;
    }
}

/// Records scheduler events on every CPU until [`SchedRecorder::stop`].
pub struct SchedRecorder {
    stop: Arc<AtomicBool>,
    drain: Option<JoinHandle<Drained>>,
    cpus: Vec<u32>,
    id_route: String,
    waking: bool,
    note: Option<String>,
}

impl fmt::Debug for SchedRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchedRecorder")
            .field("cpus", &self.cpus)
            .field("id_route", &self.id_route)
            .finish_non_exhaustive()
    }
}

impl SchedRecorder {
    /// Starts recording for a process (the usual case: `std::process::id()`).
    pub fn start(pid: u32) -> Result<SchedRecorder, SchedUnavailable> {
        Self::start_with(Target::Process(pid), &SchedOptions::default())
    }

    pub fn start_threads(tids: &[u32]) -> Result<SchedRecorder, SchedUnavailable> {
        Self::start_with(Target::Threads(tids.to_vec()), &SchedOptions::default())
    }

    /// Opens `sched_switch`, `sched_wakeup` and `sched_waking` on every online CPU
    /// (CPU-wide: a thread's switch-in is emitted in the context of the thread it replaces,
    /// and a wake-up in the waker's, so per-task events could not see them), maps one ring
    /// per CPU (the wake-up events write into the switch event's ring) and starts a drain
    /// thread that polls them. Without `sched_waking` (no format, or the kernel refuses to
    /// open it on some CPU) it records the other two and says so in the recording's `note`.
    pub fn start_with(
        target: Target,
        options: &SchedOptions,
    ) -> Result<SchedRecorder, SchedUnavailable> {
        let fail = |s: String| SchedUnavailable(s);
        if options.force_unavailable {
            return Err(fail(format!(
                "forced unavailable ({}=1 or SchedOptions::force_unavailable)",
                perf_counters::DISABLE_ENV
            )));
        }
        if !options.pages_per_cpu.is_power_of_two() {
            return Err(fail(format!(
                "pages_per_cpu must be a power of two, not {}",
                options.pages_per_cpu
            )));
        }
        let formats = tracefs::sched_formats().map_err(fail)?;
        let mut layouts = Layouts::new(&formats.switch, &formats.wakeup, None).map_err(fail)?;
        let mut notes: Vec<String> = Vec::new();
        let no_waking =
            |e: &dyn fmt::Display| format!("no sched_waking (wakers from sched_wakeup only): {e}");
        let waking_format = match &formats.waking {
            _ if !options.waking => Err("not asked for (SchedOptions::waking)".to_string()),
            Ok(f) => wakeup_fields(f).map(|fields| (f, fields)),
            Err(e) => Err(e.clone()),
        };
        let waking_format = match waking_format {
            Ok((f, fields)) => {
                layouts.waking = Some((f.id, fields));
                Some(f)
            }
            Err(e) => {
                notes.push(no_waking(&e));
                None
            }
        };
        let cpus = sys::online_cpus().map_err(|e| fail(format!("online cpus: {e}")))?;
        let data_size = options.pages_per_cpu * sys::page_size();

        let open = |what: &str, id: u64, cpu: u32| open_tracepoint(what, id, cpu, data_size);

        let mut rings = Vec::with_capacity(cpus.len());
        let mut others = Vec::with_capacity(cpus.len());
        for &cpu in &cpus {
            let switch = open("sched_switch", formats.switch.id, cpu)?;
            let wakeup = open("sched_wakeup", formats.wakeup.id, cpu)?;
            let ring = Ring::map(switch, options.pages_per_cpu)
                .map_err(|e| fail(format!("mmap of the cpu {cpu} ring: {e}")))?;
            sys::set_output(&wakeup, &ring.fd)
                .map_err(|e| fail(format!("PERF_EVENT_IOC_SET_OUTPUT on cpu {cpu}: {e}")))?;
            rings.push(ring);
            others.push(wakeup);
        }
        // sched_waking on every CPU or on none: a waker must not depend on the CPU the
        // wake-up was done on. The fds opened before a failure close when `waking` drops.
        let mut waking = Vec::with_capacity(cpus.len());
        if let Some(f) = waking_format {
            for (ring, &cpu) in rings.iter().zip(&cpus) {
                let opened = open("sched_waking", f.id, cpu).and_then(|fd| {
                    sys::set_output(&fd, &ring.fd).map(|()| fd).map_err(|e| {
                        fail(format!("PERF_EVENT_IOC_SET_OUTPUT of sched_waking on cpu {cpu}: {e}"))
                    })
                });
                match opened {
                    Ok(fd) => waking.push(fd),
                    Err(e) => {
                        notes.push(no_waking(&e));
                        waking.clear();
                        layouts.waking = None;
                        break;
                    }
                }
            }
        }
        let waking_recorded = !waking.is_empty();
        others.extend(waking);
        let switch_note = open_switch_records(&target, &rings, &cpus, &mut others);
        for fd in rings.iter().map(|r| &r.fd).chain(&others) {
            sys::enable(fd).map_err(|e| fail(format!("PERF_EVENT_IOC_ENABLE: {e}")))?;
        }

        let known: HashSet<u32> = match &target {
            Target::Threads(tids) => tids.iter().copied().collect(),
            _ => HashSet::new(),
        };
        let mut filter = Filter { target, known, exclude: 0 };
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let drain = std::thread::Builder::new()
            .name("perf-sched-drain".into())
            .spawn(move || {
                filter.exclude = perf_counters::gettid();
                drain_loop(rings, others, &stop2, &layouts, filter)
            })
            .map_err(|e| fail(format!("spawning the drain thread: {e}")))?;
        notes.extend(switch_note);
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        Ok(SchedRecorder {
            stop,
            drain: Some(drain),
            cpus,
            id_route: formats.route.clone(),
            waking: waking_recorded,
            note,
        })
    }

    /// Stops, drains what is left and returns the target's events in time order.
    pub fn stop(mut self) -> SchedRecording {
        let drained = self.finish();
        SchedRecording {
            events: drained.events,
            lost: drained.lost,
            throttled: drained.throttled,
            unparsed: drained.unparsed,
            cpus: std::mem::take(&mut self.cpus),
            waking: self.waking,
            note: self.note.take(),
            id_route: std::mem::take(&mut self.id_route),
        }
    }

    fn finish(&mut self) -> Drained {
        self.stop.store(true, Ordering::Release);
        let mut drained = match self.drain.take().map(JoinHandle::join) {
            Some(Ok(d)) => d,
            _ => Drained::default(),
        };
        drained.events.sort_by_key(|e| e.time_ns);
        drained
    }
}

/// The attribute of a CPU-wide tracepoint sampled on every hit into a ring of `data_size`
/// bytes, the drain thread woken at half full.
fn tracepoint_attr(id: u64, data_size: usize) -> sys::PerfEventAttr {
    let mut a = sys::PerfEventAttr::new(sys::PERF_TYPE_TRACEPOINT, id);
    a.sample_period = 1;
    a.sample_type =
        sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME | sys::PERF_SAMPLE_CPU | sys::PERF_SAMPLE_RAW;
    a.flags =
        sys::ATTR_DISABLED | sys::ATTR_USE_CLOCKID | sys::ATTR_WATERMARK | sys::ATTR_SAMPLE_ID_ALL;
    a.clockid = libc::CLOCK_MONOTONIC;
    a.wakeup = (data_size / 2) as u32;
    a
}

/// Opens tracepoint `id` (`sched:<what>`) on `cpu`; the error says why in one line.
fn open_tracepoint(
    what: &str,
    id: u64,
    cpu: u32,
    data_size: usize,
) -> Result<OwnedFd, SchedUnavailable> {
    sys::perf_event_open(&tracepoint_attr(id, data_size), -1, cpu as i32).map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => format!(
                "not permitted: CPU-wide tracepoints need root or CAP_PERFMON \
                 (perf_event_paranoid {}, euid {})",
                perf_counters::perf_event_paranoid().map_or("unknown".into(), |p| p.to_string()),
                sys::euid()
            ),
            _ => e.to_string(),
        };
        SchedUnavailable(format!("perf_event_open(sched:{what}, cpu {cpu}): {why}"))
    })
}

/// Opens, for each thread of `target` and each CPU, the dummy `context_switch` event whose
/// `PERF_RECORD_SWITCH` switch-ins go into that CPU's ring (pushed onto `others`). Returns
/// one line for the threads without switch records: the last failure's.
fn open_switch_records(
    target: &Target,
    rings: &[Ring],
    cpus: &[u32],
    others: &mut Vec<OwnedFd>,
) -> Option<String> {
    let mut switch_note = None;
    let (switch_tids, inherit) = match target {
        Target::Process(pid) => (perf_counters::threads_of(*pid).unwrap_or_default(), true),
        Target::Threads(tids) => (tids.clone(), false),
        Target::All => (Vec::new(), false),
    };
    'tids: for &tid in &switch_tids {
        for (ring, &cpu) in rings.iter().zip(cpus) {
            let mut a = sys::PerfEventAttr::new(sys::PERF_TYPE_SOFTWARE, sys::PERF_COUNT_SW_DUMMY);
            a.sample_type = sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME | sys::PERF_SAMPLE_CPU;
            a.flags = sys::ATTR_DISABLED
                | sys::ATTR_CONTEXT_SWITCH
                | sys::ATTR_SAMPLE_ID_ALL
                | sys::ATTR_USE_CLOCKID
                | if inherit { sys::ATTR_INHERIT } else { 0 };
            a.clockid = libc::CLOCK_MONOTONIC;
            let opened = sys::perf_event_open(&a, tid as i32, cpu as i32)
                .and_then(|fd| sys::set_output(&fd, &ring.fd).map(|()| fd));
            match opened {
                Ok(fd) => others.push(fd),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue 'tids,
                Err(e) => {
                    switch_note = Some(format!(
                        "no PERF_RECORD_SWITCH for tid {tid} (switch-ins only from sched_switch): {e}"
                    ));
                    continue 'tids;
                }
            }
        }
    }
    switch_note
}

impl Drop for SchedRecorder {
    fn drop(&mut self) {
        if self.drain.is_some() {
            self.finish();
        }
    }
}

fn drain_loop(
    mut rings: Vec<Ring>,
    others: Vec<OwnedFd>,
    stop: &AtomicBool,
    layouts: &Layouts,
    mut filter: Filter,
) -> Drained {
    let mut out = Drained::default();
    let mut buf = Vec::new();
    let mut pollfds: Vec<libc::pollfd> = rings
        .iter()
        .map(|r| libc::pollfd { fd: r.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 })
        .collect();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        if stopping {
            for fd in rings.iter().map(|r| &r.fd).chain(&others) {
                let _ = sys::disable(fd);
            }
        } else {
            // SAFETY: `pollfds` is a live array of `len` initialised pollfd structs.
            unsafe { libc::poll(pollfds.as_mut_ptr(), pollfds.len() as libc::nfds_t, 20) };
        }
        filter.refresh();
        for ring in &mut rings {
            ring.take(&mut buf);
            parse_records(&buf, layouts, &mut filter, &mut out);
        }
        if stopping {
            return out;
        }
        if pollfds.iter().any(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0) {
            // Nothing more will come (CPU went offline?): avoid spinning on the error.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tracefs::parse_format;
    use crate::tracefs::tests::{SWITCH_FORMAT, WAKEUP_FORMAT, WAKING_FORMAT};

    pub(crate) fn layouts() -> Layouts {
        let waking = parse_format(WAKING_FORMAT).unwrap();
        Layouts::new(
            &parse_format(SWITCH_FORMAT).unwrap(),
            &parse_format(WAKEUP_FORMAT).unwrap(),
            Some(&waking),
        )
        .unwrap()
    }

    fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
        buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn comm16(s: &str) -> [u8; 16] {
        let mut c = [0u8; 16];
        c[..s.len()].copy_from_slice(s.as_bytes());
        c
    }

    pub(crate) fn switch_raw(prev: (&str, i32), state: i64, next: (&str, i32)) -> Vec<u8> {
        let mut raw = vec![0u8; 68]; // 64 bytes of record + 4 of padding, as the kernel
        put(&mut raw, 0, &372u16.to_ne_bytes());
        put(&mut raw, 4, &prev.1.to_ne_bytes());
        put(&mut raw, 8, &comm16(prev.0));
        put(&mut raw, 24, &prev.1.to_ne_bytes());
        put(&mut raw, 28, &120i32.to_ne_bytes());
        put(&mut raw, 32, &state.to_ne_bytes());
        put(&mut raw, 40, &comm16(next.0));
        put(&mut raw, 56, &next.1.to_ne_bytes());
        put(&mut raw, 60, &100i32.to_ne_bytes());
        raw
    }

    fn wakeup_raw(comm: &str, pid: i32, target_cpu: i32) -> Vec<u8> {
        wake_raw(374, comm, pid, target_cpu)
    }

    fn waking_raw(comm: &str, pid: i32, target_cpu: i32) -> Vec<u8> {
        wake_raw(375, comm, pid, target_cpu)
    }

    /// A `sched_wakeup` (id 374) or `sched_waking` (375) record: the same layout.
    fn wake_raw(id: u16, comm: &str, pid: i32, target_cpu: i32) -> Vec<u8> {
        let mut raw = vec![0u8; 36];
        put(&mut raw, 0, &id.to_ne_bytes());
        put(&mut raw, 8, &comm16(comm));
        put(&mut raw, 24, &pid.to_ne_bytes());
        put(&mut raw, 28, &120i32.to_ne_bytes());
        put(&mut raw, 32, &target_cpu.to_ne_bytes());
        raw
    }

    /// A whole `PERF_RECORD_SAMPLE` record (header + body, padded to 8 bytes).
    fn sample_record(pid: u32, tid: u32, time: u64, cpu: u32, raw: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&pid.to_ne_bytes());
        body.extend_from_slice(&tid.to_ne_bytes());
        body.extend_from_slice(&time.to_ne_bytes());
        body.extend_from_slice(&cpu.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        body.extend_from_slice(&(raw.len() as u32).to_ne_bytes());
        body.extend_from_slice(raw);
        while (body.len() + 8) % 8 != 0 {
            body.push(0);
        }
        let mut rec = Vec::new();
        rec.extend_from_slice(&sys::PERF_RECORD_SAMPLE.to_ne_bytes());
        rec.extend_from_slice(&0u16.to_ne_bytes());
        rec.extend_from_slice(&((body.len() + 8) as u16).to_ne_bytes());
        rec.extend_from_slice(&body);
        rec
    }

    #[test]
    fn state_letters_follow_print_fmt() {
        assert_eq!(state_letters(0), "R");
        assert_eq!(state_letters(0x100), "R+");
        assert_eq!(state_letters(1), "S");
        assert_eq!(state_letters(2), "D");
        assert_eq!(state_letters(0x80), "I");
        assert_eq!(state_letters(0x10), "X");
        assert_eq!(state_letters(0x1 | 0x100), "S+");
        assert_eq!(state_letters(0x2 | 0x4), "D|T");
    }

    #[test]
    fn parses_a_switch_record() {
        let raw = switch_raw(("worker", 41), 1, ("swapper/1", 0));
        let kind = layouts().parse_raw(&raw, 41).unwrap();
        assert_eq!(
            kind,
            SchedKind::Switch(Switch {
                prev_comm: "worker".into(),
                prev_pid: 41,
                prev_prio: 120,
                prev_state: "S".into(),
                next_comm: "swapper/1".into(),
                next_pid: 0,
                next_prio: 100,
            })
        );
    }

    #[test]
    fn parses_a_wakeup_record_with_the_sampled_waker() {
        let raw = wakeup_raw("worker", 41, 1);
        let kind = layouts().parse_raw(&raw, 7).unwrap();
        assert_eq!(
            kind,
            SchedKind::Wakeup(Wakeup {
                comm: "worker".into(),
                pid: 41,
                prio: 120,
                target_cpu: 1,
                waker: 7,
            })
        );
    }

    #[test]
    fn parses_a_waking_record_with_the_sampled_waker() {
        let wakeup = Wakeup { comm: "worker".into(), pid: 41, prio: 120, target_cpu: 1, waker: 7 };
        let raw = waking_raw("worker", 41, 1);
        assert_eq!(layouts().parse_raw(&raw, 7), Some(SchedKind::Waking(wakeup)));
        // Without sched_waking's layout, its records are foreign ones.
        let without = Layouts { waking: None, ..layouts() };
        assert_eq!(without.parse_raw(&raw, 7), None);
        assert!(matches!(
            without.parse_raw(&wakeup_raw("w", 41, 1), 7),
            Some(SchedKind::Wakeup(_))
        ));
    }

    #[test]
    fn rejects_short_and_foreign_records() {
        let l = layouts();
        let raw = switch_raw(("a", 1), 0, ("b", 2));
        assert_eq!(l.parse_raw(&raw[..40], 1), None);
        let mut other = raw.clone();
        put(&mut other, 0, &999u16.to_ne_bytes());
        assert_eq!(l.parse_raw(&other, 1), None);
        assert_eq!(parse_sample(&[0u8; 20]), None);
    }

    #[test]
    fn parses_a_stream_of_records_with_a_loss() {
        let mut bytes = sample_record(5, 6, 1_000, 1, &switch_raw(("w", 6), 0x100, ("x", 9)));
        bytes.extend(sample_record(5, 6, 2_000, 0, &wakeup_raw("y", 9, 0)));
        bytes.extend(sample_record(5, 6, 2_500, 0, &waking_raw("y", 9, 1)));
        // PERF_RECORD_LOST: header, id, lost.
        bytes.extend_from_slice(&sys::PERF_RECORD_LOST.to_ne_bytes());
        bytes.extend_from_slice(&0u16.to_ne_bytes());
        bytes.extend_from_slice(&24u16.to_ne_bytes());
        bytes.extend_from_slice(&0u64.to_ne_bytes());
        bytes.extend_from_slice(&17u64.to_ne_bytes());
        // PERF_RECORD_THROTTLE (time, id, stream_id), then something else
        // (PERF_RECORD_SWITCH_CPU_WIDE = 15, header only).
        bytes.extend_from_slice(&sys::PERF_RECORD_THROTTLE.to_ne_bytes());
        bytes.extend_from_slice(&0u16.to_ne_bytes());
        bytes.extend_from_slice(&32u16.to_ne_bytes());
        bytes.extend_from_slice(&[0u8; 24]);
        bytes.extend_from_slice(&15u32.to_ne_bytes());
        bytes.extend_from_slice(&0u16.to_ne_bytes());
        bytes.extend_from_slice(&8u16.to_ne_bytes());
        // PERF_RECORD_SWITCH, in then out, with the sample_id trailer.
        for misc in [0u16, sys::PERF_RECORD_MISC_SWITCH_OUT] {
            bytes.extend_from_slice(&sys::PERF_RECORD_SWITCH.to_ne_bytes());
            bytes.extend_from_slice(&misc.to_ne_bytes());
            bytes.extend_from_slice(&32u16.to_ne_bytes());
            bytes.extend_from_slice(&5u32.to_ne_bytes());
            bytes.extend_from_slice(&9u32.to_ne_bytes());
            bytes.extend_from_slice(&3_000u64.to_ne_bytes());
            bytes.extend_from_slice(&1u32.to_ne_bytes());
            bytes.extend_from_slice(&0u32.to_ne_bytes());
        }

        let mut filter = Filter { target: Target::Threads(vec![9]), known: [9].into(), exclude: 0 };
        let mut out = Drained::default();
        parse_records(&bytes, &layouts(), &mut filter, &mut out);
        assert_eq!((out.lost, out.throttled, out.unparsed), (17, 1, 1));
        assert_eq!(out.events.len(), 4);
        let switch_in =
            SchedEvent { time_ns: 3_000, cpu: 1, pid: 5, tid: 9, kind: SchedKind::SwitchIn };
        assert_eq!(out.events[3], switch_in, "only the switch-in is kept");
        let first = &out.events[0];
        assert_eq!((first.time_ns, first.cpu, first.pid, first.tid), (1_000, 1, 5, 6));
        match &first.kind {
            SchedKind::Switch(s) => assert_eq!((s.prev_state.as_str(), s.next_pid), ("R+", 9)),
            other => panic!("{other:?}"),
        }
        match &out.events[1].kind {
            SchedKind::Wakeup(w) => assert_eq!((w.pid, w.waker, w.target_cpu), (9, 6, 0)),
            other => panic!("{other:?}"),
        }
        match &out.events[2].kind {
            SchedKind::Waking(w) => assert_eq!((w.pid, w.waker, w.target_cpu), (9, 6, 1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn process_filter_learns_threads_and_skips_the_drain_thread() {
        let l = layouts();
        let ev = |pid, tid, prev: i32, next: i32| SchedEvent {
            time_ns: 0,
            cpu: 0,
            pid,
            tid,
            kind: l.parse_raw(&switch_raw(("p", prev), 1, ("n", next)), tid).unwrap(),
        };
        let mut f = Filter { target: Target::Process(100), known: HashSet::new(), exclude: 150 };
        assert!(!f.keep(&ev(7, 7, 7, 0)), "another process");
        assert!(f.keep(&ev(100, 101, 101, 0)), "a thread of 100 switching out");
        assert!(f.keep(&ev(7, 7, 7, 101)), "…and later switching in");
        assert!(!f.keep(&ev(100, 150, 150, 0)), "the drain thread");
        assert!(f.keep(&ev(100, 150, 150, 101)), "the drain thread handing over to 101");
        let waking = |waker: u32, pid: i32| SchedEvent {
            time_ns: 0,
            cpu: 0,
            pid: waker,
            tid: waker,
            kind: l.parse_raw(&waking_raw("w", pid, 0), waker).unwrap(),
        };
        assert!(f.keep(&waking(7, 101)), "a waking of a thread of 100");
        assert!(f.keep(&waking(101, 7)), "a waking by a thread of 100");
        assert!(!f.keep(&waking(0, 7)), "neither");
    }
}
