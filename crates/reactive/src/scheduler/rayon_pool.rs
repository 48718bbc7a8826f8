//! [`Scheduler::rayon`](super::Scheduler::rayon): each scheduled drain pass is a job on a
//! `rayon::ThreadPool` whose threads we spawn ourselves (rayon's `spawn_handler`), so that
//! shutdown can join them and `live_workers` can count them. See the module docs of
//! [`scheduler`](super) for what differs from the own-thread pools.

use super::Task;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::{self, JoinHandle};

/// What a `publish_on` subscription holds to schedule its drains (through
/// `Worker::Rayon`); it does not keep the pool running: [`RayonPool`] does.
pub(crate) struct RayonShared {
    /// The pool; `None` once shut down, and `schedule` then gives the task back. Readers
    /// (schedulers) only call `spawn_fifo` under the lock, which never blocks on user code.
    pool: RwLock<Option<rayon::ThreadPool>>,
    /// The pool's threads, joined on shutdown.
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// Threads started and not yet returned from rayon's main loop.
    live: Arc<AtomicUsize>,
    /// Names of the threads on which a drain panicked (rayon catches the panic and the
    /// thread lives on); reported once by `shutdown`.
    panicked: Arc<Mutex<Vec<String>>>,
    threads: usize,
}

/// The scheduler handles' share: shuts the pool down when the last handle drops.
pub(super) struct RayonPool(pub(super) Arc<RayonShared>);

impl Drop for RayonPool {
    fn drop(&mut self) {
        // A panicked drain was reported through `dispose` if anyone asked; dropping must
        // not panic.
        let _ = self.0.shutdown();
    }
}

impl RayonShared {
    /// A pool of `n >= 1` threads named `rayon-worker-i`.
    pub(super) fn new(n: usize) -> Arc<Self> {
        let live = Arc::new(AtomicUsize::new(0));
        let panicked = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::with_capacity(n);
        let on_panic = panicked.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("rayon-worker-{i}"))
            .panic_handler(move |_payload| {
                let name = thread::current().name().unwrap_or("rayon-worker").to_string();
                let mut p = on_panic.lock().unwrap_or_else(PoisonError::into_inner);
                if !p.contains(&name) {
                    p.push(name);
                }
            })
            .spawn_handler(|t| {
                let mut b = thread::Builder::new();
                if let Some(name) = t.name() {
                    b = b.name(name.to_string());
                }
                if let Some(size) = t.stack_size() {
                    b = b.stack_size(size);
                }
                let l = live.clone();
                live.fetch_add(1, Ordering::SeqCst);
                let spawned = b.spawn(move || {
                    t.run();
                    l.fetch_sub(1, Ordering::SeqCst);
                });
                match spawned {
                    Ok(h) => {
                        handles.push(h);
                        Ok(())
                    }
                    Err(e) => {
                        live.fetch_sub(1, Ordering::SeqCst);
                        Err(e)
                    }
                }
            })
            .build()
            .unwrap_or_else(|e| panic!("reactive: cannot build the rayon pool: {e}"));
        Arc::new(RayonShared {
            pool: RwLock::new(Some(pool)),
            handles: Mutex::new(handles),
            live,
            panicked,
            threads: n,
        })
    }

    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    pub(super) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Spawns `task` as a rayon job (oldest first: `spawn_fifo`), or gives it back once
    /// the pool is shut down. A job spawned here always runs: rayon's workers exit only
    /// after every spawned job has returned, and shutdown empties the slot under the write
    /// lock, so no spawn can race with it.
    pub(super) fn schedule(&self, task: Arc<dyn Task>) -> Result<(), Arc<dyn Task>> {
        let pool = self.pool.read().unwrap_or_else(PoisonError::into_inner);
        match pool.as_ref() {
            Some(p) => {
                p.spawn_fifo(move || task.run());
                Ok(())
            }
            None => Err(task),
        }
    }

    /// Refuses new work, lets the queued jobs run, and joins the threads (unless called
    /// from one of them). Returns an error naming the threads on which a drain panicked.
    pub(super) fn shutdown(&self) -> Result<(), String> {
        // Dropping the pool only marks it terminated: its workers finish every job spawned
        // so far (the drains already queued), then leave rayon's main loop.
        let pool = self.pool.write().unwrap_or_else(PoisonError::into_inner).take();
        drop(pool);
        let me = thread::current().id();
        let mut guard = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.iter().any(|h| h.thread().id() == me) {
            // Called from a drain on this very pool (it disposed, or dropped the last
            // handle): rayon waits for this job to return before any worker exits, so
            // joining here would wait on ourselves. The workers exit once it returns.
            return self.take_panics();
        }
        let handles = std::mem::take(&mut *guard);
        drop(guard);
        let mut failed = Vec::new();
        for h in handles {
            let name = h.thread().name().unwrap_or("rayon-worker").to_string();
            if h.join().is_err() {
                failed.push(name);
            }
        }
        if !failed.is_empty() {
            return Err(format!("scheduler workers panicked: {}", failed.join(", ")));
        }
        self.take_panics()
    }

    fn take_panics(&self) -> Result<(), String> {
        let p = std::mem::take(&mut *self.panicked.lock().unwrap_or_else(PoisonError::into_inner));
        if p.is_empty() {
            Ok(())
        } else {
            Err(format!("scheduler workers panicked (drains caught by rayon): {}", p.join(", ")))
        }
    }
}
