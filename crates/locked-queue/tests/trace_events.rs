//! What the queue emits for a recorder (`handoff::trace`): a `wait` span when a thread
//! blocks, a `batch` span and a `queue_depth` counter per batch, and nothing on the
//! per-element fast path.

use locked_queue::LinkedBlockingQueue;
use std::sync::Arc;
use std::thread;

/// A minimal `tracing` subscriber that records span names with their fields and events with
/// their target and fields, for checking what a variant emits.
mod recorder {
    use std::fmt::Debug;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// `"span wait reason=full"`, `"event lab::counter counter=queue_depth value=3"`.
    #[derive(Clone, Default)]
    pub struct Recorder {
        pub log: Arc<Mutex<Vec<String>>>,
        next: Arc<AtomicU64>,
    }

    struct Fields(String);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
            self.0.push_str(&format!(" {}={:?}", field.name(), value));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.push_str(&format!(" {}={}", field.name(), value));
        }
    }

    impl Recorder {
        pub fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.log.lock().unwrap())
        }
    }

    impl Subscriber for Recorder {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            let mut f = Fields(format!("span {}", attrs.metadata().name()));
            attrs.record(&mut f);
            self.log.lock().unwrap().push(f.0);
            Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut f = Fields(format!("event {}", event.metadata().target()));
            event.record(&mut f);
            self.log.lock().unwrap().push(f.0);
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

/// Spins until the recorder has logged `line` (the waiting thread logs it under its lock,
/// before it waits), then runs `then`.
fn after_logged(
    rec: &recorder::Recorder,
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
    let rec = recorder::Recorder::default();
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
