//! Records a sleeping thread repeatedly; prints a summary per try, and the thread's
//! events when a try sees fewer sleeps than it made (a debugging aid).
use std::time::{Duration, Instant};

use perf_counters::gettid;
use sched_recorder::{off_cpu_intervals, SchedKind, SchedOptions, SchedRecorder, Target};

fn main() {
    let all = std::env::args().any(|a| a == "all");
    for round in 0..10 {
        let target = if all { Target::All } else { Target::Process(std::process::id()) };
        let rec = SchedRecorder::start_with(target, &SchedOptions::default()).expect("start");
        let t = std::thread::spawn(|| {
            let tid = gettid();
            for _ in 0..50 {
                let end = Instant::now() + Duration::from_micros(100);
                while Instant::now() < end {}
                std::thread::sleep(Duration::from_millis(1));
            }
            tid
        });
        let tid = t.join().unwrap();
        let r = rec.stop();
        let iv = off_cpu_intervals(&r.events, &[tid].into());
        let s = iv.iter().filter(|i| i.state == "S").count();
        let per_cpu: Vec<usize> =
            r.cpus.iter().map(|c| r.events.iter().filter(|e| e.cpu == *c).count()).collect();
        println!(
            "round {round}: events {} per cpu {per_cpu:?} lost {} throttled {} S {s}",
            r.events.len(),
            r.lost,
            r.throttled
        );
        let mut ctx: std::collections::BTreeMap<(u32, u32), usize> = Default::default();
        for e in &r.events {
            *ctx.entry((e.cpu, e.pid)).or_default() += 1;
        }
        println!("  (cpu, sampled pid) -> events: {ctx:?}");
        if s < 40 && !all {
            let mut prev_t = r.events.first().map_or(0, |e| e.time_ns);
            for e in &r.events {
                let line = match &e.kind {
                    SchedKind::Switch(s) => format!(
                        "switch {}:{} {} -> {}:{}",
                        s.prev_comm, s.prev_pid, s.prev_state, s.next_comm, s.next_pid
                    ),
                    SchedKind::Wakeup(w) => format!("wakeup {}:{} by {}", w.comm, w.pid, w.waker),
                    SchedKind::Waking(w) => format!("waking {}:{} by {}", w.comm, w.pid, w.waker),
                    SchedKind::SwitchIn => format!("switch-in {}", e.tid),
                };
                println!("{:>8} cpu{} [{}] {line}", (e.time_ns - prev_t) / 1000, e.cpu, e.tid);
                prev_t = e.time_ns;
            }
            break;
        }
    }
}
