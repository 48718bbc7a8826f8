//! Tests against the running kernel. The recorder test needs CPU-wide tracepoints (root or
//! CAP_PERFMON, as in CI): where they aren't permitted it fails with the reason.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perf_counters::{
    gettid, monotonic_ns, off_cpu_intervals, Counters, EventStatus, SchedKind, SchedRecorder,
    EVENTS,
};

fn spin_for(d: Duration) {
    let end = Instant::now() + d;
    let mut x = 0u64;
    while Instant::now() < end {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Burns `d` of this thread's CPU time (not wall time: the VM is shared and busy).
fn burn_cpu(d: Duration) {
    let end = thread_cpu_ns() + d.as_nanos() as u64;
    let mut x = 0u64;
    while thread_cpu_ns() < end {
        for _ in 0..100 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

#[test]
fn forced_unavailable_reads_none_with_a_note() {
    let c = Counters::builder().force_unavailable(true).current_thread();
    c.enable().unwrap();
    let values = c.read();
    assert_eq!(values.len(), EVENTS.len());
    assert!(values.values().all(Option::is_none), "{values:?}");
    let note = c.note().expect("a note");
    assert!(note.contains("forced unavailable"), "{note}");
    assert!(c.availability().values().all(|s| matches!(s, EventStatus::Unavailable(_))));
}

#[test]
fn forced_unavailable_recorder_says_why() {
    let options = perf_counters::SchedOptions { force_unavailable: true, ..Default::default() };
    let err = SchedRecorder::start_with(perf_counters::Target::All, &options).unwrap_err();
    assert!(err.to_string().contains("forced unavailable"), "{err}");
}

/// A machine with a CPU PMU must count cycles and instructions: no silent nulls. Where
/// there is none (this VM), the note must say so.
#[test]
fn hardware_events_exist_wherever_a_pmu_does() {
    let c = Counters::for_current_thread();
    c.enable().unwrap();
    burn_cpu(Duration::from_millis(5));
    c.disable().unwrap();
    let v = c.read();
    println!("values {v:?}\nnote {:?}", c.note());
    if Path::new("/sys/bus/event_source/devices/cpu").exists() {
        assert!(
            v["cycles"].is_some() && v["instructions"].is_some(),
            "this machine has a PMU but cycles/instructions are null: {:?}",
            c.note()
        );
        assert!(perf_counters::ipc(&v).is_some());
    } else {
        assert_eq!(v["cycles"], None);
        let note = c.note().expect("a note for the null hardware events");
        assert!(note.contains("no hardware PMU"), "{note}");
    }
    // Software events work everywhere perf_event_open does.
    let task_clock = v["task-clock"].expect("task-clock");
    assert!(task_clock >= 4.5e6, "task-clock {task_clock} ns after 5 ms of CPU time");
    assert!(v["page-faults"].is_some() && v["cpu-migrations"].is_some());
}

#[test]
fn process_counters_sum_threads() {
    let c = Counters::for_process();
    c.enable().unwrap();
    let t = std::thread::spawn(|| burn_cpu(Duration::from_millis(5)));
    burn_cpu(Duration::from_millis(5));
    t.join().unwrap();
    c.disable().unwrap();
    let task_clock = c.read()["task-clock"].expect("task-clock");
    // Both the main thread and a thread spawned after opening (inherit).
    assert!(task_clock >= 9e6, "task-clock {task_clock} ns after 2 × 5 ms of CPU time");
}

/// A thread sleeps 50 times for 1 ms between short busy bits: about 50 off-CPU intervals
/// in state S, and at least 40 context switches.
#[test]
fn records_the_sleeps_of_a_thread() {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::Builder::new()
        .name("sleeper".into())
        .spawn(move || {
            tid_tx.send(gettid()).unwrap();
            go_rx.recv().unwrap();
            for _ in 0..50 {
                spin_for(Duration::from_micros(100));
                std::thread::sleep(Duration::from_millis(1));
            }
            spin_for(Duration::from_micros(100));
        })
        .unwrap();
    let tid = tid_rx.recv().unwrap();

    let counters = Counters::for_thread(tid);
    let t0 = monotonic_ns();
    let recorder = match SchedRecorder::start(std::process::id()) {
        Ok(r) => r,
        Err(why) => {
            drop(go_tx);
            let _ = worker.join();
            panic!("sched tracepoints unavailable here (this test needs them): {why}");
        }
    };
    counters.enable().unwrap();
    go_tx.send(()).unwrap();
    worker.join().unwrap();
    counters.disable().unwrap();
    let recording = recorder.stop();
    // After stop (which disables the events before its last drain): no event is later.
    // (Not right after join: an exiting thread wakes its joiner before its last switch.)
    let t1 = monotonic_ns();
    let values = counters.read();
    println!(
        "route: {}; cpus {:?}; {} events, lost {}, throttled {}, unparsed {}",
        recording.id_route,
        recording.cpus,
        recording.events.len(),
        recording.lost,
        recording.throttled,
        recording.unparsed
    );
    assert_eq!(recording.lost, 0, "ring overflow in a quiet test");

    let mine: Vec<_> = recording
        .events
        .iter()
        .filter(|e| match &e.kind {
            SchedKind::Switch(s) => s.prev_pid == tid || s.next_pid == tid,
            SchedKind::Wakeup(w) => w.pid == tid,
            SchedKind::SwitchIn => e.tid == tid,
        })
        .collect();
    assert!(!mine.is_empty(), "no events for tid {tid}");
    // use_clockid(CLOCK_MONOTONIC): the thread's events lie between two clock reads.
    for e in &mine {
        assert!(
            e.time_ns >= t0 && e.time_ns <= t1,
            "event at {} outside [{t0}, {t1}]: {e:?}",
            e.time_ns
        );
    }
    assert!(mine.iter().any(|e| matches!(&e.kind,
        SchedKind::Switch(s) if s.prev_pid == tid && s.prev_comm == "sleeper")));

    let intervals = off_cpu_intervals(&recording.events, &BTreeSet::from([tid]));
    let sleeping: Vec<_> = intervals.iter().filter(|i| i.state == "S").collect();
    println!(
        "{} intervals, {} in S; first: {:?}",
        intervals.len(),
        sleeping.len(),
        intervals.first()
    );
    assert!(
        (38..=62).contains(&sleeping.len()),
        "{} S intervals for 50 sleeps ({} events of the thread, lost {}, throttled {}): {intervals:?}",
        sleeping.len(),
        mine.len(),
        recording.lost,
        recording.throttled
    );
    for i in &sleeping {
        assert!(i.duration_ns() >= 900_000, "a 1 ms sleep off-CPU only {} ns", i.duration_ns());
    }
    let switches = values["context-switches"].expect("context-switches counted");
    assert!(switches >= 40.0, "{switches} context switches for 50 sleeps");
}
