//! What the queue emits for a recorder (`handoff::trace`): a `wait` span when a thread
//! blocks, a `batch` span and a `queue_depth` counter per batch, and nothing on the
//! per-element fast path.

use locked_queue::LinkedBlockingQueue;
use std::sync::Arc;
use std::thread;

use handoff::trace::TraceLog;

/// Spins until the recorder has logged `line` (the waiting thread logs it under its lock,
/// before it waits), then runs `then`.
fn after_logged(
    rec: &TraceLog,
    line: &'static str,
    then: impl FnOnce() + Send + 'static,
) -> thread::JoinHandle<()> {
    let log = rec.log.clone();
    thread::spawn(move || {
        while !log.lock().unwrap().iter().any(|l| l == line) {
            thread::yield_now();
        }
        then();
    })
}

#[test]
fn emits_waits_batches_and_depth_only_off_the_fast_path() {
    let rec = TraceLog::default();
    tracing::subscriber::with_default(rec.clone(), || {
        let q = Arc::new(LinkedBlockingQueue::with_capacity(2).unwrap());
        // The fast path emits nothing.
        q.put(1).unwrap();
        q.offer(2).unwrap();
        assert_eq!(q.take(), Some(1));
        assert_eq!(q.poll(), Some(2));
        assert_eq!(rec.take(), Vec::<String>::new(), "fast path");

        // A take on an empty queue waits.
        let qq = q.clone();
        let h = after_logged(&rec, "span wait reason=empty", move || qq.put(3).unwrap());
        assert_eq!(q.take(), Some(3));
        h.join().unwrap();
        assert_eq!(rec.take(), ["span wait reason=empty"]);

        // A put on a full queue waits.
        q.put(4).unwrap();
        q.put(5).unwrap();
        let qq = q.clone();
        let h = after_logged(&rec, "span wait reason=full", move || assert_eq!(qq.take(), Some(4)));
        q.put(6).unwrap();
        h.join().unwrap();
        assert_eq!(rec.take(), ["span wait reason=full"]);

        // A batch: the depth it found, then one span for the batch.
        let mut got = Vec::new();
        assert_eq!(q.take_batch(10, |x| got.push(x)), 2);
        assert_eq!(got, [5, 6]);
        assert_eq!(
            rec.take(),
            ["event lab::counter counter=queue_depth value=2", "span batch size=2"]
        );
    });
}
