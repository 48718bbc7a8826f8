//! Schedulers: where `publish_on` runs its drain loop.
//!
//! * [`Scheduler::immediate`]: on the thread that schedules (Reactor's
//!   `Schedulers.immediate()`); `limit_rate` uses it.
//! * [`Scheduler::single`]: one worker thread (`Schedulers.single()`).
//! * [`Scheduler::parallel`]: `n` worker threads (`Schedulers.parallel()`); each
//!   `publish_on` subscription is pinned to one worker, picked round-robin, so its drain
//!   stays on one thread (Reactor's `Scheduler.Worker`).
//! * `Scheduler::rayon` (cargo feature `rayon`, on by default): a `rayon::ThreadPool` of
//!   `n` threads named `rayon-worker-i`; every scheduled drain is a rayon job.
//!
//! # Own threads, and what the rayon pool does differently
//!
//! `single` and `parallel` run threads of their own because `publish_on` was designed
//! around a *worker*: one subscription's drain passes run in order on one thread, and the
//! idle policy is ours (spin, then park: a spinning thread picks work up orders of
//! magnitude sooner than a parked one is woken; figures: docs/design-figures.md). The
//! rayon pool gives both up:
//!
//! * **No per-subscription pinning; work stealing.** A drain scheduled from outside the
//!   pool goes to rayon's global injector queue, one scheduled from a rayon thread (a
//!   drain whose request woke another `publish_on`) to that thread's own deque (FIFO for
//!   `spawn_fifo`), and any idle thread may take or steal it. Successive drains of one subscription can run on
//!   different threads, so a subscriber sees its signals on whichever `rayon-worker-i`
//!   ran that drain, and a `range` upstream travels with the demand from one to the next.
//! * **Ordering is still kept by `publish_on`'s WIP loop, not by the pool.** A drain is
//!   scheduled only by the thread that moves the subscription's WIP counter from 0, and
//!   the drain gives WIP up only when it leaves (the missed-count loop), so at most one job
//!   per subscription is queued or running at any time: drains never overlap, the signals
//!   stay serial (§1.3) and in order. Each holder's writes reach the next one through the
//!   WIP read-modify-writes and rayon's queue (a job's push happens-before its run).
//!   Jobs are spawned with `spawn_fifo`: oldest first, like the own workers' queues.
//! * **rayon's own sleep heuristics.** An idle rayon thread searches its deque, the other
//!   threads' and the injector for a number of rounds (32 in rayon-core 1.13), calling
//!   `thread::yield_now` between them, then sleeps on a condition variable until a new job
//!   wakes it; our spin-then-park policy and its
//!   `WAIT_EMPTY` trace spans do not apply there. No wake-up is lost: whether to schedule
//!   at all is still decided by `publish_on`'s Dekker handshake, and rayon runs every job
//!   it was given.
//! * **Costs.** Each scheduled drain is one boxed rayon job plus a read lock on the pool's
//!   slot (once per drain, never per element). Against the own pools, side by side in one
//!   run with paired rounds (`lab publish-on-latency --scheduler all` and `lab
//!   subscribe-overhead --scheduler all`), neither cost nor saving shows in throughput or
//!   latency (figures: docs/design-figures.md). The reason nothing shows: in these
//!   pipelines one drain keeps its subscription's work on one thread (publish-on-latency's
//!   "crossed threads" column stays low), so the only
//!   difference left is one job push per drain, and with prefetch 256 a drain passes
//!   hundreds of elements. Where many subscriptions share few threads, rayon's stealing
//!   is what would differ; no experiment here has that shape yet.
//! * **Panics.** rayon catches a drain's panic and the thread lives on (an own worker dies
//!   with it); [`Scheduler::dispose`] reports the threads it happened on.
//! * **Nesting.** A drain that blocks inside rayon on this pool (`join`, `scope`) may run
//!   other jobs meanwhile, i.e. other subscriptions' drains nested on its stack, never its
//!   own (it holds WIP).
//!
//! A worker runs `Arc<dyn Task>`: dynamic dispatch once per drain pass, unavoidable since
//! one worker serves pipelines of many types. Schedulers shut down when the last
//! [`Scheduler`] handle is dropped (or on [`Scheduler::dispose`]): the workers run the
//! tasks already queued, then exit and are joined; no thread is left spinning. Work
//! scheduled afterwards is rejected (`publish_on` then signals `Error::Rejected`). On the
//! own pools a task that races with the shutdown may be dropped unrun; on the rayon pool it
//! cannot (the pool leaves its slot under a write lock, and rayon lets its threads exit
//! only once every job spawned before has run). Disposed (or dropped) from inside one of
//! its own drains, an own pool joins all workers but the current one; the rayon pool joins
//! none (rayon lets no thread exit before that very job returns, so joining would
//! deadlock): they exit as soon as it returns, and `live_workers` falls to 0 then.

use crate::demand::SPINS;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle, Thread};

#[cfg(feature = "rayon")]
mod rayon_pool;

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
    #[cfg(feature = "rayon")]
    Rayon(Arc<rayon_pool::RayonPool>),
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Immediate => f.write_str("Scheduler(immediate)"),
            Kind::Pool(p) => write!(f, "Scheduler({}, {} workers)", p.name, p.workers.len()),
            #[cfg(feature = "rayon")]
            Kind::Rayon(p) => write!(f, "Scheduler(rayon, {} workers)", p.0.threads()),
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
    /// Any thread of a rayon pool, drain by drain.
    #[cfg(feature = "rayon")]
    Rayon(Arc<rayon_pool::RayonShared>),
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

    /// A `rayon::ThreadPool` of `n` threads named `rayon-worker-i` (`n == 0` means one per
    /// core). Drains are rayon jobs: not pinned to a thread, stolen by idle ones; see the
    /// [module docs](self) for what that changes and what it keeps.
    #[cfg(feature = "rayon")]
    pub fn rayon(n: usize) -> Self {
        let n = if n == 0 { thread::available_parallelism().map_or(1, |c| c.get()) } else { n };
        Scheduler {
            kind: Kind::Rayon(Arc::new(rayon_pool::RayonPool(rayon_pool::RayonShared::new(n)))),
        }
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
            #[cfg(feature = "rayon")]
            Kind::Rayon(p) => p.0.live(),
        }
    }

    /// Shuts the workers down now and joins them (also done when the last handle drops).
    /// Returns an error naming the workers that panicked.
    pub fn dispose(&self) -> Result<(), String> {
        match &self.kind {
            Kind::Immediate => Ok(()),
            Kind::Pool(p) => p.shutdown(),
            #[cfg(feature = "rayon")]
            Kind::Rayon(p) => p.0.shutdown(),
        }
    }

    pub(crate) fn worker(&self) -> Worker {
        match &self.kind {
            Kind::Immediate => Worker::Immediate,
            Kind::Pool(p) => {
                let i = p.next.fetch_add(1, Ordering::Relaxed) % p.workers.len();
                Worker::Thread(p.workers[i].clone())
            }
            #[cfg(feature = "rayon")]
            Kind::Rayon(p) => Worker::Rayon(p.0.clone()),
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
        // Two RMWs on `parked` make the handshake with `wake`: either its RMW comes later
        // and reads `true`, or this swap reads its write and acquires the task queued
        // before it. (A store here and a load there, to different places, relied on the
        // SeqCst total order alone; Miri's weak-memory emulation found a lost wake-up.)
        self.parked.swap(true, Ordering::AcqRel);
        if !self.has_news() {
            let _w = handoff::wait_span!(handoff::trace::WAIT_EMPTY);
            thread::park();
        }
        self.parked.store(false, Ordering::Relaxed);
        true
    }

    fn wake(&self) {
        // An RMW that writes back what it reads: see `idle_wait`.
        if self.parked.fetch_or(false, Ordering::AcqRel) {
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
            #[cfg(feature = "rayon")]
            Worker::Rayon(r) => r.schedule(task),
        }
    }
}
