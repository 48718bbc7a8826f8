//! What the buffer emits for a recorder (`handoff::trace`): a `queue_depth` counter per swap,
//! a `batch` span per `recv_batch`, a `wait` span when the consumer blocks, and nothing per
//! message.

use handoff::{Consumer, Handoff, Producer};
use naive_buffer::NaiveHandoff;
use std::thread;

use handoff::trace::TraceLog;

#[test]
fn emits_depth_per_swap_batches_and_waits_only() {
    let rec = TraceLog::default();
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
