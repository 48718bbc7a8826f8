//! The kernel's scheduler records of a trace run written into the run's native Perfetto
//! trace (`.pftrace`) as ftrace packets, the way Perfetto's own recorder writes them, so
//! that Perfetto builds the threads' states (running, runnable, sleeping, with the waker of
//! each wake-up) and the CPU tracks itself; and the clock line that both trace files use
//! to put the kernel's `CLOCK_MONOTONIC` times on the trace's clock.
//!
//! * The clock: the `clock_sync` instants the run put in the trace (see
//!   [`crate::profile::sched`]) are taken out of the `.pftrace` as out of the JSON, and
//!   every record's time goes through the same [`ClockMap`] line through them, so the
//!   kernel's records land where the JSON's `off-cpu` slices do.
//! * The records: every `sched_switch`, `sched_waking` and `sched_wakeup` the recorder
//!   kept (CPU-wide: other processes' threads too, as Perfetto's CPU tracks show them), the
//!   thread that emitted it as the event's `pid` (Perfetto takes a `sched_waking`'s emitter
//!   as the waker). A switch-in the recorder saw only as its `PERF_RECORD_SWITCH` (the idle
//!   task of a CPU that emits no tracepoint samples: see `sched_recorder`) becomes the
//!   `sched_switch` the kernel would have written, from whoever last ran on that CPU, in
//!   state `R`, so that the thread is seen running again. A switch-out of a thread the
//!   records never switched in (another process's thread, switched in by such an idle
//!   task) gets its missing switch-in at the same time, just before it: the latest it can
//!   have been, so nothing is shown running that was not; otherwise Perfetto counts the
//!   switch as `mismatched_sched_switch_tids`. A `sched_waking` emitted by a thread the
//!   switches do not have on its CPU gets the same: the `.pftrace` writes switches and
//!   wakings in Perfetto's compact form ([`pftrace::ftrace::compact`]), which leaves out the
//!   switched-out thread and the waker and lets Perfetto read both from the CPU's switches.
//! * The lab's thread tracks in the `.pftrace` carry the kernel's tids where the recorder
//!   knew them (the flight recorder reads them; the JVM's trace uses them), so the records
//!   join those tracks as they are. A track whose tid is none of the recorded process's
//!   threads (the full capture numbers its threads) is given the tid of the recorded
//!   thread with its name (the kernel's `comm`: the name cut to 15 bytes), as the JSON's
//!   tracks are matched.

use std::collections::HashMap;
use std::path::Path;

use pftrace::edit;
use pftrace::ftrace::{bundles, prev_state_bits, Record, Sched};
use pftrace::protos::TracePacket;
use sched_recorder::{SchedEvent, SchedKind};

/// The `instant!` kind of the clock markers.
pub const CLOCK_SYNC: &str = "clock_sync";
/// The sequence id of the ftrace packets (the recorders' TrackEvent sequences use others).
const FTRACE_SEQ: u32 = 1_000_001;

/// Monotonic ns → trace ns: the line through the run's two ends, each by its closest pair
/// of clock readings.
#[derive(Debug, Clone)]
pub struct ClockMap {
    mono: [f64; 2],
    trace: [f64; 2],
}

impl ClockMap {
    /// The line from (monotonic ns, trace ns) marks; `None` without any.
    pub fn fit(mut marks: Vec<(f64, f64)>) -> Option<ClockMap> {
        marks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (first, last) = (*marks.first()?, *marks.last()?);
        // The trace's clock is read after the monotonic one: the smallest difference is the
        // closest pair, at each end of the run.
        let mid = (first.0 + last.0) / 2.0;
        let closest = |early: bool| {
            marks
                .iter()
                .filter(|m| (m.0 <= mid) == early)
                .min_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)))
                .copied()
        };
        let a = closest(true).unwrap_or(first);
        let b = closest(false).unwrap_or(a);
        Some(ClockMap { mono: [a.0, b.0], trace: [a.1, b.1] })
    }

    /// `mono_ns` on the trace's clock, ns.
    pub fn to_trace(&self, mono_ns: u64) -> i64 {
        let [m0, m1] = self.mono;
        let [t0, t1] = self.trace;
        let slope = if m1 > m0 { (t1 - t0) / (m1 - m0) } else { 1.0 };
        (t0 + (mono_ns as f64 - m0) * slope).round() as i64
    }
}

/// What [`annotate_twin`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtraceStats {
    pub records: u64,
    /// Switches written for switch-ins the tracepoints did not record (seen as a
    /// `PERF_RECORD_SWITCH`, or inferred from a switch-out).
    pub switches_added: u64,
}

/// Writes `events` into the `.pftrace` at `twin`, on its clock (its `clock_sync`
/// instants, which are taken out); `names` gives each tid's name for switches the recorder
/// saw only as switch-ins.
pub fn annotate_twin(
    twin: &Path,
    events: &[SchedEvent],
    names: &HashMap<u32, String>,
    threads: &[u32],
) -> Result<FtraceStats, String> {
    let mut packets = edit::read(twin).map_err(|e| format!("{}: {e}", twin.display()))?;
    join_threads(&mut packets, threads, names);
    let marks: Vec<(f64, f64)> = edit::take_instants(&mut packets, CLOCK_SYNC)
        .into_iter()
        .filter_map(|t| {
            let mono = t.args.iter().find(|(k, _)| k == "mono_ns").and_then(|(_, v)| match v {
                pftrace::ArgValue::U64(n) => Some(*n as f64),
                pftrace::ArgValue::I64(n) => Some(*n as f64),
                pftrace::ArgValue::F64(n) => Some(*n),
                // tracing-chrome writes a number field as its Debug text.
                pftrace::ArgValue::Str(s) => s.trim_matches('"').parse().ok(),
                _ => None,
            })?;
            Some((mono, t.ts as f64))
        })
        .collect();
    let clock = ClockMap::fit(marks).ok_or_else(|| {
        format!("{}: no clock_sync instant: the kernel's records left out", twin.display())
    })?;
    let (records, stats) = records(events, names, &clock);
    packets.extend(bundles(records, FTRACE_SEQ));
    edit::write(twin, packets).map_err(|e| format!("{}: {e}", twin.display()))?;
    Ok(stats)
}

/// Gives each thread track whose tid is none of `threads` the tid of the first unclaimed
/// one of `threads` whose `comm` its name begins (see the module docs).
fn join_threads(packets: &mut [TracePacket], threads: &[u32], names: &HashMap<u32, String>) {
    use pftrace::protos::trace_packet::Data;
    let mut descriptors: Vec<&mut pftrace::protos::ThreadDescriptor> = packets
        .iter_mut()
        .filter_map(|p| match &mut p.data {
            Some(Data::TrackDescriptor(d)) => d.thread.as_mut(),
            _ => None,
        })
        .collect();
    let known = |t: &pftrace::protos::ThreadDescriptor| {
        u32::try_from(t.tid()).ok().filter(|tid| threads.contains(tid))
    };
    let mut claimed: Vec<u32> = descriptors.iter().filter_map(|t| known(t)).collect();
    for t in descriptors.iter_mut().filter(|t| known(t).is_none()) {
        let name = t.thread_name().to_owned();
        let hit = threads.iter().copied().find(|os| {
            !claimed.contains(os)
                && names.get(os).is_some_and(|c| !c.is_empty() && name.starts_with(c.as_str()))
        });
        if let Some(os) = hit {
            claimed.push(os);
            t.tid = Some(os as i32);
        }
    }
}

/// The kernel's name for `tid`: its `comm` as last seen, `swapper/CPU` for the idle task.
fn comm(names: &HashMap<u32, String>, tid: u32, cpu: u32) -> String {
    match tid {
        0 => format!("swapper/{cpu}"),
        t => names.get(&t).cloned().unwrap_or_default(),
    }
}

/// A switch the recorder did not see: `prev` (whom the CPU's switches had there) out, still
/// runnable as far as anyone knows, and `next` (tid, comm, prio) in.
fn added_switch(
    names: &HashMap<u32, String>,
    cpu: u32,
    prev: u32,
    (next, next_comm, next_prio): (u32, String, i32),
) -> Sched {
    Sched::Switch {
        prev_comm: comm(names, prev, cpu),
        prev_pid: prev as i32,
        prev_prio: 120,
        prev_state: 0,
        next_comm,
        next_pid: next as i32,
        next_prio,
    }
}

/// A `sched_waking` or `sched_wakeup` as its ftrace record's fields.
fn wake(ev: &SchedEvent) -> Sched {
    match &ev.kind {
        SchedKind::Waking(w) | SchedKind::Wakeup(w) => Sched::Wake {
            comm: w.comm.clone(),
            pid: w.pid as i32,
            prio: w.prio,
            target_cpu: w.target_cpu as i32,
            completed: matches!(ev.kind, SchedKind::Wakeup(_)),
        },
        _ => unreachable!("wake() of a switch"),
    }
}

/// The recorder's events as ftrace records on the trace's clock, in time order.
fn records(
    events: &[SchedEvent],
    names: &HashMap<u32, String>,
    clock: &ClockMap,
) -> (Vec<Record>, FtraceStats) {
    let mut order: Vec<&SchedEvent> = events.iter().collect();
    order.sort_by_key(|e| e.time_ns);
    // Who runs on each CPU, as the switches so far say.
    let mut running: HashMap<u32, u32> = HashMap::new();
    let mut out = Vec::with_capacity(order.len());
    let mut stats = FtraceStats::default();
    for ev in order {
        let Ok(ts) = u64::try_from(clock.to_trace(ev.time_ns)) else { continue };
        let at = |sched| Record { ts, cpu: ev.cpu, tid: ev.tid, sched };
        let sched = match &ev.kind {
            SchedKind::Switch(s) => {
                let before = running.insert(ev.cpu, s.next_pid);
                if let Some(prev) = before.filter(|&p| p != s.prev_pid) {
                    // The switch into `prev_pid` was never recorded (see the module docs):
                    // it is put at the latest time it can have been, this switch-out.
                    stats.switches_added += 1;
                    let next = (s.prev_pid, s.prev_comm.clone(), s.prev_prio);
                    out.push(at(added_switch(names, ev.cpu, prev, next)));
                }
                Sched::Switch {
                    prev_comm: s.prev_comm.clone(),
                    prev_pid: s.prev_pid as i32,
                    prev_prio: s.prev_prio,
                    prev_state: prev_state_bits(&s.prev_state),
                    next_comm: s.next_comm.clone(),
                    next_pid: s.next_pid as i32,
                    next_prio: s.next_prio,
                }
            }
            SchedKind::Waking(_) => {
                // Its emitter was running (see the module docs), and Perfetto reads the
                // waker of a compact waking from the CPU's switches: they must say so.
                let before = running.insert(ev.cpu, ev.tid);
                if before != Some(ev.tid) {
                    stats.switches_added += 1;
                    let next = (ev.tid, comm(names, ev.tid, ev.cpu), 120);
                    out.push(at(added_switch(names, ev.cpu, before.unwrap_or(0), next)));
                }
                wake(ev)
            }
            SchedKind::Wakeup(_) => wake(ev),
            SchedKind::SwitchIn => {
                let prev = running.insert(ev.cpu, ev.tid).unwrap_or(0);
                if prev == ev.tid {
                    continue;
                }
                stats.switches_added += 1;
                added_switch(names, ev.cpu, prev, (ev.tid, comm(names, ev.tid, ev.cpu), 120))
            }
        };
        out.push(at(sched));
    }
    stats.records = out.len() as u64;
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sched_recorder::Switch;

    fn switch(t: u64, cpu: u32, prev: u32, next: u32) -> SchedEvent {
        SchedEvent {
            time_ns: t,
            cpu,
            pid: prev,
            tid: prev,
            kind: SchedKind::Switch(Switch {
                prev_comm: format!("t{prev}"),
                prev_pid: prev,
                prev_prio: 120,
                prev_state: "S".into(),
                next_comm: format!("t{next}"),
                next_pid: next,
                next_prio: 120,
            }),
        }
    }

    #[test]
    fn a_switch_in_without_its_switch_becomes_one() {
        let clock = ClockMap::fit(vec![(1000.0, 0.0), (2000.0, 1000.0)]).unwrap();
        let names = HashMap::from([(7, "consumer".to_string())]);
        let events = vec![
            switch(1100, 0, 7, 0),
            // Seen by its switch record only (no tracepoint from the idle task).
            SchedEvent { time_ns: 1200, cpu: 0, pid: 7, tid: 7, kind: SchedKind::SwitchIn },
            switch(1300, 0, 7, 0),
            switch(1400, 1, 0, 8),
            // Its tracepoint was seen: no second switch.
            SchedEvent { time_ns: 1401, cpu: 1, pid: 8, tid: 8, kind: SchedKind::SwitchIn },
            // 9 leaves CPU 1, where 8 ran last: its switch-in goes just before.
            switch(1500, 1, 9, 0),
            // 9 wakes 7 from CPU 0, where the idle task ran last: 9 is switched in first.
            SchedEvent {
                time_ns: 1600,
                cpu: 0,
                pid: 9,
                tid: 9,
                kind: SchedKind::Waking(sched_recorder::Wakeup {
                    comm: "consumer".into(),
                    pid: 7,
                    prio: 120,
                    target_cpu: 0,
                    waker: 9,
                }),
            },
        ];
        let (recs, stats) = records(&events, &names, &clock);
        assert_eq!(stats, FtraceStats { records: 8, switches_added: 3 });
        match (&recs[6].sched, &recs[7].sched) {
            (Sched::Switch { prev_pid: 0, next_pid: 9, .. }, Sched::Wake { pid: 7, .. }) => {}
            other => panic!("not the switch before the waking: {other:?}"),
        }
        match &recs[4].sched {
            Sched::Switch { prev_pid: 8, next_pid: 9, .. } => assert_eq!(recs[4].ts, 500),
            other => panic!("not the inferred switch: {other:?}"),
        }
        assert_eq!(recs[0].ts, 100, "mapped onto the trace's clock");
        match &recs[1].sched {
            Sched::Switch {
                prev_pid: 0, next_pid: 7, prev_comm, next_comm, prev_state: 0, ..
            } => {
                assert_eq!((prev_comm.as_str(), next_comm.as_str()), ("swapper/0", "consumer"));
            }
            other => panic!("not the added switch: {other:?}"),
        }
    }

    #[test]
    fn the_line_goes_through_the_closest_marks() {
        // Early marks: the second pair is closer; late: the first.
        let c =
            ClockMap::fit(vec![(100.0, 150.0), (110.0, 111.0), (1000.0, 1001.0), (1010.0, 1060.0)])
                .unwrap();
        assert_eq!(c.to_trace(110), 111);
        assert_eq!(c.to_trace(1000), 1001);
        assert!(ClockMap::fit(Vec::new()).is_none());
    }
}
