//! The kernel's scheduler records as Perfetto ftrace packets: one `FtraceEventBundle` per
//! CPU holding its `sched_switch`, `sched_wakeup` and `sched_waking` events in time order.
//! From them Perfetto's trace processor builds the `sched` (CPU tracks) and `thread_state`
//! tables: running from a switch-in to the next switch-out, then the state the thread left
//! in (`prev_state`) until a wake-up makes it runnable (`R`, with the waker's `utid`).

use crate::protos::ftrace_event::Event;
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

/// The records as packets of sequence `seq`: a bundle per CPU, each in time order.
pub fn bundles(mut records: Vec<Record>, seq: u32) -> Vec<TracePacket> {
    records.sort_by_key(|r| (r.cpu, r.ts));
    let mut out: Vec<TracePacket> = Vec::new();
    let mut current: Option<FtraceEventBundle> = None;
    for r in records {
        if current.as_ref().is_some_and(|b| b.cpu != Some(r.cpu)) {
            out.push(packet(current.take().expect("checked"), seq));
        }
        let b = current.get_or_insert_with(|| FtraceEventBundle {
            cpu: Some(r.cpu),
            ..FtraceEventBundle::default()
        });
        b.event.push(event(r));
    }
    if let Some(b) = current {
        out.push(packet(b, seq));
    }
    out
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
        let wake = |ts, cpu| Record {
            ts,
            cpu,
            tid: 5,
            sched: Sched::Wake {
                comm: "c".into(),
                pid: 6,
                prio: 120,
                target_cpu: 0,
                completed: false,
            },
        };
        let p = bundles(vec![wake(30, 1), wake(10, 0), wake(20, 1), wake(5, 0)], 9);
        assert_eq!(p.len(), 2);
        let times = |k: usize| match &p[k].data {
            Some(Data::FtraceEvents(b)) => {
                (b.cpu, b.event.iter().map(|e| e.timestamp.unwrap()).collect::<Vec<_>>())
            }
            _ => panic!("not a bundle"),
        };
        assert_eq!(times(0), (Some(0), vec![5, 10]));
        assert_eq!(times(1), (Some(1), vec![20, 30]));
    }
}
