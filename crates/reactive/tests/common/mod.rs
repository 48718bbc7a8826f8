//! A recording subscriber for the TCK-like tests.
#![allow(dead_code)]

use reactive::{Error, Scheduler, SharedSubscription, Subscriber, Subscription, UNBOUNDED};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A pooled scheduler a test runs on, built fresh where the test wants it (inside a
/// watchdog, per run). Tests loop over [`ONE_WORKER`], [`MANY_WORKERS`] or [`pools`]: one
/// body, every scheduler.
#[derive(Clone, Copy)]
pub struct Pool {
    pub family: &'static str,
    pub workers: usize,
    build: fn(usize) -> Scheduler,
}

impl Pool {
    pub fn build(&self) -> Scheduler {
        (self.build)(self.workers)
    }
    /// The same family with `workers` threads.
    pub fn with(self, workers: usize) -> Self {
        Pool { workers, ..self }
    }
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family {
            "single" => f.write_str("single"),
            family => write!(f, "{family}({})", self.workers),
        }
    }
}

/// The one-thread schedulers: `single` and (feature `rayon`) a one-thread rayon pool.
/// Tests that need a single worker thread (one drain thread per subscription) use these.
///
/// Not the rayon pools under Miri: rayon's work-stealing deque pins crossbeam-epoch, whose
/// intrusive list (`Local::element_of`, crossbeam-epoch 0.9) fails Stacked Borrows inside
/// rayon's worker loop, before any of this crate's code runs there. The crate's own unsafe
/// code is the same on every scheduler, and Miri checks it on `single` and `parallel`.
pub const ONE_WORKER: &[Pool] = &[
    Pool { family: "single", workers: 1, build: |_| Scheduler::single() },
    #[cfg(all(feature = "rayon", not(miri)))]
    Pool { family: "rayon", workers: 1, build: Scheduler::rayon },
];

/// The multi-thread pools: `parallel(2)` (pinned) and `rayon(2)` (stolen).
pub const MANY_WORKERS: &[Pool] = &[
    Pool { family: "parallel", workers: 2, build: Scheduler::parallel },
    #[cfg(all(feature = "rayon", not(miri)))]
    Pool { family: "rayon", workers: 2, build: Scheduler::rayon },
];

/// Every pooled scheduler: [`ONE_WORKER`] then [`MANY_WORKERS`].
pub fn pools() -> impl Iterator<Item = Pool> {
    ONE_WORKER.iter().chain(MANY_WORKERS).copied()
}

/// Disposes `s` and checks that every worker was joined.
pub fn dispose(what: &str, s: &Scheduler) {
    s.dispose().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(s.live_workers(), 0, "{what}: every worker joined");
}

/// Everything a [`Recorder`] saw.
#[derive(Debug, Default, Clone)]
pub struct Log {
    pub subscribed: usize,
    pub items: Vec<u64>,
    pub errors: Vec<Error>,
    pub completes: usize,
    /// Rule violations seen (signal after terminal, concurrent signals, …).
    pub violations: Vec<String>,
}

impl Log {
    pub fn terminals(&self) -> usize {
        self.errors.len() + self.completes
    }
}

/// Shared view of a recorder's log, with a way to wait for a condition.
#[derive(Clone, Default)]
pub struct Shared {
    log: Arc<(Mutex<Log>, Condvar)>,
}

impl Shared {
    pub fn snapshot(&self) -> Log {
        self.log.0.lock().unwrap().clone()
    }
    fn with<R>(&self, f: impl FnOnce(&mut Log) -> R) -> R {
        let r = f(&mut self.log.0.lock().unwrap());
        self.log.1.notify_all();
        r
    }
    /// Waits up to 10 s for `cond`; panics with `what` if it never holds.
    pub fn wait_for(&self, what: &str, cond: impl Fn(&Log) -> bool) -> Log {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut g = self.log.0.lock().unwrap();
        while !cond(&g) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("timed out waiting for {what}; log: {:?}", summary(&g));
            }
            g = self.log.1.wait_timeout(g, left).unwrap().0;
        }
        g.clone()
    }
}

fn summary(l: &Log) -> String {
    format!(
        "subscribed {} items {} (first {:?}) errors {:?} completes {} violations {:?}",
        l.subscribed,
        l.items.len(),
        &l.items[..l.items.len().min(12)],
        l.errors,
        l.completes,
        l.violations
    )
}

/// A subscriber that records every signal and requests as configured.
pub struct Recorder {
    pub shared: Shared,
    /// Requested in `on_subscribe` (0 = nothing: a later request must come through the
    /// detached handle).
    pub initial: Option<u64>,
    /// Requested (through the lent subscription) after each `on_next`.
    pub per_next: Option<u64>,
    /// Cancel (through the lent subscription) after this many items.
    pub cancel_after: Option<usize>,
    /// If set, the detached handle is sent here from `on_subscribe`.
    pub handle_tx: Option<mpsc::Sender<SharedSubscription>>,
    busy: Arc<AtomicBool>,
    done: bool,
}

impl Recorder {
    pub fn new(initial: Option<u64>) -> (Self, Shared) {
        let shared = Shared::default();
        (
            Recorder {
                shared: shared.clone(),
                initial,
                per_next: None,
                cancel_after: None,
                handle_tx: None,
                busy: Arc::new(AtomicBool::new(false)),
                done: false,
            },
            shared,
        )
    }
    pub fn unbounded() -> (Self, Shared) {
        Recorder::new(Some(UNBOUNDED))
    }
    pub fn per_next(mut self, n: u64) -> Self {
        self.per_next = Some(n);
        self
    }
    pub fn cancel_after(mut self, n: usize) -> Self {
        self.cancel_after = Some(n);
        self
    }
    pub fn detached(mut self) -> (Self, mpsc::Receiver<SharedSubscription>) {
        let (tx, rx) = mpsc::channel();
        self.handle_tx = Some(tx);
        (self, rx)
    }

    fn enter(&self, what: &str) {
        if self.busy.swap(true, Ordering::SeqCst) {
            self.shared
                .with(|l| l.violations.push(format!("§1.3: {what} while another signal runs")));
        }
        if self.done {
            self.shared
                .with(|l| l.violations.push(format!("§1.7: {what} after a terminal signal")));
        }
    }
    fn leave(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        self.enter("on_subscribe");
        let again = self.shared.with(|l| {
            l.subscribed += 1;
            l.subscribed > 1
        });
        if again {
            self.shared.with(|l| l.violations.push("§2.5: on_subscribe twice".into()));
        }
        if let Some(tx) = self.handle_tx.take() {
            tx.send(s.detach()).unwrap();
        }
        if let Some(n) = self.initial {
            s.request(n);
        }
        self.leave();
    }
    fn on_next<S: Subscription>(&mut self, item: u64, s: &S) {
        self.enter("on_next");
        let n = self.shared.with(|l| {
            l.items.push(item);
            l.items.len()
        });
        if self.cancel_after == Some(n) {
            s.cancel();
        } else if let Some(k) = self.per_next {
            s.request(k);
        }
        self.leave();
    }
    fn on_error(&mut self, error: Error) {
        self.enter("on_error");
        self.done = true;
        self.shared.with(|l| l.errors.push(error));
        self.leave();
    }
    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.done = true;
        self.shared.with(|l| l.completes += 1);
        self.leave();
    }
}
