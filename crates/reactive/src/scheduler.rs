//! Schedulers: where `publish_on` runs its drain loop.
//!
//! * [`Scheduler::immediate`]: on the thread that schedules (Reactor's
//!   `Schedulers.immediate()`); `limit_rate` uses it.
//! * [`Scheduler::single`]: one worker thread (`Schedulers.single()`).
//! * [`Scheduler::parallel`]: `n` worker threads (`Schedulers.parallel()`); each
//!   `publish_on` subscription is pinned to one worker, picked round-robin, so its drain
//!   stays on one thread (Reactor's `Scheduler.Worker`).
//!
//! Own threads, not rayon: `publish_on` needs a *worker* that runs one subscription's
//! drain passes in order on one thread, and an idle policy we control (spin briefly, then
//! park: NOTES.md measured ~21 µs to wake a parked thread here against ~150 ns for a
//! spinning one). rayon's pool steals work between threads and sleeps by its own
//! heuristics; neither fits.
//!
//! A worker runs `Arc<dyn Task>`: dynamic dispatch once per drain pass, unavoidable since
//! one worker serves pipelines of many types. Schedulers shut down when the last
//! [`Scheduler`] handle is dropped (or on [`Scheduler::dispose`]): the workers run the
//! tasks already queued, then exit and are joined; no thread is left spinning. Work
//! scheduled afterwards is rejected (`publish_on` then signals `Error::Rejected`).

use crate::demand::SPINS;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle, Thread};

/// Work a worker runs: a drain pass.
pub trait Task: Send + Sync {
    /// Runs the task on the worker's thread.
    fn run(self: Arc<Self>);
}

/// A handle to a scheduler; clones share it.
#[derive(Clone)]
pub struct Scheduler {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Immediate,
    Pool(Arc<Pool>),
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Immediate => f.write_str("Scheduler(immediate)"),
            Kind::Pool(p) => write!(f, "Scheduler({}, {} workers)", p.name, p.workers.len()),
        }
    }
}

struct Pool {
    name: String,
    workers: Vec<Arc<WorkerShared>>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    next: AtomicUsize,
    live: Arc<AtomicUsize>,
}

/// One worker's queue and parking state.
pub(crate) struct WorkerShared {
    queue: Mutex<VecDeque<Arc<dyn Task>>>,
    len: AtomicUsize,
    parked: AtomicBool,
    shutdown: AtomicBool,
    thread: OnceLock<Thread>,
}

/// Where one `publish_on` subscription runs its drain.
#[derive(Clone)]
pub(crate) enum Worker {
    Immediate,
    Thread(Arc<WorkerShared>),
}

impl Scheduler {
    /// Runs work at once on the scheduling thread.
    pub fn immediate() -> Self {
        Scheduler { kind: Kind::Immediate }
    }

    /// One worker thread.
    pub fn single() -> Self {
        Scheduler::pool("single", 1)
    }

    /// `n` worker threads (`n == 0` means one per core, Reactor's default).
    pub fn parallel(n: usize) -> Self {
        let n = if n == 0 { thread::available_parallelism().map_or(1, |c| c.get()) } else { n };
        Scheduler::pool("parallel", n)
    }

    fn pool(name: &str, n: usize) -> Self {
        let live = Arc::new(AtomicUsize::new(0));
        let workers: Vec<Arc<WorkerShared>> = (0..n)
            .map(|_| {
                Arc::new(WorkerShared {
                    queue: Mutex::new(VecDeque::new()),
                    len: AtomicUsize::new(0),
                    parked: AtomicBool::new(false),
                    shutdown: AtomicBool::new(false),
                    thread: OnceLock::new(),
                })
            })
            .collect();
        let handles = workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let w = w.clone();
                let live = live.clone();
                live.fetch_add(1, Ordering::SeqCst);
                thread::Builder::new()
                    .name(format!("reactive-{name}-{i}"))
                    .spawn(move || {
                        w.run();
                        live.fetch_sub(1, Ordering::SeqCst);
                    })
                    .unwrap_or_else(|e| panic!("reactive: cannot spawn a {name} worker: {e}"))
            })
            .collect();
        Scheduler {
            kind: Kind::Pool(Arc::new(Pool {
                name: name.to_string(),
                workers,
                handles: Mutex::new(handles),
                next: AtomicUsize::new(0),
                live,
            })),
        }
    }

    /// Worker threads still running (0 for `immediate`, and after shutdown).
    pub fn live_workers(&self) -> usize {
        match &self.kind {
            Kind::Immediate => 0,
            Kind::Pool(p) => p.live.load(Ordering::SeqCst),
        }
    }

    /// Shuts the workers down now and joins them (also done when the last handle drops).
    /// Returns an error naming the workers that panicked.
    pub fn dispose(&self) -> Result<(), String> {
        match &self.kind {
            Kind::Immediate => Ok(()),
            Kind::Pool(p) => p.shutdown(),
        }
    }

    pub(crate) fn worker(&self) -> Worker {
        match &self.kind {
            Kind::Immediate => Worker::Immediate,
            Kind::Pool(p) => {
                let i = p.next.fetch_add(1, Ordering::Relaxed) % p.workers.len();
                Worker::Thread(p.workers[i].clone())
            }
        }
    }
}

impl Pool {
    fn shutdown(&self) -> Result<(), String> {
        for w in &self.workers {
            w.shutdown.store(true, Ordering::SeqCst);
            w.wake();
        }
        let me = thread::current().id();
        let handles: Vec<_> =
            std::mem::take(&mut *self.handles.lock().unwrap_or_else(|e| e.into_inner()));
        let mut failed = Vec::new();
        for h in handles {
            if h.thread().id() == me {
                continue; // dropped from inside a task: the worker exits by itself
            }
            let name = h.thread().name().unwrap_or("worker").to_string();
            if h.join().is_err() {
                failed.push(name);
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("scheduler workers panicked: {}", failed.join(", ")))
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A panicked worker was reported through `dispose` if anyone asked; dropping
        // must not panic.
        let _ = self.shutdown();
    }
}

impl WorkerShared {
    fn run(self: Arc<Self>) {
        let _ = self.thread.set(thread::current());
        loop {
            if let Some(task) = self.pop() {
                task.run();
                continue;
            }
            if self.shutdown.load(Ordering::SeqCst) {
                break;
            }
            if self.idle_wait() {
                continue;
            }
        }
        // Tasks that raced with the shutdown are dropped (their pipelines are abandoned).
        let left: Vec<_> = self.queue.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
        drop(left);
    }

    fn pop(&self) -> Option<Arc<dyn Task>> {
        if self.len.load(Ordering::Acquire) == 0 {
            return None;
        }
        let t = self.queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        if t.is_some() {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
        t
    }

    fn has_news(&self) -> bool {
        self.len.load(Ordering::SeqCst) > 0 || self.shutdown.load(Ordering::SeqCst)
    }

    /// Spins, then parks until work or shutdown arrives. Returns true when woken.
    fn idle_wait(&self) -> bool {
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if self.has_news() {
                return true;
            }
        }
        self.parked.store(true, Ordering::SeqCst);
        if !self.has_news() {
            let _w = handoff::wait_span!(handoff::trace::WAIT_EMPTY);
            thread::park();
        }
        self.parked.store(false, Ordering::Relaxed);
        true
    }

    fn wake(&self) {
        if self.parked.load(Ordering::SeqCst) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }
}

impl Worker {
    /// Queues `task` on this worker (or runs it now for `immediate`). Gives it back if the
    /// scheduler was shut down.
    pub(crate) fn schedule(&self, task: Arc<dyn Task>) -> Result<(), Arc<dyn Task>> {
        match self {
            Worker::Immediate => {
                task.run();
                Ok(())
            }
            Worker::Thread(w) => {
                if w.shutdown.load(Ordering::SeqCst) {
                    return Err(task);
                }
                w.queue.lock().unwrap_or_else(|e| e.into_inner()).push_back(task);
                w.len.fetch_add(1, Ordering::SeqCst);
                w.wake();
                Ok(())
            }
        }
    }
}
