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
    /// Who woke it: the waker of its last `sched_waking` (see [`off_cpu_intervals`] for
    /// which ones count), else of its last `sched_wakeup` inside the interval; `None` when
    /// it had neither, e.g. a preempted thread, which was runnable all along.
    pub woken_by: Option<u32>,
    /// When that wake-up was emitted (CLOCK_MONOTONIC ns). A `sched_waking` can lie a little
    /// before `start_ns`: the waker got there while the thread was still switching out.
    pub woken_at_ns: Option<u64>,
}

impl OffCpu {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// An interval not yet closed, with the wake-ups seen so far: `(time, waker)`.
struct Open {
    interval: OffCpu,
    waking: Option<(u64, u32)>,
    wakeup: Option<(u64, u32)>,
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
///
/// The waker is that of the last [`SchedKind::Waking`] of `tid` before the switch-in,
/// because `sched_waking` is emitted in the waker's context; only where there is none, that
/// of the last [`SchedKind::Wakeup`] inside the interval (which, for a wake-up completed
/// on an idle CPU, names the idle task). A `sched_waking` counts from the thread's previous
/// switch-in on: `try_to_wake_up` may emit it while the sleeper is between giving up its
/// state and its `sched_switch`, and then waits for that switch to finish before it
/// wakes it. One before the switch-out of a runnable thread (`R`, `R+`) is left out: that
/// wake-up found the thread still on its run queue and so ended no sleep. So is one before
/// the switch-out whose waker is the thread itself (an interrupt on its own CPU): that
/// wake-up set it running before it could sleep.
pub fn off_cpu_intervals(events: &[SchedEvent], tids: &BTreeSet<u32>) -> Vec<OffCpu> {
    let mut order: Vec<&SchedEvent> = events.iter().collect();
    order.sort_by_key(|e| e.time_ns);
    let mut open: HashMap<u32, Open> = HashMap::new();
    // The last `sched_waking` of a running tid since its last switch-in.
    let mut early: HashMap<u32, (u64, u32)> = HashMap::new();
    let mut done = Vec::new();
    let mut close = |open: &mut HashMap<u32, Open>, early: &mut HashMap<u32, _>, tid, at| {
        early.remove(&tid);
        if let Some(o) = open.remove(&tid) {
            let mut interval = o.interval;
            interval.end_ns = at;
            if let Some((t, w)) = o.waking.or(o.wakeup) {
                (interval.woken_at_ns, interval.woken_by) = (Some(t), Some(w));
            }
            done.push(interval);
        }
    };
    for ev in order {
        match &ev.kind {
            SchedKind::Switch(s) => {
                // A thread switching to itself (possible with some schedulers' re-picks)
                // is neither out nor in.
                if s.prev_pid == s.next_pid {
                    continue;
                }
                if tids.contains(&s.prev_pid) {
                    let asleep = !s.prev_state.starts_with('R');
                    let waking =
                        early.remove(&s.prev_pid).filter(|&(_, by)| asleep && by != s.prev_pid);
                    let interval = OffCpu {
                        tid: s.prev_pid,
                        start_ns: ev.time_ns,
                        end_ns: ev.time_ns,
                        state: s.prev_state.clone(),
                        woken_by: None,
                        woken_at_ns: None,
                    };
                    open.insert(s.prev_pid, Open { interval, waking, wakeup: None });
                }
                close(&mut open, &mut early, s.next_pid, ev.time_ns);
            }
            SchedKind::Wakeup(w) => {
                if let Some(o) = open.get_mut(&w.pid) {
                    o.wakeup = Some((ev.time_ns, w.waker));
                }
            }
            SchedKind::Waking(w) => match open.get_mut(&w.pid) {
                Some(o) => o.waking = Some((ev.time_ns, w.waker)),
                None if tids.contains(&w.pid) => {
                    early.insert(w.pid, (ev.time_ns, w.waker));
                }
                None => {}
            },
            SchedKind::SwitchIn => close(&mut open, &mut early, ev.tid, ev.time_ns),
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

    fn wake(t: u64, pid: u32, waker: u32, kind: fn(Wakeup) -> SchedKind) -> SchedEvent {
        SchedEvent {
            time_ns: t,
            cpu: 1,
            pid: waker,
            tid: waker,
            kind: kind(Wakeup { comm: format!("t{pid}"), pid, prio: 120, target_cpu: 0, waker }),
        }
    }

    /// A `PERF_RECORD_SWITCH` switch-in of `tid` on CPU 1.
    fn switch_in(t: u64, tid: u32) -> SchedEvent {
        SchedEvent { time_ns: t, cpu: 1, pid: tid, tid, kind: SchedKind::SwitchIn }
    }

    fn wakeup(t: u64, pid: u32, waker: u32) -> SchedEvent {
        wake(t, pid, waker, SchedKind::Wakeup)
    }

    fn waking(t: u64, pid: u32, waker: u32) -> SchedEvent {
        wake(t, pid, waker, SchedKind::Waking)
    }

    /// `woken`: (waker, time of its wake-up).
    fn interval(tid: u32, start: u64, end: u64, state: &str, woken: Option<(u32, u64)>) -> OffCpu {
        OffCpu {
            tid,
            start_ns: start,
            end_ns: end,
            state: state.into(),
            woken_by: woken.map(|w| w.0),
            woken_at_ns: woken.map(|w| w.1),
        }
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
            vec![interval(5, 100, 200, "S", Some((8, 170))), interval(5, 300, 350, "R+", None),]
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
            vec![interval(5, 100, 400, "S", None), interval(6, 300, 450, "S", Some((7, 380))),]
        );
        // Only the tids asked for.
        assert_eq!(off_cpu_intervals(&events, &[6].into()).len(), 1);
    }

    /// The switch-in seen only as a `PERF_RECORD_SWITCH` (the idle task's `sched_switch`
    /// missing), and both present (the first one closes the interval).
    #[test]
    fn switch_records_close_intervals() {
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

    /// `sched_waking` names the waker where `sched_wakeup`, emitted on the idle target CPU,
    /// names the idle task (0); `sched_wakeup` is the fallback.
    #[test]
    fn waking_names_the_waker() {
        let events = vec![
            switch(100, 5, "S", 0),
            waking(150, 5, 9),
            wakeup(160, 5, 0), // completed on the idle CPU: sampled as the idle task
            switch(200, 0, "R", 5),
            switch(300, 5, "S", 0),
            wakeup(350, 5, 4), // no sched_waking (lost, or an older kernel): the fallback
            switch(400, 0, "R", 5),
            switch(500, 5, "S", 0),
            waking(510, 5, 9),
            waking(520, 5, 8), // the last one wins
            wakeup(530, 5, 0),
            switch(600, 0, "R", 5),
        ];
        let got = off_cpu_intervals(&events, &[5].into());
        assert_eq!(
            got,
            vec![
                interval(5, 100, 200, "S", Some((9, 150))),
                interval(5, 300, 400, "S", Some((4, 350))),
                interval(5, 500, 600, "S", Some((8, 520))),
            ]
        );
    }

    /// A `sched_waking` emitted while the sleeper was still on its way out counts for the
    /// sleep that follows; one before a preemption, one by the thread itself, or one from
    /// before the previous switch-in, does not.
    #[test]
    fn waking_before_the_switch_out() {
        let events = vec![
            waking(40, 5, 2), // woken before the recording saw it go out …
            switch_in(60, 5), // … and back: that wake-up is done with
            switch(100, 5, "S", 0),
            switch_in(150, 5),
            waking(190, 5, 9), // still on CPU, about to sleep
            switch(200, 5, "S", 0),
            wakeup(220, 5, 0),
            switch_in(300, 5),
            waking(350, 5, 7), // found it on its run queue: no sleep ended
            switch(400, 5, "R+", 6),
            switch(450, 6, "S", 5),
            waking(480, 5, 5), // an interrupt on its own CPU: set it running again
            switch(500, 5, "S", 0),
            switch_in(550, 5),
        ];
        let got = off_cpu_intervals(&events, &[5, 6].into());
        assert_eq!(
            got,
            vec![
                interval(5, 100, 150, "S", None),
                interval(5, 200, 300, "S", Some((9, 190))),
                interval(5, 400, 450, "R+", None),
                interval(5, 500, 550, "S", None),
            ]
        );
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
