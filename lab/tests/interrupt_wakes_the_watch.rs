//! Ctrl-C stops a child's watch at once even where the killed child's stdout stays open:
//! here a process the child started in a session of its own keeps holding it, so the
//! pipe never ends, and only the signal thread's wake-up ends the watch. Its own test
//! binary: the SIGINT it sends itself marks the whole process interrupted.

use lab::runner::{child, signal};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn an_interrupt_ends_the_watch_though_a_grandchild_holds_the_childs_stdout() {
    signal::install();
    let tag = format!("31.{}", std::process::id());
    // The grandchild (setsid: another session and process group) inherits stdout.
    let script = format!("setsid sleep {tag} & exec sleep 60");
    let watcher = std::thread::spawn(move || {
        let t = Instant::now();
        let end = child::run(
            Path::new("sh"),
            &["-c".to_string(), script],
            None,
            Duration::from_secs(60),
            &|_| {},
        );
        (end, t.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: raise(3) sends a signal to this process; signal-hook's handler only writes
    // to its pipe, and its thread marks the run interrupted.
    unsafe { libc::raise(libc::SIGINT) };
    let (end, took) = watcher.join().expect("the watch panicked");
    let _ = std::process::Command::new("pkill").args(["-f", &format!("sleep {tag}")]).status();
    assert!(matches!(end, child::ChildEnd::Interrupted), "ended as {end:?}");
    assert!(took < Duration::from_secs(10), "the watch took {took:?} to see the interrupt");
}
