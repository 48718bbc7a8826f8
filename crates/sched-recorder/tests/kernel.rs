//! Tests against the running kernel. The recorder tests need CPU-wide tracepoints (root or
//! CAP_PERFMON, as in CI): where they aren't permitted they fail with the reason.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use perf_counters::{gettid, monotonic_ns, Counters};
use sched_recorder::{
    off_cpu_intervals, SchedKind, SchedOptions, SchedRecorder, SchedRecording, Target,
};

/// Held by the tests that record the scheduler, so that they run one at a time: each counts
/// the sleeps of its own threads, and a neighbour's spinning thread on this 2-CPU machine
/// delays them (a thread that had not yet blocked when recording began shows a short
/// extra sleep).
static RECORDING: Mutex<()> = Mutex::new(());

fn one_recording_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    RECORDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn spin_for(d: Duration) {
    let end = Instant::now() + d;
    let mut x = 0u64;
    while Instant::now() < end {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

#[test]
fn forced_unavailable_recorder_says_why() {
    let options = SchedOptions { force_unavailable: true, ..Default::default() };
    let err = SchedRecorder::start_with(Target::All, &options).unwrap_err();
    assert!(err.to_string().contains("forced unavailable"), "{err}");
}

/// A thread sleeps 50 times for 1 ms between short busy bits: about 50 off-CPU intervals
/// in state S, and at least 40 context switches.
#[test]
fn records_the_sleeps_of_a_thread() {
    let _one = one_recording_at_a_time();
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
    let t_go = monotonic_ns();
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
            SchedKind::Wakeup(w) | SchedKind::Waking(w) => w.pid == tid,
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
    // The wait for `go` is no 1 ms sleep; it is recorded too where the worker had not yet
    // blocked when recording began (it began before `go` was sent).
    for i in sleeping.iter().filter(|i| i.start_ns >= t_go) {
        assert!(i.duration_ns() >= 900_000, "a 1 ms sleep off-CPU only {} ns", i.duration_ns());
    }
    let switches = values["context-switches"].expect("context-switches counted");
    assert!(switches >= 40.0, "{switches} context switches for 50 sleeps");
}

/// Wake-ups of the sleeper in [`condvar_handoffs`].
const ROUNDS: u64 = 100;

/// A sleeper waits on a condvar (a futex) [`ROUNDS`] times; a second thread spins until the
/// sleeper says it is about to wait, spins 10 µs more (so the sleeper's CPU has gone idle
/// or is on its way there), then bumps the count and notifies: the kind of wake-up the
/// kernel may hand to the sleeper's CPU to complete, whose `sched_wakeup` is then emitted
/// there by the idle task (or not at all, where that idle task emits no samples). Which
/// happens depends on where the two threads run, so only `sched_waking` is relied on.
/// Returns the recording and the (sleeper, waker) tids.
fn condvar_handoffs(options: &SchedOptions) -> (SchedRecording, u32, u32) {
    let _one = one_recording_at_a_time();
    let state = Arc::new((Mutex::new(0u64), Condvar::new(), AtomicBool::new(false)));
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let s = Arc::clone(&state);
    let sleeper_tx = tid_tx.clone();
    let sleeper = std::thread::Builder::new()
        .name("sleeper".into())
        .spawn(move || {
            sleeper_tx.send(("sleeper", gettid())).unwrap();
            let (lock, cv, waiting) = &*s;
            let mut seen = lock.lock().unwrap();
            for round in 1..=ROUNDS {
                while *seen < round {
                    // Under the lock, which the waker takes to bump the count: its notify
                    // comes after `wait` has released the lock.
                    waiting.store(true, Ordering::SeqCst);
                    seen = cv.wait(seen).unwrap();
                }
            }
        })
        .unwrap();
    let s = Arc::clone(&state);
    let waker = std::thread::Builder::new()
        .name("waker".into())
        .spawn(move || {
            tid_tx.send(("waker", gettid())).unwrap();
            go_rx.recv().unwrap();
            let (lock, cv, waiting) = &*s;
            // One bump per `waiting` taken; the sleeper sets it only while short of a bump,
            // so neither side can be left waiting for the other.
            for _ in 0..ROUNDS {
                while !waiting.swap(false, Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                spin_for(Duration::from_micros(10));
                *lock.lock().unwrap() += 1;
                cv.notify_one();
            }
        })
        .unwrap();
    let tids: std::collections::HashMap<_, _> = tid_rx.iter().take(2).collect();
    let target = Target::Threads(vec![tids["sleeper"], tids["waker"]]);
    let recorder = match SchedRecorder::start_with(target, options) {
        Ok(r) => r,
        Err(why) => {
            drop(go_tx);
            let _ = waker.join();
            panic!("sched tracepoints unavailable here (this test needs them): {why}");
        }
    };
    go_tx.send(()).unwrap();
    waker.join().unwrap();
    sleeper.join().unwrap();
    (recorder.stop(), tids["sleeper"], tids["waker"])
}

/// `sched_waking` names the thread that called `notify_one` as the waker, wherever the
/// wake-up completed (`sched_wakeup` names the idle task when it completed on an idle CPU,
/// and is missing where that idle task emits no samples); and so do the sleeper's off-CPU
/// intervals.
#[test]
fn waking_names_the_thread_that_notified() {
    let (rec, sleeper, waker) = condvar_handoffs(&SchedOptions::default());
    assert!(rec.waking, "sched_waking not recorded: {:?}", rec.note);
    assert_eq!(rec.lost, 0, "ring overflow in a quiet test");
    let of_sleeper = |waking: bool| -> Vec<(&sched_recorder::SchedEvent, u32)> {
        rec.events
            .iter()
            .filter_map(|e| match &e.kind {
                SchedKind::Waking(w) if waking && w.pid == sleeper => Some((e, w.waker)),
                SchedKind::Wakeup(w) if !waking && w.pid == sleeper => Some((e, w.waker)),
                _ => None,
            })
            .collect()
    };
    let (wakings, wakeups) = (of_sleeper(true), of_sleeper(false));
    let by = |v: &[(_, u32)], tid: u32| v.iter().filter(|(_, w)| *w == tid).count();
    println!(
        "sleeper {sleeper}, waker {waker}: sched_waking {} ({} by the waker), sched_wakeup {} \
         ({} by the waker, {} by the idle task)",
        wakings.len(),
        by(&wakings, waker),
        wakeups.len(),
        by(&wakeups, waker),
        by(&wakeups, 0)
    );
    for (e, w) in &wakings {
        // In the waker's context: the waker is the sampled tid.
        assert_eq!(*w, e.tid, "{e:?}");
    }
    let min = (ROUNDS * 8 / 10) as usize;
    assert!(by(&wakings, waker) >= min, "{} sched_waking by the waker", by(&wakings, waker));

    let intervals = off_cpu_intervals(&rec.events, &BTreeSet::from([sleeper]));
    let sleeps: Vec<_> = intervals.iter().filter(|i| i.state == "S").collect();
    let by_waker = sleeps.iter().filter(|i| i.woken_by == Some(waker)).count();
    println!("{} S intervals, {by_waker} woken by the waker", sleeps.len());
    assert!(sleeps.len() >= min, "{} S intervals for {ROUNDS} waits: {intervals:?}", sleeps.len());
    assert!(
        by_waker * 10 >= sleeps.len() * 9,
        "{by_waker} of {} S intervals woken by the waker: {sleeps:?}",
        sleeps.len()
    );
    for i in &sleeps {
        let at = i.woken_at_ns.expect("a woken interval has a wake-up time");
        assert!(at <= i.end_ns, "woken at {at}, after the switch-in: {i:?}");
    }
}

/// Without `sched_waking` the recorder keeps going with the other two and says so; the
/// wakers are then `sched_wakeup`'s.
#[test]
fn without_waking_the_note_says_so() {
    let options = SchedOptions { waking: false, ..Default::default() };
    let (rec, sleeper, waker) = condvar_handoffs(&options);
    assert!(!rec.waking);
    let note = rec.note.as_deref().unwrap_or_default();
    assert!(note.contains("no sched_waking"), "{note:?}");
    assert!(!rec.events.iter().any(|e| matches!(e.kind, SchedKind::Waking(_))));
    let intervals = off_cpu_intervals(&rec.events, &BTreeSet::from([sleeper]));
    let sleeps: Vec<_> = intervals.iter().filter(|i| i.state == "S").collect();
    let by_waker = sleeps.iter().filter(|i| i.woken_by == Some(waker)).count();
    println!("without sched_waking: {} S intervals, {by_waker} woken by the waker", sleeps.len());
    assert!(sleeps.len() as u64 >= ROUNDS * 8 / 10, "{intervals:?}");
}
