//! From scheduler events to off-CPU intervals: pure, no kernel needed.

use std::collections::{BTreeSet, HashMap};

use crate::sched::{SchedEvent, SchedKind};

/// A stretch during which `tid` was not running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffCpu {
    pub tid: u32,
    /// The `sched_switch` that took it off its CPU (CLOCK_MONOTONIC ns).
    pub start_ns: u64,
    /// The `sched_switch` that put it back on one.
    pub end_ns: u64,
    /// The state it left in (`S` sleeping, `D` uninterruptible, `R+` preempted, …).
    pub state: String,
    /// The waker of the last `sched_wakeup` of `tid` inside the interval (`None` when it
    /// had none, e.g. a preempted thread, which was runnable all along).
    pub woken_by: Option<u32>,
}

impl OffCpu {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// Builds the off-CPU intervals of every tid in `tids`, ordered by start time.
///
/// Events are taken in time order (stable, so ties keep their recorded order). An
/// interval opens at a switch with `prev_pid == tid` and closes at the next switch with
/// `next_pid == tid` or the next [`SchedKind::SwitchIn`] of `tid`, whichever is first. A
/// switch-in with no open interval (the thread was already off-CPU
/// when recording began) and an interval still open at the end (it had not come back, or
/// it exited) are left out. A second switch-out before a switch-in (a lost sample)
/// restarts the interval.
pub fn off_cpu_intervals(events: &[SchedEvent], tids: &BTreeSet<u32>) -> Vec<OffCpu> {
    let mut order: Vec<&SchedEvent> = events.iter().collect();
    order.sort_by_key(|e| e.time_ns);
    let mut open: HashMap<u32, OffCpu> = HashMap::new();
    let mut done = Vec::new();
    for ev in order {
        match &ev.kind {
            SchedKind::Switch(s) => {
                // A thread switching to itself (possible with some schedulers' re-picks)
                // is neither out nor in.
                if s.prev_pid == s.next_pid {
                    continue;
                }
                if tids.contains(&s.prev_pid) {
                    open.insert(
                        s.prev_pid,
                        OffCpu {
                            tid: s.prev_pid,
                            start_ns: ev.time_ns,
                            end_ns: ev.time_ns,
                            state: s.prev_state.clone(),
                            woken_by: None,
                        },
                    );
                }
                if let Some(mut interval) = open.remove(&s.next_pid) {
                    interval.end_ns = ev.time_ns;
                    done.push(interval);
                }
            }
            SchedKind::Wakeup(w) => {
                if let Some(interval) = open.get_mut(&w.pid) {
                    interval.woken_by = Some(w.waker);
                }
            }
            SchedKind::SwitchIn => {
                if let Some(mut interval) = open.remove(&ev.tid) {
                    interval.end_ns = ev.time_ns;
                    done.push(interval);
                }
            }
        }
    }
    done.sort_by_key(|i| (i.start_ns, i.tid));
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{Switch, Wakeup};

    fn switch(t: u64, prev: u32, state: &str, next: u32) -> SchedEvent {
        SchedEvent {
            time_ns: t,
            cpu: 0,
            pid: prev,
            tid: prev,
            kind: SchedKind::Switch(Switch {
                prev_comm: format!("t{prev}"),
                prev_pid: prev,
                prev_prio: 120,
                prev_state: state.into(),
                next_comm: format!("t{next}"),
                next_pid: next,
                next_prio: 120,
            }),
        }
    }

    fn wakeup(t: u64, pid: u32, waker: u32) -> SchedEvent {
        SchedEvent {
            time_ns: t,
            cpu: 1,
            pid: waker,
            tid: waker,
            kind: SchedKind::Wakeup(Wakeup {
                comm: format!("t{pid}"),
                pid,
                prio: 120,
                target_cpu: 0,
                waker,
            }),
        }
    }

    fn interval(tid: u32, start: u64, end: u64, state: &str, woken_by: Option<u32>) -> OffCpu {
        OffCpu { tid, start_ns: start, end_ns: end, state: state.into(), woken_by }
    }

    #[test]
    fn sleep_wake_run() {
        let events = vec![
            switch(100, 5, "S", 0),
            wakeup(150, 5, 9),
            wakeup(170, 5, 8), // the last wake-up inside the interval wins
            switch(200, 0, "R", 5),
            switch(300, 5, "R+", 6),
            switch(350, 6, "S", 5),
        ];
        let got = off_cpu_intervals(&events, &[5].into());
        assert_eq!(
            got,
            vec![interval(5, 100, 200, "S", Some(8)), interval(5, 300, 350, "R+", None),]
        );
        assert_eq!(got[0].duration_ns(), 100);
    }

    #[test]
    fn unsorted_input_and_several_threads() {
        let events = vec![
            switch(450, 0, "R", 6),
            switch(400, 0, "R", 5),
            wakeup(350, 6, 0),
            switch(100, 5, "S", 6),
            wakeup(50, 5, 1), // before the interval: not its waker
            switch(300, 6, "S", 0),
            wakeup(380, 6, 7),
        ];
        let got = off_cpu_intervals(&events, &[5, 6].into());
        assert_eq!(
            got,
            vec![interval(5, 100, 400, "S", None), interval(6, 300, 450, "S", Some(7)),]
        );
        // Only the tids asked for.
        assert_eq!(off_cpu_intervals(&events, &[6].into()).len(), 1);
    }

    /// The switch-in seen only as a `PERF_RECORD_SWITCH` (the idle task's `sched_switch`
    /// missing), and both present (the first one closes the interval).
    #[test]
    fn switch_records_close_intervals() {
        let switch_in = |t: u64, tid: u32| SchedEvent {
            time_ns: t,
            cpu: 1,
            pid: tid,
            tid,
            kind: SchedKind::SwitchIn,
        };
        let events = vec![
            switch(100, 5, "S", 0),
            switch_in(210, 5),
            switch(300, 5, "S", 0),
            switch(400, 0, "R", 5),
            switch_in(402, 5),
            switch_in(450, 6),
        ];
        let got = off_cpu_intervals(&events, &[5, 6].into());
        assert_eq!(got, vec![interval(5, 100, 210, "S", None), interval(5, 300, 400, "S", None),]);
    }

    #[test]
    fn edges_are_left_out() {
        let events = vec![
            switch(100, 0, "R", 5), // in, never seen going out
            wakeup(120, 5, 3),      // wake-up with nothing open
            switch(200, 5, "S", 0), // out …
            switch(250, 5, "S", 0), // … out again (the switch-in was lost): restarts
            switch(300, 0, "R", 5), // in
            switch(400, 5, "X", 0), // out for good
            switch(500, 7, "S", 7), // self-switch: ignored
        ];
        let got = off_cpu_intervals(&events, &[5, 7].into());
        assert_eq!(got, vec![interval(5, 250, 300, "S", None)]);
        assert!(off_cpu_intervals(&[], &[5].into()).is_empty());
    }
}
