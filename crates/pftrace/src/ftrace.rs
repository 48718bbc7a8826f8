//! The kernel's scheduler records as Perfetto ftrace packets: one `FtraceEventBundle` per
//! CPU holding its `sched_switch`, `sched_wakeup` and `sched_waking` records in time order
//! (switches and wakings in the compact form Perfetto's own recorder writes).
//! From them Perfetto's trace processor builds the `sched` (CPU tracks) and `thread_state`
//! tables: running from a switch-in to the next switch-out, then the state the thread left
//! in (`prev_state`) until a wake-up makes it runnable (`R`, with the waker's `utid`).

use std::collections::HashMap;

use crate::protos::ftrace_event::Event;
use crate::protos::ftrace_event_bundle::CompactSched;
use crate::protos::trace_packet::{Data, OptionalTrustedPacketSequenceId};
use crate::protos::{
    FtraceEvent, FtraceEventBundle, SchedSwitchFtraceEvent, SchedWakeupFtraceEvent,
    SchedWakingFtraceEvent, TracePacket,
};

/// One scheduler record, as the tracepoint's fields give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sched {
    /// `sched_switch`: `prev` leaves the CPU in `prev_state` (kernel bits, see
    /// [`prev_state_bits`]), `next` takes it.
    Switch {
        prev_comm: String,
        prev_pid: i32,
        prev_prio: i32,
        prev_state: i64,
        next_comm: String,
        next_pid: i32,
        next_prio: i32,
    },
    /// `sched_waking` (`completed: false`, emitted by the waker) or `sched_wakeup`
    /// (`completed: true`, emitted where the wake-up completes): `pid` becomes runnable.
    Wake { comm: String, pid: i32, prio: i32, target_cpu: i32, completed: bool },
}

/// A record with where and when it was emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Nanoseconds on the trace's clock.
    pub ts: u64,
    pub cpu: u32,
    /// The thread the event was emitted in (for `sched_waking`, the waker).
    pub tid: u32,
    pub sched: Sched,
}

/// `prev_state` as the kernel's bits from its letters as `perf script` and the lab print
/// them (`R`, `R+`, `S`, `D`, … joined by `|`): `S D T t X Z P I` are bits 0x01..0x80, `R`
/// is none of them, and a trailing `+` is `TASK_REPORT_MAX` (0x100, preempted while
/// runnable), the layout of Linux 4.14 and later. An unknown letter adds no bit.
pub fn prev_state_bits(letters: &str) -> i64 {
    let mut bits = 0;
    let (body, preempted) = match letters.strip_suffix('+') {
        Some(b) => (b, true),
        None => (letters, false),
    };
    for part in body.split('|') {
        bits |= match part {
            "S" => 0x01,
            "D" => 0x02,
            "T" => 0x04,
            "t" => 0x08,
            "X" => 0x10,
            "Z" => 0x20,
            "P" => 0x40,
            "I" => 0x80,
            _ => 0,
        };
    }
    if preempted {
        bits |= 0x100;
    }
    bits
}

fn event(r: Record) -> FtraceEvent {
    let ev = match r.sched {
        Sched::Switch {
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state,
            next_comm,
            next_pid,
            next_prio,
        } => Event::SchedSwitch(SchedSwitchFtraceEvent {
            prev_comm: Some(prev_comm),
            prev_pid: Some(prev_pid),
            prev_prio: Some(prev_prio),
            prev_state: Some(prev_state),
            next_comm: Some(next_comm),
            next_pid: Some(next_pid),
            next_prio: Some(next_prio),
        }),
        Sched::Wake { comm, pid, prio, target_cpu, completed: false } => {
            Event::SchedWaking(SchedWakingFtraceEvent {
                comm: Some(comm),
                pid: Some(pid),
                prio: Some(prio),
                success: Some(1),
                target_cpu: Some(target_cpu),
            })
        }
        Sched::Wake { comm, pid, prio, target_cpu, completed: true } => {
            Event::SchedWakeup(SchedWakeupFtraceEvent {
                comm: Some(comm),
                pid: Some(pid),
                prio: Some(prio),
                success: Some(1),
                target_cpu: Some(target_cpu),
            })
        }
    };
    FtraceEvent { timestamp: Some(r.ts), pid: Some(r.tid), event: Some(ev) }
}

/// The records as packets of sequence `seq`: a bundle per CPU, each in time order, its
/// `sched_switch` and `sched_waking` records in Perfetto's compact form (see
/// [`compact`]), its `sched_wakeup` records as events.
pub fn bundles(mut records: Vec<Record>, seq: u32) -> Vec<TracePacket> {
    records.sort_by_key(|r| (r.cpu, r.ts));
    let mut out: Vec<TracePacket> = Vec::new();
    let mut start = 0;
    while start < records.len() {
        let cpu = records[start].cpu;
        let end = start + records[start..].iter().take_while(|r| r.cpu == cpu).count();
        let (compact_ones, events): (Vec<Record>, Vec<Record>) = records[start..end]
            .iter()
            .cloned()
            .partition(|r| !matches!(r.sched, Sched::Wake { completed: true, .. }));
        let b = FtraceEventBundle {
            cpu: Some(cpu),
            event: events.into_iter().map(event).collect(),
            compact_sched: Some(compact(&compact_ones)),
            ..FtraceEventBundle::default()
        };
        out.push(packet(b, seq));
        start = end;
    }
    out
}

/// One CPU's switches and wakings (in time order) as a `CompactSched`: timestamps as
/// deltas, comms interned per bundle, and no switched-out thread nor emitter: Perfetto
/// takes both as whoever the CPU's previous switch put there, so the records must say
/// every switch (the lab adds those the recorder missed: see `lab/src/profile/ftrace.rs`).
/// Written this way the kernel's records take a fraction of the bytes of full events.
pub fn compact(records: &[Record]) -> CompactSched {
    let mut c = CompactSched::default();
    let mut interned: HashMap<String, u32> = HashMap::new();
    let mut intern = |c: &mut CompactSched, s: &str| -> u32 {
        *interned.entry(s.to_owned()).or_insert_with(|| {
            c.intern_table.push(s.to_owned());
            c.intern_table.len() as u32 - 1
        })
    };
    let (mut last_switch, mut last_waking) = (0u64, 0u64);
    for r in records {
        match &r.sched {
            Sched::Switch { prev_state, next_comm, next_pid, next_prio, .. } => {
                c.switch_timestamp.push(r.ts - last_switch);
                last_switch = r.ts;
                c.switch_prev_state.push(*prev_state);
                c.switch_next_pid.push(*next_pid);
                c.switch_next_prio.push(*next_prio);
                let k = intern(&mut c, next_comm);
                c.switch_next_comm_index.push(k);
            }
            Sched::Wake { comm, pid, prio, target_cpu, completed: false } => {
                c.waking_timestamp.push(r.ts - last_waking);
                last_waking = r.ts;
                c.waking_pid.push(*pid);
                c.waking_target_cpu.push(*target_cpu);
                c.waking_prio.push(*prio);
                let k = intern(&mut c, comm);
                c.waking_comm_index.push(k);
                c.waking_common_flags.push(0);
            }
            Sched::Wake { completed: true, .. } => {}
        }
    }
    c
}

fn packet(b: FtraceEventBundle, seq: u32) -> TracePacket {
    TracePacket {
        data: Some(Data::FtraceEvents(b)),
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq),
        ),
        ..TracePacket::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_letters_map_to_the_kernel_bits() {
        assert_eq!(prev_state_bits("R"), 0);
        assert_eq!(prev_state_bits("R+"), 0x100);
        assert_eq!(prev_state_bits("S"), 1);
        assert_eq!(prev_state_bits("D|S"), 3);
        assert_eq!(prev_state_bits("I"), 0x80);
    }

    #[test]
    fn bundles_are_per_cpu_and_in_time_order() {
        let wake = |ts, cpu, completed| Record {
            ts,
            cpu,
            tid: 5,
            sched: Sched::Wake { comm: "c".into(), pid: 6, prio: 120, target_cpu: 0, completed },
        };
        let switch = |ts, cpu, next: &str| Record {
            ts,
            cpu,
            tid: 5,
            sched: Sched::Switch {
                prev_comm: "p".into(),
                prev_pid: 5,
                prev_prio: 120,
                prev_state: 1,
                next_comm: next.into(),
                next_pid: 7,
                next_prio: 100,
            },
        };
        let p = bundles(
            vec![
                wake(30, 1, false),
                switch(10, 0, "a"),
                wake(20, 1, false),
                switch(5, 0, "b"),
                switch(12, 0, "b"),
                wake(25, 1, true),
            ],
            9,
        );
        assert_eq!(p.len(), 2);
        let bundle = |k: usize| match &p[k].data {
            Some(Data::FtraceEvents(b)) => b.clone(),
            _ => panic!("not a bundle"),
        };
        let (b0, b1) = (bundle(0), bundle(1));
        assert_eq!(b0.cpu, Some(0));
        let c0 = b0.compact_sched.unwrap();
        assert_eq!(c0.switch_timestamp, vec![5, 5, 2], "deltas from the first, absolute");
        assert_eq!(c0.intern_table, vec!["b".to_string(), "a".to_string()]);
        assert_eq!(c0.switch_next_comm_index, vec![0, 1, 0]);
        assert_eq!(b1.cpu, Some(1));
        let c1 = b1.compact_sched.unwrap();
        assert_eq!(c1.waking_timestamp, vec![20, 10]);
        // A completed wake-up stays a full event.
        assert_eq!(b1.event.len(), 1);
        assert_eq!(b1.event[0].timestamp, Some(25));
    }
}
