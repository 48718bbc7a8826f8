//! What the buffer emits for a recorder (`handoff::trace`): a `queue_depth` counter per swap,
//! a `batch` span per `recv_batch`, a `wait` span when the consumer blocks, and nothing per
//! message.

use handoff::{Consumer, Handoff, Producer};
use naive_buffer::NaiveHandoff;
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

#[test]
fn emits_depth_per_swap_batches_and_waits_only() {
    let rec = recorder::Recorder::default();
    tracing::subscriber::with_default(rec.clone(), || {
        let (mut txs, mut rx) = NaiveHandoff::new().open::<u32>(1).unwrap();
        let mut tx = txs.pop().unwrap();
        for i in 0..3 {
            tx.send(i).unwrap();
        }
        assert_eq!(rec.take(), Vec::<String>::new(), "sends emit nothing");
        // The first receive swaps all three out: one counter; the next two emit nothing.
        assert_eq!(rx.recv(), Some(0));
        assert_eq!(rx.recv(), Some(1));
        assert_eq!(rx.recv(), Some(2));
        assert_eq!(rec.take(), ["event lab::counter counter=queue_depth value=3"]);

        // A batch: the swap's counter, then one span for the delivery.
        tx.send(3).unwrap();
        tx.send(4).unwrap();
        let mut got = Vec::new();
        assert_eq!(rx.recv_batch(16, |x| got.push(x)), 2);
        assert_eq!(got, [3, 4]);
        assert_eq!(
            rec.take(),
            ["event lab::counter counter=queue_depth value=2", "span batch size=2"]
        );

        // The consumer waits on an empty buffer; the sender sends once the wait is logged
        // (logged under the buffer's lock, before the consumer sleeps).
        let log = rec.log.clone();
        let h = thread::spawn(move || {
            while !log.lock().unwrap().iter().any(|l| l == "span wait reason=empty") {
                thread::yield_now();
            }
            tx.send(5).unwrap();
        });
        assert_eq!(rx.recv(), Some(5));
        h.join().unwrap();
        assert_eq!(
            rec.take(),
            ["span wait reason=empty", "event lab::counter counter=queue_depth value=1"]
        );
        // Every producer gone: the end, without a wait.
        assert_eq!(rx.recv(), None);
    });
}
