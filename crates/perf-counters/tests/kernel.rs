//! Tests against the running kernel: counting events per thread and per process (the
//! scheduler recorder's tests are in `crates/sched-recorder/tests/kernel.rs`).

use std::path::Path;
use std::time::Duration;

use perf_counters::{Counters, EventStatus, EVENTS};

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
