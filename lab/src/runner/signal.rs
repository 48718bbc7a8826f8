//! Ctrl-C and SIGTERM: the first one kills the running children's process groups and asks
//! the runner to stop and write what finished; a second one exits at once (130).
//!
//! signal-hook delivers the signals to an ordinary thread, so nothing here runs inside a
//! signal handler. Installing replaces an ignored disposition too (a script that started
//! the lab in the background with SIGINT ignored still stops it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// A tracked child's process group, and what wakes the thread watching it.
type Tracked = (i32, Box<dyn Fn() + Send>);

static GROUPS: Mutex<Vec<Tracked>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Starts listening for SIGINT and SIGTERM (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("lab: cannot listen for Ctrl-C ({e}); an interrupt will lose the run");
                return;
            }
        };
        std::thread::Builder::new()
            .name("lab-signals".into())
            .spawn(move || {
                for _ in signals.forever() {
                    let again = INTERRUPTED.swap(true, Ordering::SeqCst);
                    kill_all();
                    if again {
                        eprintln!("lab: interrupted twice; exiting now");
                        std::process::exit(crate::error::Error::Interrupted.exit_code());
                    }
                    eprintln!(
                        "lab: interrupted; stopping and writing what finished (again to quit now)"
                    );
                }
            })
            .expect("spawn the signal thread");
    });
}

/// True once SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Remembers a child's process group, to kill it on interrupt and then call `wake`: the
/// thread watching the child sleeps until something comes, and a killed group's stdout
/// need not end (a process it started in another group may hold it).
pub fn track(pgid: i32, wake: impl Fn() + Send + 'static) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push((pgid, Box::new(wake)));
}

/// Forgets a child's process group.
pub fn untrack(pgid: i32) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|(g, _)| *g != pgid);
}

/// Kills a process group (SIGKILL); a group that is gone already is fine.
pub fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory
        // effects in this process, and a stale group id fails with ESRCH, which we ignore.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

fn kill_all() {
    for (g, wake) in GROUPS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        kill_group(*g);
        wake();
    }
}
